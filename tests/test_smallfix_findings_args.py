"""findings.find_issues (the library function) checks its arguments itself, as
Trace.findings did alone: a limit below 0 sliced every rule's rows to all but the last, an
unknown (rule, key) threshold was ignored (the rule ran with its default) and only="rule"
was read letter by letter ("unknown rule 's'"). Both ways in refuse the same input with
the same message (tracelens.findings_args)."""

from __future__ import annotations

import pytest

import tracelens
from tracelens.demo import demo_path
from tracelens.errors import UsageError
from tracelens.findings import find_issues

RULES = (
    "gpu_gaps, gpu_low_util, sync_memcpy, sync_memset, sync_api, pageable_async_memcpy, "
    "exposed_communication, launch_bound"
)
KEYS = (
    "('exposed_communication', 'min_ms'), ('exposed_communication', 'min_share'), "
    "('gpu_gaps', 'gap_ms'), ('gpu_gaps', 'replay_filled_pct'), ('gpu_low_util', 'chunks'), "
    "('gpu_low_util', 'threshold_pct'), ('launch_bound', 'min_ms'), ('launch_bound', 'min_share')"
)


@pytest.fixture(scope="module")
def trace():
    with tracelens.open(demo_path("bs1"), cache=False) as t:
        yield t


CASES = [
    (dict(limit=-1), "limit must be 0 (every row) or more (got -1)"),
    (dict(limit=2.5), "limit takes an integer, not float (2.5)"),
    (dict(limit="5"), "limit takes an integer, not str ('5')"),
    (dict(only=("sync_api", "gpu_gap")), f"unknown rule 'gpu_gap'; rules: {RULES}"),
    (dict(only="gpu_gap"), f"unknown rule 'gpu_gap'; rules: {RULES}"),
    (
        dict(thresholds={("sync_api", "gap_ms"): 1.0}),
        f"unknown threshold ('sync_api', 'gap_ms'); use one of: {KEYS}",
    ),
    (
        dict(thresholds={("gpu_gaps", "gap_ms"): "100"}),
        "threshold ('gpu_gaps', 'gap_ms') takes a number >= 0, not '100'",
    ),
    (
        dict(thresholds={("gpu_gaps", "gap_ms"): -5}),
        "threshold ('gpu_gaps', 'gap_ms') takes a number >= 0, not -5",
    ),
    (
        dict(thresholds={("gpu_gaps", "gap_ms"): True}),
        "threshold ('gpu_gaps', 'gap_ms') takes a number >= 0, not True",
    ),
]


@pytest.mark.parametrize("kwargs, message", CASES, ids=[str(i) for i in range(len(CASES))])
def test_find_issues_refuses_what_trace_findings_refuses(trace, kwargs, message):
    for call in (lambda **k: find_issues(trace, **k), trace.findings):
        with pytest.raises(UsageError) as caught:
            call(**kwargs)
        assert str(caught.value) == message


def test_find_issues_takes_one_rule_id_as_text(trace):
    one = find_issues(trace, only="sync_api")
    assert [r.rule for r in one.results] == ["sync_api"] and one.fired == ("sync_api",)
    assert [r.rule for r in find_issues(trace, only=["sync_api"]).results] == ["sync_api"]


def test_find_issues_uses_the_thresholds_and_limit_it_is_given(trace):
    low = find_issues(trace, only=("gpu_gaps",), thresholds={("gpu_gaps", "gap_ms"): 0.1}, limit=0)
    assert low.result("gpu_gaps").thresholds["gap_ms"] == 0.1
    assert low.result("gpu_gaps").frame.height == 4
    assert find_issues(trace, only=("sync_api",), limit=0).result("sync_api").frame.height == 5
    assert find_issues(trace, only=("sync_api",), limit=2).result("sync_api").frame.height == 2
