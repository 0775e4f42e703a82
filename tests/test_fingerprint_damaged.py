"""The fingerprint leaves out GPU records that end before they start (a damaged export), as
every command does, and says so once: a ``notes`` entry in the document (absent on a sound
trace, whose bytes stay those of before), a ``tracelens: note:`` line on stderr beside the
JSON, the board's last line with ``--check``."""

from __future__ import annotations

import json

import pytest
from conftest import run_cli
from test_damaged_records import STEPS, _build

import tracelens

NOTE = "2 kernel records end before they start (damaged export): left out"


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    where = tmp_path_factory.mktemp("fp_damaged")
    return _build(where / "damaged.sqlite"), _build(where / "sound.sqlite", damaged=False)


def _doc(path):
    with tracelens.open(path) as trace:
        return tracelens.fingerprint(trace)


def test_the_document_leaves_them_out_and_says_so(pair):
    damaged, sound = pair
    doc = _doc(damaged)
    assert doc["notes"] == [NOTE]
    # six steps of a gemm and an add, less the cut-off add and the gemm pushed 10^12 ns on
    assert doc["launches"] == 2 * STEPS - 2
    assert sum(e["launches"] * len(e["steps"]) for e in doc["paths"]) == 2 * STEPS - 2
    assert "notes" not in _doc(sound)
    tracelens.fingerprint.validate(doc)
    import jsonschema

    schema = json.loads(tracelens.fingerprint.SCHEMA_PATH.read_text())
    jsonschema.validate(doc, schema)


def test_the_command_line_says_so_once(pair, tmp_path, capsys):
    damaged, sound = pair
    code, out, err = run_cli(["fingerprint", damaged, "--no-cache"], capsys)
    assert code == 0 and err.count("before they start") == 1 and f"tracelens: note: {NOTE}" in err
    assert json.loads(out)["notes"] == [NOTE]
    base = tmp_path / "sound.json"
    assert run_cli(["fingerprint", sound, "-o", base, "--no-cache"], capsys)[2] == ""
    code, out, err = run_cli(["fingerprint", damaged, "--check", base, "--no-cache"], capsys)
    assert code == 1 and out.rstrip().endswith(f"note: {NOTE}") and "before" not in err
    code, out, err = run_cli(
        ["fingerprint", damaged, "--check", base, "-f", "json", "--no-cache"], capsys
    )
    assert err.count("before they start") == 1 and "before they start" not in out
