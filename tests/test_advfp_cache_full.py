"""A cache directory that fills up (here a file size limit, as a full disk fails a write:
EFBIG where ENOSPC) while a derived file is written with polars: the command still
answers, as when a table's copy fails; polars' error ("parquet: File out of
specification: underlying IO error: File too large (os error 27)") was an internal error,
exit 70, on this run and every later one (found by advfp)."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

from fixtures.fingerprint_runs import Run, build_run

import tracelens

SRC = str(Path(tracelens.__file__).resolve().parents[1])
LIMIT = 40 * 1024  # the tables' files fit (under 30 kB), the derived steps frame does not


def _fingerprint(trace: Path, cache: Path, limit: int | None) -> subprocess.CompletedProcess:
    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    env = {
        **os.environ,
        "PYTHONPATH": SRC,
        "TRACELENS_CACHE_DIR": str(cache),
        "TRACELENS_CACHE_MIN_MB": "0",
    }
    return subprocess.run(
        [sys.executable, "-m", "tracelens", "fingerprint", str(trace)],
        env=env,
        capture_output=True,
        text=True,
        preexec_fn=limited if limit else None,
        check=False,
    )


def test_a_full_cache_directory_still_answers(tmp_path):
    trace = build_run(tmp_path / "run.sqlite", Run(steps=5000, layers=1))
    expected = _fingerprint(trace, tmp_path / "free", None)
    assert expected.returncode == 0
    for _ in range(2):  # and again, on the entry the first run left
        full = _fingerprint(trace, tmp_path / "full", LIMIT)
        assert "internal error" not in full.stderr
        assert (full.returncode, full.stdout) == (0, expected.stdout)
