"""gpu_low_util and gpu_gaps on exports with several (process, device) pairs give the rows
of the real ``nsys analyze`` 2022.4 (gpu-low-util, gpu-starv), row for row: the cases of
tests/fixtures/gpu_pairs.py, whose nsys rows are frozen in
``tests/queries/golden/findings_gpu_low_util__pairs_*.csv`` and
``findings_gpu_gaps__pairs_*.csv`` (so a machine without nsys checks them too).

Where nsys is installed, the live tests run it on the same cases (and on random ones) and
check the goldens are its rows; ``TRACELENS_UPDATE_GOLDEN=1`` rewrites them from nsys."""

from __future__ import annotations

import json
import os
import shutil

import pytest
from fixtures.gpu_pairs import (
    CASES,
    GAP_MS,
    LOW_UTIL_ARGS,
    MS,
    OVERHEADS,
    A,
    nsys_analyze,
    random_case,
    random_gap_tied_case,
    random_tied_case,
    write_case,
)
from queries.golden import GOLDEN, assert_golden

import tracelens
from tracelens.findings import find_issues

NSYS = shutil.which("nsys")
needs_nsys = pytest.mark.skipif(
    NSYS is None, reason="nsys 2022.4 is not installed (see ../shared/nsys/INSTALL.md)"
)

#: (case, nsys rule, nsys options) of every golden.
RUNS = [(case, "gpu-low-util", args) for case in CASES for args in LOW_UTIL_ARGS] + [
    (case, "gpu-starv", {"gap": GAP_MS}) for case in CASES
]


def _golden(case: str, rule: str, options: dict) -> str:
    if rule == "gpu-starv":
        return f"findings_gpu_gaps__pairs_{case}.csv"
    return f"findings_gpu_low_util__pairs_{case}_{options['chunks']}x{options['threshold']}.csv"


def _ours(trace, rule: str, options: dict) -> str:
    """tracelens findings' rows of the rule, with nsys's options, as CSV."""
    if rule == "gpu-starv":
        rule_id, thresholds = "gpu_gaps", {("gpu_gaps", "gap_ms"): options["gap"]}
    else:
        rule_id = "gpu_low_util"
        thresholds = {
            ("gpu_low_util", "chunks"): options["chunks"],
            ("gpu_low_util", "threshold_pct"): options["threshold"],
        }
    found = find_issues(trace, only=(rule_id,), thresholds=thresholds, limit=None)
    return found.result(rule_id).frame.write_csv()


@pytest.fixture(scope="module")
def exports(tmp_path_factory):
    folder = tmp_path_factory.mktemp("gpu_pairs")
    return {
        case: write_case(ops, folder / f"{case}.sqlite", OVERHEADS.get(case, []))
        for case, ops in CASES.items()
    }


@pytest.fixture(scope="module")
def ours(exports):
    """Every run's rows, by golden name (each export opened once)."""
    out = {}
    for case, path in exports.items():
        with tracelens.open(path, cache=False) as trace:
            for run in RUNS:
                if run[0] == case:
                    out[_golden(*run)] = _ours(trace, *run[1:])
    return out


@pytest.mark.parametrize("golden", [_golden(*run) for run in RUNS])
def test_rows_are_nsys_analyze_rows(ours, golden):
    assert ours[golden] == (GOLDEN / golden).read_text()


def test_an_empty_chunk_is_kept_by_one_pair_only(ours):
    """What the goldens hold, said plainly on the first case: device 1 loses its empty
    chunks to device 0 (the smallest device of the process), and keeps chunk 9 (empty on
    device 1, not on device 0) and its chunk with work, at 30 %."""
    rows = ours[_golden("two_devices", "gpu-low-util", LOW_UTIL_ARGS[0])].splitlines()[1:]
    assert rows == [
        f"0.0,{MS},{10 * MS},4100,1,1",
        f"0.4,{28 * MS},{2 * MS},4100,0,1",
        f"30.0,{MS},{20 * MS},4100,1,1",
    ]


def test_tied_range_ends_take_the_first_context_in_table_order(ours):
    """What the goldens hold, said plainly: where operations of several contexts end a
    pair's range together, the context is the first of them in the export's tables
    (kernels, then memcpys, then memsets, each in rowid order), not the smallest: 3, 2
    and 5 (the smallest would be 1, 1 and 4); B's device 1 holds the smallest first."""
    rows = ours[_golden("tied_contexts", "gpu-low-util", LOW_UTIL_ARGS[1])].splitlines()[1:]
    contexts = {tuple(r.split(",")[3:5]): r.split(",")[5] for r in rows}
    assert contexts == {
        ("4100", "0"): "3",
        ("4100", "1"): "2",
        ("4200", "0"): "5",
        ("4200", "1"): "2",
    }
    # the flush overhead is busy time of A's two ranges, with their contexts (gpu-starv)
    gaps = ours[_golden("tied_contexts", "gpu-starv", {})].splitlines()
    assert f"{6 * MS},{4 * MS},4100,0,3" in gaps and f"{8 * MS},{4 * MS},4100,1,2" in gaps


def test_tied_range_ends_with_every_rule(exports):
    """The same rows when findings runs every rule (the GPU rules then read util's whole
    read of the work, not their own columns)."""
    with tracelens.open(exports["tied_contexts"], cache=False) as trace:
        found = find_issues(trace, limit=None)
    got = found.result("gpu_low_util").frame.write_csv()
    assert got == (GOLDEN / _golden("tied_contexts", "gpu-low-util", LOW_UTIL_ARGS[0])).read_text()


def test_tied_range_ends_of_a_parquetdir_take_the_smallest_context(exports, tmp_path):
    """A parquetdir export (which nsys analyze cannot read) keeps no rowid order: the
    smallest of the contexts that end a range together, as the README says."""
    from test_inputs import write_parquetdir

    directory = write_parquetdir(exports["tied_contexts"], tmp_path / "pq")
    with tracelens.open(directory) as trace:
        found = find_issues(trace, only=("gpu_low_util",), limit=None)
    frame = found.result("gpu_low_util").frame
    contexts = {(pid, device): c for _, _, _, pid, device, c in frame.iter_rows()}
    assert contexts == {(4100, 0): 1, (4200, 0): 4, (4200, 1): 2}


def test_gap_ties_take_the_last_context_in_scan_order(ours):
    """What the golden holds, said plainly: where operations of several contexts end where
    a gap starts, the context is the last of them in nsys's scan (flush overheads, then
    kernels, memcpys and memsets, each in rowid order), not the smallest: 2, 4 and 2 (the
    smallest would be 1, 3 and 1); B's device 0 holds the smallest last."""
    rows = ours[_golden("gap_ties", "gpu-starv", {})].splitlines()[1:]
    contexts = {tuple(r.split(",")[1:4]): r.split(",")[4] for r in rows}
    assert contexts == {
        (f"{2 * MS}", "4100", "0"): "2",
        (f"{12 * MS}", "4100", "0"): "4",
        (f"{22 * MS}", "4100", "0"): "1",
        (f"{2 * MS}", "4100", "1"): "1",
        (f"{22 * MS}", "4100", "1"): "2",
        (f"{4 * MS}", "4200", "0"): "1",
        (f"{2 * MS}", "4200", "1"): "2",
    }


def test_gap_ties_with_every_rule(exports):
    """The same gaps when findings runs every rule (gpu_gaps then reads util's whole read
    of the work, after gpu_low_util)."""
    with tracelens.open(exports["gap_ties"], cache=False) as trace:
        found = find_issues(trace, limit=None, thresholds={("gpu_gaps", "gap_ms"): GAP_MS})
    got = found.result("gpu_gaps").frame.write_csv()
    assert got == (GOLDEN / _golden("gap_ties", "gpu-starv", {})).read_text()


def test_gap_ties_of_a_parquetdir_take_the_smallest_context(exports, tmp_path):
    """A parquetdir export keeps no rowid order: where several contexts end where a gap
    starts, the smallest, as the README says."""
    from test_inputs import write_parquetdir

    directory = write_parquetdir(exports["gap_ties"], tmp_path / "pq")
    with tracelens.open(directory) as trace:
        thresholds = {("gpu_gaps", "gap_ms"): GAP_MS}
        found = find_issues(trace, only=("gpu_gaps",), thresholds=thresholds, limit=None)
    frame = found.result("gpu_gaps").frame
    contexts = {(start, pid, device): c for _, start, pid, device, c in frame.iter_rows()}
    assert contexts[(2 * MS, A, 0)] == 1 and contexts[(12 * MS, A, 0)] == 3
    assert contexts[(22 * MS, A, 1)] == 1


def test_a_pair_of_zero_ns_operations_has_its_low_use_row(ours):
    """A process whose operations on a device all last 0 ns: its whole range at 0.0 %, as
    nsys reports it (util sees no GPU work there)."""
    rows = ours[_golden("zero_only", "gpu-low-util", LOW_UTIL_ARGS[0])].splitlines()[1:]
    assert f"0.0,{29 * MS},{1 * MS},4100,0,1" in rows


@pytest.mark.parametrize("table", ["kernels", "memcpys", "memsets"])
def test_range_end_queries(exports, table):
    """The operations of each table that end at the tied ends, in rowid order."""
    ends = json.dumps([21 * MS, 31 * MS, 40 * MS])
    query = f"findings_range_ends_{table}_export"
    assert_golden(exports["tied_contexts"], query, "tied_contexts", export_tables=True, ends=ends)


@needs_nsys
@pytest.mark.parametrize(("case", "rule", "options"), RUNS, ids=[_golden(*r)[:-4] for r in RUNS])
def test_goldens_are_live_nsys_rows(exports, case, rule, options):
    """The goldens are what nsys analyze 2022.4 prints (``TRACELENS_UPDATE_GOLDEN=1``
    rewrites them from it)."""
    rows = nsys_analyze(NSYS, exports[case], rule, **options)
    golden = GOLDEN / _golden(case, rule, options)
    if os.environ.get("TRACELENS_UPDATE_GOLDEN"):
        golden.write_text(rows)
    assert rows == golden.read_text()


def _both_rules_as_live_nsys(path) -> None:
    """Both rules on ``path``, with both sets of options, row for row as nsys analyze 2022.4."""
    runs = [("gpu-low-util", args) for args in LOW_UTIL_ARGS] + [("gpu-starv", {"gap": GAP_MS})]
    with tracelens.open(path, cache=False) as trace:
        rows = [_ours(trace, rule, options) for rule, options in runs]
    for (rule, options), got in zip(runs, rows, strict=True):
        assert got == nsys_analyze(NSYS, path, rule, **options), rule


@needs_nsys
@pytest.mark.parametrize("seed", range(12))
def test_random_pairs_equal_live_nsys(tmp_path, seed):
    """Random processes, devices, spans and operations (some of 0 ns, some concurrent):
    both rules, with both sets of options, row for row as nsys analyze 2022.4."""
    path = write_case(random_case(seed), tmp_path / f"random_{seed}.sqlite")
    _both_rules_as_live_nsys(path)


@needs_nsys
@pytest.mark.parametrize("seed", range(12))
def test_random_tied_range_ends_equal_live_nsys(tmp_path, seed):
    """Random pairs whose ranges end in operations of several contexts and kinds, some
    whose operations all last 0 ns, in random table order: both rules, row for row as
    nsys analyze 2022.4."""
    path = write_case(random_tied_case(seed), tmp_path / f"tied_{seed}.sqlite")
    _both_rules_as_live_nsys(path)


@needs_nsys
@pytest.mark.parametrize("seed", range(12))
def test_random_gap_ties_equal_live_nsys(tmp_path, seed):
    """Random bursts of operations of several contexts and kinds that end together where a
    gap starts (some of 0 ns, some with a flush overhead ending there too), in random table
    order: both rules, row for row as nsys analyze 2022.4."""
    ops, overheads = random_gap_tied_case(seed)
    path = write_case(ops, tmp_path / f"gap_tied_{seed}.sqlite", overheads)
    _both_rules_as_live_nsys(path)
