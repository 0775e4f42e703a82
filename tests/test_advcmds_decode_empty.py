"""decode of an empty NAME argument is a usage error, as stakeout's empty KERNEL is: it
printed a block under a blank heading ('family other', no fields) with exit 0, while the
empty lines of stdin ('-') are skipped (found by advcmds)."""

from __future__ import annotations

import pytest
from conftest import run_cli


@pytest.mark.parametrize("names", [[""], ["gemm", "  "]])
def test_empty_name_is_a_usage_error(names, capsys):
    rc, out, err = run_cli(["decode", *names], capsys)
    assert (rc, out) == (2, "")
    assert err == "tracelens: a NAME is empty; give kernel names, or '-' to read them from stdin\n"


def test_a_name_still_decodes(capsys):
    rc, out, err = run_cli(["decode", "_Z6kernelPfi"], capsys)
    assert (rc, err) == (0, "")
    assert out.splitlines()[:2] == ["_Z6kernelPfi", "family other; category other"]
