"""The README tells the truth: its test command is what CI runs, and the command output it
shows is what the commands print today."""

from __future__ import annotations

import re
import shlex

import pytest
from conftest import REPO, TRACES, run_cli

README = (REPO / "README.md").read_text(encoding="utf-8")


def _setup_commands() -> list[str]:
    section = README.split("## Set up", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```sh\n(.*?)\n```", section, flags=re.S)


def test_exactly_two_setup_commands():
    commands = _setup_commands()
    assert len(commands) == 2, commands
    assert all("\n" not in c for c in commands), "each set-up command is one line to copy"
    assert "tracelens" in commands[0] and "--demo" in commands[0]
    assert "pytest" in commands[1]


def test_ci_runs_the_readme_test_command():
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert _setup_commands()[1] in ci.splitlines()


def _console_blocks() -> list[tuple[str, str]]:
    blocks = re.findall(r"```console\n\$ (tracelens [^\n]*)\n(.*?)```", README, flags=re.S)
    return [(cmd, out) for cmd, out in blocks]


@pytest.mark.parametrize("command, shown", _console_blocks(), ids=[c for c, _ in _console_blocks()])
def test_readme_output_is_real(command, shown, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    args = shlex.split(command)[1:]
    for i, arg in enumerate(args):
        if arg.endswith(".sqlite") and arg.startswith("nsys"):
            if not (TRACES / arg).exists():
                pytest.skip(f"{TRACES / arg} not found (../shared is absent)")
            args[i] = str(TRACES / arg)
    rc, out, err = run_cli(args, capsys)
    assert rc == 0, err

    # The one line that names where the file lives differs from machine to machine.
    def stable(text: str) -> list[str]:
        return [line for line in text.splitlines() if not line.startswith("file ")]

    assert stable(out) == stable(shown)


def test_readme_evidence_board_is_real(capsys):
    marker = "<!-- output of: tracelens diff --demo -f markdown --top 5 (first lines) -->\n"
    shown = README.split(marker, 1)[1].split("\n\n", 1)[0].splitlines()
    rc, out, _ = run_cli(["diff", "--demo", "-f", "markdown", "--top", "5"], capsys)
    assert rc == 0 and len(shown) >= 7
    actual = out.splitlines()
    for line in shown:
        assert line in actual, line


def test_readme_fingerprint_check_is_real(capsys, monkeypatch, tmp_path):
    marker = (
        "<!-- output of: tracelens fingerprint --demo bs16 --check bs1.json "
        "(after: tracelens fingerprint --demo bs1 -o bs1.json); exit 1 -->\n```text\n"
    )
    shown = README.split(marker, 1)[1].split("```", 1)[0]
    monkeypatch.chdir(tmp_path)
    assert run_cli(["fingerprint", "--demo", "bs1", "-o", "bs1.json"], capsys)[0] == 0
    rc, out, _ = run_cli(["fingerprint", "--demo", "bs16", "--check", "bs1.json"], capsys)
    assert rc == 1 and out == shown
