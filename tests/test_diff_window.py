"""diff with a window outside a side's span says so on stderr, per side, as every command
does (tracelens.hints.why_empty), and still exits 0 with its output."""

from __future__ import annotations

import json

import pytest
from conftest import run_cli

import tracelens
from tracelens.synth import TraceBuilder
from tracelens.units import fmt_ns

US = 1000


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    """Two short runs of three kernels, 20 times each (about 2 ms from 1 ms on)."""
    root = tmp_path_factory.mktemp("window")
    paths = []
    for stem in ("a", "b"):
        b = TraceBuilder("3.25.0")
        b.process(100, "python p.py")
        b.gpu(0)
        t = 1_000_000
        for _ in range(20):
            for i in range(3):
                call = b.runtime("cudaLaunchKernel_v7000", start=t, end=t + 2 * US)
                b.kernel(f"k{i}(float*)", start=t + 5 * US, end=t + 20 * US, correlation_id=call)
                t += 30 * US
        b.write(str(root / f"{stem}.sqlite"))
        paths.append(root / f"{stem}.sqlite")
    return paths


def _span(path) -> str:
    with tracelens.open(path) as t:
        return f"{fmt_ns(t.info.start_ns)}–{fmt_ns(t.info.end_ns)}"


def test_a_window_outside_b_says_so(pair, capsys):
    a, b = pair
    rc, out, err = run_cli(["diff", str(a), str(b), "--b-start", "5s", "--b-end", "6s"], capsys)
    assert rc == 0 and out.startswith("tracelens diff: A = a.sqlite")
    assert err == (
        f"tracelens: B: window 5.00 s–6.00 s is outside the trace's span {_span(b)} "
        "from session start\n"
    )


def test_each_side_says_it_in_json_too(pair, capsys):
    a, b = pair
    args = ["diff", str(a), str(b), "--a-start", "5s", "--b-end", "10us", "-f", "json"]
    rc, out, err = run_cli(args, capsys)
    assert rc == 0 and json.loads(out)["a"] == "a.sqlite"
    assert err.splitlines() == [
        f"tracelens: A: window from 5.00 s is outside the trace's span {_span(a)} from "
        "session start",
        f"tracelens: B: window until 10.00 µs is outside the trace's span {_span(b)} from "
        "session start",
    ]


def test_a_window_inside_the_span_says_nothing(pair, capsys):
    a, b = pair
    rc, _out, err = run_cli(["diff", str(a), str(b), "--a-start", "1ms", "--b-end", "2ms"], capsys)
    assert (rc, err) == (0, "")
