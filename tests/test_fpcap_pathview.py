"""The report's numerical-path section shows the board's opening as the command line does:
the verdict and the line on launches that only changed device (it showed the first line
only, so a page of stages moved between GPUs said "runs the launches of ... placed on other
devices" without which devices or how many launches), and the changes counted past a
region's listed launches."""

from __future__ import annotations

import html

from test_diffpairs_devices import replicas
from test_fpcap_counts import block_of_5  # noqa: F401  (a fixture)
from test_fpdev_devices import _placed

from tracelens import fingerprint as fp
from tracelens.report.page import build_path_report
from tracelens.report.pathview import path_view


def test_the_page_shows_the_devices_line_of_the_board(tmp_path):
    a = fp(_placed(tmp_path, "a", lambda i: 0 if i < 4 else 1))
    b = fp(_placed(tmp_path, "b", lambda i: 0))
    diff = fp.compare(a, b)
    board = fp.board.lines(diff, "a.json", "b.json")
    devices = next(line for line in board if line.startswith("devices: "))
    view = path_view(diff, "a.json", "b.json")
    assert view.verdict == board[: len(view.verdict)] and devices in view.verdict
    page = html.unescape(build_path_report(a, b, label_a="a.json", label_b="b.json"))
    assert board[0] in page and devices in page


def test_the_page_shows_the_launches_counted_past_the_listed_ones(tmp_path, block_of_5):  # noqa: F811
    a, b = fp(replicas(tmp_path, "a", 1)), fp(replicas(tmp_path, "b", 2))
    view = path_view(fp.compare(a, b), "a", "b")
    (group,) = view.groups
    assert group["unlisted"] == "240 launches added, the first 5 listed"
    assert group["counted"][0] == "past the listed launches, by variant counts:"
    page = html.unescape(build_path_report(a, b, label_a="a", label_b="b"))
    assert "240 launches added, 0 removed" in page
    assert group["counted"][1] in page
