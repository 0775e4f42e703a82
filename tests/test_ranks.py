"""tracelens ranks: the straggler, the waits it causes and the clock correction are found
exactly on rank sets built by code (tests/fixtures/ranks.py); bad rank files are reported
and the others analysed; every engine gives the same answer."""

from __future__ import annotations

import json

import polars as pl
import pytest
from conftest import has_cuda_work, needs_shared, run_cli
from fixtures.ranks import (
    ALLGATHER_NS,
    ALLREDUCE_NS,
    GEMM_NS,
    STEP_PERIOD_NS,
    build_rank_set,
    drop_second_collectives,
)

from tracelens.errors import TraceError, UsageError
from tracelens.ranks import analyse_ranks, summarise
from tracelens.ranks.reduce import reduce
from tracelens.ranks.render import VIEWS, render_ranks
from tracelens.ranks.rules import ranks_rules

# File names whose last integer is 3 for every rank: the rank must come from elsewhere.
STEM = "w{rank}-of-3"


@pytest.fixture(scope="module")
def eight(tmp_path_factory):
    return build_rank_set(tmp_path_factory.mktemp("eight"))


@pytest.fixture(scope="module")
def eight_result(eight):
    return analyse_ranks([eight.dest], jobs=1)


def test_straggler_and_its_waits_exactly(eight, eight_result):
    r = eight_result
    slow, wait = eight.slow_rank, eight.wait_per_step_ns()
    assert r.findings[0] == (
        f"rank {slow} made the others wait 38.00 ms per step in AllReduce "
        f"(last to arrive in {eight.steps} of {eight.steps} calls)"
    )
    culprits = r.waits.filter(pl.col("caused_ns") > 0)
    assert culprits.select("rank", "kind", "caused_per_step_ns", "late_calls").rows() == [
        (slow, "AllReduce", wait, eight.steps)
    ]
    by_rank = dict(r.ranks.select("rank", "waited_ns").iter_rows())
    assert by_rank == {k: 0 if k == slow else wait * eight.steps for k in range(eight.ranks)}
    # per step: the straggler, and the others' active time shorter by exactly the wait
    s = r.step_stragglers
    assert s["straggler_rank"].to_list() == [slow] * eight.steps
    assert s["caused_ns"].to_list() == [wait] * eight.steps
    assert (s["slowest_active_ns"] - s["median_active_ns"]).to_list() == [wait] * eight.steps
    # the AllGathers start together: nobody is late, nobody waits
    ag = r.collectives.filter(pl.col("kind") == "AllGather")
    assert ag["late_rank"].null_count() == ag.height and ag["spread_ns"].sum() == 0
    ar = r.collectives.filter(pl.col("kind") == "AllReduce")
    assert ar["total_wait_ns"].to_list() == [wait * (eight.ranks - 1)] * eight.steps


def test_clock_correction_exactly(eight, eight_result):
    clock = eight_result.clock
    assert eight_result.reference_rank == 0
    for row in clock.iter_rows(named=True):
        rank = row["rank"]
        assert (
            row["session_offset_ns"]
            == eight.session_start_utc_ns[rank] - eight.session_start_utc_ns[0]
        )
        assert row["correction_ns"] == eight.correction_ns(rank)
        assert row["residual_ns"] == 0
        assert row["matched"] == 2 * eight.steps
    assert any("rank 1 by -370.0 µs" in f for f in eight_result.findings)


def test_per_rank_figures(eight, eight_result):
    r = eight_result.ranks
    assert r["rank"].to_list() == list(range(eight.ranks))
    assert set(r["steps"]) == {eight.steps}
    assert set(r["steady_step_ns"]) == {90_000_000}
    slow = r.filter(pl.col("rank") == eight.slow_rank).row(0, named=True)
    other = r.filter(pl.col("rank") == 0).row(0, named=True)
    assert slow["compute_ns"] - other["compute_ns"] == eight.slow_ns * eight.steps
    assert (
        other["exposed_communication_ns"] - slow["exposed_communication_ns"]
        == eight.slow_ns * eight.steps
    )
    assert slow["danger_high"] == 1  # the split-K GEMM
    # span, busy/idle, kernel count and top kernel, from the fixture's step layout: each
    # step runs AllGather, three compute kernels and the AllReduce back to back (the others'
    # AllReduce spans their wait), one device, gaps between the steps
    compute = sum(GEMM_NS)
    busy_step = ALLGATHER_NS + compute + eight.slow_ns + ALLREDUCE_NS
    span = (eight.steps - 1) * STEP_PERIOD_NS + busy_step
    for row in (slow, other):
        assert (row["span_ns"], row["busy_ns"]) == (span, busy_step * eight.steps)
        assert row["idle_ns"] == span - busy_step * eight.steps
        assert (row["kernels"], row["distinct_kernels"]) == (5 * eight.steps, 5)
        assert row["danger_kernels"] == 3  # split-K (high), the legacy xmma GEMM, NCCL AllReduce
    waited_ar = eight.slow_ns + ALLREDUCE_NS  # the others' AllReduce covers their wait
    assert (other["top_kernel"], other["top_kernel_ns"]) == (
        "ncclDevKernel_AllReduce_Sum_bf16_RING_LL", waited_ar * eight.steps
    )  # fmt: skip
    assert (slow["top_kernel"], slow["top_kernel_ns"]) == (
        "vectorized_layer_norm_kernel", (GEMM_NS[2] + eight.slow_ns) * eight.steps
    )  # fmt: skip
    assert eight_result.inconsistencies.is_empty()
    assert eight_result.ranks["path_digest"].n_unique() == 1  # GPUs 0-7, one path
    assert eight_result.step_matrix("active_ns").height == eight.ranks


def test_no_straggler_and_no_skew(tmp_path):
    rs = build_rank_set(tmp_path, ranks=4, slow_rank=None, skew_ns={r: 0 for r in range(4)})
    r = analyse_ranks([rs.dest], jobs=1)
    assert r.waits["caused_ns"].sum() == 0
    assert r.findings[0].startswith("no straggler")
    assert r.clock["correction_ns"].to_list() == [0, 0, 0, 0]
    assert "clocks agree" in r.findings[1]


def test_a_different_kernel_set_is_named(tmp_path):
    rs = build_rank_set(tmp_path, ranks=4, slow_rank=1, odd_rank=2)
    r = analyse_ranks([rs.dest], jobs=1)
    assert r.inconsistencies.select("rank", "what").rows() == [(2, "kernel set"), (2, "path")]
    assert "runs 1 kernel(s) the others do not" in r.inconsistencies["detail"][0]
    # by the fingerprint, with the devices renumbered (rank 2 runs on GPU 2, rank 0 on GPU 0)
    detail = r.inconsistencies["detail"][1]
    assert detail.startswith("differs from rank 0's: ")
    assert "step 1, device 0, launch #5 of step 1: added sm80_xmma_gemm" in detail
    assert any(f.startswith("rank 2 differs (kernel set)") for f in r.findings)
    assert r.ranks["path_digest"].n_unique() == 2
    # the straggler is still found
    assert r.findings[0].startswith("rank 1 made the others wait 38.00 ms per step")


def test_a_path_difference_without_nvtx_names_the_region_by_steps(tmp_path):
    """Without NVTX the regions are the steps: the difference is in "(the whole step)", as
    the fingerprint says it, not "(the step, outside deeper NVTX ranges)"."""
    import sqlite3

    rs = build_rank_set(tmp_path, ranks=3, steps=6, slow_rank=None, odd_rank=2)
    for path in rs.paths:
        con = sqlite3.connect(path)
        con.execute("DELETE FROM NVTX_EVENTS")
        con.commit()
        con.close()
    r = analyse_ranks([rs.dest], jobs=1)
    detail = r.inconsistencies.filter(pl.col("what") == "path")["detail"].to_list()
    assert len(detail) == 1
    assert detail[0].startswith(
        "differs from rank 0's: (the whole step), step 1, device 0, launch #5 of step 1: added sm80_xmma"
    )


def test_a_rank_with_other_collective_calls_is_named(tmp_path):
    """A rank that skipped one AllReduce (its 2nd): one call fewer, and from there its k-th
    call is not the others' k-th."""
    import sqlite3

    rs = build_rank_set(tmp_path, ranks=4, slow_rank=1)
    con = sqlite3.connect(rs.paths[3])
    con.execute(
        "DELETE FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE rowid = (SELECT k.rowid FROM "
        "CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.demangledName "
        "WHERE s.value LIKE 'ncclDevKernel_AllReduce%' ORDER BY k.start LIMIT 1 OFFSET 1)"
    )
    con.commit()
    con.close()
    r = analyse_ranks([rs.dest], jobs=1)
    odd = r.inconsistencies.filter(pl.col("what") == "collectives")
    assert odd.select("rank", "detail").rows() == [
        (3, "7 collective calls where most ranks make 8"),
        (3, "call #4 is AllGather where the others run AllReduce (4 calls differ)"),
    ]
    assert r.inconsistencies.filter(pl.col("rank") != 3).is_empty()
    # its other calls are not matched with the others' next ones: the clocks and the
    # straggler come out as without the gap (they were -12.296 ms for rank 3, residual
    # 76 ms, and 'rank 3 made the others wait 20.50 ms per step in AllGather')
    assert r.clock["correction_ns"].to_list() == [rs.correction_ns(k) for k in range(4)]
    assert r.clock["residual_ns"].to_list() == [0, 0, 0, 0]
    assert r.clock.filter(pl.col("rank") == 3)["matched"].item() == 3  # seq 1-3 of 8
    assert r.findings[0] == (
        "rank 1 made the others wait 38.00 ms per step in AllReduce (last to arrive in 4 of "
        "4 calls)"
    )
    assert r.waits.filter(pl.col("caused_ns") > 0)["rank"].to_list() == [1]


def test_a_rank_that_skipped_a_whole_step_of_calls_is_flagged(tmp_path):
    """Skipping an AllGather and an AllReduce keeps the kinds in step, so the k-th calls
    pair wrongly without a kind to tell: the ends that still disagree after aligning say
    that rank's correction and waits cannot be trusted."""
    rs = build_rank_set(tmp_path, ranks=4, slow_rank=1)
    drop_second_collectives(rs.paths[3])
    r = analyse_ranks([rs.dest], jobs=1)
    assert (3, "collectives", "6 collective calls where most ranks make 8") in (
        r.inconsistencies.rows()
    )
    suspect = [f for f in r.findings if "after aligning" in f]
    assert len(suspect) == 1 and suspect[0].startswith(
        "rank 3's collective ends still differ from rank 0's by up to "
    )
    assert suspect[0].endswith("its calls are left out of the waits")
    # the others' waits are what they were: rank 1 the only straggler, 38 ms a step
    assert r.findings[0] == (
        "rank 1 made the others wait 38.00 ms per step in AllReduce (last to arrive in 4 of "
        "4 calls)"
    )
    assert r.waits["rank"].unique().sort().to_list() == [0, 1, 2]
    resid = dict(r.clock.select("rank", "residual_ns").iter_rows())
    assert resid[3] > ranks_rules().clock_suspect_ns >= max(resid[k] for k in (0, 1, 2))


def test_bad_files_are_reported_and_the_others_analysed(tmp_path):
    rs = build_rank_set(tmp_path, ranks=4)
    (tmp_path / "rank_4.sqlite").write_bytes(b"not a database at all" * 100)
    (tmp_path / "rank_6.sqlite").write_bytes(b"")
    r = analyse_ranks([rs.dest], jobs=1)
    assert r.ranks.height == 4
    assert r.failures["rank"].to_list() == [4, 6]
    assert "is not a SQLite database" in r.failures["reason"][0]
    assert "is empty" in r.failures["reason"][1]
    assert r.missing_ranks == (4, 5, 6)  # 5: no file at all
    assert r.findings[-1] == "missing ranks: 4, 5, 6 (not analysed)"
    with pytest.raises(TraceError, match=r"rank_4.sqlite: is not a SQLite database.*1 more"):
        analyse_ranks([rs.dest], jobs=1, strict=True)


def test_nothing_analysable_raises_the_first_error(tmp_path):
    (tmp_path / "rank_0.sqlite").write_bytes(b"")
    with pytest.raises(TraceError, match="rank_0.sqlite: is empty"):
        analyse_ranks([tmp_path], jobs=1)


def test_rank_from_the_export_or_the_regex(tmp_path, monkeypatch):
    from tracelens.ranks import engine as ranks_engine

    # names whose last integer is the same for all: the MPI rank in the export decides
    rs = build_rank_set(tmp_path, ranks=3, slow_rank=2, mpi_ranks=True, stem="w{rank}-of-3")
    r = analyse_ranks([rs.dest], jobs=1)
    assert r.ranks.select("rank", "recorded_rank", "rank_source").rows() == [
        (0, 0, "MPI_RANKS"), (1, 1, "MPI_RANKS"), (2, 2, "MPI_RANKS")
    ]  # fmt: skip
    assert r.findings[0].startswith("rank 2 made")
    assert render_ranks(r, fmt="table").startswith(
        "ranks: 3 ranks analysed (rank numbers from: MPI_RANKS)\n"
    )
    # names that do not carry the rank: a failed file's rank is unknown, not its name's 3
    bad = rs.dest / "w9-of-3.sqlite"
    bad.write_bytes(b"")
    r = analyse_ranks([rs.dest], jobs=1)
    assert r.failures.select("path", "rank").rows() == [(str(bad), None)]
    assert r.missing_ranks == () and "failed: " + str(bad) in render_ranks(r, fmt="table")
    bad.unlink()
    # an explicit --rank-regex wins over the export
    r = analyse_ranks([rs.dest], jobs=1, rank_regex=r"w(\d+)-of")
    assert r.ranks["rank"].to_list() == [0, 1, 2]
    assert set(r.ranks["rank_source"]) == {"--rank-regex"}
    other = tmp_path / "nompi"
    plain = build_rank_set(other, ranks=2, stem="w{rank}-of-3")
    with pytest.raises(UsageError, match="rank 3 is both"):
        analyse_ranks([plain.dest], jobs=1)
    with pytest.raises(UsageError, match="needs a group"):
        analyse_ranks([plain.dest], jobs=1, rank_regex=r"w\d")
    # with --rank-regex the names alone decide: a repeated rank fails before any trace is
    # read (the map of a big run takes hours)
    read = []
    monkeypatch.setattr(ranks_engine, "_summarise_safely", lambda p, *a: read.append(p))
    with pytest.raises(UsageError, match="rank 3 is both .*w0-of-3.sqlite and .*w1-of-3"):
        analyse_ranks([plain.dest], jobs=1, rank_regex=r"-of-(\d)")
    assert read == []


def test_inputs_globs_and_errors(eight, tmp_path):
    r = analyse_ranks([str(eight.dest / "rank_[0-3].sqlite")], jobs=1)
    assert r.ranks["rank"].to_list() == [0, 1, 2, 3]
    assert r.missing_ranks == ()
    with pytest.raises(UsageError, match="matches no file"):
        analyse_ranks([str(tmp_path / "nothing_*.sqlite")])
    with pytest.raises(UsageError, match="holds no .sqlite"):
        analyse_ranks([tmp_path])
    with pytest.raises(UsageError, match="unknown engine 'dask'"):
        analyse_ranks([eight.dest], engine="dask")
    with pytest.raises(UsageError, match="jobs must be at least 1"):
        analyse_ranks([eight.dest], jobs=0)


def test_local_pool_gives_the_serial_answer(eight, eight_result):
    pooled = analyse_ranks([eight.dest], jobs=2)
    assert render_ranks(pooled, fmt="json") == render_ranks(eight_result, fmt="json")


@pytest.fixture(scope="module")
def ray_local():
    """One local two-CPU Ray instance for this module's Ray tests (starting one costs ~15 s
    of a 2-core machine). address='local': never join a cluster RAY_ADDRESS or an earlier
    `ray start` names (ray.init() would, and refuses num_cpus there). Ray's memory monitor
    is off: on a machine others load it kills the task workers of whoever uses the most
    memory, and a killed worker would fail a rank here."""
    ray = pytest.importorskip("ray", reason="Ray is the optional extra nsys-tracelens[ray]")
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("RAY_ADDRESS", raising=False)
        mp.setenv("RAY_memory_monitor_refresh_ms", "0")
        mp.setenv("RAY_USAGE_STATS_ENABLED", "0")
        ray.init(
            address="local", num_cpus=2, include_dashboard=False, log_to_driver=False,
            configure_logging=False,
        )  # fmt: skip
        try:
            yield ray
        finally:
            ray.shutdown()


def test_ray_gives_the_local_answer(eight, eight_result, ray_local, tmp_path):
    on_ray = analyse_ranks([eight.dest], engine="ray")
    assert render_ranks(on_ray, fmt="json") == render_ranks(eight_result, fmt="json")
    # a bad file fails on its own, as locally; the limits reach each task's DuckDB
    bad = tmp_path / "rank_9.sqlite"
    bad.write_bytes(b"x" * 512)
    from tracelens.ranks.engine import map_traces

    results = map_traces([str(eight.paths[0]), str(bad)], engine="ray", memory="300MiB")
    assert results[0].duckdb_settings == {"threads": 1, "memory_limit": "300.0 MiB"}
    assert "is not a SQLite database" in results[1].reason
    with pytest.raises(UsageError, match="worker_threads 3: no Ray node has that many CPUs"):
        map_traces([str(eight.paths[0])], engine="ray", threads=3)


def test_ray_splits_one_export_as_local(ray_local, tmp_path):
    # one export of a whole job: each process a rank on Ray as in this process
    from fixtures.ranks import build_one_export

    job = build_one_export(tmp_path / "report1.sqlite")
    on_ray = analyse_ranks([job], engine="ray")
    local = analyse_ranks([job], jobs=1)
    assert on_ray.ranks.height == 2
    assert render_ranks(on_ray, fmt="json") == render_ranks(local, fmt="json")


def test_reduce_ignores_input_order(eight, eight_result):
    sums = [(i, summarise(p)) for i, p in enumerate(eight.paths)]
    sources = {s.path: "file name" for _, s in sums}
    again = reduce(list(reversed(sums)), [], sources)
    assert render_ranks(again, fmt="json") == render_ranks(eight_result, fmt="json")


def test_summaries_are_small(eight):
    s = summarise(eight.paths[0])
    assert s.nbytes < 4_000  # 4 steps, 8 collective calls, 5 kernels
    assert s.collectives.num_rows == 2 * eight.steps


def test_every_view_renders(eight_result):
    doc = json.loads(render_ranks(eight_result, fmt="json"))
    assert set(VIEWS) <= set(doc) and doc["ranks_analysed"] == 8
    for view in VIEWS:
        for fmt in ("table", "csv", "markdown", "json"):
            assert render_ranks(eight_result, fmt=fmt, table=view, timeunit="ms")
    md = render_ranks(eight_result, fmt="markdown")
    assert md.startswith("**8 ranks analysed (rank numbers from: file name)**")
    assert "| Rank |" in md


def test_a_path_too_long_to_align_is_named_without_the_alignment(eight, monkeypatch):
    """fingerprint.compare aligns launch sequences over all steps at once when two ranks
    found other step counts; past its edit bound difflib takes over, about n x m launch
    pairs (with difflib alone 8,190 launches took 3.5 CPU s, 32,760 took 58 s). A rank's
    alignment is bounded (ranks.toml): past it the rank is named, with the pairs, and
    compare is never called with more pairs."""
    from types import SimpleNamespace

    from tracelens import fingerprint
    from tracelens.ranks.consistency import _path_differences, alignment_pairs

    limit = ranks_rules().path_alignment_pairs
    doc = fingerprint.loads(summarise(eight.paths[0]).fingerprint)
    (entry,) = doc["paths"]  # 5 launches a step, in each of the 4 steps
    assert alignment_pairs(doc, doc) == 4 * 5 * 5

    def stepped(count: int) -> str:
        entry["steps"] = list(range(1, count + 1))
        doc["steps"]["count"] = count
        return fingerprint.dumps(doc)

    many = 1_000  # 5,000 launches over all steps: 5,000 x 4,995 pairs, over the limit
    common, one_short, few = stepped(many), stepped(many - 1), stepped(3)
    assert (
        alignment_pairs(fingerprint.loads(common), fingerprint.loads(one_short))
        == (5 * many * 5 * (many - 1))
        > limit
    )
    assert alignment_pairs(fingerprint.loads(common), fingerprint.loads(few)) <= limit
    aligned = []
    real_compare = fingerprint.compare

    def counting(a, b):
        aligned.append(alignment_pairs(a, b))
        return real_compare(a, b)

    monkeypatch.setattr(fingerprint, "compare", counting)
    ranks = [(0, common), (1, common), (2, one_short), (3, few)]
    rows = _path_differences([(r, SimpleNamespace(fingerprint=d)) for r, d in ranks])
    assert [r["rank"] for r in rows] == [2, 3]
    assert rows[0]["detail"] == (
        f"differs from rank 0's: not aligned launch by launch: 24,975,000 launch pairs "
        f"(limit {limit:,}), steps 1000 by marker vs 999 by marker; tracelens diff "
        "compares the two ranks"
    )
    # the same path over 3 of the 1,000 steps: a capture difference, not a path change
    assert (rows[1]["what"], rows[1]["detail"]) == (
        "capture",
        "rank 0's path; rank 3 holds 997 fewer steps (3 vs 1,000: a shorter capture): "
        "the last 4,985 launches of rank 0 are in rank 0 only",
    )
    assert len(aligned) == 1 and aligned[0] <= limit


def test_the_matrix_is_converted_as_one_column_not_one_per_step(eight_result, monkeypatch):
    """The rank x step matrix has a column per step (4,095 for one of the shared traces),
    and converting a column costs about a millisecond: its times are converted while they
    are one column, then pivoted. Same text as converting the pivoted matrix."""
    from tracelens import render

    converted = []
    real_convert = render.convert_times

    def counting(df, timeunit):
        converted.extend(c for c in df.columns if c.endswith("_ns"))
        return real_convert(df, timeunit)

    matrix = eight_result.step_matrix()
    assert matrix.width - 1 == eight_result.steps["step"].n_unique() == 4
    for fmt in ("csv", "json"):
        expected = render.frame(matrix, fmt=fmt, timeunit="ms", title="matrix")
        monkeypatch.setattr(render, "convert_times", counting)
        converted.clear()
        shown = render_ranks(eight_result, fmt=fmt, table="matrix", timeunit="ms")
        monkeypatch.setattr(render, "convert_times", real_convert)
        assert shown == expected
        assert converted == ["duration_ns"]


def test_the_summary_lists_the_costliest_steps(eight_result, monkeypatch):
    """A long run's summary lists the steps whose straggler cost the most, not thousands of
    rows; the stragglers view keeps every step."""
    from dataclasses import replace

    from tracelens.ranks import render, rules

    few = replace(rules.ranks_rules(), straggler_steps_shown=3)
    monkeypatch.setattr(rules, "ranks_rules", lambda: few)
    steps = pl.DataFrame(
        {
            "step": [1, 2, 3, 4, 5],
            "caused_ns": [5, 40, 40, 0, 10],
            "slowest_active_ns": [10, 11, 13, 19, 10],
            "median_active_ns": [10] * 5,
        }
    )
    shown, title = render._costliest_steps(steps)
    assert shown["step"].to_list() == [2, 3, 5]  # most caused, then widest spread; in order
    assert title == (
        "stragglers per step: the 3 costliest of 5 steps (longest wait caused, then widest "
        "spread of active time; all: --view stragglers)"
    )
    assert render._costliest_steps(steps.head(3))[0].equals(steps.head(3))
    assert render.costliest_steps(steps, 1)["step"].to_list() == [3]
    text = render_ranks(eight_result, fmt="table")
    assert "stragglers per step: the 3 costliest of 4 steps" in text
    everything = render_ranks(eight_result, fmt="csv", table="stragglers")
    assert len(everything.splitlines()) == 1 + eight_result.step_stragglers.height
    # the HTML report's straggler table picks its rows the same way
    from tracelens.report import ranksview

    monkeypatch.setattr(ranksview, "STRAGGLER_ROWS", 3)
    view = ranksview.ranks_view(eight_result)
    assert [r["step"] for r in view.stragglers] == [1, 2, 3]  # all cost the same: earliest
    assert view.stragglers_more == 1


# -- command line ---------------------------------------------------------------------------
def run(capsys, *args):
    return run_cli(list(args), capsys)


def test_cli_table_and_csv(eight, capsys):
    code, out, err = run(capsys, "ranks", *eight.paths[3:], "-j", "1", "--timeunit", "ms")
    assert code == 0 and err == ""
    assert out.startswith(
        "ranks: 5 ranks analysed (rank numbers from: file name)\n"
        "- rank 5 made the others wait 38.00 ms"
    )
    assert "stragglers per step" in out and "clock alignment" in out
    code, out, _ = run(capsys, "ranks", *eight.paths[:3], "-j", "1", "-f", "csv")
    assert code == 0 and out.splitlines()[0].startswith("rank,path,")
    assert len(out.splitlines()) == 4
    code, out, _ = run(
        capsys, "ranks", *eight.paths[:2], "-j", "1", "--view", "matrix", "-f", "csv"
    )
    assert out.splitlines()[0] == "rank,step_1_ns,step_2_ns,step_3_ns,step_4_ns"


def test_cli_errors_are_one_line(eight, tmp_path, capsys):
    code, _, err = run(capsys, "ranks", eight.dest, "--view", "nope")
    assert code == 2 and err.count("\n") == 1 and "unknown --view" in err
    code, _, err = run(capsys, "ranks", eight.dest, "--rank-regex", "(")
    assert code == 2 and "--rank-regex '(' is not a regular expression" in err
    bad = tmp_path / "rank_9.sqlite"
    bad.write_bytes(b"x" * 512)
    code, out, err = run(capsys, "ranks", *eight.paths[:2], bad, "-j", "1")
    assert code == 0 and f"failed: {bad}: is not a SQLite database" in out
    code, _, err = run(capsys, "ranks", *eight.paths[:2], bad, "-j", "1", "--strict")
    assert code == 2 and err.startswith(f"tracelens: {bad}: is not a SQLite database")


def test_cli_ray_without_ray_names_the_extra(eight, capsys, monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_ray(name, *a, **kw):
        if name == "ray":
            raise ImportError("No module named 'ray'")
        return real_import(name, *a, **kw)

    monkeypatch.setattr(builtins, "__import__", no_ray)
    code, _, err = run(capsys, "ranks", eight.dest, "--engine", "ray")
    assert code == 2 and "pip install 'nsys-tracelens[ray]'" in err


def test_cli_ray_cluster_unreachable_is_one_line(eight, capsys, monkeypatch):
    """A cluster that cannot be reached (wrong RAY_ADDRESS, not running, token
    authentication) is the user's to fix: one line naming the address, exit 2 (it was
    'internal error: ConnectionError ... please report it', exit 70)."""
    ray = pytest.importorskip("ray", reason="Ray is the optional extra nsys-tracelens[ray]")

    def refuse(**_kw):
        raise ConnectionError("Failed to connect to Ray cluster at 192.0.2.9:6379")

    monkeypatch.setenv("RAY_ADDRESS", "192.0.2.9:6379")
    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "init", refuse)
    code, out, err = run(capsys, "ranks", eight.dest, "--engine", "ray")
    assert (code, out, err.count("\n")) == (2, "", 1)
    assert err.startswith(
        "tracelens: --engine ray: cannot connect to the Ray cluster RAY_ADDRESS=192.0.2.9:6379 "
        "names (Failed to connect to Ray cluster at 192.0.2.9:6379); check that it runs"
    )


def test_report_ranks_takes_the_rank_options(tmp_path, capsys):
    """report --ranks on files whose names need --rank-regex: the error said 'pass
    --rank-regex', which report did not take."""
    plain = build_rank_set(tmp_path / "plain", ranks=3, steps=2, slow_rank=2, stem=STEM)
    page = tmp_path / "page.html"
    code, _, err = run(capsys, "report", "--ranks", plain.dest, "-o", page)
    assert code == 2 and "pass --rank-regex" in err
    code, _, err = run(
        capsys, "report", "--ranks", plain.dest, "--rank-regex", r"w(\d+)-of", "-j", "1",
        "-o", page,
    )  # fmt: skip
    assert code == 0, err
    assert "rank 2 made the others wait" in page.read_text(encoding="utf-8")
    (plain.dest / "w7-of-3.sqlite").write_bytes(b"")
    args = ["report", "--ranks", plain.dest, "--rank-regex", r"w(\d+)-of", "-j", "1"]
    code, out, err = run(capsys, *args, "-f", "markdown")
    assert code == 0 and "missing ranks: 3, 4, 5, 6, 7" in out
    code, _, err = run(capsys, *args, "--strict", "-o", page)
    assert code == 2 and err.startswith("tracelens: ") and "w7-of-3.sqlite: is empty" in err
    code, _, err = run(capsys, "report", plain.paths[0], "--strict")
    assert code == 2 and "--rank-regex, --jobs and --strict go with --ranks" in err


def test_diff_between_two_ranks_of_one_run(eight, capsys):
    # two ranks of one run are two traces: the diff names the straggler's longer kernel
    code, out, err = run(capsys, "diff", eight.paths[0], eight.paths[eight.slow_rank], "-f", "json")
    assert code == 0, err
    doc = json.loads(out)
    text = json.dumps(doc)
    assert "vectorized_layer_norm_kernel" in text
    assert doc["figures"]["launches_a"] == doc["figures"]["launches_b"]
    # Each rank runs on its own GPU (rank 0 on device 0, the straggler on its own): the two
    # launch sequences are compared with each other, not each with nothing ("B is A cut
    # short" on device 0 was the board before).
    [al] = doc["alignment"]
    assert (al["device"], al["device_b"]) == (0, eight.slow_rank)
    assert al["relation"] == "identical" and al["launches_a"] == al["launches_b"] > 0
    assert "capture_difference" not in {c["id"] for c in doc["clues"]}
    code, out, err = run(capsys, "diff", eight.paths[0], eight.paths[eight.slow_rank])
    assert code == 0, err
    assert f"0 (A) / {eight.slow_rank} (B)" in out


# -- real traces ----------------------------------------------------------------------------
@needs_shared
def test_every_shared_trace_as_a_rank_of_one_job(trace_copies, tmp_path, monkeypatch):
    """Unrelated programs as the ranks of one job (rank_0 ... rank_12, symlinks to the 13
    shared traces), the way a user runs them: through the local pool of two workers. Each
    is summarised, or reported with the reason (no CUDA data -> exit 3); the reduce copes
    with traces without collectives; and the driver's work stays linear in the ranks: the
    numerical paths are compared with the most common one only (at most ranks - 1
    fingerprint comparisons, never one per pair of ranks)."""
    from tracelens import fingerprint

    copies = sorted(trace_copies.values())
    for i, path in enumerate(copies):
        (tmp_path / f"rank_{i}.sqlite").symlink_to(path)
    compared = []
    real_compare = fingerprint.compare
    monkeypatch.setattr(
        fingerprint, "compare", lambda a, b: compared.append(1) or real_compare(a, b)
    )
    r = analyse_ranks([tmp_path], jobs=2)
    without_cuda = {i for i, path in enumerate(copies) if not has_cuda_work(path)}
    assert sorted(r.failures["rank"].to_list()) == sorted(without_cuda)
    assert all("no CUDA kernel data" in why for why in r.failures["reason"].to_list())
    assert sorted(r.ranks["rank"].to_list()) == sorted(set(range(len(copies))) - without_cuda)
    assert (r.ranks["kernels"] > 0).all()
    assert r.collectives.is_empty() and r.clock["correction_ns"].sum() == 0
    # different programs: the kernel sets and the numerical paths differ
    what = r.inconsistencies["what"].to_list()
    assert "kernel set" in what and what.count("path") == len(compared)
    assert 0 < len(compared) < r.ranks.height
    for fmt in ("table", "json", "markdown", "csv"):
        assert render_ranks(r, fmt=fmt)


def test_readme_ranks_output_is_real(tmp_path, capsys, monkeypatch):
    from conftest import REPO

    readme = (REPO / "README.md").read_text(encoding="utf-8")
    marker = "<!-- output of: tracelens ranks 'rank_*.sqlite' --timeunit ms -j 1"
    shown = readme.split(marker, 1)[1].split("```text\n", 1)[1].split("```", 1)[0]
    build_rank_set(tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "100")
    code, out, err = run(capsys, "ranks", "rank_*.sqlite", "--timeunit", "ms", "-j", "1")
    assert code == 0, err
    assert out.startswith(shown)


def test_progress_is_reported_per_file(eight):
    seen = []
    analyse_ranks(eight.paths[:3], jobs=2, progress=lambda d, t, p: seen.append((d, t, p)))
    assert [(d, t) for d, t, _ in seen] == [(1, 3), (2, 3), (3, 3)]
    assert sorted(p for _, _, p in seen) == sorted(map(str, eight.paths[:3]))


def test_cli_draws_a_progress_bar_only_on_a_terminal(eight, capsys, monkeypatch):
    import sys

    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    code, out, err = run(capsys, "ranks", *eight.paths[:2], "-j", "1", "-f", "csv")
    assert code == 0 and "2/2" in err and "ranks" in err and err.endswith("\n")
    assert out.startswith("rank,path,")  # stdout stays data


def test_the_result_gives_its_tables_to_a_notebook(eight_result):
    tables = eight_result.tables()
    assert list(tables)[0] == "ranks" and eight_result.to_polars().equals(eight_result.ranks)
    assert eight_result.to_polars("waits").equals(eight_result.waits)
    assert "<p><code>step_stragglers</code>" in eight_result._repr_html_()


_SCRIPT = """\
import sys
from tracelens.errors import UsageError
from tracelens.ranks import analyse_ranks

def run():
    try:
        r = analyse_ranks(sys.argv[1:], jobs=2)
    except UsageError as exc:
        print("UsageError:", exc)
    else:
        print("ranks:", len(r.ranks))
{call}
"""


@pytest.mark.parametrize(
    "call, expected",
    [
        ("run()", "UsageError: jobs > 1 starts worker processes, which re-run "),
        ('if __name__ == "__main__":\n    run()', "ranks: 3"),
    ],
    ids=["unguarded", "guarded"],
)
def test_a_script_without_a_main_guard_is_told_before_any_worker_starts(
    eight, tmp_path, call, expected
):
    """A pool's spawned workers re-run the main script: an unguarded top-level call would
    kill every worker and blame the traces; the driver says so once, in one line."""
    import os
    import subprocess
    import sys

    script = tmp_path / "job.py"
    script.write_text(_SCRIPT.format(call=call))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run(
        [sys.executable, str(script), *map(str, eight.paths[:3])],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(expected), done.stdout
    assert "Traceback" not in done.stderr
    if call == "run()":
        assert done.stdout.strip().endswith(
            '(line 12): put the call under `if __name__ == "__main__":` or pass jobs=1'
        )


def test_a_rank_that_captured_fewer_steps_is_a_capture_difference(tmp_path):
    """A rank whose capture holds fewer steps of the common path is not a path change: its
    row says so in the ranks' names (fingerprint.compare's capture sentence)."""
    from types import SimpleNamespace

    from fixtures.fingerprint_runs import Run, build_run

    import tracelens
    from tracelens import fingerprint as fp
    from tracelens.ranks.consistency import _path_differences

    def summary(path):
        with tracelens.open(path) as trace:
            return SimpleNamespace(fingerprint=fp.dumps(tracelens.fingerprint(trace)))

    full, short = (build_run(tmp_path / f"{n}.sqlite", Run(steps=n)) for n in (6, 4))
    rows = _path_differences([(0, summary(full)), (1, summary(full)), (2, summary(short))])
    assert rows == [
        {
            "rank": 2,
            "what": "capture",
            "detail": "rank 0's path; rank 2 holds 2 fewer steps (4 vs 6: a shorter capture): "
            "the last 14 launches of rank 0 are in rank 0 only",
        }
    ]


def test_gaps_between_numbers_of_unrelated_file_names_are_not_missing_ranks(tmp_path):
    # Ranks numbered by the last integer of file names of no one pattern (gauss_7gpu,
    # rank_0): the gap between 0 and 7 says nothing, so no rank is called missing; names of
    # one pattern (rank_0, rank_7) do say it.
    rs = build_rank_set(tmp_path / "a", ranks=2, steps=2, slow_rank=None)
    (rs.dest / "rank_1.sqlite").rename(rs.dest / "gauss_7gpu.sqlite")
    r = analyse_ranks([rs.dest], jobs=1)
    assert sorted(r.ranks["rank"].to_list()) == [0, 7]
    assert r.missing_ranks == ()
    assert not any(f.startswith("missing ranks") for f in r.findings)
    (rs.dest / "gauss_7gpu.sqlite").rename(rs.dest / "rank_7.sqlite")
    r = analyse_ranks([rs.dest], jobs=1)
    assert r.missing_ranks == (1, 2, 3, 4, 5, 6)
