"""A cached trace's whole-trace kernel summary kept in its cache entry
(tracelens.census_kept): written by the first whole census through the cache, read back by
later census, lineup and danger runs with the same rows and without aggregating the
kernels; never for a filtered census, another version, a direct read or a damaged file.
Each test has its own cache directory (conftest); TRACELENS_CACHE_MIN_MB=0 caches the
small demo trace."""

from __future__ import annotations

import sqlite3

import pytest
from conftest import run_cli

import tracelens
from tracelens import cache, census_kept
from tracelens.census import census_rows, kernel_summary_rows
from tracelens.filters import EventFilter
from tracelens.trace import Trace


def _kept_file(trace, name_kind="demangled", by_launch_config=False):
    trace.db  # noqa: B018  (opening the connection looks the cache entry up)
    entry = trace._lazy.entry if trace._lazy is not None else None
    if entry is None:
        return None
    return cache.derived_path(
        entry, census_kept._name(name_kind, by_launch_config), census_kept._version()
    )


def _no_summary_query(monkeypatch):
    """Fail the test when a kernel summary is aggregated (read back: never)."""
    real = Trace.query_rows

    def query_rows(self, name, **params):
        if name == "kernel_summary":
            raise AssertionError("the kernel summary was aggregated again")
        return real(self, name, **params)

    monkeypatch.setattr(Trace, "query_rows", query_rows)


@pytest.mark.parametrize("name_kind", ["demangled", "short", "mangled"])
@pytest.mark.parametrize("by_launch_config", [False, True])
def test_the_rows_are_kept_and_read_back_the_same(
    demo, cache_dir, monkeypatch, name_kind, by_launch_config
):
    options = {"name": name_kind, "by_launch_config": by_launch_config}
    with tracelens.open(demo, cache=False) as direct:
        expected = kernel_summary_rows(direct, **options)
        assert census_kept.read(direct, name_kind, by_launch_config) is None  # keeps nothing
    with tracelens.open(demo) as first:
        assert census_kept.read(first, name_kind, by_launch_config) is None
        assert kernel_summary_rows(first, **options) == expected
        assert _kept_file(first, name_kind, by_launch_config) is not None
    _no_summary_query(monkeypatch)
    with tracelens.open(demo) as again:
        rows = kernel_summary_rows(again, **options)
        assert rows == expected  # columns, kinds (int/float/str) and every value
        assert kernel_summary_rows(again, **options, top=2) == expected.head(2)


def test_the_command_line_prints_the_same_bytes(demo, cache_dir, capsys):
    def census(*args):
        return run_cli(["census", str(demo), *args], capsys)

    direct = [census("--no-cache", "-f", f) for f in ("table", "csv")]
    census()  # keeps the rows
    with tracelens.open(demo) as trace:
        assert _kept_file(trace) is not None
    kept = [census("-f", f) for f in ("table", "csv")]
    assert kept == direct
    assert all(code == 0 for code, _out, _err in kept)


def test_lineup_and_danger_read_the_kept_rows(demo, cache_dir, monkeypatch):
    with tracelens.open(demo) as first:
        lineup, danger = first.lineup(), first.danger()
    _no_summary_query(monkeypatch)
    with tracelens.open(demo) as again:
        assert again.lineup().equals(lineup)
        assert again.danger().equals(danger)


def test_a_filtered_census_is_aggregated_not_read_back(demo, cache_dir):
    with tracelens.open(demo) as first:
        whole = kernel_summary_rows(first)
        start, end = first.sql('SELECT min(start) AS s, max("end") AS e FROM kernels').row(0)
    window = EventFilter(start_ns=start, end_ns=start + (end - start) // 3)
    with tracelens.open(demo, cache=False) as direct:
        expected = kernel_summary_rows(direct, where=window)
    assert expected != whole  # the window leaves kernels out
    with tracelens.open(demo) as again:
        assert kernel_summary_rows(again, where=window) == expected


def test_another_version_or_a_damaged_file_is_aggregated_again(demo, cache_dir, monkeypatch):
    with tracelens.open(demo) as first:
        expected = kernel_summary_rows(first)
        path = _kept_file(first)
    path.write_text('{"columns": ["name"], "kinds"', encoding="utf-8")  # cut off
    with tracelens.open(demo) as damaged:
        assert census_kept.read(damaged, "demangled", False) is None
        assert kernel_summary_rows(damaged) == expected
    monkeypatch.setattr(census_kept, "_version", lambda: "another")
    with tracelens.open(demo) as other:
        assert census_kept.read(other, "demangled", False) is None
        assert kernel_summary_rows(other) == expected
        assert _kept_file(other) is not None  # kept again, at that version


def test_the_damage_note_holds_when_the_rows_are_read_back(demo, cache_dir, monkeypatch):
    with sqlite3.connect(demo) as db:
        db.execute(
            'UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET "end" = 0 '
            "WHERE rowid = (SELECT max(rowid) FROM CUPTI_ACTIVITY_KIND_KERNEL)"
        )
    db.close()
    note = "1 kernel record ends before it starts (damaged export): left out"
    with tracelens.open(demo) as first:
        rows, damage = census_rows(first)
        assert damage == note
    _no_summary_query(monkeypatch)
    with tracelens.open(demo) as again:
        assert census_rows(again) == (rows, note)


def test_a_summary_of_more_rows_than_the_cap_is_not_kept(demo, cache_dir, monkeypatch):
    """Past census_kept.MAX_ROWS rows (10^6 distinct names) JSON costs more than the
    aggregation it saves: nothing is kept, every run aggregates."""
    with tracelens.open(demo, cache=False) as direct:
        expected = kernel_summary_rows(direct)
    monkeypatch.setattr(census_kept, "MAX_ROWS", expected.height - 1)
    for _ in range(2):
        with tracelens.open(demo) as trace:
            assert kernel_summary_rows(trace) == expected
            assert _kept_file(trace) is None
    monkeypatch.setattr(census_kept, "MAX_ROWS", expected.height)
    with tracelens.open(demo) as trace:
        kernel_summary_rows(trace)
        assert _kept_file(trace) is not None
