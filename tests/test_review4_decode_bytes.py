"""decode NAME / decode - with bytes that are not UTF-8 (a name copied out of a damaged
export or a binary log): shown as \\xNN in every format, as a trace's names are. review4:
`printf '\\xff\\xfe bad\\n' | tracelens decode - -f csv` was 'internal error: UnicodeEncodeError'
(exit 70) and `-f json` wrote "\\xff\\xfe bad", an invalid JSON escape."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys

import pytest
from conftest import run_cli
from fixtures.builder import build_odd_strings

SHOWN = "\\xff\\xfe bad"  # what the user sees: backslash, x, two hex digits


def _stdin(data: bytes) -> io.TextIOWrapper:
    return io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", errors="surrogateescape")


@pytest.mark.parametrize("fmt", ["csv", "json", "markdown", "table"])
def test_stdin_bytes_that_are_not_utf8(monkeypatch, capsys, fmt):
    monkeypatch.setattr(sys, "stdin", _stdin(b"ok_kernel\n\xff\xfe bad\n"))
    rc, out, err = run_cli(["decode", "-", "-f", fmt], capsys)
    assert (rc, err) == (0, "")
    if fmt == "json":
        assert [k["raw"] for k in json.loads(out)] == ["ok_kernel", SHOWN]
    elif fmt == "csv":
        assert out.splitlines()[1:] == ["ok_kernel,other,other,,,,,", SHOWN + ",other,other,,,,,"]
    else:
        assert SHOWN in out


def test_argument_bytes_that_are_not_utf8(capsys):
    # Python holds an argument's bytes that are not UTF-8 as surrogate escapes
    name = os.fsdecode(b"k\xffx")
    rc, out, err = run_cli(["decode", name, "-f", "csv"], capsys)
    assert (rc, err) == (0, "") and out.splitlines()[1] == "k\\xffx,other,other,,,,,"
    rc, out, err = run_cli(["decode", name, "-f", "json"], capsys)
    assert rc == 0 and json.loads(out)[0]["raw"] == "k\\xffx"


def test_strict_locale_stdin():
    """Under the C locale without UTF-8 mode (stdin ASCII with surrogate escapes) the bytes
    that are not UTF-8 are \\xNN all the same, in a real process's stdin."""
    env = {**os.environ, "LC_ALL": "C", "LANG": "C", "PYTHONUTF8": "0"}
    env.pop("PYTHONIOENCODING", None)
    done = subprocess.run(
        [sys.executable, "-m", "tracelens", "decode", "-", "-f", "json"],
        input=b"ok_kernel\n\xff\xfe bad\n",
        capture_output=True,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    raws = [k["raw"] for k in json.loads(done.stdout.decode("utf-8"))]
    assert raws == ["ok_kernel", SHOWN]


@pytest.fixture(scope="module")
def odd(tmp_path_factory):
    return build_odd_strings(tmp_path_factory.mktemp("odd"), "3.0.0").path


@pytest.mark.parametrize("fmt", ["csv", "json", "table"])
def test_stakeout_pattern_bytes_that_are_not_utf8(odd, capsys, fmt):
    """stakeout with the name's own bytes from the shell (printf 'bad_\\xff\\xfe') finds the
    kernel whose name holds them, as its shown form 'bad_\\\\xff\\\\xfe' does. review4: internal
    error 'Unable to cast Python instance of type str to C++ type' (DuckDB binding the
    surrogate escapes), in every format."""
    shown = ["stakeout", odd, "bad_\\xff\\xfe", "-f", fmt]
    raw = ["stakeout", odd, os.fsdecode(b"bad_\xff\xfe"), "-f", fmt]
    rc, by_shown, err = run_cli(shown, capsys)
    assert (rc, err) == (0, "")
    rc, by_raw, err = run_cli(raw, capsys)
    assert (rc, err) == (0, "") and by_raw == by_shown
    if fmt == "csv":
        assert len(by_raw.splitlines()) == 5  # header + its 4 launches
