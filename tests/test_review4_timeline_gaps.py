"""timeline --nvtx/--step: a gap row is a stretch without the selected work, not an idle
device. review4: `timeline --nvtx fwd` printed 'gap, device 0, idle' for 890 µs while device
0 ran a kernel another thread launched and a copy no API call launched (neither is inside
the range), and said nothing about it (--stream and --pid had the note, a selection not)."""

from __future__ import annotations

from pathlib import Path

from conftest import run_cli

import tracelens
from tracelens.filters import EventFilter
from tracelens.synth import TraceBuilder
from tracelens.timeline import selection_gaps_note

NOTE = (
    "gap rows are stretches without the selected GPU work{} (launched inside the NVTX "
    "ranges or steps); work launched outside them may run on the device then"
)


def _range_and_other_thread(tmp_path: Path) -> Path:
    """Range 'fwd' on thread 100 launches two kernels (1.0-1.1 ms and 1.99-2.5 ms); thread
    101 launches one in between (1.2-1.3 ms, stream 8) and a copy runs at 1.5-1.6 ms."""
    b = TraceBuilder("3.0.0")
    b.process(100, "python train.py")
    b.thread("worker", pid=100, tid=101)
    b.gpu(0)

    def launch(name: str, start: int, end: int, tid: int, stream: int = 7) -> None:
        cid = b.runtime(
            "cudaLaunchKernel_v7000", start=start - 3_000, end=start - 2_000, pid=100, tid=tid
        )
        b.kernel(name, start=start, end=end, stream=stream, correlation_id=cid, pid=100)

    b.nvtx_range("fwd", start=900_000, end=2_000_000, pid=100, tid=100)
    launch("in_range", 1_000_000, 1_100_000, tid=100)
    launch("other_thread", 1_200_000, 1_300_000, tid=101, stream=8)
    launch("in_range_late", 1_990_000, 2_500_000, tid=100)
    b.memcpy("HtoD", 1 << 20, start=1_500_000, end=1_600_000, pid=100)
    return b.write(tmp_path / "range.sqlite")


def test_nvtx_gap_rows_say_they_are_not_an_idle_device(tmp_path, capsys):
    path = _range_and_other_thread(tmp_path)
    rc, out, err = run_cli(["timeline", path, "--nvtx", "fwd", "-f", "csv"], capsys)
    assert rc == 0
    # the gap between the range's two kernels, while other_thread and the copy ran
    assert "1100000,890000,gap,0,,,,,,,idle" in out.splitlines()
    assert err == (
        "tracelens: note: only the GPU work launched inside the 1 NVTX range matching 'fwd'; "
        + NOTE.format("")
        + "\n"
    )
    for limit in ("0", "100"):  # every row (a polars frame) and a page (plain rows)
        rc, out, err = run_cli(
            ["timeline", path, "--nvtx", "fwd", "--stream", "7", "-n", limit, "-f", "csv"],
            capsys,
        )
        assert rc == 0 and NOTE.format(" of stream 7") in err


def test_library_note_for_a_selection(tmp_path):
    path = _range_and_other_thread(tmp_path)
    with tracelens.open(path) as trace:
        where = trace.filter(nvtx="fwd")
        result = trace.timeline(where=where)
        assert where.selection is not None
        assert selection_gaps_note(result, where) == NOTE.format("")
        # no selection, no stream, no pid: the gaps are the device's own, no note
        whole = trace.timeline(where=EventFilter())
        assert "gap" in whole.events["kind"].to_list()
        assert selection_gaps_note(whole, EventFilter()) is None
