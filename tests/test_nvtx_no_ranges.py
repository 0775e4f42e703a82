"""`nvtx` with no range to show says why on stderr (one line, exit 0), as an empty filter
does: an export whose NVTX table is empty or holds marks only, or --style asking for the
style its ranges are not. Before, it printed '0 rows' and nothing else."""

from __future__ import annotations

import pytest
from conftest import run_cli

from tracelens.synth import TraceBuilder

PID = 7
US = 1_000


def _export(path, ranges: str):
    """One kernel; NVTX: 'marks' (one mark), 'empty' (the table, no row), 'pushpop' (two
    push/pop ranges) or 'startend' (one start/end range)."""
    b = TraceBuilder("3.25.0")
    b.process(PID, "python app.py")
    b.gpu(0)
    cid = b.runtime("cudaLaunchKernel_v7000", start=10 * US, end=11 * US, pid=PID)
    b.kernel("k", start=12 * US, end=20 * US, correlation_id=cid, pid=PID)
    if ranges == "marks":
        b.nvtx_mark("m", at=5 * US, pid=PID)
    elif ranges == "empty":
        b.add_rows("NVTX_EVENTS", [])
    elif ranges == "pushpop":
        b.nvtx_range("a", start=9 * US, end=30 * US, pid=PID)
        b.nvtx_range("b", start=10 * US, end=12 * US, pid=PID)
    else:
        b.nvtx_range("s", start=9 * US, end=30 * US, pid=PID, event_type=60)
    return b.write(path)


@pytest.mark.parametrize(
    ("ranges", "args", "why"),
    [
        ("marks", [], "no NVTX ranges: its one NVTX event is a mark or a domain or string "
         "registration, which nsys does not sum either"),
        ("marks", ["--gpu"], "no NVTX ranges: its one NVTX event is a mark"),
        ("empty", [], "no NVTX ranges: the export's NVTX table is empty"),
        ("pushpop", ["--style", "startend"],
         "no start/end NVTX ranges: its 2 NVTX ranges are push/pop (--style pushpop)"),
        ("startend", ["--style", "pushpop"],
         "no push/pop NVTX ranges: its NVTX range is start/end (--style startend)"),
    ],
)  # fmt: skip
def test_no_range_says_why(tmp_path, capsys, ranges, args, why):
    path = _export(tmp_path / f"{ranges}.sqlite", ranges)
    rc, out, err = run_cli(["nvtx", path, *args, "-f", "csv"], capsys)
    assert rc == 0 and len(out.splitlines()) == 1  # the header alone
    assert err.startswith(f"tracelens: {why}") and len(err.splitlines()) == 1


@pytest.mark.parametrize("args", [[], ["--style", "pushpop"], ["--gpu"]])
def test_ranges_shown_say_nothing_more(tmp_path, capsys, args):
    path = _export(tmp_path / "pushpop.sqlite", "pushpop")
    rc, out, err = run_cli(["nvtx", path, *args, "-f", "csv"], capsys)
    assert rc == 0 and err == "" and len(out.splitlines()) > 1
