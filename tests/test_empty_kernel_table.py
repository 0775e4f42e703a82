"""An export whose kernel table exists and holds no row (a cut-down or filtered export) is
an export without kernels, as one without the table is: the commands that need kernels say
so in one line and exit 3 (they said '0 kernel rows' and exited 0), those that do not
(memory, api, nvtx, util, info) still work, and the report's page says it has no kernels."""

from __future__ import annotations

import json

import pytest
from conftest import run_cli
from fixtures.builder import build_empty_kernels, build_no_kernels

import tracelens

COPIES = (
    "no CUDA kernel data: CUDA was traced and no kernel ran (it holds 2 memory copies: see "
    "`tracelens memory`)"
)
EMPTY = "the export's kernel table is empty (no kernel ran in this capture)"


@pytest.fixture(scope="module")
def exports(tmp_path_factory):
    root = tmp_path_factory.mktemp("empty_kernels")
    return {
        "empty": build_empty_kernels(root, "3.25.0").path,
        "only": build_empty_kernels(root, "3.25.0", copies=False).path,
        "absent": build_no_kernels(root, "3.25.0").path,
    }


def _args(command: str, path) -> list:
    extra = {"diff": [path], "stakeout": ["gemm"]}.get(command, [])
    return [command, path, *extra, "--no-cache"]


@pytest.mark.parametrize("command", ["census", "stakeout", "diff", "steps", "fingerprint"])
def test_kernel_commands_exit_3_with_the_reason(exports, command, capsys):
    path = exports["empty"]
    code, out, err = run_cli(_args(command, path), capsys)
    assert (code, out) == (3, "")
    assert err == f"tracelens: {path}: {COPIES}\n"
    # the same line as an export without the kernel table
    absent = exports["absent"]
    assert run_cli(_args(command, absent), capsys)[2] == f"tracelens: {absent}: {COPIES}\n"


@pytest.mark.parametrize("command", ["census", "stakeout", "diff", "steps", "report"])
def test_nothing_but_an_empty_kernel_table_exits_3(exports, command, capsys):
    path = exports["only"]
    code, out, err = run_cli(_args(command, path), capsys)
    assert (code, out) == (3, "")
    assert err == f"tracelens: {path}: no CUDA kernel data: {EMPTY}\n"


@pytest.mark.parametrize("command", ["util", "lineup", "findings"])
def test_no_gpu_work_at_all_exits_3_for_the_work_commands(exports, command, capsys):
    path = exports["only"]
    code, out, err = run_cli(_args(command, path), capsys)
    assert (code, out) == (3, "")
    assert err == f"tracelens: {path}: no CUDA kernel, memcpy or memset data: {EMPTY}\n"


@pytest.mark.parametrize("command", ["memory", "api", "nvtx", "util", "lineup", "info"])
def test_commands_that_need_no_kernel_still_work(exports, command, capsys):
    code, out, err = run_cli([*_args(command, exports["empty"]), "-f", "json"], capsys)
    assert code == 0, err
    assert json.loads(out)


def test_the_report_page_says_it_has_no_kernels(exports, capsys, tmp_path):
    page = tmp_path / "page.md"
    code, _out, err = run_cli(
        ["report", exports["empty"], "-f", "markdown", "-o", page, "--no-cache"], capsys
    )
    assert code == 0, err
    assert "_No CUDA kernels in this trace: CUDA was traced and only 2 memory copies ran._" in (
        page.read_text()
    )


def test_the_library_raises_missing_data(exports):
    with tracelens.open(exports["empty"], cache=False) as trace:
        assert not trace.has_kernels()
        with pytest.raises(tracelens.MissingDataError, match="no kernel ran"):
            trace.census()
        assert trace.util().frame["busy_ns"].sum() == 60_000 + 58_000


def test_memory_of_nothing_but_an_empty_kernel_table_says_so(exports, capsys):
    # it asked "was it captured with -t cuda?" of an export whose kernel table says it was
    path = exports["only"]
    code, out, err = run_cli(_args("memory", path), capsys)
    assert (code, out) == (3, "")
    assert err == f"tracelens: {path}: no CUDA memcpy or memset data: {EMPTY}\n"
    absent = exports["absent"]
    code, _out, err = run_cli(_args("memory", absent), capsys)
    assert code == 0, err  # its copies are there
