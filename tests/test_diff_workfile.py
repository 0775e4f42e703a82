"""The diff's GPU work kept, sorted, in the cache entry of a trace
(tracelens.compare.workfile): written by the first whole read through the cache, read back
by later diffs with the rows of a direct read (every column a diff or report reads), and
the kernel tables made of them (diff_kernels, kernel_name_pairs) the same way; never
for a filtered read, never at another version, never when damaged. Each test has its own
cache directory (conftest); TRACELENS_CACHE_MIN_MB=0 caches the small demo traces."""

from __future__ import annotations

from pathlib import Path

import pytest

import tracelens
from tracelens import cache
from tracelens.compare import workfile
from tracelens.compare.collect import _sorted_work, read_work
from tracelens.compare.render import to_json
from tracelens.filters import EventFilter

# (short names, stream) as the diff asks: by demangled name, by short name, the report's
READS = [(False, False), (True, False), (True, True)]


def _kept_file(trace: tracelens.Trace) -> Path | None:
    return cache.derived_path(
        trace.parquet_dir, workfile._named(workfile.NAME), workfile._version()
    )


def _reads(trace: tracelens.Trace, where: EventFilter | None = None) -> list:
    return [_sorted_work(trace, where or EventFilter(), *read) for read in READS]


def _launch_starts(path: Path, work):
    from tracelens.util import sync_api_regex
    from tracelens.util_calls import read_calls

    with tracelens.open(path, cache=False) as direct:
        return read_calls(direct, sync_api_regex()).launches.launches(work)


def _diffs(a: Path, b: Path, cached: bool) -> list[str]:
    with tracelens.open(a, cache=cached) as ta, tracelens.open(b, cache=cached) as tb:
        return [to_json(tracelens.diff(ta, tb, name=name)) for name in ("demangled", "short")]


def test_whole_rows_are_kept_and_read_back(pair, cache_dir):
    a, b = pair
    with tracelens.open(b, cache=False) as direct:
        expected = _reads(direct)
        device0 = _reads(direct, EventFilter(device=0))
    assert expected[0].height and expected[0]["short_id"].null_count() == expected[0].height
    assert "stream" in expected[2].columns and "stream" not in expected[1].columns
    boards = _diffs(a, b, cached=False)
    with tracelens.open(b) as first:
        assert workfile.kept(first, ("device",)) is None  # nothing kept yet
        kept = _sorted_work(first, EventFilter(), *READS[0])
        assert kept.drop("launch_start", "launch_tid").equals(expected[0])
        assert _kept_file(first) is not None  # kept whole, for every later read
    # with each operation's launching call, as util's index of the calls finds it
    # (and its thread)
    assert kept.select("launch_start", "launch_tid").equals(_launch_starts(b, expected[0]))
    assert kept["launch_start"].null_count() < kept.height
    assert kept["launch_tid"].null_count() == kept["launch_start"].null_count()
    with tracelens.open(b) as again:
        reads = [x.drop("launch_start", "launch_tid") for x in _reads(again)]
        assert all(x.equals(y) for x, y in zip(reads, expected, strict=True))
        with_device0 = _reads(again, EventFilter(device=0))  # read, not kept
        assert all(x.equals(y) for x, y in zip(with_device0, device0, strict=True))
    assert _diffs(a, b, cached=True) == boards  # A kept on this run, B read back
    assert _diffs(a, b, cached=True) == boards  # both read back, with their kernel tables
    with tracelens.open(b, cache=False) as direct, tracelens.open(b) as cached:
        for name_kind in ("demangled", "short"):
            expected = read_work(direct, EventFilter(), name_kind, False)
            got = read_work(cached, EventFilter(), name_kind, False)
            assert workfile.kept_kernels(cached, name_kind) is not None
            got_work = got[0].drop("launch_start", "launch_tid")
            assert got_work.equals(expected[0]) and got[1].equals(expected[1])
            assert got[3] == expected[3]
            if name_kind == "short":
                assert got[2].equals(expected[2]) and len(got[3])


def test_holds_is_false_before_the_entry_exists(pair, cache_dir):
    """Asked before any read made the trace's cache entry, ``holds`` says nothing is kept
    (it raised TypeError on the missing entry; the report asks it first)."""
    with tracelens.open(pair[0]) as first:
        assert not workfile.holds(first)
        assert first._lazy is not None and first._lazy.entry is None


def test_nothing_is_kept_of_a_direct_read(pair, cache_dir):
    with tracelens.open(pair[0], cache=False) as direct:
        _reads(direct)
        assert workfile.kept(direct, ("device",)) is None
    assert not (cache_dir / "traces").exists()


def test_a_filtered_read_keeps_nothing(pair, cache_dir):
    with tracelens.open(pair[0]) as first:
        _reads(first, EventFilter(device=0))
        assert _kept_file(first) is None


def test_another_version_or_a_damaged_file_is_not_read(pair, cache_dir, monkeypatch):
    with tracelens.open(pair[0]) as first:
        expected = _reads(first)
    with monkeypatch.context() as patched, tracelens.open(pair[0]) as other:
        patched.setattr(workfile, "_version", lambda: "made-otherwise")
        assert workfile.kept(other, ("device",)) is None
        _reads(other)  # kept at that version, in a file of its own
        assert workfile.kept(other, ("device",)) is not None
    with tracelens.open(pair[0]) as again:  # this version's file is still there, and read
        assert workfile.kept(again, ("device",)) is not None
        path = _kept_file(again)
    assert path is not None
    path.write_bytes(b"not parquet")
    with tracelens.open(pair[0]) as damaged:
        assert workfile.kept(damaged, ("device",)) is None
        assert all(x.equals(y) for x, y in zip(_reads(damaged), expected, strict=True))
    # the calls the diff's util reads: their figures from the kept launches, every call not
    queries: list[str] = []
    query = tracelens.Trace.query

    def recorded(trace, name, **params):
        queries.append(name)
        return query(trace, name, **params)

    monkeypatch.setattr(tracelens.Trace, "query", recorded)
    with tracelens.open(pair[0]) as kept, tracelens.open(pair[0], cache=False) as direct:
        assert to_json(tracelens.diff(kept, kept)) == to_json(tracelens.diff(direct, direct))
    assert queries.count("util_call_figures") == 1 and queries.count("util_calls") == 1


def _whole_only(monkeypatch) -> None:
    """The demo pair's diff also reads the work of its decode steps (their steps hold 19% of
    bs16's GPU time: compare/outside.py), a filtered read that is never kept: these tests
    pin what the diff keeps of the whole traces, so they compare the whole traces alone."""
    from tracelens.compare import outside

    monkeypatch.setattr(outside, "partial_steps", lambda sa, sb: False)


def test_the_accounting_is_kept_for_later_diffs_and_util(pair, cache_dir, monkeypatch):
    """A cached diff of whole traces keeps each side's GPU time accounting in its cache
    entry, as util does (util_workfile.keep_accounting): a later diff reads it back without
    sweeping, with the same board, and util of the trace reads what it computes alone."""
    from tracelens import util as util_module
    from tracelens import util_workfile

    a, b = pair
    _whole_only(monkeypatch)
    boards = _diffs(a, b, cached=False)
    with tracelens.open(b, cache=False) as direct:
        alone = util_module.gpu_time_accounting(direct)
    assert _diffs(a, b, cached=True) == boards  # swept and kept on this run
    with tracelens.open(b) as cached:
        assert util_workfile.kept_accounting(cached) is not None

    def swept(*args, **kwargs):
        raise AssertionError("swept again")

    monkeypatch.setattr(util_module, "device_sweep", swept)
    assert _diffs(a, b, cached=True) == boards
    with tracelens.open(b) as cached:
        kept = util_module.gpu_time_accounting(cached)
    for part in ("frame", "idle_causes", "communication"):
        assert getattr(kept, part).equals(getattr(alone, part))
    assert (kept.start_ns, kept.end_ns, kept.notes) == (alone.start_ns, alone.end_ns, alone.notes)


def test_the_totals_are_kept_for_later_diffs(pair, cache_dir, monkeypatch):
    """A cached diff of whole traces keeps each side's totals (headline.trace_totals, one
    row); a later diff reads them back, with the same board."""
    from tracelens.compare import headline

    a, b = pair
    _whole_only(monkeypatch)
    boards = _diffs(a, b, cached=False)
    assert _diffs(a, b, cached=True) == boards  # summed and kept on this run
    with tracelens.open(b) as cached:
        kept = workfile.kept(cached, (), workfile.TOTALS)
    with tracelens.open(b, cache=False) as direct:
        assert kept.row(0, named=True) == headline.trace_totals(direct)

    def summed(*args, **kwargs):
        raise AssertionError("summed again")

    monkeypatch.setattr(headline, "trace_totals", summed)
    assert _diffs(a, b, cached=True) == boards
    with tracelens.open(b) as cached, pytest.raises(AssertionError, match="summed again"):
        tracelens.diff(cached, cached, where_a=EventFilter(device=0), where_b=EventFilter(device=0))
