"""NVTX labels in the steps' detail were quoted as Python reprs ('train\\nstep_1',
"it's_1": backslashes doubled, quotes switched); everywhere else a label's control
characters are shown as \\xNN (tracelens.escape) and it is quoted as the program wrote it."""

from __future__ import annotations

from conftest import run_cli

import tracelens
from tracelens.synth import TraceBuilder

US = 1_000


def build(path, label: str):
    """6 top-level ranges '<label>_N' (N from 1), 1 ms apart, each launching 3 kernels; the
    last one left open (the capture stopped inside it)."""
    b = TraceBuilder("3.25.0")
    b.gpu(0)
    b.process(100, "python train.py")
    for s in range(6):
        t = 1_000 * US + s * 1_000 * US
        end = None if s == 5 else t + 250 * US
        b.nvtx_range(f"{label}_{s + 1}", start=t, end=end, pid=100, tid=100)
        for k in range(3):
            at = t + 10 * US + k * 60 * US
            cid = b.runtime("cudaLaunchKernel_v7000", start=at, end=at + 5 * US, pid=100)
            b.kernel(f"void k{k}(float*)", start=at + 20 * US, end=at + 50 * US, pid=100,
                     correlation_id=cid)  # fmt: skip
    return str(b.write(path))


def test_a_family_label_is_shown_with_its_controls_escaped(tmp_path):
    path = build(tmp_path / "t.sqlite", "train\nstep\\")
    with tracelens.open(path, cache=False) as trace:
        steps = trace.steps()
    assert steps.detail == (
        "5 steps from 5 top-level NVTX ranges like 'train\\x0astep\\_1' that launched 83% of "
        "the GPU time; 3 launches after the last step: in no step; the range "
        "'train\\x0astep\\_6' (step 6) never ended: the capture stopped inside it; left out"
    )


def test_a_range_glob_is_quoted_as_typed(tmp_path, capsys):
    path = build(tmp_path / "t.sqlite", "it's")
    with tracelens.open(path, cache=False) as trace:
        steps = trace.steps(range="it's_*")
    assert steps.detail == (
        "5 steps from 5 NVTX ranges labelled 'it's_*'; 3 launches after the last step: in no "
        "step; the range 'it's_6' (step 6) never ended: the capture stopped inside it; left out"
    )
    rc, out, err = run_cli(["steps", path, "--range", "it's_*", "-f", "csv"], capsys)
    assert (rc, err) == (0, "")
