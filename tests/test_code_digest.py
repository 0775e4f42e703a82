"""One version for every file a cache entry keeps beside its tables: a digest of all of
tracelens (tracelens._resources.code_digest). A partial digest, naming the queries a kept
file was thought to depend on, goes stale silently when a module or macro it never named
changes how the rows are made."""

from __future__ import annotations

import shutil

import pytest

from tracelens import _resources


@pytest.fixture
def fresh_digest():
    _resources.code_digest.cache_clear()
    yield _resources.code_digest
    _resources.code_digest.cache_clear()


def test_every_kept_file_carries_the_one_code_digest(fresh_digest):
    from tracelens import census_kept, util_workfile
    from tracelens.compare import workfile
    from tracelens.fingerprint import kept as fingerprint_kept
    from tracelens.report import kept as report_kept

    digest = fresh_digest()
    assert len(digest) == 16
    versions = {
        "util accounting and steps": util_workfile.code_version(),
        "diff work": workfile._version(),
        "fingerprint": fingerprint_kept._version(),
        "report": report_kept._version(),
        "census": census_kept._version(),
    }
    assert versions == dict.fromkeys(versions, digest)


def test_a_change_to_any_query_changes_it(fresh_digest, tmp_path, monkeypatch):
    queries = tmp_path / "queries"
    shutil.copytree(_resources.queries_dir(), queries)
    monkeypatch.setattr(_resources, "queries_dir", lambda: queries)
    before = fresh_digest()
    path = queries / "copy_kinds.sql"
    path.write_text(path.read_text() + "\n-- changed\n")
    _resources.code_digest.cache_clear()
    assert fresh_digest() != before


def test_the_files_are_listed_as_sorted_paths_list_them(tmp_path):
    """_code_files (os.walk and strings) lists what pathlib's sorted rglob of the code
    suffixes lists, in its order: "a.py" after "a/b.py" (parts compare before the
    separator does), nested folders, other suffixes left out."""
    for relative in ("a.py", "a/b.py", "a/c/d.sql", "a-b.toml", "ab/x.j2", "z.txt", "a/e.pyc"):
        path = tmp_path / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(relative)
    expected = [
        str(p.relative_to(tmp_path))
        for p in sorted(tmp_path.rglob("*"))
        if p.suffix in _resources._CODE_SUFFIXES and p.is_file()
    ]
    assert _resources._code_files(str(tmp_path)) == expected
    assert expected == ["a/b.py", "a/c/d.sql", "a-b.toml", "a.py", "ab/x.j2"]


def test_a_change_to_a_nested_module_changes_it(fresh_digest, monkeypatch, tmp_path):
    package = tmp_path / "tracelens"
    shutil.copytree(_resources._PACKAGE_DIR, package, ignore=shutil.ignore_patterns("*.pyc"))
    monkeypatch.setattr(_resources, "_PACKAGE_DIR", package)
    before = fresh_digest()
    path = package / "compare" / "shift.py"
    path.write_text(path.read_text() + "\n# changed\n")
    _resources.code_digest.cache_clear()
    assert fresh_digest() != before


def test_a_broken_link_is_left_out_not_read(tmp_path):
    (tmp_path / "a.py").write_text("a")
    (tmp_path / "gone.py").symlink_to(tmp_path / "missing.py")
    assert _resources._code_files(str(tmp_path)) == ["a.py"]
