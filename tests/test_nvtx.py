"""tracelens nvtx / api on built exports with what the real files lack: NVTX domains,
registered strings, payloads, ranges left open, start/end ranges ended on another thread,
20-deep nesting, PyTorch labels, same-named ranges under different parents. Where nsys is
installed, the same exports are also checked against `nsys stats` itself."""

from __future__ import annotations

import csv
import io
import shutil
import sqlite3
import subprocess

import polars as pl
import pytest
from conftest import run_cli
from queries.golden import GOLDEN, assert_golden

import tracelens
from tracelens import nvtx, nvtx_held, nvtx_kernels, nvtx_sweep
from tracelens.api import api_summary
from tracelens.errors import MissingDataError, UsageError
from tracelens.nvtx import (
    build_projection,
    gpu_projection,
    gpu_summary,
    kernels_by_range,
    nvtx_report,
    op_paths,
    range_summary,
)
from tracelens.synth import TraceBuilder, global_tid

PID = 200
MAIN, LOADER, DEEP = 200, 201, 202
DEPTH = 20


def build_shapes(path):
    b = TraceBuilder("3.25.0")
    b.process(PID, "train")
    launch = "cudaLaunchKernel_v7000"

    def kernel(name, at, tid=MAIN, dur=100):
        cid = b.runtime(launch, start=at, end=at + 5, pid=PID, tid=tid)
        b.kernel(name, start=10_000 + at, end=10_000 + at + dur, pid=PID, correlation_id=cid)

    # a named domain: its ranges are 'mydomain:label' (the domain's eventType 75 event)
    b.add_row("NVTX_EVENTS", start=1, end=None, eventType=75, text="mydomain", domainId=5,
              globalTid=global_tid(PID, MAIN))  # fmt: skip
    b.nvtx_range("dom_range", start=10, end=40, pid=PID, tid=MAIN, domain_id=5)
    kernel("k_dom", 20)
    # a registered string (textId) with a payload
    b.nvtx_range("registered", start=50, end=90, pid=PID, tid=MAIN, registered=True,
                 int64Value=42, doubleValue=0.5)  # fmt: skip
    kernel("k_reg", 60)
    # PyTorch emit_nvtx labels: two calls of one op
    for i, (start, sizes) in enumerate(((100, "[[2, 3]]"), (200, "[[4, 5]]"))):
        label = f"aten::mm, seq = {i}, op_id = {7 + i}, sizes = {sizes}"
        b.nvtx_range(label, start=start, end=start + 50, pid=PID, tid=MAIN)
        kernel("k_mm", start + 10)
    # the same innermost name under two parents
    for layer, start in (("layer0", 300), ("layer1", 400)):
        b.nvtx_range(layer, start=start, end=start + 90, pid=PID, tid=MAIN)
        b.nvtx_range("attn", start=start + 10, end=start + 50, pid=PID, tid=MAIN)
        kernel("k_attn", start + 20, dur=10 if layer == "layer0" else 30)
    # a start/end range ended on another thread (nsys does not project it) and one that
    # ends where it started
    b.nvtx_range("async_load", start=500, end=600, pid=PID, tid=LOADER, event_type=60,
                 endGlobalTid=global_tid(PID, MAIN))  # fmt: skip
    kernel("k_loader", 550, tid=LOADER)
    b.nvtx_range("se_same", start=700, end=800, pid=PID, tid=LOADER, event_type=60,
                 endGlobalTid=None)  # fmt: skip
    kernel("k_se", 750, tid=LOADER)
    # 20 nested ranges, one launch at the bottom
    for i in range(DEPTH):
        b.nvtx_range(f"d{i}", start=1000 + i, end=2000 - i, pid=PID, tid=DEEP)
    kernel("k_deep", 1500, tid=DEEP)
    # left open at the end of the capture: lasts until the last NVTX timestamp (2000)
    b.nvtx_range("open_tail", start=1900, end=None, pid=PID, tid=MAIN)
    kernel("k_tail", 1950)
    kernel("k_outside", 2500)
    return b.write(path)


@pytest.fixture(scope="module")
def shapes(tmp_path_factory):
    return build_shapes(tmp_path_factory.mktemp("nvtx") / "shapes.sqlite")


def test_range_summary_names_domains_registered_strings_and_open_ranges(shapes):
    with tracelens.open(shapes) as t:
        df = range_summary(t)
    rows = {(r["style"], r["name"]): r for r in df.iter_rows(named=True)}
    assert rows[("PushPop", "mydomain:dom_range")]["total_ns"] == 30
    assert rows[("PushPop", "registered")]["instances"] == 1
    assert rows[("PushPop", "open_tail")]["total_ns"] == 2000 - 1900
    assert rows[("StartEnd", "async_load")]["total_ns"] == 100
    assert rows[("PushPop", "attn")]["instances"] == 2
    assert len([k for k in rows if k[1].startswith("aten::mm")]) == 2
    assert round(df["time_pct"].sum()) == 100
    with tracelens.open(shapes) as t:
        se = range_summary(t, style="startend")
    assert sorted(se["name"]) == ["async_load", "se_same"]
    assert se["time_pct"].sum() == 100.0


def test_projection_follows_nsys_rules(shapes):
    with tracelens.open(shapes) as t:
        df = gpu_projection(t)
    by_name = {}
    for r in df.iter_rows(named=True):
        by_name.setdefault(r["name"], []).append(r)
    assert "async_load" not in by_name  # ended on another thread: not projected
    (se,) = by_name["se_same"]
    assert (se["proj_start_ns"], se["proj_duration_ns"], se["gpu_ops"]) == (10_750, 100, 1)
    (dom,) = by_name["mydomain:dom_range"]
    assert dom["level"] == 0 and dom["parent_id"] is None
    (tail,) = by_name["open_tail"]
    assert (tail["duration_ns"], tail["gpu_ops"]) == (100, 1)
    layers = [by_name["layer0"][0], by_name["layer1"][0]]
    attn = sorted(by_name["attn"], key=lambda r: r["start_ns"])
    for layer, a in zip(layers, attn, strict=True):
        assert a["parent_id"] == layer["range_id"] and a["level"] == 1
        assert layer["children"] == 1
        assert a["stack"] == f":{layer['range_id']}:{a['range_id']}"
        assert a["path"] == f"{layer['name']} / attn"
    assert "k_outside" not in str(df)


def test_start_end_ranges_that_end_on_their_own_thread(tmp_path):
    # nsys writes endGlobalTid NULL for a start/end range that ends on the thread that
    # opened it (all 2,444 of the shared TensorRT export's), and so does the builder; an
    # export naming that same thread there is projected alike, one naming another is not
    def projection(name, **end):
        b = TraceBuilder("3.25.0")
        b.process(PID, "p")
        b.nvtx_range("se", start=0, end=100, pid=PID, tid=MAIN, event_type=60, **end)
        cid = b.runtime("cudaLaunchKernel_v7000", start=10, end=20, pid=PID, tid=MAIN)
        b.kernel("k", start=30, end=40, pid=PID, correlation_id=cid)
        path = b.write(tmp_path / f"{name}.sqlite")
        with sqlite3.connect(path) as db:
            (written,) = db.execute("SELECT endGlobalTid FROM NVTX_EVENTS").fetchone()
        with tracelens.open(path) as t:
            return written, gpu_projection(t).select("name", "gpu_ops", "proj_duration_ns")

    written, as_nsys = projection("null")
    assert written is None
    assert as_nsys.rows() == [("se", 1, 10)]
    same = global_tid(PID, MAIN)
    written, alike = projection("same", endGlobalTid=same)
    assert written == same and alike.equals(as_nsys)
    other = global_tid(PID, LOADER)
    written, elsewhere = projection("other", endGlobalTid=other)
    assert written == other and elsewhere.is_empty()


@pytest.mark.parametrize("dense", [True, False])
def test_enclosing_range_written_after_its_children(tmp_path, monkeypatch, dense):
    # start/end ranges are written as they end, so an enclosing range's RangeId (rowid) may
    # be larger than every id below it: the held ranges' ancestors are still found (the
    # walk up indexed by RangeId once read past its table's end)
    if not dense:
        monkeypatch.setattr(nvtx_held, "DENSE_IDS_PER_LINK", 0)
        monkeypatch.setattr(nvtx_sweep, "DENSE_SLOTS_FLOOR", 0)
    b = TraceBuilder("3.25.0")
    b.process(PID, "p")
    b.nvtx_range("inner", start=10, end=30, pid=PID, tid=MAIN, event_type=60)
    b.nvtx_range("middle", start=5, end=40, pid=PID, tid=MAIN, event_type=60)
    b.nvtx_range("outer", start=0, end=100, pid=PID, tid=MAIN, event_type=60)
    cid = b.runtime("cudaLaunchKernel_v7000", start=15, end=20, pid=PID, tid=MAIN)
    b.kernel("k", start=50, end=60, pid=PID, correlation_id=cid)
    with tracelens.open(b.write(tmp_path / "late_parent.sqlite")) as t:
        rows = gpu_projection(t).select("name", "range_id", "parent_id", "path").rows()
    assert rows == [  # one projection each: in RangeId order
        ("inner", 1, 2, "outer / middle / inner"),
        ("middle", 2, 3, "outer / middle"),
        ("outer", 3, None, "outer"),
    ]


def test_twenty_deep_nesting(shapes):
    with tracelens.open(shapes) as t:
        df = gpu_projection(t)
    deep = df.filter(df["tid"] == DEEP).sort("level")
    assert deep["level"].to_list() == list(range(DEPTH))
    assert deep["gpu_ops"].to_list() == [1] * DEPTH
    assert set(deep["proj_start_ns"]) == {11_500}
    ids = deep["range_id"].to_list()
    assert deep["stack"][-1] == "".join(f":{i}" for i in ids)
    assert deep["path"][-1] == " / ".join(f"d{i}" for i in range(DEPTH))
    assert deep["parent_id"].to_list() == [None, *ids[:-1]]
    assert deep["children"].to_list() == [1] * (DEPTH - 1) + [0]


def test_grouping_by_name_path_and_torch_label(shapes):
    with tracelens.open(shapes) as t:
        by_name = gpu_summary(t, group="name")
        by_path = gpu_summary(t, group="path")
        by_torch = gpu_summary(t, group="torch")
    attn = by_name.filter(by_name["range"] == "attn")
    assert (attn["instances"][0], attn["proj_total_ns"][0]) == (2, 40)
    paths = dict(zip(by_path["range"], by_path["proj_total_ns"], strict=True))
    assert paths["layer0 / attn"] == 10 and paths["layer1 / attn"] == 30
    mm = by_torch.filter(by_torch["range"] == "aten::mm")
    assert (mm["instances"][0], mm["gpu_ops"][0]) == (2, 2)
    assert not by_name.filter(by_name["range"] == "aten::mm").height


def test_kernels_count_in_every_enclosing_range(shapes):
    with tracelens.open(shapes) as t:
        df = kernels_by_range(t)
    deep = df.filter(df["name"] == "k_deep")
    assert sorted(deep["range"]) == sorted(f"d{i}" for i in range(DEPTH))
    outside = df.filter(df["range"].is_null())
    # launched outside every projected range: the async_load launch (its range ended on
    # another thread) and k_outside
    assert sorted(outside["name"]) == ["k_loader", "k_outside"]


def test_op_paths_give_every_gpu_op_its_range_path(shapes):
    with tracelens.open(shapes) as t:
        paths = op_paths(t)
        names = dict(t.sql("SELECT correlationId, s.value FROM kernels JOIN strings s "
                           "ON s.id = demangledName").iter_rows())  # fmt: skip
    got = {names[r["correlationId"]]: r["path"] for r in paths.iter_rows(named=True)}
    assert got["k_outside"] is None and got["k_loader"] is None
    assert got["k_attn"] in {"layer0 / attn", "layer1 / attn"}
    assert got["k_deep"] == " / ".join(f"d{i}" for i in range(DEPTH))
    assert got["k_dom"] == "mydomain:dom_range"


def test_op_paths_without_nvtx_are_all_null(tmp_path):
    b = TraceBuilder("3.25.0")
    b.process(1, "p")
    b.kernel("k", start=10, end=20, pid=1)
    with tracelens.open(b.write(tmp_path / "plain.sqlite")) as t:
        df = op_paths(t)
    assert df["path"].to_list() == [None] and df["kind"].to_list() == ["kernel"]


@pytest.mark.parametrize(
    ("query", "case", "params"),
    [
        ("nvtx_summary", "all", {"style": None}),
        ("nvtx_gpu_projection", "all", {}),
        ("nvtx_gpu_projection_summary", "path", {"group_by": "path"}),
        ("nvtx_kernel_names", "torch", {}),
        ("nvtx_op_paths", "all", {}),
        ("cuda_api_summary", "all", {"pid": None}),
        ("kernel_exec_summary", "all", {"name_kind": "demangled", "pid": None}),
    ],
)
def test_golden(shapes, query, case, params):
    # the CPU summary reads every range's text (nvtx_text); the GPU side reads the sweep,
    # which loads only the held ranges' text
    prepare = tracelens.Trace.load_nvtx_text if query == "nvtx_summary" else build_projection
    if query.startswith("nvtx_kernel_"):
        prepare = _kernel_stats
    if query == "nvtx_op_paths":
        prepare = _with_ops
    assert_golden(shapes, query, case, prepare=prepare, **params)


def _with_ops(trace):
    # nvtx_op_paths reads every column of the operations (the projection only their spans)
    nvtx.build_sweep(trace, with_ops=True)


def _kernel_stats(trace):
    # what nvtx_kernel_names reads: PyTorch ops, short kernel names
    build_projection(trace)
    nvtx_kernels.register_stats(trace, group="torch", name="short")


def test_kernels_by_range_named_as_golden(shapes):
    # the rows of the kernel statistics named by nvtx_kernel_names__torch
    with tracelens.open(shapes) as t:
        actual = kernels_by_range(t, group="torch", name="short").write_csv()
    assert actual == (GOLDEN / "nvtx_kernels_by_range__torch.csv").read_text()


def test_kernels_top_names_only_the_first_rows(shapes, capsys):
    # --top 3 names the first three rows of the order only: the same rows as the head of
    # the whole table, and the caption counts every row
    with tracelens.open(shapes) as t:
        every = kernels_by_range(t, group="torch", name="short")
        first = kernels_by_range(t, group="torch", name="short", top=3)
    assert every.height > 3
    assert first.equals(every.head(3))
    rc, whole, _ = run_cli(["nvtx", str(shapes), "--kernels", "-f", "csv"], capsys)
    rc_top, head, _ = run_cli(["nvtx", str(shapes), "--kernels", "-n", "3", "-f", "csv"], capsys)
    assert (rc, rc_top) == (0, 0)
    assert head.splitlines() == whole.splitlines()[:4]
    rc, table, _ = run_cli(["nvtx", str(shapes), "--kernels", "-n", "3"], capsys)
    rows = len(whole.splitlines()) - 1
    assert rc == 0 and f"3 of {rows:,} rows" in table


@pytest.mark.parametrize("top", [1, 5, 17, 200])
def test_kernel_order_top_is_the_head_of_the_order(top):
    # ties on every key, nulls in each: the first rows of the order of every row
    import polars as pl

    n = 120
    range_rank = pl.Series([None if i % 11 == 0 else i % 4 for i in range(n)], dtype=pl.Int64)
    thread = pl.Series([(i * 7) % 3 for i in range(n)], dtype=pl.Int64)
    total = pl.Series([None if i % 13 == 0 else (i * 5) % 6 for i in range(n)], dtype=pl.Int64)
    name_rank = pl.Series([None if i % 9 == 0 else (i * 3) % 5 for i in range(n)], dtype=pl.Int64)
    every = nvtx_kernels._order(range_rank, thread, total, name_rank)
    first = nvtx_kernels._order(range_rank, thread, total, name_rank, top)
    assert first.to_list() == every.head(top).to_list()


def test_golden_op_paths_without_nvtx(tmp_path):
    b = TraceBuilder("3.25.0")
    b.process(1, "p")
    b.kernel("k", start=10, end=20, pid=1)
    b.memset(64, start=30, end=40, pid=1)
    assert_golden(b.write(tmp_path / "p.sqlite"), "nvtx_op_paths_none", "plain")


def test_missing_data_and_bad_options(tmp_path, shapes, capsys):
    b = TraceBuilder("3.25.0")
    b.process(1, "p")
    b.kernel("k", start=10, end=20, pid=1)
    plain = b.write(tmp_path / "plain.sqlite")
    with tracelens.open(plain) as t:
        with pytest.raises(MissingDataError, match="no NVTX data"):
            range_summary(t)
        with pytest.raises(MissingDataError, match="no CUDA API data"):
            api_summary(t)
    with tracelens.open(shapes) as t, pytest.raises(UsageError) as raised:
        range_summary(t, style="nested")
    assert str(raised.value) == "unknown style 'nested'; use one of: pushpop, startend"
    assert raised.value.naming("--style").startswith("unknown --style 'nested'")
    with tracelens.open(shapes) as t, pytest.raises(UsageError) as raised:
        nvtx_report(t, each=True)
    assert str(raised.value) == "each needs gpu (one row per range projected onto the GPU)"
    rc, out, err = run_cli(["nvtx", str(plain)], capsys)
    assert (rc, out) == (3, "") and "no NVTX data" in err
    rc, out, err = run_cli(["nvtx", str(shapes), "--group", "path"], capsys)
    assert (rc, out, err) == (
        2,
        "",
        "tracelens: --group needs --gpu or --kernels (CPU times are per range name)\n",
    )
    rc, out, err = run_cli(["nvtx", str(shapes), "--each"], capsys)
    assert (rc, out, err) == (
        2,
        "",
        "tracelens: --each needs --gpu (one row per range projected onto the GPU)\n",
    )


NSYS = shutil.which("nsys")


@pytest.mark.skipif(NSYS is None, reason="nsys is not installed (see ../shared/nsys/INSTALL.md)")
def test_built_exports_equal_live_nsys(shapes, tmp_path):
    """The adversarial fixture through nsys stats 2022.4 itself (a dev check: CI has no
    nsys)."""
    copy = tmp_path / "copy.sqlite"
    shutil.copy(shapes, copy)
    with tracelens.open(shapes) as t:
        ours = {
            "nvtxsum": range_summary(t),
            "nvtxgpuproj": gpu_projection(t),
            "nvtxkernsum": kernels_by_range(t),
        }
    for report, df in ours.items():
        out = subprocess.run(
            [NSYS, "stats", "--report", report, "--format", "csv", "-o", "-", str(copy)],
            capture_output=True, text=True, check=True,
        ).stdout  # fmt: skip
        lines = [x for x in out.splitlines() if x and not x.startswith("Processing [")]
        header, *rows = csv.reader(io.StringIO("\n".join(lines)))
        got = sorted(
            tuple(
                "None" if v is None else f"{v:.1f}" if isinstance(v, float) else str(v) for v in r
            )  # fmt: skip
            for r in df.select(df.columns[: len(header)]).iter_rows()
        )
        assert got == sorted(tuple(r) for r in rows), report


def test_trace_methods_return_the_report_frames(shapes):
    """``Trace.nvtx(...)`` is the notebook face of ``tracelens nvtx``: the same frames."""
    with tracelens.open(shapes) as t:
        assert t.nvtx().equals(range_summary(t))
        assert t.nvtx(gpu=True, group="path").equals(gpu_summary(t, group="path"))
        assert t.nvtx(gpu=True, each=True).equals(gpu_projection(t))
        assert t.nvtx(kernels=True).equals(kernels_by_range(t, group="name"))
        assert t.nvtx_paths().equals(op_paths(t))


def test_projection_from_cache_equals_direct(shapes, monkeypatch):
    # The sweep reads its ranges (nvtx_spans) and the held ranges' labels from the cache
    # entry's Parquet when the trace is cached, from the export otherwise: the same rows.
    with tracelens.open(shapes, cache=False) as t:
        direct = gpu_projection(t)
    monkeypatch.setenv("TRACELENS_CACHE_MIN_MB", "0")
    with tracelens.open(shapes, cache=True) as t:
        cached = gpu_projection(t)
        assert t.parquet_dir is not None
    assert direct.height > 0
    assert cached.equals(direct)


def test_ranks_of_threads_and_processes(shapes, monkeypatch):
    # nvtx_sweep._ranks compares each value with a few keys one by one, and searches the
    # sorted keys when there are more: the same ranks, and the same projection, either way.
    values = pl.Series([7, None, 3, 5, 9, 1], dtype=pl.Int64)
    keys = pl.Series([3, 5, 7], dtype=pl.Int64)
    with tracelens.open(shapes, cache=False) as t:
        compared = gpu_projection(t).write_csv()
    assert nvtx_sweep._ranks(values, keys).to_list() == [2, None, 0, 1, None, None]
    monkeypatch.setattr(nvtx_sweep, "RANK_BY_COMPARISON", 0)
    assert nvtx_sweep._ranks(values, keys).to_list() == [2, None, 0, 1, None, None]
    assert nvtx_sweep._ranks(values, keys.clear()).null_count() == 6
    with tracelens.open(shapes, cache=False) as t:
        assert gpu_projection(t).write_csv() == compared
    assert len(compared.splitlines()) > 10


def test_kernel_rows_order_as_one_sort_by_every_key():
    # nvtx_kernels._order's three stable sorts give the order of one ORDER BY of the four
    # keys (NULLS LAST, total descending), ties of the first two keys included
    import polars as pl

    keys = pl.DataFrame(
        {
            "range_rank": [2, None, 1, 2, 1, None, 2, 1],
            "thread": [7, 7, None, 5, 7, 5, 5, 7],
            "total": [10, 30, 20, 10, 20, 5, 40, 20],
            "name_rank": [1, 2, 3, None, 2, 1, 1, 1],
        }
    )
    order = nvtx_kernels._order(
        keys["range_rank"], keys["thread"], keys["total"], keys["name_rank"]
    )
    expected = keys.with_row_index().sort(
        ["range_rank", "thread", "total", "name_rank"],
        descending=[False, False, True, False],
        nulls_last=True,
        maintain_order=True,
    )["index"]
    assert order.to_list() == expected.to_list() == [7, 4, 2, 6, 3, 0, 5, 1]


def test_a_one_row_table_says_row():
    """The caption counts in the singular for one row ("1 row", not "1 rows")."""
    import polars as pl

    from tracelens.nvtx import NvtxReport, render

    one = NvtxReport(frame=pl.DataFrame({"name": ["a"]}), what="x")
    two = NvtxReport(frame=pl.DataFrame({"name": ["a", "b"]}), what="x")
    assert render(one, fmt="table", source="s").rstrip().endswith("1 row")
    assert render(two, fmt="table", source="s").rstrip().endswith("2 rows")
    assert render(two, fmt="table", source="s", top=1).rstrip().endswith("1 of 2 rows")
