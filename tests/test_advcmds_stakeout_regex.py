"""stakeout --match regex of a pattern that is a kernel's name as written but, read as a
regex, matches none ('a.b*c[1]': '[1]' is a class, '*' repeats 'b') named that very kernel
as the closest, with nothing on why it did not match: now it says that the text is in a name
as written and that --match contains reads it literally (found by advcmds)."""

from __future__ import annotations

import pytest
from conftest import run_cli


@pytest.fixture
def export(tmp_path):
    synth = pytest.importorskip("tracelens.synth")
    b = synth.TraceBuilder("3.25.0")
    b.process(4242, "python x.py")
    for i, name in enumerate(["a.b*c[1]", "a+b", "gemm"]):
        b.kernel(name, start=1_000_000 + i * 10_000, end=1_001_000 + i * 10_000, pid=4242)
    return b.write(tmp_path / "meta.sqlite")


@pytest.mark.parametrize("pattern", ["a.b*c[1]", "a+b"])
def test_literal_text_says_match_contains(export, pattern, capsys):
    rc, out, err = run_cli(["stakeout", export, pattern, "--match", "regex"], capsys)
    assert (rc, out) == (2, "")
    assert err == (
        f"tracelens: no kernel in meta.sqlite has a name matching '{pattern}'; closest: "
        f"'{pattern}'; as a regex it matches none, but the text is in a name as written: "
        "--match contains reads it literally\n"
    )


def test_other_misses_keep_their_message(export, capsys):
    rc, out, err = run_cli(["stakeout", export, "gemx", "--match", "regex"], capsys)
    assert (rc, out) == (2, "")
    assert (
        err == "tracelens: no kernel in meta.sqlite has a name matching 'gemx'; closest: 'gemm'\n"
    )


def test_literally_it_matches(export, capsys):
    rc, out, err = run_cli(["stakeout", export, "a.b*c[1]", "--format", "csv"], capsys)
    assert (rc, err) == (0, "")
    assert [line.split(",")[3] for line in out.splitlines()[1:]] == ["a.b*c[1]"]
