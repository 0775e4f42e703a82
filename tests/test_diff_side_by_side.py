"""Two different exports are read side by side, B in a second thread (threshold
concurrent_sides_max_mb): the same diff as read one after the other; a file compared with
itself is read once, and a file twice, or exports too big together, one after the other."""

from __future__ import annotations

import threading

import pytest

import tracelens
from tracelens.compare import clues, render, sides
from tracelens.errors import TraceError


@pytest.fixture(scope="module")
def demo_pair():
    from tracelens.demo import demo_path

    return demo_path("bs1"), demo_path("bs16")


@pytest.fixture
def threads(monkeypatch):
    """The thread each side was read in, in the order they were read."""
    seen: list[tuple[str, int]] = []
    real = sides._collect_side

    def spy(trace, *args, **kwargs):
        seen.append((trace.path.name, threading.get_ident()))
        return real(trace, *args, **kwargs)

    monkeypatch.setattr(sides, "_collect_side", spy)
    return seen


def _limit(monkeypatch, mb: float) -> None:
    real = clues.threshold
    monkeypatch.setattr(
        clues, "threshold", lambda n: mb if n == "concurrent_sides_max_mb" else real(n)
    )


def _diff(a, b):
    with tracelens.open(a, cache=False) as ta, tracelens.open(b, cache=False) as tb:
        return render.to_json(tracelens.diff(ta, tb))


def test_two_exports_are_read_side_by_side_with_the_same_result(demo_pair, threads, monkeypatch):
    a, b = demo_pair
    _limit(monkeypatch, 0)  # one after the other
    alone = _diff(a, b)
    assert {ident for _, ident in threads} == {threading.get_ident()}
    threads.clear()
    _limit(monkeypatch, 10_000)
    together = _diff(a, b)
    assert together == alone
    # each side read twice: the whole trace, then its decode steps' work (their steps hold
    # 19% of bs16's GPU time: compare/outside.py), each time A here and B in a thread
    idents_a = {ident for name, ident in threads if name == a.name}
    idents_b = [ident for name, ident in threads if name == b.name]
    assert len(idents_b) == 2 and idents_a == {threading.get_ident()}
    assert threading.get_ident() not in idents_b


def test_a_file_twice_is_read_in_one_thread(demo_pair, threads, monkeypatch):
    a, _b = demo_pair
    _limit(monkeypatch, 10_000)
    _diff(a, a)
    assert [ident for _, ident in threads] == [threading.get_ident()]  # read once


def test_an_error_on_side_b_reaches_the_caller(demo_pair, monkeypatch):
    a, b = demo_pair
    _limit(monkeypatch, 10_000)
    real = sides._collect_side

    def failing(trace, *args, **kwargs):
        if trace.path.name == b.name:
            raise TraceError(trace.path, "is damaged: a test")
        return real(trace, *args, **kwargs)

    monkeypatch.setattr(sides, "_collect_side", failing)
    with pytest.raises(TraceError, match="a test"):
        _diff(a, b)
