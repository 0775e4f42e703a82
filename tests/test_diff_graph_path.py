"""The numerical path of a trace whose GPU work is CUDA graph replays traced at graph level
(the a100 NVTX trace against its CUDA-graph twin): the replays' kernels are in no table, so
the path board claimed '30 kernels added, 7,328 removed' and path_changed tripped (exit 1)
while B's kernels were never recorded. A path the trace did not record is no changed path:
the board says it is not measured, and a gate on it (or fingerprint --check) exits 2, as a
gate on any figure not measured does."""

from __future__ import annotations

import json

import pytest
from conftest import run_cli

from tracelens.fingerprint import load

NVTX, GRAPH = "nsys2024.6_a100_2.7B_nvtx", "nsys2024.6_a100_2.7B_cudagraph"
WHY = (
    "B holds 10 CUDA graph replays traced at graph level, whose kernels the export does not "
    "list: B's path is not recorded there (profile B again with nsys --cuda-graph-trace=node)"
)
HEAD = (
    f"numerical path: not measured: {WHY}; below, only the kernels the exports list are "
    "compared, and a kernel added or removed may have run inside the replays"
)


@pytest.fixture(scope="module")
def graph_fingerprint(trace_copies, tmp_path_factory):
    """The CUDA-graph trace's fingerprint document, written to a file."""
    from tracelens.cli import main

    path = tmp_path_factory.mktemp("graph_path") / "graph.json"
    try:
        main(["fingerprint", str(trace_copies[GRAPH]), "-o", str(path)])
    except SystemExit as exc:
        assert not exc.code
    return path


def test_a_path_gate_on_graph_replays_is_not_measured(trace_copies, capsys):
    rc, out, err = run_cli(
        ["diff", trace_copies[NVTX], trace_copies[GRAPH], "--fail-if", "path_changed"], capsys
    )
    assert rc == 2
    assert out.splitlines()[:2] == [
        HEAD,
        f"over the listed kernels: {GRAPH}.sqlite differs from {NVTX}.sqlite in 9 of 9 regions",
    ]
    assert err == f"tracelens: --fail-if: path_changed was not measured: {WHY}\n"
    # The counts are the listed kernels' only (they read 'changes: ... 30 kernels added,
    # 7,328 removed' unlabelled under the 'not measured' headline).
    (changes,) = [line for line in out.splitlines() if line.startswith("changes")]
    assert changes == (
        "changes over the listed kernels: 0 kernel-variant changes, 0 launch-configuration-"
        "only changes, 30 launches added, 7,328 removed; 0 bring a new danger rule"
    )


def test_the_fingerprint_records_the_replays(graph_fingerprint):
    assert load(graph_fingerprint)["graph_replays"] == 10


def test_a_fingerprint_side_says_so_in_json(trace_copies, graph_fingerprint, capsys):
    """The JSON keeps its figures (over the listed kernels) and adds which are not
    measured, and each side's replays."""
    rc, out, err = run_cli(
        ["diff", graph_fingerprint, trace_copies[NVTX], "-f", "json", "--top", "1"], capsys
    )
    board = json.loads(out)
    assert (rc, err) == (0, "")
    assert board["graph_replays"] == {"a": 10, "b": 0}
    why = WHY.replace("B holds", "A holds").replace("B's path", "A's path")
    why = why.replace("profile B", "profile A")
    assert board["not_measured"]["path_changed"] == why
    assert "regions_compared" not in board["not_measured"]
    assert board["figures"]["path_changed"] == 1


def test_fingerprint_check_against_graph_replays_is_not_measured(
    trace_copies, graph_fingerprint, capsys
):
    """A check of the same graph-level trace against its own fingerprint: the listed
    kernels follow, but what the replays ran is unknown: no pass either."""
    rc, out, err = run_cli(
        ["fingerprint", trace_copies[GRAPH], "--check", graph_fingerprint], capsys
    )
    both = (
        "A and B hold 10 and 10 CUDA graph replays traced at graph level, whose kernels the "
        "export does not list: their paths are not recorded there (profile both again with "
        "nsys --cuda-graph-trace=node)"
    )
    assert rc == 2
    assert out.splitlines()[0].startswith(f"numerical path: not measured: {both}; below")
    assert out.splitlines()[1].startswith(f"over the listed kernels: {GRAPH}.sqlite follows")
    assert err == f"tracelens: --check: the path was not measured: {both}\n"
