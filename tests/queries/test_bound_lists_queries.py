"""Golden test of queries/_bound_lists.sql: a list bound as one JSON text (list_param) and
read back with text_list / bigint_list, on a tiny trace (the macros read no table)."""

from __future__ import annotations

import pytest

from queries.golden import assert_golden
from tracelens.synth import TraceBuilder
from tracelens.trace import list_param

# what a demangled kernel name may hold, and what JSON must escape
TEXTS = [
    "void gemm<float, 128>(float const*, int)",
    'say "hi"',
    "[bracketed]",
    "back\\slash",
    "naïve ∑",
    "",
    None,
]
INTS = [3, -1, 1 << 40, None]


@pytest.fixture(scope="module")
def trace_path(tmp_path_factory):
    b = TraceBuilder("3.0.0")
    b.process(1, "x")
    return b.write(tmp_path_factory.mktemp("bound_lists") / "t.sqlite")


def test_bound_lists_round_trip(trace_path):
    assert_golden(
        trace_path, "_bound_lists", "round_trip", texts=list_param(TEXTS), ints=list_param(INTS)
    )


def test_list_param_keeps_none_and_order():
    assert list_param(None) is None
    assert list_param(("b", "a")) == '["b", "a"]'
