"""Adversarial review of 6b0f1ce (census_kept: the whole-trace kernel summary kept in a
cached trace's entry): what was tried and held. A trace rewritten in place with its size
and mtime restored is never served the old rows; kernel names that are not UTF-8, hold
control characters, characters past the BMP or U+2028, or run to 20,000 characters read
back exactly as aggregated. Each test has its own cache directory (conftest's cache_dir)."""

from __future__ import annotations

import os
import shutil
import sqlite3

import tracelens
from tracelens import cache, census_kept
from tracelens.census import census_rows
from tracelens.demo import demo_path
from tracelens.synth import TraceBuilder

NAMES = [
    b"void bad\xff\xfe(int)",  # not UTF-8
    "void ctl\x00\x01\x1f\x7f(int)",
    "void uni\u2028\u00e9\u4e2d\U0001f600(int)",
    "void " + "x" * 20_000 + "(int)",
]


def _census(path, cache=None):
    with tracelens.open(path, cache=cache) as trace:
        return census_rows(trace)


def _kept(path) -> bool:
    """Whether the trace's cache entry keeps its summary (demangled names, per kernel)."""
    with tracelens.open(path) as trace:
        trace.db  # noqa: B018  (opening the connection looks the cache entry up)
        entry = trace._lazy.entry
        name = census_kept._name("demangled", False)
        return cache.derived_path(entry, name, census_kept._version()) is not None


def test_a_trace_rewritten_in_place_with_its_mtime_restored_is_aggregated_again(
    tmp_path, cache_dir
):
    path = tmp_path / "run.sqlite"
    shutil.copyfile(demo_path("bs16"), path)
    before = _census(path)  # keeps the rows
    assert _kept(path)
    st = os.stat(path)
    with sqlite3.connect(path) as db:
        db.execute('UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET "end" = "end" + 1000000 WHERE rowid = 5')
    db.close()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert os.stat(path).st_size == st.st_size
    assert os.stat(path).st_mtime_ns == st.st_mtime_ns
    now = _census(path, cache=False)
    assert now != before
    assert _census(path) == now  # not the kept rows of the file it replaced


def test_odd_kernel_names_read_back_exactly(tmp_path, cache_dir):
    b = TraceBuilder("3.25.0")
    b.gpu(0)
    b.process(100, "p")
    t = 1_000
    for i, name in enumerate(NAMES):
        for k in range(1 + (i == 0)):  # the first name launched twice
            cid = b.runtime("cudaLaunchKernel_v7000", start=t, end=t + 5, pid=100)
            b.kernel(name, start=t + 10, end=t + 110 + i * 100 + k * 7, pid=100,
                     correlation_id=cid)  # fmt: skip
            t += 1_000
    path = b.write(tmp_path / "names.sqlite")
    direct = _census(path, cache=False)
    assert len(direct[0].data) == 4
    assert _census(path) == direct  # aggregated, kept
    assert _kept(path)
    assert _census(path) == direct  # read back
