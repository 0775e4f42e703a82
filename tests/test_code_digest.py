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
    from tracelens import util_workfile
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
