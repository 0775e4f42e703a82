"""Shared test helpers.

Real traces come from ``../shared/traces`` beside the checkout (CI has it; a user's own
checkout may not: tests that need it skip with the reason). Tests never hand the shared
files to tracelens directly: they copy them first and check the copies' bytes afterwards.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("TRACELENS_SHARED", REPO.parent / "shared"))
TRACES = SHARED / "traces"
REFERENCE = TRACES / "reference"


def shared_traces() -> list[Path]:
    return sorted(TRACES.glob("*.sqlite")) if TRACES.is_dir() else []


# The CUPTI tables that hold GPU work; an export with none of them (CPU-only, NVTX-only) has
# no CUDA data, and every GPU command exits 3 on it.
CUDA_WORK_TABLES = (
    "CUPTI_ACTIVITY_KIND_KERNEL",
    "CUPTI_ACTIVITY_KIND_MEMCPY",
    "CUPTI_ACTIVITY_KIND_MEMSET",
)


def has_cuda_work(path: Path) -> bool:
    """Whether the export holds any kernel, memcpy or memset table (read-only look)."""
    import sqlite3

    con = sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True)
    try:
        names = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    finally:
        con.close()
    return bool(names.intersection(CUDA_WORK_TABLES))


needs_shared = pytest.mark.skipif(
    not TRACES.is_dir(), reason=f"real nsys exports not found at {TRACES} (../shared is absent)"
)


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="session")
def trace_copies(tmp_path_factory) -> dict[str, Path]:
    """Read-only copies of every shared trace, keyed by stem; verified unchanged at the end."""
    if not TRACES.is_dir():
        pytest.skip(f"real nsys exports not found at {TRACES} (../shared is absent)")
    dest = tmp_path_factory.mktemp("traces")
    copies, digests = {}, {}
    for src in shared_traces():
        dst = dest / src.name
        shutil.copyfile(src, dst)
        os.chmod(dst, 0o444)
        copies[src.stem] = dst
        digests[dst] = sha256(dst)
    yield copies
    for path, digest in digests.items():
        assert sha256(path) == digest, f"{path} was modified"
    assert sorted(p.name for p in dest.iterdir()) == sorted(p.name for p in copies.values()), (
        "files appeared next to the traces"
    )


def run_cli(args: list[str], capsys) -> tuple[int, str, str]:
    """Run the tracelens CLI in-process: (exit code, stdout, stderr)."""
    from tracelens.cli import main

    try:
        main([str(a) for a in args])
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture(autouse=True)
def _deterministic_terminal(monkeypatch, tmp_path_factory):
    monkeypatch.setenv("COLUMNS", "160")
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.delenv("TRACELENS_DEBUG", raising=False)
    # Each test its own cache directory (never the user's), with the default thresholds.
    monkeypatch.setenv("TRACELENS_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
    for name in ("TRACELENS_NO_CACHE", "TRACELENS_CACHE_MIN_MB", "TRACELENS_CACHE_MAX_MB"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def cache_dir(monkeypatch) -> Path:
    """The test's own cache directory (see _deterministic_terminal), caching every trace
    however small (TRACELENS_CACHE_MIN_MB=0), as the tests of kept files and entries need."""
    monkeypatch.setenv("TRACELENS_CACHE_MIN_MB", "0")
    return Path(os.environ["TRACELENS_CACHE_DIR"])


@pytest.fixture
def demo(tmp_path) -> Path:
    """A copy of the bs16 demo trace, a file of the test's own (its cache entry too)."""
    from tracelens.demo import demo_path

    path = tmp_path / "run.sqlite"
    shutil.copyfile(demo_path("bs16"), path)
    return path


@pytest.fixture
def pair(tmp_path) -> tuple[Path, Path]:
    """Copies of the two demo traces (bs1, bs16), files of the test's own (cache entries too)."""
    from tracelens.demo import demo_path

    paths = tmp_path / "bs1.sqlite", tmp_path / "bs16.sqlite"
    for path, which in zip(paths, ("bs1", "bs16"), strict=True):
        shutil.copyfile(demo_path(which), path)
    return paths


def imported_top_modules(argv: list[str]) -> tuple[subprocess.CompletedProcess, set[str]]:
    """Run ``tracelens ARGV`` in a fresh interpreter under ``-X importtime``: the process and
    the top-level packages it imported (what a command's start-up pays for)."""
    code = (
        f"import sys; from tracelens.cli import main; sys.argv = {['tracelens', *argv]!r}; main()"
    )
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code], capture_output=True, text=True
    )
    mods = {
        line.rsplit("|", 1)[1].strip().split(".")[0]
        for line in proc.stderr.splitlines()
        if "|" in line
    }
    return proc, mods
