"""findings' GPU rules under a work selection judge the devices: every GPU operation in the
selected work's span counts, selected or not. Sparse NVTX ranges with other work between
them (tests/test_utilthread_nvtx.py's fixture: 'sel' launches 50 us of device 0's work per
1 ms round, 'other' keeps it busy 690 us more) read 'GPU in use 6.1% for 4.07 ms' on device
0 under --nvtx sel, a GPU that was busy three quarters of the time."""

from __future__ import annotations

import pytest
from conftest import run_cli
from test_utilthread_nvtx import _sparse

import tracelens

NOTE = (
    "gpu_gaps and gpu_low_util judge the devices: every GPU operation in the selected work's "
    "span counts, selected or not (a GPU running other work is not idle)"
)


@pytest.fixture(scope="module")
def sparse(tmp_path_factory):
    path = tmp_path_factory.mktemp("sparse") / "sparse.sqlite"
    _sparse(path)
    return path


def test_low_util_counts_the_other_work_of_the_selected_span(sparse):
    with tracelens.open(sparse, cache=False) as trace:
        found = trace.findings(nvtx="sel", only=("gpu_low_util",))
        whole = trace.findings(only=("gpu_low_util",))
    (result,) = found.results
    rows = result.frame
    device0 = rows.filter(rows["device"] == 0)
    assert not device0.is_empty()
    assert device0["in_use_pct"].min() > 15  # was one row at 6.1 over the whole span
    device1 = rows.filter(rows["device"] == 1)
    assert device1["in_use_pct"].to_list() == [3.7]  # device 1 ran only k3: low, as it was
    assert NOTE in found.notes and NOTE not in whole.notes


def test_the_note_is_said_on_the_command_line(sparse, capsys):
    rc, out, err = run_cli(["findings", sparse, "--nvtx", "sel", "--no-cache"], capsys)
    assert rc == 0, err
    assert f"note: {NOTE}" in out.replace("\n", " ") or NOTE in err
