"""Golden tests for the diff's query files: the GPU work in launch order per device (kernels
as name ids, named by diff_kernels), and each short name's dominant demangled name (the category source)."""

from __future__ import annotations

import pytest
from fixtures.builder import build_mixed

from queries.golden import GOLDEN, assert_golden


@pytest.fixture(scope="module")
def mixed(tmp_path_factory):
    return build_mixed(tmp_path_factory.mktemp("diffq"), "3.25.0")


def work_in_order_csv(path, **window):
    """queries/work_in_order.sql's rows as tracelens.util.work_in_order sorts them (the
    query leaves the order to it), as CSV."""
    import tracelens
    from tracelens.filters import EventFilter
    from tracelens.util import work_in_order

    with tracelens.open(path) as trace:
        return work_in_order(trace, EventFilter(**window)).write_csv()


def test_work_in_order(mixed):
    expected = (GOLDEN / "work_in_order__mixed.csv").read_text()
    assert work_in_order_csv(mixed.path) == expected


def test_work_in_order_window(mixed):
    k = mixed.expected.kernels
    expected = (GOLDEN / "work_in_order__window.csv").read_text()
    assert work_in_order_csv(mixed.path, start_ns=k[10].start, end_ns=k[20].end) == expected


def test_kernel_name_pairs(mixed):
    from queries.test_diff_input_queries import DIFF_WORK, register_diff_work

    assert_golden(mixed.path, "kernel_name_pairs", "mixed", register_diff_work, work=DIFF_WORK)


def test_work_in_order_lists_kernels_in_start_order_per_device(mixed):
    """The golden file's claim, restated from what the fixture inserted: its kernels are
    each device's launch sequence."""
    import tracelens
    from queries.test_diff_input_queries import DIFF_WORK, register_diff_work
    from tracelens.util import work_in_order

    with tracelens.open(mixed.path) as t:
        work = work_in_order(t)
        register_diff_work(t)
        summary = t.query("diff_kernels", work=DIFF_WORK, name_kind="demangled")
        names = dict(summary.select("name_id", "name").iter_rows())
    kernels = work.filter(work["kind"] == 0).select("device", "name_id")
    got = [(d, names[i]) for d, i in kernels.iter_rows()]
    want = [
        (k.device, k.name)
        for k in sorted(mixed.expected.kernels, key=lambda k: (k.device, k.start, k.stream, k.end))
    ]
    assert got == want


def test_work_selection_ops(mixed):
    """The work --nvtx forward keeps: the 17 launches of the training process inside the
    'forward' range (the evaluation process's launches in that time are not in it)."""
    from tracelens.filters import select_nvtx

    def select(trace):
        where, _ranges = select_nvtx(trace, "forward")
        assert where.selection == 1  # the first selection of a freshly opened trace

    assert_golden(mixed.path, "work_selection_ops", "forward", select, selection=1)
