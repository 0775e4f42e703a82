"""The report's diff danger table shows what each change was judged on, as the text board
does (compare.render): per step when the captures hold different numbers of steps, the
totals with their scale without steps on both sides, plain totals for the same work."""

from __future__ import annotations

import re

from test_diff_pairs import build_stepless, build_steps
from test_report import Page

import tracelens
from tracelens.report import build_report


def _danger_table(tmp_path, a, b) -> tuple[str, list[list[str]]]:
    """The danger section's note above its table, and the table's rows as cell texts."""
    with tracelens.open(a) as ta, tracelens.open(b) as tb:
        html = build_report(ta, tb)
    (section,) = re.findall(r'<section id="danger">(.*?)</section>', html, re.S)
    note = re.search(r'<p class="note">(.*?)</p>\s*<table', section, re.S)
    rows = [
        [" ".join(Page(cell).text.split()) for cell in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", tr)]
        for tr in re.findall(r"<tr[^>]*>(.*?)</tr>", section, re.S)
    ]
    return (Page(note.group(1)).text if note else ""), rows


def test_the_danger_table_shows_calls_and_time_per_step(tmp_path):
    """20 vs 30 steps of one program: the GEMM is 'same' per step, and the page showed
    its totals beside that status (40 -> 60 calls, 1.60 -> 2.40 ms)."""
    a, b = build_steps(tmp_path, "a", 20), build_steps(tmp_path, "b", 30)
    note, rows = _danger_table(tmp_path, a, b)
    assert note == "Per step: 20 steps in A, 30 in B; each change is judged per step."
    assert rows[0] == [
        *("Risk", "Change", "Kernel", "Rule"),
        *("Calls/step A", "Calls/step B", "Time/step A", "Time/step B"),
    ]
    (row,) = rows[1:]
    assert row[1] == "same"
    assert row[4:] == ["2.00", "2.00", "80.00 µs", "80.00 µs"]


def test_the_same_steps_keep_the_danger_totals(tmp_path):
    a, b = build_steps(tmp_path, "a", 20), build_steps(tmp_path, "b", 20)
    note, rows = _danger_table(tmp_path, a, b)
    assert note == ""
    assert rows[0][4:] == ["Calls A", "Calls B", "Time A", "Time B"]
    assert rows[1][4:] == ["40", "40", "1.60 ms", "1.60 ms"]


def test_without_steps_the_danger_totals_say_their_scale(tmp_path):
    """No repeating step, 300 vs 450 launches: totals, judged against A's total x 1.5."""
    a, b = build_stepless(tmp_path, "a", 300), build_stepless(tmp_path, "b", 450)
    note, rows = _danger_table(tmp_path, a, b)
    assert note == (
        "Totals of each capture; each change is judged against A's total × 1.5, B's kernel "
        "launches over A's."
    )
    assert rows[0][4:] == ["Calls A", "Calls B", "Time A", "Time B"]
