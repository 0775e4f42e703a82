"""The GPU wall time line of runs that copy their weights before the first step: 30 host
to device copies of 100 µs, then 30 training steps without a copy; B's GEMM 1.3× per
call. The line split each step's busy time in the whole capture's proportions (3 ms of
its 6.8 ms of busy time in copies), so it read "compute 69.53 µs → 89.22 µs; exposed
memory 56.97 µs → 61.28 µs" per step and "what moved it: compute +19.69 µs, exposed
memory +4.31 µs" for a change that was all compute (the a100 2.7B trace with its top GEMM
1.5×: "exposed memory 12.62 ms → 14.79 ms" per step, though no copy runs in its steps). A
step's busy time is now split by what it ran."""

from __future__ import annotations

from fixtures.builder import XMMA_GEMM
from test_diff_pairs import STEP
from test_diff_unseen_pairs import PID, pair, recorder


def loaded_then_trained(tmp_path, stem, gemm=1.0):
    r, t = recorder(), 1_000_000
    for _ in range(30):  # weights: host to device, before any step
        r.memcpy("HtoD", 64 << 20, t, 100_000, pid=PID)
        t += 101_000
    t += 50_000
    for _ in range(30):
        for name, dur in STEP:
            d = int(dur * (gemm if name == XMMA_GEMM else 1.0))
            r.kernel(name, t, d, pid=PID)
            t += d + 1_000
        t += 20_000
    return r.write(tmp_path, stem).path


def test_copies_before_the_steps_are_in_no_step(tmp_path):
    d = pair(loaded_then_trained(tmp_path, "a"), loaded_then_trained(tmp_path, "b", 1.3))
    (lead,) = [c for c in d.clues if c.id == "time_accounting"]
    assert lead.verdict == "what moved it: compute +24.00 µs"
    # the copy kernel (2 µs a step) is the steps' exposed memory; the copies are not
    assert lead.evidence.startswith(
        "compute 124.5 µs → 148.5 µs; exposed communication 0 ns → 0 ns; exposed memory "
        "2.00 µs → 2.00 µs; idle 28.00 µs → 28.00 µs (per step, start to start"
    )
