"""The notebook API: discoverable names, and keyword filters on every analysis method."""

from __future__ import annotations

import pydoc

import pytest

import tracelens
from tracelens import EventFilter
from tracelens.demo import demo_path
from tracelens.errors import UsageError


def test_dir_and_help_show_the_public_api():
    names = dir(tracelens)
    assert {"open", "decode", "diff", "EventFilter", "Trace", "__version__"} <= set(names)
    assert "TYPE_CHECKING" not in names and "annotations" not in names
    assert set(tracelens.__all__) <= set(names)
    assert "open" in pydoc.render_doc(tracelens)


@pytest.fixture(scope="module")
def trace():
    with tracelens.open(demo_path("bs16")) as t:
        yield t


@pytest.mark.parametrize(
    "method, kwargs",
    [("census", {}), ("lineup", {}), ("danger", {}), ("memory_time", {}),
     ("decoded_kernels", {})],
)  # fmt: skip
def test_keyword_filters_are_the_event_filter(trace, method, kwargs):
    keywords = {"device": 0, "pid": 48213, "stream": 7, "start": "2.01s", "end": 2_100_000_000}
    where = EventFilter(device=0, pid=48213, stream=7, start_ns=2_010_000_000, end_ns=2_100_000_000)
    by_keywords = getattr(trace, method)(**kwargs, **keywords)
    assert by_keywords.equals(getattr(trace, method)(**kwargs, where=where))
    assert 0 < by_keywords["total_ns"].sum() < getattr(trace, method)(**kwargs)["total_ns"].sum()


def test_keyword_filters_narrow_a_given_event_filter(trace):
    narrowed = trace.census(where=EventFilter(device=0), end="2.05s")
    assert narrowed.equals(trace.census(where=EventFilter(device=0, end_ns=2_050_000_000)))
    assert trace.census(device=1).is_empty()


def test_nvtx_and_step_filters(trace):
    inside = trace.census(nvtx="decode_step_1")
    assert 0 < inside["instances"].sum() < trace.census()["instances"].sum()
    assert trace.stakeout("reshape", nvtx="decode_step_*").total_launches == 112


def test_a_misspelt_filter_is_a_usage_error(trace):
    with pytest.raises(UsageError, match="^unknown filter 'devic'; use: device, pid, stream"):
        trace.census(devic=1)
    with pytest.raises(UsageError, match="^start 'soon' is not a time"):
        trace.timeline(start="soon")


def test_steps_util_and_findings_take_the_keyword_filters_too(trace):
    import inspect

    from tracelens import findings

    where = EventFilter(start_ns=2_010_000_000, end_ns=2_030_000_000)
    narrowed = trace.util(start="2.01s", end="2.03s")
    assert narrowed.frame.equals(trace.util(where).frame)
    assert narrowed.frame["span_ns"].sum() < trace.util().frame["span_ns"].sum()
    steps = trace.steps(start="2.01s", end="2.03s")
    assert steps.frame.equals(trace.steps(where=where).frame)
    assert steps.count < trace.steps().count
    assert trace.findings(device=0).frame.equals(trace.findings(where=EventFilter(device=0)).frame)
    limit = inspect.signature(tracelens.Trace.findings).parameters["limit"].default
    assert limit == findings.DEFAULT_LIMIT
    for method in ("steps", "findings", "util", "api"):  # real signatures, no **options: Any
        params = inspect.signature(getattr(tracelens.Trace, method)).parameters.values()
        assert all(p.annotation != "Any" for p in params), method
    with pytest.raises(UsageError, match="^unknown filter 'devcie'"):
        trace.util(devcie=0)
