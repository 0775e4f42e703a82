"""The pair page's evidence board is `tracelens diff`'s: each clue with its impact (the GPU
time it accounts for, per step or once per capture), which orders the board. The page
showed clue, evidence and verdict but no impact: a reader saw the order and not the figure
that set it. Found by advreport."""

from __future__ import annotations

from test_report import SectionRows

import tracelens
from tracelens.compare import diff
from tracelens.compare.render import impact_text
from tracelens.demo import demo_path
from tracelens.report import build_report


def test_board_shows_each_clues_impact_as_diff_prints_it():
    with tracelens.open(demo_path("bs1")) as a, tracelens.open(demo_path("bs16")) as b:
        d = diff(a, b)
        html = build_report(a, b)
    board = SectionRows(html, "board")
    assert board.heads[:5] == ["", "Clue", "Impact", "Evidence", "What it suggests"]
    rows = [r for r in board.rows if r]
    assert [(r[1], r[2]) for r in rows] == [
        (c.clue, impact_text(d, c.impact_ns, c.id)) for c in d.clues
    ]
    # `tracelens diff --demo`'s first two: per step, then the work outside the steps
    assert rows[0][2] == "+1.32 ms/step"
    assert rows[1][2] == "+109.7 ms once"
