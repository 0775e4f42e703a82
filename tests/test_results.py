"""Every analysis result offers its tables to a notebook: to_polars() (the main table, or one
by name), to_dicts(), tables() and _repr_html_ (what Jupyter shows)."""

from __future__ import annotations

import html

import polars as pl
import pytest

import tracelens
from tracelens.compare.model import Clue, SequenceAlignment, alignment_frame, clues_frame
from tracelens.demo import demo_path
from tracelens.errors import UsageError
from tracelens.nvtx import nvtx_report
from tracelens.results import HTML_ROWS, Result, records


@pytest.fixture(scope="module")
def results():
    with tracelens.open(demo_path("bs1")) as a, tracelens.open(demo_path("bs16")) as b:
        return {
            "stakeout": (a.stakeout("nvjet"), "launches"),
            "timeline": (a.timeline(limit=20), "events"),
            "diff": (tracelens.diff(a, b), "kernels"),
            "steps": (a.steps(), "steps"),
            "util": (a.util(), "devices"),
            "findings": (a.findings(), "findings"),
            "nvtx": (nvtx_report(a), "ranges"),
        }


KINDS = ["stakeout", "timeline", "diff", "steps", "util", "findings", "nvtx"]


@pytest.mark.parametrize("kind", KINDS)
def test_every_result_gives_its_tables_as_polars_dicts_and_html(results, kind):
    result, main = results[kind]
    assert isinstance(result, Result)
    tables = result.tables()
    assert next(iter(tables)) == main
    assert all(isinstance(df, pl.DataFrame) for df in tables.values())
    assert result.to_polars().equals(tables[main])
    assert result.to_dicts() == tables[main].to_dicts()
    for name, df in tables.items():
        assert result.to_polars(name).equals(df)
    with pytest.raises(UsageError, match=f"has no table 'nope'; it has: {', '.join(tables)}$"):
        result.to_polars("nope")
    page = result._repr_html_()
    assert page.startswith(f"<p><b>{type(result).__name__}</b>")
    for name, df in tables.items():
        rows = f"{df.height:,} row{'' if df.height == 1 else 's'}"
        assert f"<p><code>{html.escape(name)}</code>: {rows}</p>" in page
    shown = [df for df in tables.values() if df.height]
    assert page.count("<table") == len(shown)  # each non-empty table, its first rows
    assert page.count("<tbody>") == len(shown)


def test_the_main_tables_are_the_results_own(results):
    with tracelens.open(demo_path("bs1")) as a:
        assert a.nvtx().equals(results["nvtx"][0].frame)  # Trace.nvtx: that table
        assert a.nvtx(gpu=True).columns != a.nvtx().columns
    stakeout = results["stakeout"][0]
    assert stakeout.to_polars().equals(stakeout.launches)
    assert stakeout.to_polars("configs").equals(stakeout.configs)
    assert results["steps"][0].to_polars().equals(results["steps"][0].frame)
    assert results["util"][0].to_polars("idle_causes").equals(results["util"][0].idle_causes)
    findings = results["findings"][0]
    assert findings.to_polars().equals(findings.frame)
    for r in findings.results:
        assert findings.to_polars(r.rule).equals(r.frame)


def test_a_diffs_clues_and_alignment_are_dataframes(results):
    d = results["diff"][0]
    clues = d.to_polars("clues")
    assert clues.columns == list(Clue.__dataclass_fields__)
    assert clues.height == len(d.clues) > 0
    assert clues["id"].to_list() == [c.id for c in d.clues]
    assert clues["impact_ns"].to_list() == [c.impact_ns for c in d.clues]
    assert clues["rows"].to_list() == [list(c.rows) for c in d.clues]
    # no clues: an empty frame with the same columns and types, not a frame without any
    assert clues_frame(()).schema == clues.schema
    assert records((), tuple(Clue.__dataclass_fields__)).columns == clues.columns


def test_a_diffs_alignment_is_typed_ints_names_and_structs(results):
    d = results["diff"][0]
    alignment = d.to_polars("alignment")
    assert alignment.columns == list(SequenceAlignment.__dataclass_fields__)
    assert alignment["device"].to_list() == [a.device for a in d.alignment]
    assert alignment["matched_in_order"].to_list() == [a.matched_in_order for a in d.alignment]
    schema = alignment.schema
    for col in ("device", "launches_a", "aligned", "first_divergence", "steps_b"):
        assert schema[col] == pl.Int64, col
    assert schema["a_at_divergence"] == schema["relation"] == pl.String
    assert schema["truncated"] == pl.Boolean
    named = pl.Struct({"name_a": pl.String, "name_b": pl.String, "launches": pl.Int64})
    assert schema["replaced"] == pl.List(named)
    assert schema["only_in_a"] == pl.List(pl.Struct({"name": pl.String, "launches": pl.Int64}))
    changes = pl.Struct({"launch": pl.Int64, "name_a": pl.String, "name_b": pl.String})
    assert schema["step_changes"] == pl.List(changes)
    # the demo pair differs: every nested tuple is there, member by member, typed
    (al,) = d.alignment
    assert al.replaced and al.only_in_a and al.only_in_b and al.step_changes and al.step_calls
    replaced = alignment.select("replaced").explode("replaced").unnest("replaced")
    assert replaced.rows() == [tuple(r) for r in al.replaced]
    assert replaced["launches"].sum() == sum(n for _, _, n in al.replaced)
    steps = alignment.select("step_calls").explode("step_calls").unnest("step_calls")
    assert steps.columns == ["name", "per_step_a", "per_step_b"]
    assert steps.rows() == [tuple(r) for r in al.step_calls]
    changed = alignment.select("step_changes").explode("step_changes").unnest("step_changes")
    assert changed.rows() == [tuple(r) for r in al.step_changes]
    assert changed["name_a"].null_count() > 0  # a launch B makes and A does not: null, not "None"
    # the JSON names the members the same way
    (js,) = d.to_dict()["alignment"]
    name_a, name_b, launches = al.replaced[0]
    assert js["replaced"][0] == {"name_a": name_a, "name_b": name_b, "launches": launches}
    name, per_a, per_b = al.step_calls[0]
    assert js["step_calls"][0] == {"name": name, "per_step_a": per_a, "per_step_b": per_b}
    # no devices: the same columns and types
    assert alignment_frame(()).schema == schema


def test_html_shows_the_first_rows_and_escapes_text(tmp_path):
    from tracelens.synth import TraceBuilder

    b = TraceBuilder("3.25.0")
    b.process(1, "app")
    for i in range(HTML_ROWS + 5):
        b.kernel("<script>k</script>", start=i * 100, end=i * 100 + 10, pid=1)
    path = b.write(tmp_path / "t.sqlite")
    with tracelens.open(path) as t:
        result = t.stakeout("script")
    page = result._repr_html_()
    assert "<script>" not in page and "&lt;script&gt;" in page
    assert f"<p><code>launches</code>: {HTML_ROWS + 5} rows</p>" in page
    assert result.launches.head(HTML_ROWS)._repr_html_() in page  # the first rows only
    assert result.launches._repr_html_() not in page


def test_diff_takes_paths_as_well_as_open_traces(results):
    d = results["diff"][0]
    by_path = tracelens.diff(demo_path("bs1"), str(demo_path("bs16")))
    assert (by_path.label_a, by_path.label_b) == (d.label_a, d.label_b)
    assert [c.id for c in by_path.clues] == [c.id for c in d.clues]
    assert by_path.kernels.equals(d.kernels)
    with tracelens.open(demo_path("bs1")) as a:  # one open, one path
        assert (
            tracelens.diff(a, demo_path("bs16"))
            .to_polars("alignment")
            .equals(d.to_polars("alignment"))
        )
