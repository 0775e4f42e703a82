"""util's idle causes when the sync call and the launch that ends a gap come in either
order: a gap is 'sync' only if the host entered the synchronizing call before it launched
the work that ended the gap (review7 B2)."""

from __future__ import annotations

import tracelens
from tracelens.synth import TraceBuilder

US = 1_000
PID = 9


def _causes(path) -> dict[str, tuple[int, int]]:
    with tracelens.open(path) as trace:
        u = trace.util()
    return {r["cause"]: (r["count"], r["time_ns"]) for r in u.idle_causes.iter_rows(named=True)}


def _launch(b: TraceBuilder, name: str, at: int, start: int, dur: int) -> int:
    """A kernel ``name`` launched at ``at`` (a 2 us call) running from ``start`` for ``dur``."""
    cid = b.runtime("cudaLaunchKernel_v7000", start=at, end=at + 2 * US, pid=PID)
    b.kernel(f"void {name}(float*)", start=start, end=start + dur, pid=PID, correlation_id=cid)
    return start + dur


def test_a_sync_called_after_the_launch_does_not_make_the_gap_sync(tmp_path):
    """Each step launches a, then calls cudaDeviceSynchronize 12 us later (a is still
    queued behind nothing: the GPU is idle), works 200 us after the sync returns and
    launches b. The gap before a (a launched 11 us into it, no sync running) is
    launch_bound; the gap before b (the host sat in the sync, then launched b) is sync."""
    b = TraceBuilder("3.24.18")
    b.process(PID, "python train.py")
    b.gpu(0)
    t = 1_000 * US
    gpu_end = t
    for _ in range(3):
        a_at = gpu_end + 11 * US  # the GPU went idle 11 us ago
        a_end = _launch(b, "a", a_at, a_at + 20 * US, 40 * US)  # gap before a: 31 us
        sync_start = a_at + 12 * US  # after a's launch, before a starts
        b.runtime("cudaDeviceSynchronize_v3020", start=sync_start, end=a_end + 5 * US, pid=PID)
        b_at = a_end + 205 * US
        gpu_end = _launch(b, "b", b_at, b_at + 3 * US, 10 * US)  # gap before b: 208 us
    path = tmp_path / "sync_after_launch.sqlite"
    b.write(path)
    # The first a ends no gap (before_first); the other two a's gaps are launch-bound.
    assert _causes(path) == {
        "sync": (3, 3 * 208 * US),
        "launch_bound": (2, 2 * 31 * US),
        "before_first": (1, 20 * US),
    }


def test_a_synchronous_copy_that_is_its_own_launch_is_launch_bound(tmp_path):
    """A synchronous cudaMemcpy called after the GPU went idle launches the copy itself:
    nothing blocked the host before it launched, so the gap before the copy is
    launch_bound. A cudaStreamSynchronize entered during the next gap, before the launch of
    the kernel that ends it, makes that gap sync (the sync began after the gap did)."""
    b = TraceBuilder("3.24.18")
    b.process(PID, "python train.py")
    b.gpu(0)
    t = 1_000 * US
    end = _launch(b, "a", t, t + 10 * US, 50 * US)  # the GPU idle from t + 60 us
    copy_at = end + 30 * US
    cid = b.runtime("cudaMemcpy_v3020", start=copy_at, end=copy_at + 80 * US, pid=PID)
    b.memcpy(
        "DtoH", 4096, start=copy_at + 40 * US, end=copy_at + 70 * US, pid=PID, correlation_id=cid
    )
    copy_end = copy_at + 70 * US
    sync_start = copy_end + 20 * US  # the GPU idle since copy_end
    b.runtime("cudaStreamSynchronize_v3020", start=sync_start, end=sync_start + 5 * US, pid=PID)
    _launch(b, "b", sync_start + 50 * US, sync_start + 55 * US, 10 * US)
    path = tmp_path / "sync_copy.sqlite"
    b.write(path)
    assert _causes(path) == {
        "sync": (1, 75 * US),
        "launch_bound": (1, 70 * US),
        "before_first": (1, 10 * US),
    }
