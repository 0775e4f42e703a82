"""tracelens.fingerprint's NVTX regions follow the nvtx command's ranges (nvtx_ranges(), as
nsys nvtx_kern_sum): a range left open at the end of the capture lasts to the last NVTX
event, a start/end range that ended on another thread holds no work, and a range in a named
domain is 'domain:label'."""

from __future__ import annotations

import json

from conftest import run_cli

import tracelens
from tracelens import fingerprint as fp
from tracelens.synth import TraceBuilder

PID = 4242
LAYERS = ("attn", "mlp")


def _generate_run(path, launches: int, *, cut: bool):
    """A 'generate' range holding ``launches`` layer ranges (attn, mlp, ...), each launching
    one kernel; ``cut``: the capture ended with 'generate' still open (never popped)."""
    b = TraceBuilder("3.23.3")
    b.process(PID, "python generate.py")
    b.gpu(0)
    t = 1_000_000
    for i in range(launches):
        cid = b.runtime("cudaLaunchKernel_v7000", start=t + 100, end=t + 1_000)
        b.kernel(f"k_{LAYERS[i % 2]}", start=t + 2_000, end=t + 4_000, correlation_id=cid)
        b.nvtx_range(LAYERS[i % 2], start=t, end=t + 1_500)
        t += 10_000
    b.nvtx_range("generate", start=500_000, end=None if cut else t)
    return b.write(path)


def _doc(path):
    with tracelens.open(path) as trace:
        return tracelens.fingerprint(trace)


def _regions(doc) -> list[list[str]]:
    return [entry["region"] for entry in doc["paths"]]


def test_a_capture_cut_inside_a_range_is_a_shorter_capture_not_a_path_change(tmp_path, capsys):
    """Cut while 'generate' is open, the layers' work is still inside it (with the open
    range dropped, every launch moved out of 'generate': a path change on --check)."""
    full = _generate_run(tmp_path / "full.sqlite", 6, cut=False)
    # two of each layer: no range family of 3 for the step search in the cut either
    cut = _generate_run(tmp_path / "cut.sqlite", 4, cut=True)
    assert _regions(_doc(cut)) == [["generate", "attn"], ["generate", "mlp"]]
    baseline = tmp_path / "full.json"
    baseline.write_text(fp.dumps(_doc(full)))
    rc, out, _ = run_cli(["fingerprint", cut, "--check", baseline], capsys)
    assert rc == 0 and "follows full.json over the launches both captures hold" in out


def _steps(path, capsys) -> dict:
    rc, out, _ = run_cli(["steps", path, "-f", "json"], capsys)
    assert rc == 0
    return json.loads(out)


def test_a_capture_cut_inside_a_range_finds_the_full_captures_steps(tmp_path, capsys):
    """The open 'generate' encloses the layer ranges for the step search too (nvtx_ranges()'s
    rule), so they are no top-level 'attn' markers: the cut capture finds the full one's
    period steps over the part both hold (the old code found 3 'attn' marker steps)."""
    full = _steps(_generate_run(tmp_path / "full.sqlite", 8, cut=False), capsys)
    cut = _steps(_generate_run(tmp_path / "cut.sqlite", 6, cut=True), capsys)
    assert full["method"] == cut["method"] == "period"
    spans = [[(s["start_ns"], s["end_ns"]) for s in doc["steps"]] for doc in (full, cut)]
    assert len(spans[1]) == 3 and spans[1] == spans[0][:3]


def test_regions_take_the_nvtx_commands_ranges(tmp_path, capsys):
    """A start/end range ended on another thread holds no GPU work (nsys projects only the
    ranges that end on their own thread; census --nvtx finds nothing in it), a named
    domain's range is 'domain:label', and an open range lasts to the last NVTX event (a
    later mark), as `nvtx --kernels` puts them."""
    b = TraceBuilder("3.25.0")
    b.process(PID, "python app.py")
    b.gpu(0)
    b.thread("main", tid=100)
    b.thread("worker", tid=101)

    def launch(name, t):
        cid = b.runtime("cudaLaunchKernel_v7000", start=t, end=t + 1_000, tid=100)
        b.kernel(name, start=t + 5_000, end=t + 8_000, correlation_id=cid)

    b.add_row("NVTX_EVENTS", start=500, eventType=75, text="mydom", globalTid=b._gtid(PID, 100),
              domainId=5)  # fmt: skip
    end_on_worker = b._gtid(PID, 101)
    b.nvtx_range("crossed", start=1_000, end=50_000, tid=100, event_type=60,
                 endGlobalTid=end_on_worker)  # fmt: skip
    launch("k_crossed", 10_000)
    b.nvtx_range("dom_range", start=60_000, end=90_000, tid=100, domain_id=5)
    launch("k_dom", 70_000)
    b.nvtx_range("open_range", start=100_000, end=None, tid=100)
    launch("k_open", 110_000)
    b.nvtx_mark("late_mark", at=300_000, tid=100)
    path = b.write(tmp_path / "ranges.sqlite")
    doc = _doc(path)
    names = {v["id"]: v["name"] for v in doc["variants"]}
    by_kernel = {names[e["sequence"][0]]: e["region"] for e in doc["paths"]}
    assert by_kernel == {"k_crossed": [], "k_dom": ["mydom:dom_range"], "k_open": ["open_range"]}
    rc, out, _ = run_cli(["nvtx", path, "--kernels", "--format", "json"], capsys)
    assert rc == 0
    held = {(row["range"], row["name"]) for row in json.loads(out) if row["range"]}
    assert held == {("mydom:dom_range", "k_dom"), ("open_range", "k_open")}


def _decode_run(path, *, cut_ns: int | None, marker: bool = False):
    """One thread: 'generate' [100 µs, 2200 µs] holding 40 launches (decode_a, decode_b, one
    per 50 µs) and no inner range (review8 B4). ``cut_ns``: the capture stopped there, with
    'generate' still open, so its push is the last NVTX event; ``marker``: a short inner
    range [1150, 1160 µs], so the last NVTX event lies after most launches but not the last."""
    us = 1_000
    b = TraceBuilder("3.24.18")
    b.process(PID, "python generate.py")
    b.gpu(0)
    b.nvtx_range("generate", start=100 * us, end=None if cut_ns else 2_200 * us)
    if marker:
        b.nvtx_range("marker", start=1_150 * us, end=1_160 * us)
    for i in range(40):
        t = 110 * us + i * 50 * us
        if cut_ns and t + 20 * us > cut_ns:
            break
        cid = b.runtime("cudaLaunchKernel_v7000", start=t, end=t + 2 * us)
        b.kernel(f"void decode_{'ab'[i % 2]}(float*)", start=t + 5 * us, end=t + 15 * us,
                 correlation_id=cid)  # fmt: skip
    return b.write(path)


def test_launches_after_the_last_nvtx_event_stay_in_the_open_range(tmp_path, capsys):
    """A capture cut inside 'generate' whose launches come after the last NVTX event (nsys
    ends the open range there) keeps them in 'generate', as the full capture does: --check
    and diff --fail-if path_changed see a shorter capture and pass. The old code put them
    '(outside NVTX ranges)': '22 kernels added, 40 removed' (no marker) and '1 kernels
    added' (marker), exit 1."""
    full = _decode_run(tmp_path / "full.sqlite", cut_ns=None)
    baseline = tmp_path / "full.json"
    baseline.write_text(fp.dumps(_doc(full)))
    for name, marker in (("cut", False), ("cut_marker", True)):
        cut = _decode_run(tmp_path / f"{name}.sqlite", cut_ns=1_200_000, marker=marker)
        doc = _doc(cut)
        assert _regions(doc) == [["generate"]] and doc["launches"] == 22
        rc, out, _ = run_cli(["fingerprint", cut, "--check", baseline], capsys)
        assert rc == 0, out
        assert "follows full.json over the launches both captures hold" in out
        assert (
            "B's capture ends earlier (it holds 11 steps, A 20): A's last 18 launches are past "
            "its end, not compared"
        ) in out
        rc, out, _ = run_cli(["diff", full, cut, "--fail-if", "path_changed"], capsys)
        assert rc == 0, out


def test_a_run_profiled_without_nvtx_is_not_measured_against_an_nvtx_baseline(tmp_path, capsys):
    """The same kernels, A with NVTX ranges (regions 'forward', ...), B profiled without
    (its steps as regions): no region of one is one of the other, so the old code said
    'differs in 4 of 4 regions ... 482 kernels added, 482 removed' (review8 minor), exit 1.
    Now the first line says the path is not measured and why; --check and diff --fail-if
    path_changed exit 2 with that reason, as for graph replays traced at graph level."""
    from test_cut_capture import build_nested

    a = build_nested(tmp_path / "nvtx.sqlite")
    b = build_nested(tmp_path / "plain.sqlite", nvtx=False)
    baseline = tmp_path / "nvtx.json"
    baseline.write_text(fp.dumps(_doc(a)))
    why = (
        "A's regions are NVTX ranges, B's are its steps (B launched no kernel inside an NVTX "
        "range: profiled without `-t nvtx`?)"
    )
    rc, out, err = run_cli(["fingerprint", b, "--check", baseline], capsys)
    assert rc == 2 and out.startswith(f"numerical path: not measured: {why}"), out
    assert f"--check: the path was not measured: {why}" in err and len(err.splitlines()) == 1
    rc, out, err = run_cli(["diff", baseline, b, "--fail-if", "path_changed"], capsys)
    assert rc == 2 and "path_changed was not measured: " + why in err, err
    rc, out, _ = run_cli(["diff", baseline, b, "-f", "json"], capsys)
    assert rc == 0 and json.loads(out)["regions_kinds"] == {"a": "nvtx", "b": "step"}


def test_a_region_of_a_trace_without_nvtx_is_named_as_the_whole_step(tmp_path, capsys):
    """Period steps, no NVTX range in either capture: the changed region was named '(the
    step, outside deeper NVTX ranges)' (review8 minor); it is the whole step."""
    from test_cut_capture import build_nested

    a = build_nested(tmp_path / "a.sqlite", nvtx=False)
    b = build_nested(tmp_path / "b.sqlite", nvtx=False, swap_from=12)
    baseline = tmp_path / "a.json"
    baseline.write_text(fp.dumps(_doc(a)))
    rc, out, _ = run_cli(["fingerprint", b, "--check", baseline], capsys)
    assert rc == 1 and "NVTX" not in out, out
    assert "first divergence: (the whole step), step 10, device 0" in out, out
    assert "  device 0, (the whole step), steps 10-22" in out, out


def _start_end_run(path, *, b_end: int | None, crossing: bool):
    """One thread of start/end ranges (eventType 60), 'B' in the domain 'mydom' from 100 µs
    holding k_in (150 µs) and k_late (300 µs); ``b_end`` None: the capture ended with 'B'
    open. ``crossing``: before 'B', 'C' and 'D' cross (the thread's ranges do not nest) and
    hold k_cd, and 'E' [110, 120 µs] is the last NVTX event; else 'A' [1, 200 µs] encloses
    k_in, and its end is the last NVTX event."""
    us = 1_000
    b = TraceBuilder("3.25.0")
    b.process(PID, "python app.py")
    b.gpu(0)
    b.thread("main", tid=100)

    def launch(name, t):
        cid = b.runtime("cudaLaunchKernel_v7000", start=t, end=t + us, tid=100)
        b.kernel(name, start=t + 5 * us, end=t + 8 * us, correlation_id=cid)

    b.add_row("NVTX_EVENTS", start=500, eventType=75, text="mydom", globalTid=b._gtid(PID, 100),
              domainId=5)  # fmt: skip
    if crossing:
        b.nvtx_range("C", start=1 * us, end=50 * us, tid=100, event_type=60)
        b.nvtx_range("D", start=30 * us, end=80 * us, tid=100, event_type=60)
        launch("k_cd", 40 * us)
    else:
        b.nvtx_range("A", start=1 * us, end=200 * us, tid=100, event_type=60)
    b.nvtx_range("B", start=100 * us, end=b_end, tid=100, event_type=60, domain_id=5)
    if crossing:
        b.nvtx_range("E", start=110 * us, end=120 * us, tid=100, event_type=60)
    launch("k_in", 150 * us)
    launch("k_late", 300 * us)
    return b.write(path)


def _by_kernel(doc) -> dict[str, list[str]]:
    names = {v["id"]: v["name"] for v in doc["variants"]}
    return {names[k]: e["region"] for e in doc["paths"] for k in e["sequence"]}


def test_start_end_ranges_left_open_hold_late_launches_as_the_full_capture_does(tmp_path):
    """A start/end range left open holds the launches made after the last NVTX event as
    push/pop ones do, and only the open ranges hold them: the cut capture's regions are the
    full capture's. The old code put k_late in 'A' (closed at 200 µs, the last NVTX event,
    before k_late), as the open range's parent, and on a thread whose start/end ranges
    cross put k_in and k_late outside every range."""
    full_a = {"k_in": ["A", "mydom:B"], "k_late": ["mydom:B"]}
    full_cross = {"k_cd": ["C", "D"], "k_in": ["mydom:B"], "k_late": ["mydom:B"]}
    for crossing, want in ((False, full_a), (True, full_cross)):
        for b_end in (400_000, None):
            name = f"{'cross' if crossing else 'a'}_{b_end}.sqlite"
            doc = _doc(_start_end_run(tmp_path / name, b_end=b_end, crossing=crossing))
            assert _by_kernel(doc) == want, (crossing, b_end)


def test_a_capture_cut_inside_a_start_end_range_is_a_shorter_capture(tmp_path, capsys):
    """--check of the cut capture (crossing start/end ranges, 'B' open) against the full
    one's baseline follows it (the old code: a path change, exit 1)."""
    baseline = tmp_path / "full.json"
    full = _start_end_run(tmp_path / "full.sqlite", b_end=400_000, crossing=True)
    baseline.write_text(fp.dumps(_doc(full)))
    cut = _start_end_run(tmp_path / "cut.sqlite", b_end=None, crossing=True)
    rc, out, _ = run_cli(["fingerprint", cut, "--check", baseline], capsys)
    assert rc == 0, out
