"""A baseline fingerprint a user hands to ``--check`` that is JSON nested past Python's
recursion limit, that lists a step twice in one region or a variant id twice: one line and
exit 2, never an internal error or a comparison of what the file holds twice (found by
advfp)."""

from __future__ import annotations

import json

import jsonschema
import pytest
from conftest import run_cli
from fixtures.fingerprint_runs import build_run

import tracelens


def _write(tmp_path, capsys, edit) -> tuple:
    trace = build_run(tmp_path / "base.sqlite")
    code, out, _ = run_cli(["fingerprint", trace], capsys)
    assert code == 0
    doc = json.loads(out)
    edit(doc)
    baseline = tmp_path / "baseline.json"
    baseline.write_text(json.dumps(doc))
    return trace, baseline


def test_json_nested_too_deeply_is_one_line(tmp_path, capsys):
    trace = build_run(tmp_path / "base.sqlite")
    baseline = tmp_path / "deep.json"
    baseline.write_text("[" * 200_000)
    code, out, err = run_cli(["fingerprint", trace, "--check", baseline], capsys)
    assert (code, out) == (2, "")
    assert err == f"tracelens: {baseline}: not valid JSON (nested too deeply)\n"


def test_a_step_listed_twice_in_an_entry_is_refused(tmp_path, capsys):
    def edit(doc):
        doc["paths"][0]["steps"] = [1, 1, 2]

    trace, baseline = _write(tmp_path, capsys, edit)
    code, out, err = run_cli(["fingerprint", trace, "--check", baseline], capsys)
    assert (code, out) == (2, "")
    assert err == (
        f"tracelens: {baseline}: not a valid fingerprint (paths[0].steps lists step 1 twice)\n"
    )
    schema = json.loads(tracelens.fingerprint.SCHEMA_PATH.read_text())
    with pytest.raises(jsonschema.ValidationError, match="non-unique"):
        jsonschema.validate(json.loads(baseline.read_text()), schema)


def test_a_step_in_two_entries_of_a_region_is_refused(tmp_path, capsys):
    def edit(doc):
        doc["paths"].append(dict(doc["paths"][1]))

    trace, baseline = _write(tmp_path, capsys, edit)
    code, out, err = run_cli(["fingerprint", trace, "--check", baseline], capsys)
    assert (code, out) == (2, "")
    assert err == (
        f"tracelens: {baseline}: not a valid fingerprint (paths[3] has step 1 of its "
        "device and region, as paths[1] has)\n"
    )


def test_a_variant_id_listed_twice_is_refused(tmp_path, capsys):
    """Two variants with one id: the comparison took the last, and the board said the
    run's scale_kernel "replaced vllm::rms_norm_kernel" where the baseline meant it."""

    def edit(doc):
        doc["variants"][3]["id"] = 2
        for entry in doc["paths"]:
            entry["sequence"] = [2 if v == 3 else v for v in entry["sequence"]]

    trace, baseline = _write(tmp_path, capsys, edit)
    code, out, err = run_cli(["fingerprint", trace, "--check", baseline], capsys)
    assert (code, out) == (2, "")
    assert err == (
        f"tracelens: {baseline}: not a valid fingerprint (variants[3].id is 2, as "
        "variants[2].id is)\n"
    )


def test_a_baseline_with_a_byte_order_mark_is_read(tmp_path, capsys):
    """Saved by an editor or PowerShell with a UTF-8 BOM: the same document; it was
    "not valid JSON (Unexpected UTF-8 BOM (decode using utf-8-sig), line 1)", exit 2."""
    trace, baseline = _write(tmp_path, capsys, lambda doc: None)
    baseline.write_bytes(b"\xef\xbb\xbf" + baseline.read_bytes())
    code, out, err = run_cli(["fingerprint", trace, "--check", baseline], capsys)
    assert (code, err) == (0, "")
    assert out == "numerical path: base.sqlite follows baseline.json exactly (3 regions)\n"
    code, out, err = run_cli(["diff", baseline, trace], capsys)
    assert (code, err) == (0, "")
    assert out == "numerical path: base.sqlite follows baseline.json exactly (3 regions)\n"
