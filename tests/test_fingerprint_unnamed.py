"""A fingerprint of an export whose StringIds lacks some kernel names (damaged or
truncated) says what it left out: the launches whose names it cannot read are in no
entry, and a note says how many, where a document of 0 launches read as a capture that ran
no kernel (#13: "never claim what it did not see")."""

from __future__ import annotations

import sqlite3

from conftest import run_cli
from fixtures.fingerprint_runs import NORM, Run, build_run

import tracelens
import tracelens.fingerprint as fp


def _drop_strings(path, where: str) -> None:
    with sqlite3.connect(path) as db:
        db.execute(f"DELETE FROM StringIds WHERE {where}")


def test_launches_of_an_unknown_name_are_said_left_out(tmp_path):
    path = build_run(tmp_path / "t.sqlite", Run(steps=3, layers=2))
    with tracelens.open(path, cache=False) as t:
        whole = fp.build(t)
    _drop_strings(path, f"value = '{NORM}'")  # one norm launch per layer and step: 6
    with tracelens.open(path, cache=False) as t:
        doc = fp.build(t)
    assert whole["launches"] - doc["launches"] == 6 and "notes" not in whole
    assert doc["notes"] == [
        "6 kernel launches name a string the export does not hold (StringIds lacks their "
        "ids: a damaged export): left out of the path"
    ]
    assert fp.loads(fp.dumps(doc)) == doc


def test_no_string_at_all_is_not_a_capture_without_kernels(tmp_path, capsys):
    path = build_run(tmp_path / "t.sqlite", Run(steps=3, layers=2))
    with tracelens.open(path, cache=False) as t:
        launched = t.info.count("kernel")
    _drop_strings(path, "1 = 1")
    code, out, err = run_cli(["fingerprint", path, "--no-cache"], capsys)
    assert code == 0
    assert '"launches": 0' in out
    assert err == (
        f"tracelens: note: {launched} kernel launches name a string the export does not hold "
        "(StringIds lacks their ids: a damaged export): left out of the path\n"
    )
