"""The golden harness itself: a query result is compared byte for byte with its CSV."""

from __future__ import annotations

import pytest
from fixtures.builder import build_one_kernel

from queries import golden


def test_mismatch_fails(tmp_path, monkeypatch):
    fx = build_one_kernel(tmp_path, "3.0.0")
    monkeypatch.setattr(golden, "GOLDEN", tmp_path)
    (tmp_path / "trace_totals__probe.csv").write_text("not,the,result\n")
    with pytest.raises(AssertionError, match="differs from its golden CSV"):
        golden.assert_golden(
            fx.path,
            "trace_totals",
            "probe",
            start_ns=None,
            end_ns=None,
            selection=None,
            runtime=True,
        )


def test_update_then_match(tmp_path, monkeypatch):
    fx = build_one_kernel(tmp_path, "3.0.0")
    monkeypatch.setattr(golden, "GOLDEN", tmp_path)
    monkeypatch.setenv("TRACELENS_UPDATE_GOLDEN", "1")
    golden.assert_golden(
        fx.path, "trace_totals", "probe", start_ns=None, end_ns=None, selection=None, runtime=True
    )
    monkeypatch.delenv("TRACELENS_UPDATE_GOLDEN")
    golden.assert_golden(
        fx.path, "trace_totals", "probe", start_ns=None, end_ns=None, selection=None, runtime=True
    )
    assert (tmp_path / "trace_totals__probe.csv").read_text().count("\n") >= 2
