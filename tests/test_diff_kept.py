"""The board of a diff of two whole cached traces, kept in the first one's cache entry
(tracelens.compare.kept): a later run with the same traces and view reads it back instead
of comparing again, with the same output and --fail-if gates; another view, another second
trace, a rewritten trace, a selection or a direct read never reads it. Each test has its
own cache directory (conftest); TRACELENS_CACHE_MIN_MB=0 caches the small demo traces."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import run_cli

from tracelens import compare

VIEWS = (["-f", "json"], ["-f", "markdown", "--top", "3"], [], ["--name", "short", "-n", "4"])


def _boards(cache_dir: Path) -> list[Path]:
    return sorted((cache_dir / "traces").glob("*/tracelens_diff_board-*"))


def _no_compare(monkeypatch) -> None:
    def compared(*args, **kwargs):
        raise AssertionError("compared again")

    monkeypatch.setattr(compare, "diff", compared)


def _diff(args, capsys) -> tuple[int, str, str]:
    return run_cli(["diff", *args], capsys)


def test_a_repeat_reads_the_kept_board(pair, cache_dir, capsys, monkeypatch):
    a, b = pair
    direct = [_diff([a, b, *view, "--no-cache"], capsys) for view in VIEWS]
    assert all(code == 0 and out for code, out, _ in direct)
    assert _boards(cache_dir) == []  # a direct read keeps none
    first = [_diff([a, b, *view], capsys)[1] for view in VIEWS]
    assert first == [out for _, out, _ in direct]
    assert len(_boards(cache_dir)) == len(VIEWS)  # one per view, all in A's entry
    assert len({p.parent for p in _boards(cache_dir)}) == 1
    _no_compare(monkeypatch)
    assert [_diff([a, b, *view], capsys)[1] for view in VIEWS] == first
    code, out, err = _diff([a, b, "-f", "json", "--top", "2"], capsys)  # a view not kept yet
    assert code != 0 and out == "" and "compared again" in err


def test_the_gates_of_a_kept_board(pair, cache_dir, capsys, monkeypatch):
    a, b = pair
    gates = ["--fail-if", "gpu_time_ratio>1.0", "--fail-if", "util_a>=0"]
    expected = _diff([a, b, "-f", "json", *gates, "--no-cache"], capsys)
    assert expected[0] == 1 and "gate tripped: gpu_time_ratio>1.0" in expected[2]
    assert _diff([a, b, "-f", "json"], capsys)[0] == 0  # kept, without gates
    _no_compare(monkeypatch)
    assert _diff([a, b, "-f", "json", *gates], capsys) == expected
    code, out, err = _diff([a, b, "-f", "json", "--fail-if", "bogus>1"], capsys)
    assert code == 2 and out == "" and "unknown figure 'bogus'" in err


def test_a_figure_not_measured_stays_so(pair, cache_dir, capsys):
    """A kept board keeps the figures the diff could not measure, and why."""
    import tracelens
    from tracelens.compare import kept
    from tracelens.compare.gates import Figures

    a, b = pair
    view = {"format": "json", "top": 15, "name": "demangled"}  # as the CLI's -f json
    made = ("{}\n", Figures({"util": 0.5}, {"steps": "no steps found"}))
    assert _diff([a, b, "-f", "json"], capsys)[0] == 0  # the cache entries made, and a board
    with tracelens.open(a) as ta, tracelens.open(b) as tb:
        kept.write(ta, tb, view, made)  # over the board kept
        back = kept.read(ta, tb, view)
        assert kept.read(ta, tb, {**view, "top": 14}) is None
    assert back == made and back[1].not_measured == {"steps": "no steps found"}
    code, out, err = _diff([a, b, "-f", "json", "--fail-if", "steps>1"], capsys)
    assert code == 2 and out == "" and "steps was not measured: no steps found" in err
    assert _diff([a, b, "-f", "json", "--fail-if", "util<0.6"], capsys) == (
        1,
        "{}\n",
        ("tracelens: gate tripped: util<0.6 (util = 0.5)\n"),
    )


def test_another_or_a_rewritten_trace_is_compared_again(pair, cache_dir, capsys, tmp_path):
    a, b = pair
    assert _diff([a, b, "-f", "json"], capsys)[0] == 0
    assert (
        _diff([a, a, "-f", "json"], capsys)[1]
        == _diff([a, a, "-f", "json", "--no-cache"], capsys)[1]
    )
    shutil.copyfile(a, b)  # B rewritten: now bs1 as well (its cache entry is another)
    expected = _diff([a, b, "-f", "json", "--no-cache"], capsys)[1]
    assert _diff([a, b, "-f", "json"], capsys)[1] == expected
    moved = tmp_path / "run2"
    moved.mkdir()
    shutil.copyfile(b, moved / "bs16.sqlite")  # another path: its label may differ
    expected = _diff([a, moved / "bs16.sqlite", "-f", "json", "--no-cache"], capsys)[1]
    assert _diff([a, moved / "bs16.sqlite", "-f", "json"], capsys)[1] == expected


@pytest.mark.parametrize(
    "selection", [["--a-start", "0ms"], ["--nvtx", "*"], ["--b-end", "1s"], ["--step", "1"]]
)
def test_a_selection_neither_reads_nor_keeps_a_board(pair, cache_dir, capsys, selection):
    a, b = pair
    expected = _diff([a, b, "-f", "json", *selection, "--no-cache"], capsys)
    assert _diff([a, b, "-f", "json"], capsys)[0] == 0  # the whole traces' board, kept
    kept = _boards(cache_dir)
    assert _diff([a, b, "-f", "json", *selection], capsys) == expected
    assert _boards(cache_dir) == kept
