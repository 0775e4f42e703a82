"""The census command: output formats, units, names and filters, pinned exactly."""

from __future__ import annotations

import json
import sqlite3

import polars as pl
import pytest
from conftest import needs_shared, run_cli

import tracelens

pytestmark = needs_shared
MOCK = "nsys2026.1_mock_2k"
REDUCE = (
    "void at::native::reduce_kernel<(int)512, (int)1, at::native::ReduceOp<float, "
    "at::native::func_wrapper_t<float, at::native::sum_functor<float, float, float>::operator "
    "()(at::TensorIterator &)::[lambda(float, float) (instance 1)]>, unsigned int, float, (int)4>>(T3)"
)
FILL = (
    "void at::native::vectorized_elementwise_kernel<(int)4, at::native::FillFunctor<float>, "
    "std::array<char *, (unsigned long)1>>(int, T2, T3)"
)


def test_csv_is_exact(trace_copies, capsys):
    rc, out, err = run_cli(["census", trace_copies[MOCK], "--format", "csv"], capsys)
    assert (rc, err) == (0, "")
    assert out == (
        "time_pct,total_ns,instances,avg_ns,med_ns,min_ns,max_ns,stddev_ns,name\n"
        f'65.1,2689,1,2689.0,2689.0,2689,2689,0.0,"{REDUCE}"\n'
        f'34.9,1440,1,1440.0,1440.0,1440,1440,0.0,"{FILL}"\n'
    )


def test_json_short_names(trace_copies, capsys):
    rc, out, _ = run_cli(
        ["census", trace_copies[MOCK], "--format", "json", "--name", "short"], capsys
    )
    assert rc == 0
    rows = json.loads(out)
    assert [(r["name"], r["total_ns"], r["time_pct"]) for r in rows] == [
        ("reduce_kernel", 2689, 65.1),
        ("vectorized_elementwise_kernel", 1440, 34.9),
    ]


def test_mangled_falls_back_to_demangled_where_absent(trace_copies):
    # nsys 2020.5 exports have no mangledName column at all.
    with tracelens.open(trace_copies["nsys2020.5_kmeans_51k"]) as trace:
        assert trace.census(name="mangled")["name"].to_list() == ["kmeans_235_gpu"]
    with tracelens.open(trace_copies[MOCK]) as trace:
        names = trace.census(name="mangled")["name"].to_list()
    assert all(n.startswith("_Z") for n in names), names


def test_table_is_readable_and_exact(trace_copies, capsys):
    rc, out, _ = run_cli(["census", trace_copies[MOCK], "--name", "short"], capsys)
    assert rc == 0
    assert out.splitlines() == [
        f"census of {MOCK}.sqlite: GPU time by kernel",
        "",
        "  Time (%)   Total (ns)   Instances   Avg (ns)   Med (ns)   Min (ns)   Max (ns)   StdDev (ns)   Name",
        " " + "─" * 125,
        "      65.1        2,689           1    2,689.0    2,689.0      2,689      2,689           0.0   reduce_kernel",
        "      34.9        1,440           1    1,440.0    1,440.0      1,440      1,440           0.0   vectorized_elementwise_kernel",
        "",
        "2 kernel rows",
    ]


def test_long_names_fold_instead_of_vanishing(trace_copies, capsys):
    rc, out, _ = run_cli(["census", trace_copies[MOCK]], capsys)
    assert rc == 0
    assert max(len(line) for line in out.splitlines()) <= 160
    lines = out.splitlines()
    col = lines[2].index("Name")
    name_column = "".join(line[col:] for line in lines[4:])
    # every character of the 200-character name is printed, folded over lines
    assert "".join(REDUCE.split()) in "".join(name_column.split())


def test_markdown_escapes_pipes_and_converts_units(trace_copies, capsys):
    rc, out, _ = run_cli(
        [
            "census",
            trace_copies[MOCK],
            "--format",
            "markdown",
            "--timeunit",
            "us",
            "--name",
            "short",
        ],
        capsys,
    )
    assert rc == 0
    assert out.splitlines()[2:] == [
        "| Time (%) | Total (us) | Instances | Avg (us) | Med (us) | Min (us) | Max (us) | StdDev (us) | Name |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | :--- |",
        "| 65.1 | 2.689 | 1 | 2.689 | 2.689 | 2.689 | 2.689 | 0.000 | `reduce_kernel` |",
        "| 34.9 | 1.440 | 1 | 1.440 | 1.440 | 1.440 | 1.440 | 0.000 | `vectorized_elementwise_kernel` |",
    ]


def test_csv_header_names_the_unit(trace_copies, capsys):
    rc, out, _ = run_cli(
        ["census", trace_copies[MOCK], "-f", "csv", "--timeunit", "ms", "--name", "short"], capsys
    )
    assert (
        out.splitlines()[0]
        == "time_pct,total_ms,instances,avg_ms,med_ms,min_ms,max_ms,stddev_ms,name"
    )
    assert (
        out.splitlines()[1]
        == "65.1,0.002689,1,0.002689,0.002689,0.002689,0.002689,0.0,reduce_kernel"
    )


def test_output_file(trace_copies, capsys, tmp_path):
    dest = tmp_path / "census.csv"
    rc, out, err = run_cli(["census", trace_copies[MOCK], "-f", "csv", "-o", dest], capsys)
    assert (rc, out, err) == (0, "", "")
    assert dest.read_text().startswith("time_pct,total_ns,")


def test_by_launch_config_columns(trace_copies, capsys):
    rc, out, _ = run_cli(
        ["census", trace_copies[MOCK], "--by-launch-config", "-f", "csv", "--name", "short"], capsys
    )
    lines = out.splitlines()
    assert lines[0].endswith("stddev_ns,grid_x,grid_y,grid_z,block_x,block_y,block_z,name")
    assert lines[1] == "65.1,2689,1,2689.0,2689.0,2689,2689,0.0,1,1,1,16,1,1,reduce_kernel"
    # data outputs carry integers; the terminal table prints nsys's aligned GridXYZ
    rc, out, _ = run_cli(
        ["census", trace_copies[MOCK], "--by-launch-config", "-f", "json", "--name", "short"],
        capsys,
    )
    first = json.loads(out)[0]
    assert [first[k] for k in ("grid_x", "grid_y", "grid_z", "block_x", "block_y", "block_z")] == [
        1,
        1,
        1,
        16,
        1,
        1,
    ]
    assert "grid_xyz" not in first
    with tracelens.open(trace_copies[MOCK]) as t:
        df = t.census(by_launch_config=True, name="short")
    assert df.schema["grid_x"] == df.schema["block_z"] == pl.Int64
    rc, out, _ = run_cli(
        ["census", trace_copies[MOCK], "--by-launch-config", "--name", "short"], capsys
    )
    assert "   GridXYZ          BlockXYZ " in out
    assert "      1    1    1     16    1    1   reduce_kernel" in out
    rc, out, _ = run_cli(
        ["census", trace_copies[MOCK], "--by-launch-config", "-f", "markdown", "--top", "1"],
        capsys,
    )
    assert "| GridXYZ | BlockXYZ |" in out


def _window_expected(path, start, end):
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    rows = con.execute(
        "SELECT count(*), sum(end - start) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE end >= ? AND start <= ?",
        (start, end),
    ).fetchone()
    con.close()
    return rows


@pytest.mark.parametrize(
    "unit_start, unit_end, start_ns, end_ns",
    [
        ("1s", "1.5s", 1_000_000_000, 1_500_000_000),
        ("465484840", "465500000", 465_484_840, 465_500_000),
        ("2000ms", "2000.5ms", 2_000_000_000, 2_000_500_000),
    ],
)
def test_time_window_keeps_overlapping_kernels(
    trace_copies, capsys, unit_start, unit_end, start_ns, end_ns
):
    path = trace_copies["nsys2022.4_gaussian_7gpu"]
    count, total = _window_expected(path, start_ns, end_ns)
    rc, out, _ = run_cli(
        ["census", path, "--start", unit_start, "--end", unit_end, "-f", "json"], capsys
    )
    rows = json.loads(out)
    assert rc == 0 and count > 0
    assert sum(r["instances"] for r in rows) == count
    assert sum(r["total_ns"] for r in rows) == total


def test_filters_that_match_nothing_give_an_empty_table(trace_copies, capsys):
    rc, out, _ = run_cli(["census", trace_copies[MOCK], "--device", "5", "-f", "csv"], capsys)
    assert (rc, out) == (
        0,
        "time_pct,total_ns,instances,avg_ns,med_ns,min_ns,max_ns,stddev_ns,name\n",
    )


def test_top(trace_copies, capsys):
    rc, out, _ = run_cli(
        ["census", trace_copies["nsys2025.5_balinski_2gpu"], "--top", "2", "-f", "csv"], capsys
    )
    assert rc == 0 and len(out.splitlines()) == 3


def test_info_json(trace_copies, capsys):
    rc, out, _ = run_cli(
        ["info", trace_copies["nsys2025.5_balinski_2gpu"], "--format", "json"], capsys
    )
    assert rc == 0
    info = json.loads(out)
    assert info["nsys_version"] == "2025.5.1.121"
    assert info["schema_version"] == "3.23.3"
    assert info["metadata_table"] == "META_DATA_EXPORT"
    assert [g["name"] for g in info["gpus"]] == ["NVIDIA GeForce RTX 3090"] * 2
    assert {e["kind"]: e["count"] for e in info["events"]} == {
        "kernel": 97,
        "memcpy": 37,
        "memset": 2,
        "runtime": 202,
        "nvtx": 0,
        "osrt": 959,
        "graph": 0,
    }
    assert info["processes"] == [{"pid": 433104, "name": "build/test1"}]


def test_narrow_terminal_never_crops(trace_copies, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    rc, out, _ = run_cli(["census", trace_copies[MOCK]], capsys)
    assert rc == 0
    lines = out.splitlines()
    col = lines[2].index("Name")
    name_column = "".join(line[col:] for line in lines[4:])
    assert "".join(REDUCE.split()) in "".join(name_column.split())
    assert "2,689" in out and "1,440" in out
