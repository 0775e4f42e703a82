"""findings --limit: the table and markdown show nsys analyze's 50 rows per rule; csv and json
carry every row (the README: "--format csv is every row") unless --limit is given."""

from __future__ import annotations

import csv
import io
import json

import pytest
from conftest import run_cli

from tracelens.synth import TraceBuilder

MS = 1_000_000
SYNC_CALLS = 60


@pytest.fixture(scope="module")
def many_sync(tmp_path_factory):
    """60 cudaStreamSynchronize calls on 2 threads; two kernels 600 ms apart on 2 devices."""
    b = TraceBuilder("3.25.0")
    b.process(100, "python m.py")
    for i in range(SYNC_CALLS):
        start = MS + i * 10_000
        b.runtime("cudaStreamSynchronize_v3020", start=start, end=start + 1000 + i, tid=100 + i % 2)
    for device in (0, 1):
        for start in (2 * MS, 602 * MS):
            call = b.runtime("cudaLaunchKernel_v7000", start=start - 5000, end=start - 4000)
            b.kernel("k(int)", start=start, end=start + MS, correlation_id=call, device=device)
    path = tmp_path_factory.mktemp("findings") / "many_sync.sqlite"
    b.write(str(path))
    return path


def _csv_rows(out: str, rule: str) -> list[dict]:
    return [row for row in csv.DictReader(io.StringIO(out)) if row["rule"] == rule]


def _json_rows(out: str, rule: str) -> list[dict]:
    (found,) = [r for r in json.loads(out) if r["rule"] == rule]
    assert found["total"] == SYNC_CALLS
    return found["rows"]


@pytest.mark.parametrize(
    "extra, expected",
    [([], SYNC_CALLS), (["--limit", "0"], SYNC_CALLS), (["--limit", "7"], 7)],
    ids=["default", "limit 0", "limit 7"],
)
def test_csv_and_json_have_every_row_unless_limited(many_sync, capsys, extra, expected):
    args = ["findings", str(many_sync), "--rule", "sync_api", *extra]
    rc, out, err = run_cli([*args, "-f", "csv"], capsys)
    assert (rc, err) == (0, "")
    assert len(_csv_rows(out, "sync_api")) == expected
    rc, out, err = run_cli([*args, "-f", "json"], capsys)
    assert (rc, err) == (0, "")
    assert len(_json_rows(out, "sync_api")) == expected


@pytest.mark.parametrize("fmt", ["table", "markdown"])
def test_table_and_markdown_show_nsys_analyze_50_rows(many_sync, capsys, fmt):
    rc, out, _err = run_cli(["findings", str(many_sync), "--rule", "sync_api", "-f", fmt], capsys)
    assert rc == 0
    assert "first 50; --limit 0 for all" in out
    assert out.count("cudaStreamSynchronize_v3020") == 50


def test_a_negative_limit_is_refused(many_sync, capsys):
    rc, out, err = run_cli(["findings", str(many_sync), "--limit", "-1"], capsys)
    assert (rc, out) == (2, "")
    assert err == "tracelens: --limit must be 0 (every row) or more (got -1)\n"
