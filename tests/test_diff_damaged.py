"""The diff leaves GPU records that end before they start out of every figure (as every
command does) and says so once per side, in every format (test_damaged_records.py has the
other commands)."""

from __future__ import annotations

import json

import pytest
from conftest import run_cli
from test_damaged_records import NOTE, _build

import tracelens


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    root = tmp_path_factory.mktemp("diff_damaged")
    return _build(root / "damaged.sqlite"), _build(root / "clean.sqlite", damaged=False)


@pytest.mark.parametrize("fmt", ["table", "markdown", "json"])
def test_each_side_says_so_once_in_every_format(pair, fmt, capsys):
    damaged, clean = pair
    code, out, err = run_cli(["diff", clean, damaged, "-f", fmt, "--no-cache"], capsys)
    assert code == 0, err
    assert out.count("before they start") == 1 and "before" not in err
    assert f"B: {NOTE}" in out and "A: " + NOTE[:10] not in out
    if fmt == "json":
        assert json.loads(out)["notes"][-1] == f"B: {NOTE}"


def test_a_file_with_itself_says_so_once_for_both_sides(pair, capsys):
    damaged, _clean = pair
    code, out, err = run_cli(["diff", damaged, damaged, "-f", "json", "--no-cache"], capsys)
    assert code == 0, err
    assert json.loads(out)["notes"][-1] == f"A and B: {NOTE}"


def test_a_cached_diff_says_so_too(pair, capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("TRACELENS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("TRACELENS_CACHE_MIN_MB", "0")
    damaged, clean = pair
    # the run that builds the cache and keeps the work and the board; one of another view
    # (--top), which compares again from the kept work; one reading the kept board
    for top in ("15", "3", "15"):
        code, out, err = run_cli(["diff", damaged, clean, "-f", "json", "--top", top], capsys)
        assert code == 0, err
        assert [n for n in json.loads(out)["notes"] if "before" in n] == [f"A: {NOTE}"]


def test_the_figures_are_those_of_the_sound_records(pair):
    damaged, clean = pair
    d = tracelens.diff(clean, damaged)
    totals = {r["metric"]: r for r in d.totals.iter_rows(named=True)}
    assert totals["kernel launches"]["delta"] == -2 and totals["memcpy count"]["delta"] == -1
    assert totals["kernel time (ns)"]["b"] == 2_000_000
    # GPU busy as util counts it: the sound kernels and the five sound 10 µs copies
    assert totals["GPU busy (ns)"]["b"] == 2_000_000 + 5 * 10_000
    assert all(r["b_total_ns"] > 0 for r in d.kernels.iter_rows(named=True))


def test_a_sound_pair_counts_no_rows_for_the_note(pair):
    """Each side's whole read counted the records it kept: the note's count reads rowids
    only (test_damaged_records.test_rowid_shortcut_still_counts)."""
    _damaged, clean = pair
    with tracelens.open(clean, cache=False) as a, tracelens.open(clean, cache=False) as b:
        asked = []
        for tr in (a, b):
            read = tr._sqlite_rows
            tr._sqlite_rows = lambda sql, *args, read=read: asked.append(sql) or read(sql, *args)
        d = tracelens.diff(a, b)
    assert not any("before" in n for n in d.notes)
    assert asked and not any('"end" < start' in sql for sql in asked)
