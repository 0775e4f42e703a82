"""Library id filters (device, pid, stream) of the wrong type or range raise UsageError with a
clear message, not DuckDB's conversion error, and a float is not accepted as an id."""

from __future__ import annotations

import pytest

import tracelens
from tracelens.demo import demo_path
from tracelens.errors import UsageError


@pytest.fixture(scope="module")
def trace():
    with tracelens.open(demo_path("bs1")) as t:
        yield t


BAD = [
    ({"device": "a"}, "device='a': device takes an integer id, not str"),
    ({"pid": "x"}, "pid='x': pid takes an integer id, not str"),
    ({"stream": "s"}, "stream='s': stream takes an integer id, not str"),
    ({"device": [0]}, "device=[0]: device takes an integer id, not list"),
    ({"device": 1.5}, "device=1.5: device takes an integer id, not float"),
    ({"device": True}, "device=True: device takes an integer id, not bool"),
    ({"device": 2**70}, f"device={2**70}: out of range for an id (64-bit integer)"),
]


@pytest.mark.parametrize("method", ["census", "util", "memory_time", "timeline"])
@pytest.mark.parametrize("kwargs, message", BAD, ids=[str(k) for k, _ in BAD])
def test_a_wrong_id_filter_is_a_usage_error(trace, method, kwargs, message):
    with pytest.raises(UsageError) as caught:
        getattr(trace, method)(**kwargs)
    assert str(caught.value) == message


def test_api_pid_is_checked_too(trace):
    with pytest.raises(UsageError, match="pid takes an integer id, not str"):
        trace.api(pid="x")


def test_integer_ids_still_filter(trace):
    """An int (or an int subclass such as IntEnum) filters as before; None means no filter."""
    from enum import IntEnum

    class Device(IntEnum):
        FIRST = 0

    whole = trace.census()
    assert trace.census(device=0).equals(whole)  # the demo runs on device 0
    assert trace.census(device=Device.FIRST).equals(whole)
    assert trace.census(device=None).equals(whole)
    assert trace.census(device=99).is_empty()


@pytest.mark.parametrize("kwargs, message", BAD, ids=[str(k) for k, _ in BAD])
def test_an_event_filter_built_directly_checks_its_ids(kwargs, message):
    """The check is EventFilter's own: a filter built by hand (to pass as ``where=``) gets the
    same UsageError as the keyword filters, not DuckDB's conversion error later."""
    from tracelens.filters import EventFilter

    with pytest.raises(UsageError) as caught:
        EventFilter(**kwargs)
    assert str(caught.value) == message


def test_an_event_filter_keeps_a_plain_int_id(trace):
    """An int subclass (IntEnum, numpy) is stored as a plain int, which DuckDB binds as an id,
    and the filter passed as ``where=`` filters as the keyword does."""
    from enum import IntEnum

    from tracelens.filters import EventFilter

    class Device(IntEnum):
        FIRST = 0

    where = EventFilter(device=Device.FIRST, stream=7)
    assert type(where.device) is int and where.device == 0
    assert trace.census(where=where).equals(trace.census(device=0, stream=7))
