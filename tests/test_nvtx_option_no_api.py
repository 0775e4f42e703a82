"""--nvtx on an export with NVTX ranges and kernels but no CUDA API calls: GPU work belongs to
a range through the call that launched it, so none can be placed in any range. That is
missing data (exit 3, as `nvtx --gpu` says on the same file), not ranges that "launched no
GPU work" (a usage error that blamed the pattern)."""

from __future__ import annotations

import sqlite3

import pytest
from conftest import run_cli
from test_nvtx_selection import build_selection_trace

MESSAGE = (
    "no CUDA API data, so no GPU work can be placed in the 3 NVTX range(s) labelled 'inner': "
    "was it captured with -t cuda,nvtx?"
)


@pytest.fixture(scope="module")
def no_api(tmp_path_factory):
    path = build_selection_trace(tmp_path_factory.mktemp("noapi") / "sel.sqlite")
    with sqlite3.connect(path) as db:
        db.execute("DROP TABLE CUPTI_ACTIVITY_KIND_RUNTIME")
    return str(path)


@pytest.mark.parametrize("command", [["census"], ["lineup"], ["timeline"], ["stakeout", "k_"]])
def test_nvtx_without_api_calls_is_missing_data(no_api, capsys, command):
    rc, out, err = run_cli([*command[:1], no_api, *command[1:], "--nvtx", "inner"], capsys)
    assert rc == 3 and out == ""
    assert err == f"tracelens: {no_api}: {MESSAGE}\n"
    rc, _out, _err = run_cli([*command[:1], no_api, *command[1:]], capsys)
    assert rc == 0  # the export itself reads
