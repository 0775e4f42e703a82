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
