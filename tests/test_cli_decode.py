"""The decode command: kernel names field by field, and every kernel of a trace; output pinned."""

from __future__ import annotations

import io
import json

import pytest
from conftest import needs_shared, run_cli

import tracelens
from tracelens.demo import demo_path
from tracelens.kernelnames import decode

NVJET = "nvjet_tst_64x24_64x16_4x1_v_bz_splitK_TNT"
CUDNN = "cudnn_infer_volta_scudnn_128x64_relu_xregs_large_nn_v1"  # two undocumented tokens
FILL_MANGLED = "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEESt5arrayIPcLm1EEEEviT0_T1_"


def test_table_per_name_is_exact(capsys):
    rc, out, err = run_cli(["decode", NVJET], capsys)
    assert (rc, err) == (0, "")
    assert out.splitlines() == [
        NVJET,
        "family nvjet; category gemm / nvjet (rule nvjet)",
        "",
        "  Field           Value                  Meaning                                                                       Confidence",
        " " + "─" * 129,
        "  kernel          nvjet                  cuBLASLt GEMM/GEMV kernel family (Hopper/Blackwell)                           confirmed",
        "  dtypes          tst                    dtype letters: inputs, compute, output                                        inferred",
        "  input_dtype     bf16                   A/B input dtype letter (s fp32, h fp16, t bf16, q fp8 e4m3, o fp4)            inferred",
        "  compute_dtype   fp32                   compute dtype letter (s fp32, h fp16, t bf16, q fp8 e4m3, o fp4)              inferred",
        "  output_dtype    bf16                   output dtype letter (s fp32, h fp16, t bf16, q fp8 e4m3, o fp4)               inferred",
        "  tile_mn         64x24                  CTA tile M x N                                                                inferred",
        "  k_block         64                     K-block (a public guide reads 64x4 as threads per block)                      inferred",
        "  stages          16                     pipeline stages                                                               inferred",
        "  cluster         4x1                    cluster shape (a public guide reads it as warps)                              inferred",
        "  raster_order    v                      raster order v (CTA traversal order; v/h)                                     inferred",
        "  beta            bz                     beta = 0: C is not read                                                       inferred",
        "  split_k         splitK                 split-K: partial sums are combined by a separate splitKreduce_kernel launch   confirmed",
        "  layout          TNT                    operation letters                                                             inferred",
        "  op_a            T                      op(A): T transposed, N not                                                    inferred",
        "  op_b            N                      op(B): T transposed, N not                                                    inferred",
        "  op_3            T                      third operation letter: meaning unpublished                                   unknown",
    ]


def test_unknown_tokens_are_shown_and_other_names_still_print(capsys):
    rc, out, err = run_cli(["decode", CUDNN, "my_kernel_v2", FILL_MANGLED], capsys)
    assert (rc, err) == (0, "")
    lines = out.splitlines()
    assert (
        "  flag       xregs                  token not documented                               unknown"
        in lines
    )
    assert (
        "  flag_2     large                  token not documented                               unknown"
        in lines
    )
    i = lines.index("my_kernel_v2")
    assert lines[i - 1 : i + 4] == [
        "",
        "my_kernel_v2",
        "family other; category other",
        "no fields: no decoder recognises this name",
        "",
    ]
    # a mangled name says what it demangles to
    j = lines.index(FILL_MANGLED)
    assert lines[j + 1 : j + 3] == [
        "family aten_elementwise; category elementwise / aten (rule aten_elementwise)",
        "normalized: at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
        "std::array<char*, 1>>",
    ]


def test_json_is_the_list_of_kernelname_dicts(capsys):
    rc, out, _ = run_cli(["decode", NVJET, CUDNN, "my_kernel_v2", "-f", "json"], capsys)
    assert rc == 0
    assert json.loads(out) == [decode(n).to_dict() for n in (NVJET, CUDNN, "my_kernel_v2")]
    assert json.loads(out)[2]["fields"] == []


def test_csv_has_one_row_per_field_and_keeps_names_without_fields(capsys):
    rc, out, _ = run_cli(["decode", "my_kernel_v2", CUDNN, "-f", "csv"], capsys)
    assert rc == 0
    lines = out.splitlines()
    assert lines[:3] == [
        "name,family,category,subfamily,field,value,meaning,confidence",
        "my_kernel_v2,other,other,,,,,",
        f"{CUDNN},cudnn,convolution,,library,cudnn,cuDNN kernel,confirmed",
    ]
    assert len(lines) == 2 + len(decode(CUDNN).fields)
    assert f"{CUDNN},cudnn,convolution,,flag,xregs,token not documented,unknown" in lines


def test_markdown(capsys):
    rc, out, _ = run_cli(["decode", "my|kernel", "nvjet_sm90_zzz_1", "-f", "markdown"], capsys)
    assert rc == 0
    assert out.splitlines() == [
        "**`my|kernel`**",
        "",
        "family other; category other",
        "",
        "no fields: no decoder recognises this name",
        "",
        "**`nvjet_sm90_zzz_1`**",
        "",
        "family nvjet; category gemm / nvjet (rule nvjet)",
        "",
        "| Field | Value | Meaning | Confidence |",
        "| :--- | :--- | :--- | :--- |",
        "| unparsed | `sm90_zzz_1` | `nvjet name outside the known grammar` | unknown |",
    ]


def test_names_from_stdin(capsys, monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO(f"{NVJET}\n\n  {CUDNN}  \n"))
    rc, out, _ = run_cli(["decode", "-", "-f", "json"], capsys)
    assert rc == 0
    assert [d["raw"] for d in json.loads(out)] == [NVJET, CUDNN]


# -- a whole trace ------------------------------------------------------------------------------
def test_trace_json_every_kernel_by_time(capsys):
    rc, out, err = run_cli(["decode", "--demo", "bs16", "-f", "json"], capsys)
    assert (rc, err) == (0, "")
    rows = json.loads(out)
    with tracelens.open(demo_path("bs16")) as trace:
        census = trace.census()
    assert [r["name"] for r in rows] == census["name"].to_list()
    assert [r["total_ns"] for r in rows] == census["total_ns"].to_list()
    assert [r["instances"] for r in rows] == census["instances"].to_list()
    for r in rows:
        k = decode(r["name"])
        assert (r["family"], r["category"], r["subfamily"]) == (k.family, k.category, k.subfamily)
        assert r["fields"] == [f.to_dict() for f in k.fields]
    top = rows[0]
    assert top["fields_summary"] == (
        "kernel=nvjet arch=sm90 dtypes=tst input_dtype=bf16 compute_dtype=fp32 "
        "output_dtype=bf16 tile_mn=128x256 k_block=64 stages=4 cluster=2x1 raster_order=v "
        "beta=bz coop=coopA? epilogue=bias layout=TNN op_a=T op_b=N op_3=N?"
    )


@needs_shared
def test_trace_csv_on_a_real_export(trace_copies, capsys):
    rc, out, err = run_cli(
        ["decode", "--trace", trace_copies["nsys2026.1_mock_2k"], "-f", "csv"], capsys
    )
    assert (rc, err) == (0, "")
    assert out.splitlines() == [
        "time_pct,total_ns,instances,family,category,subfamily,name,fields_summary",
        '65.1,2689,1,aten_reduce,reduction,aten,"void at::native::reduce_kernel<(int)512, '
        "(int)1, at::native::ReduceOp<float, at::native::func_wrapper_t<float, "
        "at::native::sum_functor<float, float, float>::operator ()(at::TensorIterator &)::"
        '[lambda(float, float) (instance 1)]>, unsigned int, float, (int)4>>(T3)",'
        "threads=512 items_per_thread=1 dtype=fp32 op=sum",
        '34.9,1440,1,aten_elementwise,elementwise,aten,"void at::native::'
        "vectorized_elementwise_kernel<(int)4, at::native::FillFunctor<float>, "
        'std::array<char *, (unsigned long)1>>(int, T2, T3)",vec_size=4 op=Fill',
    ]


@needs_shared
def test_trace_names_no_decoder_knows_still_print(trace_copies, capsys):
    rc, out, _ = run_cli(
        ["decode", "--trace", trace_copies["nsys2022.4_gaussian_7gpu"], "-f", "csv"], capsys
    )
    assert rc == 0
    assert out.splitlines()[1:] == [
        '99.5,2795005936,4095,other,other,,"Fan2(float *, float *, float *, int, int, int)",""',
        '0.5,13267201,4095,other,other,,"Fan1(float *, float *, int, int)",""',
    ]


def test_trace_table_and_filters(capsys):
    rc, out, _ = run_cli(["decode", "--demo", "bs16", "--top", "1", "--timeunit", "us"], capsys)
    assert rc == 0
    lines = out.splitlines()
    assert lines[0] == "decode of bs16.sqlite: every kernel by GPU time"
    assert lines[2].split() == [
        "Time", "(%)", "Total", "(us)", "Instances", "Family", "Category", "Subfamily", "Name",
        "Fields", "summary",
    ]  # fmt: skip
    assert lines[4].split()[:6] == ["68.0", "101,342.858", "56", "nvjet", "gemm", "nvjet"]
    assert lines[-1] == "1 kernel row (top 1); '?' marks a field whose meaning is unknown"
    assert max(len(line) for line in lines) <= 160
    rc, out, _ = run_cli(["decode", "--demo", "bs16", "--device", "3", "-f", "csv"], capsys)
    assert (rc, out) == (
        0,
        "time_pct,total_ns,instances,family,category,subfamily,name,fields_summary\n",
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "nothing to decode: give kernel NAMEs, or --trace TRACE / --demo NAME"),
        (["x", "--demo", "bs1"], "give kernel NAMEs or --trace TRACE / --demo NAME, not both"),
        (
            ["--demo", "bs1", "--trace", "t.sqlite"],
            "give either a TRACE file or --demo NAME, not both",
        ),
        (["x", "-f", "yaml"], "unknown --format 'yaml'; use one of: table, csv, json, markdown"),
        (["--demo", "bs9"], "unknown demo"),
    ],
)
def test_usage_errors(args, message, capsys):
    rc, out, err = run_cli(["decode", *args], capsys)
    assert (rc, out) == (2, "")
    assert err.startswith(f"tracelens: {message}") and err.count("\n") == 1, err


def test_missing_trace_file(tmp_path, capsys):
    rc, out, err = run_cli(["decode", "--trace", tmp_path / "none.sqlite"], capsys)
    assert (rc, out) == (2, "")
    assert err.startswith(f"tracelens: {tmp_path / 'none.sqlite'}") and err.count("\n") == 1
