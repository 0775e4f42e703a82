"""stakeout's duration histogram in every --timeunit (review8 B3): the bins' edges have at
least the tables' resolution (1 µs: 6 decimals in s), and more where the bins are narrower,
so that no two bins read alike. Before, every unit but ns printed 3 decimals: a kernel of
14.6-16.9 µs had its ten bins read '0.015 – 0.015' in ms and '0.000 – 0.000' in s."""

from __future__ import annotations

import re

import pytest
from conftest import run_cli

from tracelens.stakeout import histogram
from tracelens.stakeout_text import histogram_decimals, histogram_lines
from tracelens.synth import TraceBuilder

# 140 launches from 14,592 to 16,991 ns: ten bins of 240 ns
NARROW = [14_592 + (i * 2_399) // 139 for i in range(140)]


def _labels(lines: list[str]) -> list[str]:
    return [re.match(r"\s*(\S+ – \S+)", line).group(1) for line in lines]


@pytest.mark.parametrize("unit", ["us", "ms", "s"])
def test_narrow_bins_read_apart_in_every_unit(unit):
    lines = histogram_lines(histogram(NARROW), unit)
    labels = _labels(lines)
    assert len(lines) == 10
    assert len({label.split(" – ")[0] for label in labels}) == 10
    assert len({label.split(" – ")[1] for label in labels}) == 10


def test_decimals_are_the_tables_at_least():
    narrow = histogram(NARROW)
    assert {u: histogram_decimals(narrow, u) for u in ("us", "ms", "s")} == {
        "us": 3,  # the tables' (ns resolution already)
        "ms": 4,  # 240 ns bins: 0.1 µs tells them apart
        "s": 7,
    }
    wide = histogram([i * 100_000 for i in range(50)])  # 0.49 ms bins
    assert {u: histogram_decimals(wide, u) for u in ("us", "ms", "s")} == {
        "us": 3,
        "ms": 3,
        "s": 6,  # at least µs resolution, as the tables' --timeunit s
    }
    assert histogram_lines(wide, "s")[1].startswith("  0.000490 – 0.000980")
    assert histogram_lines(wide, "ms")[1].startswith("  0.490 – 0.980")


def _narrow_trace(path):
    b = TraceBuilder("3.25.0")
    b.process(10, "python x.py")
    b.gpu(0)
    at = 1_000
    for duration in NARROW:
        c = b.runtime("cudaLaunchKernel_v7000", start=at, end=at + 500, pid=10)
        b.kernel("void attn(float*)", start=at + 1_000, end=at + 1_000 + duration, pid=10,
                 correlation_id=c)  # fmt: skip
        at += 20_000
    return b.write(path)


@pytest.mark.parametrize("fmt", ["table", "markdown"])
def test_stakeout_histogram_in_ms_and_s(tmp_path, capsys, fmt):
    path = _narrow_trace(tmp_path / "narrow.sqlite")
    for unit, first in (("ms", "0.0146"), ("s", "0.0000146")):
        code, out, err = run_cli(
            ["stakeout", path, "attn", "--timeunit", unit, "--limit", "1", "-f", fmt], capsys
        )
        assert code == 0, err
        if fmt == "table":
            lines = out.split(f"durations ({unit})\n", 1)[1].split("\n\n", 1)[0].splitlines()
            assert lines[0].startswith(f"  {first} – ")
            assert len(set(_labels(lines))) == 10
        else:
            table = out.split("**durations**\n\n", 1)[1].split("\n\n", 1)[0].splitlines()
            rows = [line.split(" | ")[0].lstrip("| ") for line in table[2:]]
            assert rows[0] == first and len(set(rows)) == 10
