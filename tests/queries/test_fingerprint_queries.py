"""Golden tests of the fingerprint queries: a run built by code (fixtures/fingerprint_runs:
2 steps x 2 layers, NVTX ranges, one layer with an extra merge kernel) and each query's
exact expected CSV. Nested columns (lists, structs) are written as DuckDB prints them."""

from __future__ import annotations

import importlib
import os

import polars as pl
import pytest
from fixtures.fingerprint_runs import Run, build_run

import tracelens
from queries.golden import GOLDEN
from tracelens._resources import query
from tracelens.fingerprint import nvtxpaths

build_module = importlib.import_module("tracelens.fingerprint.build")
units = importlib.import_module("tracelens.fingerprint.units")
unitrows = importlib.import_module("tracelens.fingerprint.unitrows")
orders = importlib.import_module("tracelens.fingerprint.order")


def _csv(trace, name: str, *, sort: bool = False, **params) -> str:
    """The query's result as CSV; ``sort`` for the view bodies, which have no order."""
    con = trace.db
    con.execute(f"CREATE OR REPLACE TEMP TABLE golden_result AS {query(name)}", params)
    cols = [r[0] for r in con.execute("DESCRIBE golden_result").fetchall()]
    casts = ", ".join(f'CAST("{c}" AS VARCHAR) AS "{c}"' for c in cols)
    order = " ORDER BY correlation_id::BIGINT, start::BIGINT" if sort else ""
    return con.execute(f"SELECT {casts} FROM golden_result{order}").pl().write_csv()


def _check(actual: str, name: str, case: str) -> None:
    expected_path = GOLDEN / f"{name}__{case}.csv"
    if os.environ.get("TRACELENS_UPDATE_GOLDEN"):
        expected_path.write_text(actual)
    assert expected_path.exists(), f"no golden file {expected_path.name}; see queries/golden.py"
    assert actual == expected_path.read_text(), f"{name} [{case}] differs from its golden CSV"


@pytest.fixture
def run_trace(tmp_path):
    path = build_run(tmp_path / "run.sqlite", Run(steps=2, merge={(2, 1)}))
    with tracelens.open(path) as trace:
        yield trace


@pytest.mark.parametrize("all_strings", [True, False], ids=["all_strings", "kernel_names"])
def test_fingerprint_names(run_trace, all_strings):
    case = "all_strings" if all_strings else "kernel_names"
    _check(_csv(run_trace, "fingerprint_names", all_strings=all_strings), "fingerprint_names", case)


def _attribution(trace) -> None:
    """The tables fingerprint_nvtx_paths and fingerprint_range_paths read."""
    from tracelens import nvtx

    nvtx.build_attribution(trace)
    con = trace.db
    con.execute(
        "CREATE OR REPLACE TEMP TABLE fp_overlap_threads AS " + query("fingerprint_overlap_threads")
    )
    nvtxpaths.create_overlap_paths(trace)
    nvtxpaths.create_open_paths(trace)


def _sorted_csv(trace, name: str, order: str, **params) -> str:
    con = trace.db
    sql = f"CREATE OR REPLACE TEMP TABLE golden_result AS SELECT * FROM ({query(name)}) ORDER BY {order}"
    con.execute(sql, params)
    cols = [r[0] for r in con.execute("DESCRIBE golden_result").fetchall()]
    casts = ", ".join(f'CAST("{c}" AS VARCHAR) AS "{c}"' for c in cols)
    return con.execute(f"SELECT {casts} FROM golden_result").pl().write_csv()


def _table_csv(trace, table: str, order: str) -> str:
    """A temp table the library built from a query (its inputs are gone), in ``order`` (of
    the table's columns, as ``t.column``)."""
    con = trace.db
    cols = [r[0] for r in con.execute(f"DESCRIBE {table}").fetchall()]
    casts = ", ".join(f'CAST("{c}" AS VARCHAR) AS "{c}"' for c in cols)
    return con.execute(f"SELECT {casts} FROM {table} AS t ORDER BY {order}").pl().write_csv()


def test_fingerprint_nvtx_paths(run_trace):
    _attribution(run_trace)
    csv = _sorted_csv(run_trace, "fingerprint_nvtx_paths", "global_pid, correlation_id")
    _check(csv, "fingerprint_nvtx_paths", "run")


def test_fingerprint_range_paths(run_trace):
    _attribution(run_trace)
    csv = _sorted_csv(run_trace, "fingerprint_range_paths", "path_id")
    _check(csv, "fingerprint_range_paths", "run")


def _overlapping_trace(tmp_path):
    """Start/end ranges that cross on thread 77 (and a push/pop pair that nests on 78)."""
    from tracelens.synth import TraceBuilder

    b = TraceBuilder("3.0.0")
    b.process(77, "python train.py")
    b.gpu(0, "NVIDIA H100 80GB HBM3")
    b.nvtx_range("a", start=1_000, end=9_000, pid=77, tid=77, event_type=60)
    b.nvtx_range("b", start=5_000, end=20_000, pid=77, tid=77, event_type=60)
    b.nvtx_range("outer", start=1_000, end=30_000, pid=77, tid=78)
    b.nvtx_range("inner", start=2_000, end=8_000, pid=77, tid=78)
    for i, (tid, start) in enumerate([(77, 6_000), (77, 12_000), (78, 3_000), (78, 9_000)]):
        cid = b.runtime("cudaLaunchKernel_v7000", start=start, end=start + 10, pid=77, tid=tid)
        b.kernel(f"k{i}", start=40_000 + i * 100, end=40_050 + i * 100, pid=77, device=0,
                 stream=7, correlation_id=cid)  # fmt: skip
    return b.write(tmp_path / "overlap.sqlite")


def test_fingerprint_overlap_threads_and_paths(tmp_path):
    """A thread whose ranges cross pairs its calls with every enclosing range; a nested
    thread takes the sweep's chain; both give the enclosing ranges, outermost first."""
    with tracelens.open(_overlapping_trace(tmp_path)) as trace:
        _attribution(trace)
        con = trace.db
        threads = [
            r[0] & 0xFFFFFF for r in con.execute("SELECT * FROM fp_overlap_threads").fetchall()
        ]
        con.execute(
            "CREATE OR REPLACE TEMP TABLE fp_path_lists AS " + query("fingerprint_range_paths")
        )
        rows = con.execute(
            "SELECT l.ranges FROM (" + query("fingerprint_nvtx_paths") + ") AS p "
            "JOIN fp_path_lists AS l ON l.path_id = p.path_id ORDER BY p.correlation_id"
        ).fetchall()
    labels = [[r["label"] for r in row[0]] for row in rows]
    assert threads == [77]
    assert labels == [["a", "b"], ["b"], ["outer", "inner"], ["outer"]]


def test_fingerprint_nvtx_overlaps_keep_to_the_launching_thread(tmp_path):
    """Ranges of another thread that enclose a call in time are not on its path."""
    from tracelens.synth import TraceBuilder

    b = TraceBuilder("3.0.0")
    b.process(77, "python train.py")
    b.gpu(0, "NVIDIA H100 80GB HBM3")
    b.nvtx_range("mine", start=1_000, end=9_000, pid=77, tid=77)
    b.nvtx_range("crossing", start=8_000, end=12_000, pid=77, tid=77)
    b.nvtx_range("other thread", start=500, end=10_000, pid=77, tid=78)
    cid = b.runtime("cudaLaunchKernel_v7000", start=2_000, end=2_010, pid=77, tid=77)
    b.kernel("k", start=3_000, end=3_100, pid=77, device=0, stream=7, correlation_id=cid)
    path = b.write(tmp_path / "threads.sqlite")
    with tracelens.open(path) as trace:
        _attribution(trace)
        rows = trace.sql("SELECT * FROM fp_overlap_paths")
    assert rows["path_id"].to_list() == [-1]
    assert rows["ranges"].to_list() == [[{"label": "mine", "start": 1_000, "end": 9_000}]]


def test_fingerprint_nvtx_overlaps_plan_is_an_iejoin(tmp_path):
    """The two time inequalities (thread bands folded in) must plan as an IEJoin: any other
    plan compares every call with every range (minutes and GBs on real traces)."""
    from tracelens.synth import TraceBuilder

    b = TraceBuilder("3.0.0")
    b.process(77, "python train.py")
    b.gpu(0, "NVIDIA H100 80GB HBM3")
    for i in range(3_000):
        tid = 77 + i % 4
        # each range crosses the next one on its thread: no thread nests
        b.nvtx_range(f"op {i}", start=i * 1_000, end=i * 1_000 + 4_500, pid=77, tid=tid,
                     event_type=60)  # fmt: skip
        cid = b.runtime(
            "cudaLaunchKernel_v7000", start=i * 1_000 + 10, end=i * 1_000 + 20, pid=77, tid=tid
        )
        b.kernel(
            "k",
            start=i * 1_000 + 30,
            end=i * 1_000 + 40,
            pid=77,
            device=0,
            stream=7,
            correlation_id=cid,
        )
    path = b.write(tmp_path / "many.sqlite")
    with tracelens.open(path) as trace:
        from tracelens import nvtx

        nvtx.build_attribution(trace)
        con = trace.db
        con.execute(
            "CREATE OR REPLACE TEMP TABLE fp_overlap_threads AS "
            + query("fingerprint_overlap_threads")
        )
        assert con.execute("SELECT count(*) FROM fp_overlap_threads").fetchone()[0] == 4
        con.execute("SET merge_join_threshold = 0")
        sql = "EXPLAIN " + query("fingerprint_nvtx_overlaps")
        plan = con.execute(sql, {"band_ns": nvtxpaths.band_ns(con)}).fetchall()[0][1]
    assert "IE_JOIN" in plan


# Steps as trace.steps() gives them: the GPU and CPU span of each step_N range.
STEPS = [
    (0, 1, 1_000_006_000, 1_000_041_500, 1_000_000_000, 1_000_032_000),
    (0, 2, 1_000_058_000, 1_000_097_500, 1_000_052_000, 1_000_088_000),
]


def _inputs(trace, steps: bool | list, capture: bool = False):
    """The names, the NVTX paths, fp_steps and the launches read with their steps (the
    frame units.with_steps gives); the launches' frame for fingerprint_launches' golden;
    the variants (units.with_variants). ``steps``: STEPS or none, or these rows."""
    names = build_module._names(trace)
    nvtxpaths.create_paths(trace)
    launches = units.read_launches(trace)
    rows = steps if isinstance(steps, list) else STEPS if steps else []
    build_module._create_table(trace, "fp_steps", units._STEP_COLUMNS, rows)
    order = orders.start_order(launches)
    norm_ids = {name_id: norm_id for name_id, norm_id, _ in names.rows}
    variants, with_vid = units.with_variants(launches, norm_ids, names.codes)
    if capture:  # each launch's place in host launch order: the units' "at" (build.build)
        place = unitrows.capture_index(with_vid, orders.launch_order(with_vid))
        with_vid = with_vid.with_columns(capture=place)
    return launches, units.with_steps(with_vid, order, rows), variants


def _frame_csv(frame) -> str:
    return frame.select(pl.all().cast(pl.String)).write_csv()


def test_fingerprint_launches(run_trace):
    launches, _, _ = _inputs(run_trace, steps=False)
    csv = _frame_csv(launches.sort("correlation_id", "start_ns"))
    _check(csv, "fingerprint_launches", "run")


def test_launch_steps_are_the_gpu_windows_that_hold_their_start(run_trace):
    """Step 1's GPU window is 1_000_006_000-1_000_041_500 ns, step 2's 1_000_058_000-
    1_000_097_500 (STEPS): calls 1-7 launched in the first, 8-15 in the second (what the
    ASOF join of fingerprint_launch_steps gave)."""
    _, frame, _ = _inputs(run_trace, steps=True)
    rows = frame.sort("correlation_id").select("correlation_id", "step").rows()
    assert rows == [(c, 1 if c <= 7 else 2) for c in range(1, 16)]


def test_a_launch_after_its_steps_end_or_before_the_first_has_no_step():
    launches = pl.DataFrame(
        {
            "device": pl.Series([0, 0, 0, 0, 1, 1], dtype=pl.Int32),
            "start_ns": [5, 10, 25, 31, 10, 40],
            "stream": [7] * 6,
            "end_ns": [6, 11, 26, 32, 11, 41],
            "path_id": [None] * 6,
            "vid": [0] * 6,
            "correlation_id": [1, 2, 3, 4, 5, 6],
        }
    )
    steps = [(0, 1, 10, 20, None, None), (0, 2, 30, 40, None, None), (1, 1, 0, 50, None, None)]
    frame = units.with_steps(launches, orders.start_order(launches), steps)
    assert frame.sort("correlation_id")["step"].to_list() == [None, 1, None, 2, 1, 1]


def _regions(trace, frame):
    """fp_path_regions (run_trace has NVTX paths), and the launches with their region id."""
    return units.with_regions(trace, frame)


@pytest.mark.parametrize("steps", [False, True], ids=["no_steps", "steps"])
def test_fingerprint_path_regions(run_trace, steps):
    """Without steps a region is the whole path (step_N, layers.L); with them the step's own
    range is left out, and every layer has the same region id in every step."""
    _, frame, _ = _inputs(run_trace, steps)
    _regions(run_trace, frame)
    case = "steps" if steps else "no_steps"
    csv = _table_csv(run_trace, "fp_path_regions", "t.device, t.step NULLS FIRST, t.path_id")
    _check(csv, "fingerprint_path_regions", case)


def test_fingerprint_path_regions_past_the_last_step(run_trace):
    """Step 1 found, step 2 not (a capture that ended inside it: its range is no step): step
    2's launches, in no step, go without the step_N ranges as step 1's do (not 'step_2 >
    layers.0'), and those in step_2 alone have no region."""
    _, frame, _ = _inputs(run_trace, STEPS[:1])
    _regions(run_trace, frame)
    csv = _table_csv(run_trace, "fp_path_regions", "t.device, t.step NULLS FIRST, t.path_id")
    _check(csv, "fingerprint_path_regions", "past_last_step")


def _units(trace, steps: bool, block: int, capture: bool = False) -> None:
    _, frame, variants = _inputs(trace, steps, capture)
    unitrows.create_units(trace, _regions(trace, frame), variants, block)


@pytest.mark.parametrize("steps", [False, True], ids=["no_steps", "steps"])
def test_fingerprint_units(run_trace, steps):
    """fp_units as the library builds it (unitrows.unit_rows, fingerprint_units): the golden
    the one-query version of it gave."""
    _units(run_trace, steps, block=3)
    case = "steps" if steps else "no_steps"
    order = "t.device, t.step NULLS FIRST, t.first_correlation"
    _check(_table_csv(run_trace, "fp_units", order), "fingerprint_units", case)


@pytest.mark.parametrize("steps", [False, True], ids=["no_steps", "steps"])
def test_fingerprint_units_at(run_trace, steps):
    """fp_units with each launch's place in the capture (host launch order), as the
    fingerprint builds them: "at" holds each unit's stretches (offset in the unit, place in
    its step, or in the device's capture outside the steps)."""
    _units(run_trace, steps, block=3, capture=True)
    case = "steps_at" if steps else "no_steps_at"
    order = "t.device, t.step NULLS FIRST, t.first_correlation"
    csv = _table_csv(run_trace, "fp_units", order)
    import csv as csv_module

    rows = list(csv_module.DictReader(csv.splitlines()))
    assert rows and all(row["at"] for row in rows)  # every unit's places are kept
    _check(csv, "fingerprint_units", case)


def test_fingerprint_variants(run_trace):
    _units(run_trace, steps=True, block=3)
    _check(_csv(run_trace, "fingerprint_variants"), "fingerprint_variants", "run")


@pytest.mark.parametrize("steps", [False, True], ids=["no_steps", "steps"])
def test_fingerprint_paths(run_trace, steps):
    """Steps 1 and 2 of layers.0 have the same three launches: one entry covering both;
    layers.1 of step 2 launched the merge kernel too: an entry of its own. With blocks of 3,
    the 4-launch unit keeps its digests and counts."""
    _units(run_trace, steps, block=3)
    case = "steps" if steps else "no_steps"
    _check(_csv(run_trace, "fingerprint_paths", block=3), "fingerprint_paths", case)


def test_fingerprint_paths_past_the_last_step(run_trace):
    """Step 1 found, step 2 not (a capture that ended inside it): step 2's launches, in no
    step, have step 1's sequences in the step_N-less region and layers.0, and are entries of
    their own with no steps, listed first (format version 5 merged them into step 1's
    entries, which lost 7 of the 15 launches)."""
    _units(run_trace, STEPS[:1], block=3)
    csv = _csv(run_trace, "fingerprint_paths", block=3)
    _check(csv, "fingerprint_paths", "past_last_step")


def test_fingerprint_overlap_threads_golden(tmp_path):
    with tracelens.open(_overlapping_trace(tmp_path)) as trace:
        from tracelens import nvtx

        nvtx.build_attribution(trace)
        csv = _csv(trace, "fingerprint_overlap_threads")
    _check(csv, "fingerprint_overlap_threads", "crossing")


def test_fingerprint_nvtx_overlaps_golden(tmp_path):
    """Thread 77's ranges a (1-9 us) and b (5-20 us) cross: its call at 6 us is in both, the
    one at 12 us in b only; thread 78 nests, so it takes the sweep and is absent here."""
    with tracelens.open(_overlapping_trace(tmp_path)) as trace:
        _attribution(trace)
        csv = _sorted_csv(trace, "fingerprint_nvtx_overlaps", "path_id DESC", band_ns=1 << 40)
    _check(csv, "fingerprint_nvtx_overlaps", "crossing")


def test_fingerprint_range_steps(run_trace):
    """The calls made inside the run's step_N ranges, keyed as a launch finds its call: the
    launches of steps_range_work (same rule) find exactly their steps by that key."""
    run_trace.load_nvtx_text()
    con = run_trace.db
    bounds = con.execute(
        'SELECT CAST(substr(text, 6) AS BIGINT) AS step, globalTid, start, "end" '
        "FROM nvtx_text WHERE text LIKE 'step_%' ORDER BY step"
    ).pl()
    assert bounds["step"].to_list() == [1, 2]
    con.register("step_bounds", bounds)
    try:
        csv = _sorted_csv(run_trace, "fingerprint_range_steps", "launch", first=1, last=2)
        work = run_trace.query(
            "steps_range_work", first=1, last=2, device=None, pid=None, stream=None,
            start_ns=None, end_ns=None,
        )  # fmt: skip
    finally:
        con.unregister("step_bounds")
    _check(csv, "fingerprint_range_steps", "run")
    calls = pl.read_csv(csv.encode())
    pid = (pl.col("globalPid") // 2**24) & 0xFFFFFF
    keyed = work.select(launch=pid * 2**32 | pl.col("correlationId"), step="step")
    assert keyed.join(calls, on="launch", how="anti").is_empty()
    assert keyed.join(calls, on="launch").filter(pl.col("step") != pl.col("step_right")).is_empty()


def _open_range_trace(tmp_path):
    """Thread 77: 'generate' pushed at 1 µs and never popped (the capture was cut), an inner
    'marker' [5, 6 µs]: the last NVTX event is at 6 µs. Calls at 2 µs (inside both the sweep
    and 'generate'), 5.5-6.5 µs (straddles the last event: in no range of the sweep) and
    8 µs (after it). Thread 78: a closed range and a call after it (no open range there)."""
    from tracelens.synth import TraceBuilder

    b = TraceBuilder("3.0.0")
    b.process(77, "python generate.py")
    b.gpu(0, "NVIDIA H100 80GB HBM3")
    b.add_row("NVTX_EVENTS", start=1_000, end=None, eventType=59, text="generate",
              globalTid=b._gtid(77, 77))  # fmt: skip
    b.nvtx_range("marker", start=5_000, end=6_000, pid=77, tid=77)
    b.nvtx_range("closed", start=1_000, end=3_000, pid=77, tid=78)
    calls = [(77, 2_000, 2_100), (77, 5_500, 6_500), (77, 8_000, 8_100), (78, 4_000, 4_100)]
    for i, (tid, start, end) in enumerate(calls):
        cid = b.runtime("cudaLaunchKernel_v7000", start=start, end=end, pid=77, tid=tid)
        b.kernel(f"k{i}", start=10_000 + i * 100, end=10_050 + i * 100, pid=77, device=0,
                 stream=7, correlation_id=cid)  # fmt: skip
    return b.write(tmp_path / "open.sqlite")


def test_fingerprint_open_range_paths(tmp_path):
    """The calls of thread 77 past the last NVTX event take the open 'generate' range; the
    call inside it (the sweep's) and thread 78's are not here."""
    with tracelens.open(_open_range_trace(tmp_path)) as trace:
        _attribution(trace)
        csv = _sorted_csv(trace, "fingerprint_open_range_paths", "global_pid, correlation_id")
    _check(csv, "fingerprint_open_range_paths", "cut")


def _threads_trace(tmp_path):
    """Process 77: thread 77 makes 3 launch calls, thread 78 one, thread 79 two; process
    88: one thread, 2 calls."""
    from tracelens.synth import TraceBuilder

    b = TraceBuilder("3.0.0")
    b.process(77, "python train.py")
    b.process(88, "python train.py")
    b.gpu(0, "NVIDIA H100 80GB HBM3")
    calls = [(77, 78, 1_000), (77, 77, 2_000), (77, 79, 2_200), (77, 77, 3_000),
             (77, 79, 3_300), (77, 77, 4_000), (88, 88, 2_500), (88, 88, 3_500)]  # fmt: skip
    for i, (pid, tid, start) in enumerate(calls):
        cid = b.runtime("cudaLaunchKernel_v7000", start=start, end=start + 10, pid=pid, tid=tid)
        b.kernel(f"k{i}", start=10_000 + i * 100, end=10_050 + i * 100, pid=pid, device=0,
                 stream=7, correlation_id=cid)  # fmt: skip
    return b.write(tmp_path / "threads.sqlite")


def test_fingerprint_thread_calls(tmp_path):
    """Process 77's calls on thread 79 (rank 1: 2 calls) and 78 (rank 2: 1 call); not those
    of its busiest thread 77, nor process 88's (one thread)."""
    with tracelens.open(_threads_trace(tmp_path)) as trace:
        csv = _csv(trace, "fingerprint_thread_calls")
    _check(csv, "fingerprint_thread_calls", "threads")


def test_fingerprint_thread_sample_export(tmp_path):
    """Two runs of three of the 8 calls (rowids 1-3 and 5-7, every 4th row a run's start):
    threads 78 and 88 one call each, 77 and 79 two; span 8."""
    from queries.golden import export_query_csv

    path = _threads_trace(tmp_path)
    csv = export_query_csv(path, "fingerprint_thread_sample_export", windows=2, width=3)
    _check(csv, "fingerprint_thread_sample_export", "threads")


def test_fingerprint_thread_calls_export(tmp_path):
    """Every call but those of threads 77 and 88 (the second repeated as 14 more skipped
    threads): thread 78's and 79's, in the table's order."""
    from queries.golden import export_query_csv

    path = _threads_trace(tmp_path)
    with tracelens.open(path) as trace:
        tids = trace.sql("SELECT DISTINCT globalTid FROM runtime_calls")["globalTid"]
    base = {t & 0xFFFFFF: t for t in tids.to_list()}
    skipped = [base[77]] + [base[88]] * 15
    params = {f"t{i}": t for i, t in enumerate(skipped)}
    csv = export_query_csv(
        path, "fingerprint_thread_calls_export", limit=100, low_rowid=0, high_rowid=2**62, **params
    )
    _check(csv, "fingerprint_thread_calls_export", "threads")


def test_fingerprint_device_pid(tmp_path):
    """Device 0's first kernel row is process 77's (its globalPid); device 1 has none."""
    from queries.golden import export_query_csv

    path = _threads_trace(tmp_path)
    csv = export_query_csv(path, "fingerprint_device_pid", device=0)
    assert export_query_csv(path, "fingerprint_device_pid", device=1).strip() == "globalPid"
    _check(csv, "fingerprint_device_pid", "threads")
