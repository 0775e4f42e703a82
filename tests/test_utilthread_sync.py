"""util's idle cause 'sync' is judged on the thread that launched the work ending the gap
(the globalTid of its launching CUDA runtime call), not on its process: a second thread
blocked in cudaStreamSynchronize does not hold back a launch the first thread makes late
for its own reasons. The same on every read util makes of the calls: direct
(util_calls.sql), a cache entry (util_launch_calls.sql + util_call_figures.sql) and the
diff's kept work, which holds each operation's launch_start and launch_tid."""

from __future__ import annotations

import pytest

import tracelens
from tracelens.filters import EventFilter
from tracelens.synth import TraceBuilder

US = 1_000
PID = 9
LAUNCHER, WAITER = 100, 101


def _kernel(b: TraceBuilder, name: str, at: int, start: int, dur: int, tid: int) -> int:
    """A kernel launched by thread ``tid`` at ``at`` (a 2 us call), running from ``start``
    for ``dur``; its end."""
    cid = b.runtime("cudaLaunchKernel_v7000", start=at, end=at + 2 * US, pid=PID, tid=tid)
    b.kernel(f"void {name}(float*)", start=start, end=start + dur, pid=PID, correlation_id=cid)
    return start + dur


def _two_threads(path, sync_tid: int) -> None:
    """Three rounds: thread 100 launches a, then b 200 us after a ended (gap before b:
    203 us). Thread ``sync_tid`` sits in cudaStreamSynchronize from before a ends until
    after b's launch (and, when it is thread 100, launches b when the sync returns)."""
    b = TraceBuilder("3.24.18")
    b.process(PID, "python train.py")
    b.thread("launcher", pid=PID, tid=LAUNCHER)
    b.thread("waiter", pid=PID, tid=WAITER)
    b.gpu(0)
    t = 1_000 * US
    for _ in range(3):
        a_end = _kernel(b, "a", t, t + 5 * US, 40 * US, LAUNCHER)
        b_at = a_end + 200 * US
        b.runtime(
            "cudaStreamSynchronize_v3020",
            start=a_end - 30 * US,
            end=b_at - (1 * US if sync_tid == LAUNCHER else -50 * US),
            pid=PID,
            tid=sync_tid,
        )
        t = _kernel(b, "b", b_at, b_at + 3 * US, 10 * US, LAUNCHER) + 100 * US
    b.write(path)


def _causes(util) -> dict[str, tuple[int, int]]:
    rows = util.idle_causes.iter_rows(named=True)
    return {r["cause"]: (r["count"], r["time_ns"]) for r in rows}


# The gaps before b (3 x 203 us); the gaps before the second and third a (2 x 105 us: a is
# launched 100 us after b ended, by a thread in no sync).
BEFORE_B, BEFORE_A = (3, 3 * 203 * US), (2, 2 * 105 * US)


@pytest.mark.parametrize(
    ("sync_tid", "expected"),
    [
        # the last sync ends 50 us after b's launch, 37 us after b ends: after_last
        (WAITER, {"launch_bound": (5, BEFORE_B[1] + BEFORE_A[1]), "after_last": (1, 37 * US)}),
        (LAUNCHER, {"sync": BEFORE_B, "launch_bound": BEFORE_A}),
    ],
    ids=["another-thread-syncs", "the-launching-thread-syncs"],
)
def test_sync_is_the_launching_threads(tmp_path, sync_tid, expected):
    path = tmp_path / f"threads_{sync_tid}.sqlite"
    _two_threads(path, sync_tid)
    expected = {**expected, "before_first": (1, 5 * US)}
    with tracelens.open(path, cache=False) as trace:
        assert _causes(trace.util()) == expected
        # a time window reads the calls as util_calls.sql does, with the window's figures
        from_zero = {**expected, "before_first": (1, 1_005 * US)}
        assert _causes(trace.util(where=EventFilter(start_ns=0))) == from_zero


@pytest.mark.parametrize("sync_tid", [WAITER, LAUNCHER])
def test_every_read_of_the_calls_agrees(tmp_path, cache_dir, sync_tid):
    """Direct, cached (first run and the kept accounting read back) and from the diff's kept
    work (launch_start and launch_tid per operation, util_call_figures.sql): the same."""
    from tracelens.compare.collect import read_work
    from tracelens.util import accounting_and_calls

    path = tmp_path / f"threads_{sync_tid}.sqlite"
    _two_threads(path, sync_tid)
    with tracelens.open(path, cache=False) as direct:
        expected = _causes(direct.util())
    with tracelens.open(path) as first:
        assert _causes(first.util()) == expected
    with tracelens.open(path) as again:
        assert _causes(again.util()) == expected
    with tracelens.open(path) as diffed:
        work = read_work(diffed, EventFilter(), "demangled", keep_stream=False)[0]
        assert {"launch_start", "launch_tid"} <= set(work.columns)
    with tracelens.open(path) as kept:
        work = read_work(kept, EventFilter(), "demangled", keep_stream=False)[0]
        assert work["launch_tid"].drop_nulls().len() == work.height
        util = accounting_and_calls(kept, None, work, keep=False)[0]
        assert _causes(util) == expected
