"""--format as a user types it and reads it: ids in tables and Markdown as the export and the
filters write them (PID 48213, not 48,213: a value read in a table can be given to --pid),
counts and times still with separators; and ``-f md`` for Markdown."""

from __future__ import annotations

import pytest
from conftest import run_cli

from tracelens.render import frame
from tracelens.rows import Rows


@pytest.mark.parametrize("fmt", ["table", "markdown"])
def test_ids_have_no_thousands_separators(fmt):
    rows = Rows(
        ("pid", "tid", "device", "stream", "correlation_id", "context", "calls", "total_ns"),
        ("int",) * 8,
        ((48213, 48213, 0, 1234, 1234567, 16001, 48213, 1234567),),
    )
    text = frame(rows, fmt=fmt)
    assert "48213" in text and "1234567" in text and "16001" in text and "1234" in text
    assert "48,213" in text and "1,234,567" in text  # calls and total_ns keep theirs
    assert text.count("48,213") == 1 and text.count("1,234,567") == 1


@pytest.mark.parametrize(
    "argv",
    [
        ["findings", "--demo", "bs1", "--rule", "sync_api"],
        ["timeline", "--demo", "bs1", "--limit", "3"],
        ["api", "--demo", "bs1", "--exec", "--top", "1"],
        ["nvtx", "--demo", "bs1", "--kernels", "--top", "1"],
    ],
)
@pytest.mark.parametrize("fmt", ["table", "markdown"])
def test_a_pid_read_in_a_table_is_one_pid_accepts(argv, fmt, capsys):
    rc, out, err = run_cli([*argv, "-f", fmt], capsys)
    assert (rc, err) == (0, "")
    assert "48213" in out and "48,213" not in out
    rc, out, err = run_cli(["census", "--demo", "bs1", "--pid", "48213", "--top", "1"], capsys)
    assert (rc, err) == (0, "")


def test_md_is_markdown(capsys):
    argv = ["census", "--demo", "bs1", "--top", "2"]
    md = run_cli([*argv, "-f", "md"], capsys)
    markdown = run_cli([*argv, "-f", "markdown"], capsys)
    assert md == markdown and md[0] == 0 and md[1].startswith("**census of bs1.sqlite")
    rc, out, err = run_cli(["diff", "--demo", "-f", "md", "--top", "1"], capsys)
    assert rc == 0 and out.startswith("## tracelens diff:")
    rc, out, err = run_cli(["info", "--demo", "bs1", "-f", "md"], capsys)
    assert rc == 0 and out.startswith("**info of bs1.sqlite**\n")  # info takes md too
    rc, out, err = run_cli(["info", "--demo", "bs1", "-f", "csv"], capsys)
    assert (rc, out) == (2, "") and err == (
        "tracelens: unknown --format 'csv'; use one of: table, json, markdown\n"
    )


def _run_closed(fd: int, *argv: str):
    """``python -m tracelens ARGV`` with descriptor ``fd`` closed (``>&-`` / ``2>&-``)."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    import tracelens

    env = {**os.environ, "PYTHONPATH": str(Path(tracelens.__file__).parents[1])}
    return subprocess.run(
        [sys.executable, "-m", "tracelens", *argv],
        capture_output=True,
        text=True,
        env=env,
        preexec_fn=lambda: os.close(fd),  # noqa: PLW1509 - the test's own child
        timeout=120,
    )


def test_a_closed_stdout_is_an_output_error_not_an_internal_error():
    # sys.stdout is None then: the first isatty() was "internal error: AttributeError" (70)
    done = _run_closed(1, "census", "--demo", "bs1", "--top", "1")
    assert (done.returncode, done.stderr) == (
        1,
        "tracelens: cannot write output (stdout is closed)\n",
    )
    done = _run_closed(1, "census", "--help")
    assert (done.returncode, done.stderr) == (
        1,
        "tracelens: cannot write output (stdout is closed)\n",
    )


def test_a_closed_stderr_still_gives_the_results_and_the_exit_code():
    done = _run_closed(2, "census", "--demo", "bs1", "--top", "1", "-f", "csv")
    assert done.returncode == 0 and done.stdout.startswith("time_pct,total_ns,")
    done = _run_closed(2, "census", "/nonexistent/run.sqlite")
    # the error line went to stdout (print(file=None)) with exit 70; now it is dropped
    assert (done.returncode, done.stdout) == (2, "")
