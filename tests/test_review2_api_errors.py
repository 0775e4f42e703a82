"""The notebook API as a user calls it wrongly, and as the CLI calls it: a wrong argument is
one UsageError line (never a TypeError or AttributeError from deep inside, never silently
ignored), and an analysis method gives the numbers the command of the same name gives."""

from __future__ import annotations

import io

import polars as pl
import pytest
from conftest import run_cli

import tracelens
from tracelens.demo import demo_path
from tracelens.errors import UsageError


@pytest.fixture(scope="module")
def trace():
    with tracelens.open(demo_path("bs1"), cache=False) as t:
        yield t


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda t: t.census(top="3"), "top takes an integer, not str ('3')"),
        (lambda t: t.census(top=2.5), "top takes an integer, not float (2.5)"),
        (lambda t: t.lineup(top=True), "top takes an integer, not bool (True)"),
        (lambda t: t.timeline(limit="10"), "limit takes an integer, not str ('10')"),
        (lambda t: t.stakeout("splitK", limit=1.5), "limit takes an integer, not float (1.5)"),
    ],
)
def test_a_count_that_is_not_an_integer_is_a_usage_error(trace, call, message):
    with pytest.raises(UsageError) as caught:
        call(trace)
    assert str(caught.value) == message


def test_where_that_is_not_an_event_filter_is_a_usage_error(trace):
    # it was an AttributeError ('str' object has no attribute 'params') from census.py
    for method in (trace.census, trace.lineup, trace.memory_time, trace.danger):
        with pytest.raises(UsageError, match=r"^where takes an EventFilter .*not str; or give"):
            method(where="device=0")
    assert trace.census(where=trace.filter(device=0)).height == trace.census().height


def test_findings_limit_below_zero_is_refused_not_a_row_short(trace):
    # limit=-1 sliced every rule's rows to all but the last (sync_api: 4 of 5), silently
    with pytest.raises(UsageError, match=r"^limit must be 0 \(every row\) or more \(got -1\)$"):
        trace.findings(limit=-1)
    assert trace.findings(limit=0).result("sync_api").frame.height == 5


@pytest.mark.parametrize(
    "thresholds, message",
    [
        (
            {("sync_api", "gap_ms"): 1.0},
            r"^unknown threshold \('sync_api', 'gap_ms'\); use one of: ",
        ),
        ({("gpu_gaps", "gap_ms"): "100"}, r"takes a number >= 0, not '100'$"),
        ({("gpu_gaps", "gap_ms"): -5}, r"takes a number >= 0, not -5$"),
    ],
)
def test_findings_thresholds_that_no_rule_has_are_refused(trace, thresholds, message):
    # an unknown (rule, key) was ignored: the rule ran with its default and said nothing
    with pytest.raises(UsageError, match=message):
        trace.findings(thresholds=thresholds)


def test_findings_thresholds_that_a_rule_has_are_used(trace):
    low = trace.findings(only=("gpu_gaps",), thresholds={("gpu_gaps", "gap_ms"): 0.1}, limit=0)
    default = trace.findings(only=("gpu_gaps",), limit=0)
    assert low.result("gpu_gaps").thresholds["gap_ms"] == 0.1
    assert low.result("gpu_gaps").frame.height == 4 > default.result("gpu_gaps").frame.height


def test_lineup_names_its_top_kernels_as_the_command_does(trace, capsys):
    # Trace.lineup() grouped the top kernel by demangled name, `tracelens lineup` by short
    # name: top_kernel and top_kernel_ns of the same trace differed.
    rc, out, err = run_cli(["lineup", "--no-cache", demo_path("bs1"), "-f", "csv"], capsys)
    assert (rc, err) == (0, "")
    cli = pl.read_csv(io.StringIO(out), schema_overrides={"subfamily": pl.String})
    lib = trace.lineup()
    assert cli.columns == lib.columns
    assert cli["top_kernel"].to_list() == lib["top_kernel"].to_list()
    assert cli["top_kernel_ns"].to_list() == lib["top_kernel_ns"].to_list()
    assert "splitKreduce_kernel" in lib["top_kernel"].to_list()
    demangled = trace.lineup(name="demangled")["top_kernel"].to_list()
    assert any(name.startswith("void cublasLt::splitKreduce_kernel<") for name in demangled)


def test_trace_info_shows_in_a_notebook_as_tracelens_info_does(trace, capsys):
    # Jupyter showed TraceInfo's dataclass repr: one line of nested tuples
    import html
    from dataclasses import replace

    rc, out, err = run_cli(["info", "--no-cache", demo_path("bs1")], capsys)
    assert (rc, err) == (0, "")
    assert trace.info._repr_html_() == f"<pre>{html.escape(out)}</pre>"
    odd = replace(trace.info, path="<b>run\x1b[2J</b>.sqlite")._repr_html_()
    assert "&lt;b&gt;run\\x1b[2J&lt;/b&gt;.sqlite" in odd and "\x1b" not in odd


def test_steps_arguments_of_the_wrong_kind_are_usage_errors(trace):
    # range=5: TypeError from filters.py; top_kernels=-1 ran as top_kernels=0; "3": TypeError
    cases = [
        (dict(range=5), "range takes an NVTX label or glob, not int"),
        (dict(top_kernels=-1), "top_kernels must be 0 or more (got -1)"),
        (dict(top_kernels="3"), "top_kernels takes an integer, not str ('3')"),
    ]
    for kwargs, message in cases:
        with pytest.raises(UsageError) as caught:
            trace.steps(**kwargs)
        assert str(caught.value) == message


def test_findings_only_takes_one_rule_id_as_text(trace):
    # only="sync_api" was read letter by letter: "unknown rule '_'"
    one = trace.findings(only="sync_api")
    assert [r.rule for r in one.results] == ["sync_api"] and one.fired == ("sync_api",)
    assert trace.findings(only=["sync_api"]).fired == ("sync_api",)


def test_a_whole_float_amount_of_ns_still_works(trace):
    # counts must be integers now; an amount of ns written 1e5 is still one
    assert trace.timeline(gap_ns=1e5, limit=3).events.height == 3
    with pytest.raises(UsageError, match=r"^gap_ns takes an integer, not float \(1\.5\)$"):
        trace.timeline(gap_ns=1.5)
