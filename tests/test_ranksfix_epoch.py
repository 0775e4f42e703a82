"""tracelens ranks --timeunit ms/s: the session start is an instant (ns since the epoch,
1.7e18), not a duration. Divided into ms or s like the durations it was a float of 16
significant digits that rounded off its last digits and wrote digits the export never held
(1735732800001.2346 ms for 1735732800001234567 ns). It stays integer ns, under its ns
name, in every unit; the durations beside it are converted as before (ranksfix 1)."""

from __future__ import annotations

import json

import pytest
from conftest import run_cli
from fixtures.ranks import build_rank_set

from tracelens.synth import DEFAULT_SESSION_START_UTC_NS

STARTS = [DEFAULT_SESSION_START_UTC_NS, DEFAULT_SESSION_START_UTC_NS + 1_234_567]


@pytest.fixture(scope="module")
def ranks_dir(tmp_path_factory):
    rs = build_rank_set(
        tmp_path_factory.mktemp("epoch"), ranks=2, steps=2, slow_rank=None,
        session_step_ns=1_234_567,
    )  # fmt: skip
    assert list(rs.session_start_utc_ns.values()) == STARTS
    return rs.dest


@pytest.mark.parametrize("unit", ["ms", "s"])
def test_csv_keeps_the_session_start_in_ns(ranks_dir, capsys, unit):
    code, out, err = run_cli(
        ["ranks", ranks_dir, "-j", "1", "-f", "csv", "--timeunit", unit], capsys
    )
    assert (code, err) == (0, "")
    header, *rows = out.splitlines()
    columns = header.split(",")
    at = columns.index("session_start_utc_ns")
    assert [int(row.split(",")[at]) for row in rows] == STARTS
    # the durations are still converted
    assert f"span_{unit}" in columns and "span_ns" not in columns
    span = rows[0].split(",")[columns.index(f"span_{unit}")]
    assert span == {"ms": "152.0", "s": "0.152"}[unit]


def test_json_keeps_the_session_start_in_ns(ranks_dir, capsys):
    code, out, _ = run_cli(["ranks", ranks_dir, "-j", "1", "-f", "json", "--timeunit", "s"], capsys)
    doc = json.loads(out)
    assert code == 0
    assert [r["session_start_utc_ns"] for r in doc["ranks"]] == STARTS
    assert [r["span_s"] for r in doc["ranks"]] == [0.152, 0.152]


def test_the_ranks_view_keeps_the_session_start_in_ns(ranks_dir, capsys):
    args = ["ranks", ranks_dir, "-j", "1", "--view", "ranks", "--timeunit", "ms"]
    _, out, _ = run_cli([*args, "-f", "markdown"], capsys)
    assert "| Session start utc (ns) |" in out and "| Span (ms) |" in out
    assert "| 1,735,732,800,001,234,567 |" in out and "| 152.000 |" in out
    _, out, _ = run_cli([*args, "-f", "csv"], capsys)
    assert out.splitlines()[2].split(",")[5] == str(STARTS[1])
