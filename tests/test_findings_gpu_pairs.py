"""gpu_low_util and gpu_gaps on exports with several (process, device) pairs give the rows
of the real ``nsys analyze`` 2022.4 (gpu-low-util, gpu-starv), row for row: the cases of
tests/fixtures/gpu_pairs.py, whose nsys rows are frozen in
``tests/queries/golden/findings_gpu_low_util__pairs_*.csv`` and
``findings_gpu_gaps__pairs_*.csv`` (so a machine without nsys checks them too).

Where nsys is installed, the live tests run it on the same cases (and on random ones) and
check the goldens are its rows; ``TRACELENS_UPDATE_GOLDEN=1`` rewrites them from nsys."""

from __future__ import annotations

import os
import shutil

import pytest
from fixtures.gpu_pairs import (
    CASES,
    GAP_MS,
    LOW_UTIL_ARGS,
    MS,
    OVERHEADS,
    nsys_analyze,
    random_case,
    write_case,
)
from queries.golden import GOLDEN

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


@needs_nsys
@pytest.mark.parametrize("seed", range(12))
def test_random_pairs_equal_live_nsys(tmp_path, seed):
    """Random processes, devices, spans and operations (some of 0 ns, some concurrent):
    both rules, with both sets of options, row for row as nsys analyze 2022.4."""
    path = write_case(random_case(seed), tmp_path / f"random_{seed}.sqlite")
    runs = [("gpu-low-util", args) for args in LOW_UTIL_ARGS] + [("gpu-starv", {"gap": GAP_MS})]
    with tracelens.open(path, cache=False) as trace:
        rows = [_ours(trace, rule, options) for rule, options in runs]
    for (rule, options), got in zip(runs, rows, strict=True):
        assert got == nsys_analyze(NSYS, path, rule, **options), rule
