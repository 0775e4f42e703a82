"""A cache entry whose manifest lists a file that is gone or is not whole Parquet (emptied,
cut short): the file is not cached, written again when a statement needs it; fingerprint
said "internal error: ... too small to be a Parquet file" (or "No files found that match
... StringIds.parquet") on every later run (found by advfp)."""

from __future__ import annotations

import pytest
from conftest import run_cli
from fixtures.fingerprint_runs import build_run


def _damage_empty(path):
    path.write_bytes(b"")


def _damage_cut(path):
    path.write_bytes(path.read_bytes()[:500])


def _damage_gone(path):
    path.unlink()


@pytest.mark.parametrize(
    ("table", "damage"),
    [
        ("CUPTI_ACTIVITY_KIND_KERNEL", _damage_empty),
        ("CUPTI_ACTIVITY_KIND_RUNTIME", _damage_cut),
        ("StringIds", _damage_gone),
    ],
)
def test_a_damaged_entry_file_is_cached_again(tmp_path, capsys, cache_dir, table, damage):
    trace = build_run(tmp_path / "run.sqlite")
    code, first, _ = run_cli(["fingerprint", trace], capsys)
    assert code == 0
    (entry,) = (cache_dir / "traces").iterdir()
    damage(entry / f"{table}.parquet")
    code, again, err = run_cli(["fingerprint", trace], capsys)
    assert (code, again) == (0, first)
    assert "internal error" not in err
    code, third, err = run_cli(["fingerprint", trace], capsys)
    assert (code, third, err) == (0, first, "")  # written again whole: read, not rebuilt
