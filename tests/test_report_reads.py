"""What the report reads from a trace: each analysis once, shared between the sections that
show it (the report of a 5M-launch trace cost ~30 CPU s when each section read its own)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from conftest import shared_traces
from polars.testing import assert_frame_equal

import tracelens
from tracelens import activity
from tracelens.demo import demo_path
from tracelens.report import build_report, infoshare, sharedread, stakeoutread, stakeoutview
from tracelens.stakeout import kernel_profiles
from tracelens.trace import Trace


@pytest.fixture
def queries_run(monkeypatch) -> Counter:
    """The name of every query file a Trace runs, counted (those SQLite runs on the export
    itself too, on the page's thread or beside it: report/aside.py)."""
    from tracelens import _resources
    from tracelens.report.aside import Aside

    runs: Counter = Counter()
    query, query_rows, sqlite_rows = Trace.query, Trace.query_rows, Trace._sqlite_rows
    names: dict[str, str] = {}  # the text of each query file read, by its name
    read = _resources.query

    def named(name):
        text = read(name)
        names[text] = name
        return text

    def counted_sqlite(self, sql, params=()):
        if sql in names:
            runs[names[sql]] += 1
        return sqlite_rows(self, sql, params)

    def counted(self, name, **params):
        runs[name] += 1
        return query(self, name, **params)

    aside_rows = Aside._rows

    def counted_aside(self, sql, params=()):
        if sql in names:
            runs[names[sql]] += 1
        return aside_rows(self, sql, params)

    def counted_rows(self, name, **params):
        runs[name] += 1
        return query_rows(self, name, **params)

    monkeypatch.setattr(Trace, "query", counted)
    monkeypatch.setattr(Trace, "query_rows", counted_rows)
    monkeypatch.setattr(Trace, "_sqlite_rows", counted_sqlite)
    monkeypatch.setattr(Aside, "_rows", counted_aside)
    monkeypatch.setattr(_resources, "query", named)
    return runs


def test_single_report_reads_the_gpu_work_once(queries_run):
    """One sorted read of the GPU work serves the busy time, util, the step search, the
    census table, the line-up's kernels and the timeline's kernel categories and bins; the
    stakeout's spreads and histograms; the launch configurations are SQLite's aggregate
    (the export is read directly: no DuckDB scan of its kernel table)."""
    with tracelens.open(demo_path("bs16")) as t:
        build_report(t)
    assert queries_run["work_in_order"] == 1
    # the step search takes work_in_order's kernels, reading no launches of its own
    assert queries_run["steps_launches"] == queries_run["steps_launch_rows"] == 0
    assert queries_run["trace_totals"] == 0  # the page shows only the busy time
    assert queries_run["report_stakeout_durations"] == 1
    assert queries_run["report_stakeout_configs_export"] == 1
    stakeout_reads = ("stakeout_profiles", "stakeout_spread", "stakeout_log_histogram")
    assert not any(queries_run[q] for q in stakeout_reads + ("stakeout_configs",))
    assert queries_run["kernel_summary"] == 0  # the census is that of the read
    assert queries_run["report_kernel_summary"] == 1
    assert queries_run["lineup_activities"] == 0  # the line-up's kernels are the read's
    # by demangled name, those the census of the read counted: no second scan of the read
    assert queries_run["report_lineup_activities"] == 0
    assert queries_run["report_lineup_kernels"] == 1
    assert queries_run["activity_kernel_names"] == 1
    assert queries_run["activity_bins"] == 0  # the bins are the read's, in polars (report/bins.py)


def test_cached_report_reads_what_its_entry_keeps(queries_run, tmp_path, monkeypatch):
    """Through a cache entry without the diff's read of the trace, the page reads the GPU
    work as it does directly (one work_in_order, its census over the rows read) and does not
    make the diff's read or keep it (the grid of each launch, its launching call, the
    write: ~2.2 CPU s of the 5M-kernel trace's first cached report); util keeps its
    accounting, which later runs read back. Once a diff kept its read in the entry, the
    page reads that back: no query of the work, no census, no call read. The page is the
    direct read's every time.
    (The kept page, report/kept.py, is not read here: the page is built each time.)"""
    from tracelens.compare import workfile
    from tracelens.report import kept

    monkeypatch.setattr(kept, "read", lambda *_: None)
    page = _new_cache_entry(demo_path("bs16"), tmp_path, monkeypatch)
    for run in ("first", "accounting kept"):
        queries_run.clear()
        with tracelens.open(demo_path("bs16"), cache=True) as t:
            assert build_report(t) == page, run
            assert t._lazy is not None and not t._lazy.off
            assert not workfile.holds(t), run
        assert queries_run["work_in_order"] == queries_run["report_kernel_summary"] == 1, run
        assert queries_run["diff_kernels"] == 0, run
        # the first run reads every call for util; the next reads util's accounting back
        assert queries_run["util_calls"] == (run == "first"), run
        assert queries_run["util_call_figures"] == 0, run
    with tracelens.open(demo_path("bs16"), cache=True) as t:
        tracelens.diff(t, t)  # keeps its read of the trace in the entry
        assert workfile.holds(t)
    queries_run.clear()
    with tracelens.open(demo_path("bs16"), cache=True) as t:
        assert build_report(t) == page
    assert queries_run["work_in_order"] == queries_run["util_calls"] == 0
    assert queries_run["diff_kernels"] == queries_run["report_kernel_summary"] == 0
    assert queries_run["util_call_figures"] == 0  # util's accounting, kept, read back


def _new_cache_entry(path, tmp_path, monkeypatch) -> str:
    """Point the cache at a new directory, caching every trace, make ``path``'s entry, and
    return ``path``'s page read directly."""
    monkeypatch.setenv("TRACELENS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("TRACELENS_CACHE_MIN_MB", "0")
    with tracelens.open(path, cache=False) as t:
        page = build_report(t)
    return page


def test_cached_page_is_kept_and_read_back(queries_run, tmp_path, monkeypatch):
    """Through a cache entry the first run keeps the page (report/kept.py) and a later one
    with the same traces and options reads it back, running no query; other options, a
    trace under another name (the page's labels), another pair, another tracelens version
    or a direct read build their own page."""
    from tracelens.report import kept

    page = _new_cache_entry(demo_path("bs16"), tmp_path, monkeypatch)
    link = tmp_path / "renamed.sqlite"
    link.symlink_to(demo_path("bs16"))

    def built(path=None, other=None, **options) -> tuple[str, int]:
        queries_run.clear()
        with tracelens.open(path or demo_path("bs16")) as t:
            if other is None:
                got = build_report(t, **options)
            else:
                with tracelens.open(other) as b:
                    got = build_report(t, b, **options)
        return got, sum(queries_run.values())

    first, queries = built()
    assert first == page and queries
    assert built() == (page, 0)
    top5, queries = built(top=5)
    assert top5 != page and queries and built(top=5) == (top5, 0)
    renamed, queries = built(link)
    assert "renamed.sqlite" in renamed and queries and built(link) == (renamed, 0)
    pair, queries = built(other=link)
    assert queries and built(other=link) == (pair, 0)
    assert built(other=demo_path("bs16"))[1]  # the other trace is part of the name
    monkeypatch.setattr(kept, "_version", lambda: "another")
    assert built() == (page, queries_run.total()) and queries_run.total()
    monkeypatch.setenv("TRACELENS_NO_CACHE", "1")
    assert built()[1] and built()[1]


def test_reads_of_the_views_are_the_same_page(queries_run, monkeypatch):
    """Where the export is not read directly (a cache entry, a parquetdir) the stakeout is
    one read of the views' launches (queries/stakeout_profiles.sql) and the header's
    processes with CUDA API calls are the view's (report_runtime_pids.sql), and the page
    is the same as from the shared read and SQLite."""
    with tracelens.open(demo_path("bs16"), cache=False) as t:
        page = build_report(t)
    assert queries_run["report_runtime_threads_export"] == 1
    monkeypatch.setattr(sharedread, "reads_export", lambda *_: False)
    with tracelens.open(demo_path("bs16"), cache=False) as t:
        assert build_report(t) == page
    assert queries_run["stakeout_profiles"] == queries_run["report_stakeout_durations"] == 1
    assert queries_run["report_runtime_pids"] == 1


def test_pair_report_reads_each_traces_gpu_work_once(queries_run):
    """In the report of two traces each trace's GPU work is read once, by the diff, and
    serves its side's census, line-up and timeline too (kept on the diff's sides)."""
    with tracelens.open(demo_path("bs1")) as a, tracelens.open(demo_path("bs16")) as b:
        build_report(a, b)
    # the diff's read of each (queries/work_in_order.sql, with the launch grid), and of the
    # work of each one's decode steps (they hold 19% of bs16's GPU time: the board compares
    # their own work, compare/outside.py)
    assert queries_run["work_in_order"] == 4
    assert queries_run["lineup_activities"] == 0
    assert queries_run["report_lineup_activities"] == 2
    assert queries_run["kernel_summary"] == 0  # the census is the diff's
    # the diff's stakeout: from each side's read, while it is held (the export is read
    # directly: SQLite's launch configurations), not a read of the launches
    assert queries_run["report_stakeout_durations"] == 2
    assert queries_run["stakeout_profiles"] == queries_run["stakeout_configs"] == 0


def test_report_of_a_trace_with_itself_reads_its_work_once(queries_run):
    """A trace with itself: the diff reads its GPU work once, and both sides' census,
    line-up and timeline are that read's; the stakeout's profiles are read once too."""
    with tracelens.open(demo_path("bs16")) as a, tracelens.open(demo_path("bs16")) as b:
        build_report(a, b)
    assert queries_run["work_in_order"] == 1
    assert queries_run["lineup_activities"] == queries_run["activity_bins"] == 0
    assert queries_run["report_lineup_activities"] == 2
    assert queries_run["report_stakeout_durations"] == 1
    assert queries_run["fingerprint_paths"] == 1  # the numerical path: one fingerprint


@pytest.mark.parametrize("trace", ["bs1", "bs16"])
def test_pair_report_fingerprints_with_the_diffs_steps(trace, queries_run, monkeypatch):
    """The numerical path's fingerprints take the steps the diff found (no step search of
    their own), and are the documents the fingerprint builds alone."""
    from tracelens.fingerprint import build, units

    with tracelens.open(demo_path(trace)) as t:
        alone = build(t)
        assert build(t, steps=t.steps()) == alone
    searches = []
    search = units.find_launch_steps
    monkeypatch.setattr(units, "find_launch_steps", lambda *a: searches.append(1) or search(*a))
    queries_run.clear()
    with tracelens.open(demo_path("bs1")) as a, tracelens.open(demo_path("bs16")) as b:
        build_report(a, b)
    assert queries_run["fingerprint_paths"] == 2 and not searches


def test_the_diff_keeps_its_read_only_when_asked():
    from tracelens.compare.collect import WORK_COLUMNS

    with tracelens.open(demo_path("bs1")) as a, tracelens.open(demo_path("bs16")) as b:
        kept = tracelens.diff(a, b, keep_work=True)
        assert all(s.work is None for s in tracelens.diff(a, b).sides)
        for side, t in zip(kept.sides, (a, b), strict=True):
            assert side.work.columns == list(WORK_COLUMNS)
            assert side.work.equals(sharedread.read_work(t).select(WORK_COLUMNS))


def test_a_cached_diff_leaves_its_read_in_the_entry(tmp_path, monkeypatch):
    """Through cache entries the diff keeps no side's work in memory for the report (each
    entry keeps it: the 5M pair's peak held both through the second side's step search);
    the page reads it back, one side at a time, the same rows as a direct read's, and the
    pair's page is the direct one's. Without the file (evicted meanwhile) the page is the
    same, its sections reading the trace."""
    from tracelens.compare import collect, workfile
    from tracelens.compare.collect import WORK_COLUMNS
    from tracelens.report import kept

    monkeypatch.setattr(kept, "read", lambda *_: None)
    paths = (demo_path("bs1"), demo_path("bs16"))
    with tracelens.open(paths[0], cache=False) as a, tracelens.open(paths[1], cache=False) as b:
        page = build_report(a, b)
        direct = [sharedread.read_work(t).select(WORK_COLUMNS) for t in (a, b)]
    monkeypatch.setenv("TRACELENS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("TRACELENS_CACHE_MIN_MB", "0")
    for run in ("keeps", "reads back"):
        with tracelens.open(paths[0]) as a, tracelens.open(paths[1]) as b:
            sides = tracelens.diff(a, b, keep_work=True).sides
            assert all(s.work is None and s.work_in_entry for s in sides), run
            for t, rows in zip((a, b), direct, strict=True):
                assert collect.kept_work(t).equals(rows), run
            assert build_report(a, b) == page, run
    monkeypatch.setattr(workfile, "kept", lambda *_a, **_k: None)
    with tracelens.open(paths[0]) as a, tracelens.open(paths[1]) as b:
        assert build_report(a, b) == page


def _shared_reads(trace_path: str):
    """(the trace, its GPU work as the report reads it once), for the tests below."""
    t = tracelens.open(trace_path)
    assert t.info.count("kernel") > 0, "a trace with kernels"
    return t, sharedread.read_work(t)


# the demo traces, and the shared real exports that have kernels
SHARED_TRACES = [str(demo_path("bs1")), str(demo_path("bs16"))] + [
    str(p) for p in shared_traces() if "cpu_only" not in p.name and "nvtx_only" not in p.name
]


@pytest.mark.parametrize("trace_path", SHARED_TRACES, ids=lambda p: Path(p).stem)
def test_census_of_the_read_is_census(trace_path):
    """The census table from the shared read is Trace.census, row for row and type for type
    (demangled and short names: short ones group several demangled)."""
    t, work = _shared_reads(trace_path)
    with t:
        for kind in sharedread.SHARED_NAME_KINDS:
            got, want = sharedread.census(t, work, kind), t.census(name=kind)
            assert got.schema == want.schema, kind
            assert got.equals(want), kind


@pytest.mark.parametrize("trace_path", SHARED_TRACES, ids=lambda p: Path(p).stem)
def test_lineup_of_the_read_is_lineup(trace_path):
    """The line-up from the shared read's kernels is Trace.lineup, row for row (demangled
    and short names, the default breakdown and every category's)."""
    from tracelens.lineup import category_summary

    t, work = _shared_reads(trace_path)
    with t:
        for kind in sharedread.SHARED_NAME_KINDS:
            acts = sharedread.lineup_activities(t, work, kind)
            for subfamily in (None, True):
                got = category_summary(t, name=kind, subfamily=subfamily, activities=acts)
                assert got.equals(t.lineup(name=kind, subfamily=subfamily)), (kind, subfamily)


@pytest.mark.parametrize("trace_path", SHARED_TRACES, ids=lambda p: Path(p).stem)
def test_polars_bins_are_the_querys(trace_path):
    """The timeline's bins computed in polars from the shared read are activity_bins.sql's
    rows: the whole span, a window that clips events, and bins so narrow that events cover
    several (busy time to the sum order's rounding)."""
    from tracelens.report.bins import work_bins

    t, work = _shared_reads(trace_path)
    with t:
        g0, g1 = activity.gpu_span(t)
        mid = (g0 + g1) // 2
        for kind in ("demangled", "short"):
            cats = activity.kernel_categories(t, name=kind, work=work)
            windows = ((g0, g1 + 1, 500), (mid - 1_000_000, mid + 1_000, 97), (g0, g1, 50_000))
            for t0, t1, bins in windows:
                want = activity.activity_bins(t, t0, t1, bins, name=kind, categories=cats)
                got = work_bins(work, t0, t1, bins, cats, kind)
                assert got.drop("busy_ns").equals(want.drop("busy_ns")), (kind, bins)
                assert_frame_equal(got, want, check_exact=False, rel_tol=1e-12)


def test_bins_match_names_one_by_one_past_the_lookup(monkeypatch):
    """Name ids beyond what the lookup table covers (or negative) are matched one by one:
    the same bins."""
    from tracelens.report import bins

    t, work = _shared_reads(str(demo_path("bs16")))
    with t:
        g0, g1 = activity.gpu_span(t)
        cats = activity.kernel_categories(t, work=work)
        looked_up = bins.work_bins(work, g0, g1 + 1, 500, cats, "demangled")
        monkeypatch.setattr(bins, "LOOKUP_IDS", 0)
        assert bins.work_bins(work, g0, g1 + 1, 500, cats, "demangled").equals(looked_up)


@pytest.mark.parametrize("trace_path", SHARED_TRACES, ids=lambda p: Path(p).stem)
def test_timeline_of_the_read_is_the_traces(trace_path):
    """The kernel categories and the bins from the shared read are those read from the
    trace's views (the overview of the whole span, and a window with clipped events)."""
    t, work = _shared_reads(trace_path)
    with t:
        span = activity.gpu_span(t)
        g0, g1 = span
        mid = (g0 + g1) // 2
        for kind in ("demangled", "short"):
            cats = activity.kernel_categories(t, name=kind)
            assert activity.kernel_categories(t, name=kind, work=work) == cats
            for t0, t1, bins in ((g0, g1 + 1, 500), (mid - 1_000_000, mid + 1_000, 97)):
                want = activity.activity_bins(t, t0, t1, bins, name=kind, categories=cats)
                got = activity.activity_bins(t, t0, t1, bins, name=kind, categories=cats, work=work)
                assert_frame_equal(got, want, check_exact=False, rel_tol=1e-12)
        # the connection is as it was: no relation left registered, no optimizer left off
        assert t.db.execute("SELECT current_setting('disabled_optimizers')").fetchone()[0] == ""


@pytest.mark.parametrize("trace", ["bs1", "bs16"])
def test_one_read_profiles_are_kernel_profiles(trace, monkeypatch):
    """The stakeout from one read (queries/stakeout_profiles.sql) is kernel_profiles's, and
    above HELD_LAUNCHES the page takes kernel_profiles's three reads instead."""
    with tracelens.open(demo_path(trace)) as t:
        census = t.census()
        names = census["name"].head(8).to_list() + ["not launched"]
        launches = int(census["instances"].head(8).sum())
        expected = kernel_profiles(t, names, per_octave=stakeoutview.PER_OCTAVE)
        one = stakeoutview.profiles(t, names, "demangled", launches)
        assert one.configs.height > len(names) - 1  # some kernel has several configurations
        for part in ("spread", "histogram", "configs"):
            assert getattr(one, part).equals(getattr(expected, part)), part
        monkeypatch.setattr(stakeoutview, "HELD_LAUNCHES", launches - 1)
        calls = []
        monkeypatch.setattr(Trace, "query", _recording(Trace.query, calls))
        stakeoutview.profiles(t, names, "demangled", launches)
        assert "stakeout_profiles" not in calls and "stakeout_spread" in calls


def _recording(query, calls: list[str]):
    def recorded(self, name, **params):
        calls.append(name)
        return query(self, name, **params)

    return recorded


def test_short_names_one_read(monkeypatch):
    """Short names group several demangled ones: the one read groups them the same way."""
    with tracelens.open(demo_path("bs16")) as t:
        census = t.census(name="short")
        names = census["name"].head(5).to_list()
        expected = kernel_profiles(t, names, name="short", per_octave=stakeoutview.PER_OCTAVE)
        one = stakeoutview.profiles(t, names, "short", int(census["instances"].head(5).sum()))
    for part in ("spread", "histogram", "configs"):
        got, want = getattr(one, part), getattr(expected, part)
        assert got.equals(want), part


@pytest.mark.parametrize("trace_path", SHARED_TRACES, ids=lambda p: Path(p).stem)
def test_direct_profiles_are_kernel_profiles(trace_path):
    """The stakeout read directly (spreads and histograms of the shared read, SQLite's
    launch configurations) is kernel_profiles's, for demangled and short names (short
    ones group several demangled), a name not launched included."""
    with tracelens.open(trace_path, cache=False) as t:
        table = sharedread.for_duckdb(sharedread.read_work(t))
        for kind in sharedread.SHARED_NAME_KINDS:
            names = t.census(name=kind)["name"].head(8).to_list() + ["not launched"]
            want = kernel_profiles(t, names, name=kind, per_octave=stakeoutview.PER_OCTAVE)
            got = stakeoutread.direct_profiles(t, names, kind, table, stakeoutview.PER_OCTAVE)
            assert got is not None and got.spread.height == len(names) - 1, kind
            for part in ("spread", "histogram", "configs"):
                assert_frame_equal(getattr(got, part), getattr(want, part), rel_tol=1e-12)


# What nsys never writes, each as it shows in report_stakeout_configs_export.sql's
# aggregates: a grouped value, a NULL time (timed), a real one (total_ns), text or a blob
# (sorting above every number: last_start, last_end), a time beyond tracelens's range.
ODD_LAUNCHES = {
    "text grid": "gridX = 'x'",
    "real shared memory": "staticSharedMemory = 1.5",
    "text registers": "registersPerThread = 'many'",
    "NULL start": "start = NULL",
    "NULL end": '"end" = NULL',
    "real start": "start = start + 0.5",
    "text start": "start = 'at ' || start",
    "blob end": '"end" = CAST("end" AS BLOB)',
    "end beyond the range": f'"end" = {2**62}',
}


@pytest.mark.parametrize("kind", ["demangled", "short"])
def test_configs_read_beside_the_page_are_the_direct_ones(kind):
    """The launch configurations SQLite aggregates on the aside thread, started as soon as
    the page knows its kernels, are those read in turn; started for other names they are
    not used."""
    from tracelens.report.aside import Aside

    with tracelens.open(demo_path("bs16"), cache=False) as t:
        table = sharedread.for_duckdb(sharedread.read_work(t))
        names = t.census(name=kind)["name"].head(5).to_list()
        want = stakeoutread.direct_profiles(t, names, kind, table, 4)
        with Aside(t) as aside:
            pending = stakeoutread.start_configs(t, names, kind, aside)
            got = stakeoutread.direct_profiles(t, names, kind, table, 4, pending)
            other = stakeoutread.start_configs(t, names[:2], kind, aside)
            again = stakeoutread.direct_profiles(t, names, kind, table, 4, other)
    assert got.configs.height >= len(names)
    for part in ("spread", "histogram", "configs"):
        assert_frame_equal(getattr(got, part), getattr(want, part))
        assert_frame_equal(getattr(again, part), getattr(want, part))


def test_configs_start_before_the_step_search(queries_run, monkeypatch):
    """On an export read directly, SQLite's aggregate of the stakeout's launch
    configurations starts as soon as the page's read of the GPU work is made, before the
    step search and util (it runs beside them), once, and the page takes that one."""
    from tracelens import steps

    events = []
    start, find = stakeoutread.start_configs, steps.find_steps

    def started(*args):
        events.append("configs")
        return start(*args)

    def found(*args, **kwargs):
        events.append("steps")
        return find(*args, **kwargs)

    monkeypatch.setattr(stakeoutread, "start_configs", started)
    monkeypatch.setattr(steps, "find_steps", found)
    with tracelens.open(demo_path("bs16"), cache=False) as t:
        page = build_report(t)
    assert events == ["configs", "steps"]
    assert queries_run["report_stakeout_configs_export"] == 1
    monkeypatch.setattr(stakeoutread, "start_configs", lambda *_: None)  # read in turn
    with tracelens.open(demo_path("bs16"), cache=False) as t:
        assert build_report(t) == page


def test_aside_errors_are_the_traces(tmp_path):
    """SQLite's error on the aside thread is the trace's one line (TraceError), raised
    where the page takes the rows; a failing page waits for the thread and closes it."""
    from tracelens.errors import TraceError
    from tracelens.report.aside import Aside

    with tracelens.open(demo_path("bs16"), cache=False) as t:
        with Aside(t) as aside:
            rows = aside.submit("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL")
            broken = aside.submit("SELECT * FROM no_such_table")
            assert rows.result() == [(t.info.count("kernel"),)]
            with pytest.raises(TraceError, match="sqlite: no such table"):
                broken.result()
        with pytest.raises(RuntimeError), Aside(t) as aside:
            aside.submit("SELECT 1")
            raise RuntimeError("the page failed")
        assert aside._con is not None and aside._pool is not None
        with pytest.raises(Exception, match="closed"):
            aside._con.execute("SELECT 1")


@pytest.mark.parametrize("damage", ODD_LAUNCHES.values(), ids=list(ODD_LAUNCHES))
def test_direct_profiles_leave_odd_rows_to_the_views(tmp_path, damage):
    """A launch that holds what nsys never writes: the views are read instead (they say
    what is wrong)."""
    import shutil
    import sqlite3

    path = tmp_path / "odd.sqlite"
    shutil.copy(demo_path("bs1"), path)
    with tracelens.open(path, cache=False) as t:
        table = sharedread.for_duckdb(sharedread.read_work(t))
        names = t.census()["name"].to_list()
        assert stakeoutread.direct_profiles(t, names, "demangled", table, 4) is not None
    con = sqlite3.connect(path)
    # nsys declares start and end NOT NULL: a copy of the table without the constraints
    kernels = "CUPTI_ACTIVITY_KIND_KERNEL"
    con.execute(f"CREATE TABLE loose AS SELECT * FROM {kernels}")
    con.execute(f"DROP TABLE {kernels}")
    con.execute(f"ALTER TABLE loose RENAME TO {kernels}")
    con.execute(f"UPDATE {kernels} SET {damage} WHERE rowid = 1")
    con.commit()
    con.close()
    with tracelens.open(path, cache=False) as t:
        assert stakeoutread.direct_profiles(t, names, "demangled", table, 4) is None


def test_direct_profiles_leave_cache_entries_to_the_views(tmp_path, monkeypatch):
    """A cache entry: the views are read (cheap there)."""
    monkeypatch.setenv("TRACELENS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("TRACELENS_CACHE_MIN_MB", "0")
    with tracelens.open(demo_path("bs1"), cache=True) as t:
        table = sharedread.for_duckdb(sharedread.read_work(t))
        names = t.census()["name"].to_list()
        assert stakeoutread.direct_profiles(t, names, "demangled", table, 4) is None
        assert t._lazy is not None


@pytest.mark.parametrize("trace_path", SHARED_TRACES, ids=lambda p: Path(p).stem)
def test_window_counts_of_the_read_are_the_operations(trace_path):
    """Whether the detail window holds more operations than it draws, counted in the
    shared read, is what gpu_operations reads: windows that end at an operation's start,
    start at its end, lie inside it, and the whole span."""
    from tracelens.report.worktable import more_than as _more_than

    t, work = _shared_reads(trace_path)
    with t:
        table = sharedread.for_duckdb(work)
        kernels = t.sql('SELECT start, "end" FROM kernels ORDER BY start').rows()
        s, e = kernels[len(kernels) // 2]
        g0, g1 = activity.gpu_span(t)
        for t0, t1 in ((e, e + 50_000), (s - 20_000, s), (s + 1, e - 1), (g0, g1)):
            n = activity.gpu_operations(t, t0, t1, limit=10**9).height
            assert not _more_than(table, t0, t1, n) and _more_than(table, t0, t1, n - 1)


@pytest.mark.parametrize("trace_path", SHARED_TRACES, ids=lambda p: Path(p).stem)
def test_window_operations_read_from_sqlite_are_the_views(trace_path):
    """The detail window's operations, read with SQLite picking the window's kernels out,
    are those of the whole kernels view, by nsys's rule (tracelens.filters.in_window): an
    operation ending exactly at the window's start, or spanning it, is in; one starting
    exactly at its end is out (the kernel (s, e) below is in or out as the rule says)."""
    import polars as pl

    from tracelens.filters import EventFilter, in_window

    with tracelens.open(trace_path, cache=False) as t:
        kernels = t.sql('SELECT start, "end" FROM kernels ORDER BY start').rows()
        s, e = kernels[len(kernels) // 2]
        for t0, t1 in ((e, e + 50_000), (s - 20_000, s), (s + 1, e - 1), (s, s + 1), (s, s)):
            got = activity.gpu_operations(t, t0, t1, limit=4001)
            want = t.query("activity_operations", t0=t0, t1=t1, limit=4001,
                           name_kind="demangled", **EventFilter().params())  # fmt: skip
            assert got.equals(want), (t0, t1)
            held = got.filter((pl.col("start") == s) & (pl.col("end") == e)).height > 0
            assert held == in_window(s, e, t0, t1), (t0, t1)


def test_the_read_is_in_util_order():
    """work_in_order's packed-key sort gives util.ORDER's order, ties on device and start
    broken by stream, end and kind (rows built to tie), and NULL devices sort as ORDER
    sorts them."""
    import polars as pl

    from tracelens.util import ORDER, _in_order

    work = pl.DataFrame(
        {
            "device": [1, 0, 0, 0, 1, 0, 0],
            "start_ns": [5, 9, 5, 5, 2, 5, 5],
            "stream": [7, 7, 8, 7, 7, 7, 7],
            "end_ns": [9, 10, 6, 8, 3, 6, 6],
            "kind": pl.Series([0, 0, 0, 0, 0, 1, 0], dtype=pl.Int8),
        }
    )
    got = _in_order(work)
    assert got.equals(work.sort(ORDER))
    assert got["end_ns"].to_list() == [6, 6, 8, 6, 10, 3, 9]
    with_null = work.with_columns(device=pl.Series([1, None, 0, 0, 1, 0, 0]))
    assert _in_order(with_null).equals(with_null.sort(ORDER))


def test_single_report_does_not_scan_the_kernels_for_its_info(queries_run):
    """The header's counts, spans and processes of the GPU work are the work read's
    (report/infoshare.py): info reads only the other kinds, never _event_counts."""
    with tracelens.open(demo_path("bs16")) as t:
        build_report(t)
    assert queries_run["_event_counts"] == 0
    assert queries_run["_host_event_counts"] == 1
    assert queries_run["util_calls"] == 1  # the calls' count and span are util's
    assert queries_run["work_in_order"] == 1


@pytest.mark.parametrize("trace_path", SHARED_TRACES, ids=lambda p: Path(p).stem)
def test_info_of_the_read_is_info(trace_path):
    """The info built from the work read's GPU figures is the info read from the trace,
    field by field (counts, spans, processes, everything)."""
    with tracelens.open(trace_path, cache=False) as t:
        expected = t.info
    with tracelens.open(trace_path, cache=False) as t:
        counts = infoshare.gpu_operation_counts(t)
        assert counts == {k: expected.count(k) for k in ("kernel", "memcpy", "memset")}
        figures = infoshare.gpu_figures(sharedread.read_work(t), counts)
        assert figures is not None
        assert t.info_with_gpu_counts(figures) == expected


@pytest.mark.parametrize("trace_path", SHARED_TRACES, ids=lambda p: Path(p).stem)
@pytest.mark.parametrize("direct", [True, False], ids=["sqlite", "view"])
def test_info_with_utils_calls_is_info(trace_path, direct, monkeypatch):
    """The info built from the work read's GPU figures and util's figures of the CUDA API
    calls (their processes read by SQLite, or through the view) is the info read from the
    trace, field by field."""
    from tracelens.util import accounting_and_calls

    if not direct:
        monkeypatch.setattr(sharedread, "reads_export", lambda *_: False)
    with tracelens.open(trace_path, cache=False) as t:
        expected = t.info
    with tracelens.open(trace_path, cache=False) as t:
        if not expected.count("kernel"):
            pytest.skip("no kernels: the report reads no util")
        counts = infoshare.gpu_operation_counts(t)
        work = sharedread.read_work(t)
        calls = accounting_and_calls(t, None, work.drop("stream"))[1]
        infoshare.share_info(t, work, counts, calls)
        assert t.info == expected


def test_info_is_read_when_the_work_lacks_rows():
    """A kind whose rows the work read does not all hold: no figures (info reads them)."""
    with tracelens.open(demo_path("bs1"), cache=False) as t:
        counts = infoshare.gpu_operation_counts(t)
        work = sharedread.read_work(t)
    assert infoshare.gpu_figures(work, counts) is not None
    assert infoshare.gpu_figures(work.slice(1), counts) is None
