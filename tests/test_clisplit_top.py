"""--top 0 means every row (every item of a diff's and a report's lists) on every command
that takes --top, in the library too; a negative --top is refused in the same words
everywhere, and every --top's help says what 0 does (one declaration: cli/_params.top_option).
danger, decode, api, nvtx, diff and report refused --top 0 ('--top must be at least 1');
fingerprint --check took a negative --top and cut its board's lists at the wrong place."""

from __future__ import annotations

import json
import sys

import pytest
from conftest import run_cli

import tracelens
from tracelens.danger import danger_kernels
from tracelens.demo import demo_path
from tracelens.report import build_markdown
from tracelens.report.page import check_top

REFUSED = "tracelens: --top must be 0 (every row) or more (got -1)\n"

# Commands whose --top cuts a JSON list of rows, and whose default shows every row.
JSON_ROWS = [
    ["danger", "--demo", "bs16"],
    ["decode", "--demo", "bs16"],
    ["api", "--demo", "bs16"],
    ["nvtx", "--demo", "bs16"],
    ["nvtx", "--demo", "bs16", "--kernels"],
    ["census", "--demo", "bs16"],
    ["lineup", "--demo", "bs16"],
]


@pytest.mark.parametrize("command", JSON_ROWS, ids=lambda c: " ".join(c[::2]))
def test_top_zero_is_every_row(command, capsys):
    rc, every, err = run_cli([*command, "-f", "json"], capsys)
    assert (rc, err) == (0, "")
    rc, two, err = run_cli([*command, "-f", "json", "--top", "2"], capsys)
    assert (rc, err) == (0, "") and 2 <= len(json.loads(two)) < len(json.loads(every))
    rc, out, err = run_cli([*command, "-f", "json", "-n", "0"], capsys)
    assert (rc, err) == (0, "") and json.loads(out) == json.loads(every)


@pytest.mark.parametrize(
    "command", [*JSON_ROWS, ["diff", "--demo"], ["report", "--demo", "-f", "markdown"]]
)
def test_negative_top_is_refused_in_one_line(command, capsys):
    rc, out, err = run_cli([*command, "--top", "-1"], capsys)
    assert (rc, out, err) == (2, "", REFUSED)


@pytest.mark.parametrize("fmt", ["table", "markdown"])
def test_diff_top_zero_lists_every_kernel_and_danger_row(fmt, capsys):
    rc, cut, err = run_cli(["diff", "--demo", "-f", fmt], capsys)
    assert (rc, err) == (0, "")
    assert "more kernels not shown" in cut and "more danger-zone rows not shown" in cut
    rc, out, err = run_cli(["diff", "--demo", "-f", fmt, "--top", "0"], capsys)
    assert (rc, err) == (0, "")
    assert "not shown" not in out and out.count("\n") > cut.count("\n")
    rc, many, _ = run_cli(["diff", "--demo", "-f", fmt, "--top", "100000"], capsys)
    assert out == many


def test_report_markdown_top_zero_lists_every_kernel(capsys):
    rc, cut, err = run_cli(["report", "--demo", "-f", "markdown", "-n", "3"], capsys)
    assert (rc, err) == (0, "") and "more kernels not shown" in cut
    rc, out, err = run_cli(["report", "--demo", "-f", "markdown", "-n", "0"], capsys)
    assert (rc, err) == (0, "") and "not shown" not in out
    rc, many, _ = run_cli(["report", "--demo", "-f", "markdown", "-n", "100000"], capsys)
    assert out == many


def test_report_html_top_zero_lists_every_kernel(tmp_path, capsys):
    page = tmp_path / "all.html"
    rc, _, err = run_cli(["report", demo_path("bs16"), "-n", "0", "-o", page], capsys)
    assert (rc, err) == (0, "")
    text = page.read_text(encoding="utf-8")
    assert "more kernels not listed" not in text
    rc, _, err = run_cli(["report", demo_path("bs16"), "-n", "3", "-o", page], capsys)
    assert (rc, err) == (0, "") and "more kernels not listed" in page.read_text(encoding="utf-8")


def _baseline(tmp_path, capsys):
    base = tmp_path / "bs1.json"
    rc, _, err = run_cli(["fingerprint", "--demo", "bs1", "-o", base], capsys)
    assert (rc, err) == (0, "")
    return base


def test_fingerprint_check_negative_top_is_refused(tmp_path, capsys):
    base = _baseline(tmp_path, capsys)
    rc, out, err = run_cli(["fingerprint", "--demo", "bs16", "--check", base, "-n", "-1"], capsys)
    assert (rc, out, err) == (2, "", REFUSED)


def test_fingerprint_check_top_zero_is_every_group(tmp_path, capsys):
    base = _baseline(tmp_path, capsys)
    check = ["fingerprint", "--demo", "bs16", "--check", base]
    rc, out, _ = run_cli([*check, "-n", "0"], capsys)
    rc_many, many, _ = run_cli([*check, "-n", "100000"], capsys)
    assert (rc, out) == (rc_many, many) and rc == 1


COMMANDS = ["census", "lineup", "danger", "decode", "api", "nvtx", "diff", "report"]


@pytest.mark.parametrize("command", [*COMMANDS, "fingerprint"])
def test_every_top_help_says_what_zero_does(command, capsys):
    rc, out, _ = run_cli([command, "--help"], capsys)
    assert rc == 0
    line = next(ln for ln in out.splitlines() if "--top" in ln)
    assert line.lstrip().startswith("-n, --top") and "Only the first N" in line
    rest = out[out.index(line) :]
    assert "0: all" in " ".join(rest.split()[:40])


def test_library_top_zero_is_every_row():
    with tracelens.open(demo_path("bs16")) as trace:
        every = danger_kernels(trace)
        assert danger_kernels(trace, top=0).equals(every) and every.height > 2
        assert trace.danger(top=0).equals(every)
        assert danger_kernels(trace, top=2).equals(every.head(2))
        assert build_markdown(trace, top=0) == build_markdown(trace, top=100_000)
        assert "more kernels not shown" in build_markdown(trace, top=2)
    assert check_top(0) == check_top(None) == sys.maxsize and check_top(3) == 3


@pytest.mark.parametrize(
    "call",
    [
        danger_kernels,
        lambda trace, top: check_top(top),
        lambda trace, top: tracelens.nvtx.nvtx_report(trace, kernels=True, top=top),
    ],
)
def test_library_negative_top_names_the_parameter(call):
    from tracelens.errors import UsageError

    with tracelens.open(demo_path("bs16")) as trace, pytest.raises(UsageError) as exc:
        call(trace, top=-1)
    assert str(exc.value) == "top must be 0 (every row) or more (got -1)"
    assert exc.value.naming("--top") == "--top must be 0 (every row) or more (got -1)"


def test_library_diff_renderers_take_top_zero_as_every_row():
    """compare.render's table and markdown, called from a notebook, read top=0 as the CLI
    does (every row), not as 'no rows'."""
    import tracelens
    from tracelens.compare import diff
    from tracelens.compare.render import markdown, table

    with tracelens.open(demo_path("bs1")) as a, tracelens.open(demo_path("bs16")) as b:
        d = diff(a, b)
    assert markdown(d, top=0) == markdown(d, top=100_000) != markdown(d, top=1)
    assert table(d, top=0) == table(d, top=100_000) != table(d, top=1)
