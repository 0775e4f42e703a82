"""A fingerprint file edited by hand: every shape the shipped schema refuses is one line
"FILE: not a valid fingerprint (what)" and exit 2 in `fingerprint --check` and in `diff`,
never an internal error or a silent pass; the checks agree with fingerprint.schema.json."""

from __future__ import annotations

import copy
import json
import re

import jsonschema
import pytest
from conftest import run_cli

import tracelens
from tracelens.demo import demo_path
from tracelens.errors import UsageError


@pytest.fixture(scope="module")
def baseline():
    with tracelens.open(demo_path("bs1")) as trace:
        return json.loads(tracelens.fingerprint.dumps(tracelens.fingerprint(trace)))


def _schema():
    return json.loads(tracelens.fingerprint.SCHEMA_PATH.read_text())


def _set(*keys, value):
    """An edit: the value at the path ``keys`` becomes ``value``."""

    def edit(doc):
        for key in keys[:-1]:
            doc = doc[key]
        doc[keys[-1]] = value

    return edit


def _drop(*keys):
    def edit(doc):
        for key in keys[:-1]:
            doc = doc[key]
        del doc[keys[-1]]

    return edit


MALFORMED = {
    "variants null": (_set("variants", value=None), '"variants" is null, not a list'),
    "steps a list": (_set("steps", value=[]), '"steps" is [], not an object'),
    "steps.count negative": (_set("steps", "count", value=-1), '"steps.count" is -1, less than 0'),
    "steps.method unknown": (
        _set("steps", "method", value="guess"),
        '"steps.method" is "guess", not one of range, marker, period, none',
    ),
    "regions unknown": (_set("regions", value=3), '"regions" is 3, not one of nvtx, step'),
    "devices a string": (_set("devices", value="zero"), '"devices" is "zero", not a list'),
    "devices of strings": (_set("devices", value=["0"]), '"devices"[0] is "0", not an integer'),
    "launches a string": (_set("launches", value="many"), '"launches" is "many", not an integer'),
    "launches a bool": (_set("launches", value=True), '"launches" is true, not an integer'),
    "block_launches zero": (_set("block_launches", value=0), '"block_launches" is 0, less than 1'),
    "no generator": (_drop("generator"), 'the document has no "generator"'),
    "unknown top key": (_set("extra", value=1), 'the document has an unknown key "extra"'),
    "notes a string": (_set("notes", value="x"), '"notes" is "x", not a list'),
    "variant without name": (_drop("variants", 0, "name"), 'variants[0] has no "name"'),
    "variant id a string": (
        _set("variants", 0, "id", value="0"),
        'variants[0].id is "0", not an integer',
    ),
    "variant grid null": (
        _set("variants", 0, "grid", value=None),
        "variants[0].grid is null, not a list",
    ),
    "variant grid of 2": (
        _set("variants", 0, "block", value=[1, 1]),
        "variants[0].block is [1, 1], not 3 integers or nulls",
    ),
    "variant field a number": (
        _set("variants", 0, "fields", value={"tile": 128}),
        "variants[0].fields.tile is 128, not a string",
    ),
    "variant danger null": (
        _set("variants", 0, "danger", value=None),
        "variants[0].danger is null, not a list",
    ),
    "path region null": (
        _set("paths", 0, "region", value=None),
        "paths[0].region is null, not a list",
    ),
    "path device a string": (
        _set("paths", 0, "device", value="a"),
        'paths[0].device is "a", not an integer',
    ),
    "path step zero": (_set("paths", 0, "steps", value=[0]), "paths[0].steps[0] is 0, less than 1"),
    "path launches zero": (
        _set("paths", 0, "launches", value=0),
        "paths[0].launches is 0, less than 1",
    ),
    "path sequence of floats": (
        _set("paths", 0, "sequence", value=[0.5]),
        "paths[0].sequence[0] is 0.5, not an integer",
    ),
    "path without sequence": (_drop("paths", 0, "sequence"), 'paths[0] has no "sequence"'),
    "path a string": (_set("paths", 0, value="x"), 'paths[0] is "x", not an object'),
    "path block not hex": (
        _set("paths", 0, "blocks", value=["zz"]),
        'paths[0].blocks[0] is "zz", not hex.hex',
    ),
    "path before zero": (_set("paths", 0, "before", value=0), "paths[0].before is 0, less than 1"),
    "path after a string": (
        _set("paths", 0, "after", value="3"),
        'paths[0].after is "3", not an integer',
    ),
    "path count of 3": (
        _set("paths", 0, "counts", value=[[0, 1, 2]]),
        "paths[0].counts[0] is [0, 1, 2], not [variant, launches]",
    ),
}


def _malformed(baseline, case):
    doc = copy.deepcopy(baseline)
    MALFORMED[case][0](doc)
    return doc


@pytest.mark.parametrize("case", MALFORMED)
def test_a_malformed_fingerprint_names_what_is_wrong(baseline, tmp_path, case):
    bad = tmp_path / "fp.json"
    bad.write_text(json.dumps(_malformed(baseline, case)))
    with pytest.raises(UsageError) as caught:
        tracelens.fingerprint.load(bad)
    assert str(caught.value) == f"{bad}: not a valid fingerprint ({MALFORMED[case][1]})"


# The reviewer's cases: internal errors (TypeError, KeyError) or a silent "follows exactly".
@pytest.mark.parametrize(
    "case",
    [
        "variants null",
        "steps a list",
        "path region null",
        "path device a string",
        "variant without name",
        "devices a string",
        "launches a string",
    ],
)
def test_check_and_diff_say_it_in_one_line_and_exit_2(baseline, tmp_path, capsys, case):
    bad = tmp_path / "fp.json"
    bad.write_text(json.dumps(_malformed(baseline, case)))
    expected = f"tracelens: {bad}: not a valid fingerprint ({MALFORMED[case][1]})\n"
    for args in (
        ["fingerprint", "--demo", "bs1", "--check", str(bad)],
        ["diff", str(bad), str(demo_path("bs1"))],
    ):
        assert run_cli(args, capsys) == (2, "", expected), args


@pytest.mark.parametrize("case", MALFORMED)
def test_the_schema_refuses_each_malformed_case_too(baseline, case):
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(_malformed(baseline, case), _schema())


def test_valid_documents_pass_both(baseline):
    """The demo's document, and one with the optional notes, blocks and counts."""
    full = copy.deepcopy(baseline)
    full["notes"] = ["2 kernel records end before they start (damaged export): left out"]
    full["paths"][0].update(blocks=["1a.2b"], counts=[[0, 3]], before=1, after=1)
    full["variants"][0]["grid"] = [1, None, 1]
    for doc in (baseline, full):
        jsonschema.validate(doc, _schema())
        assert tracelens.fingerprint.validate(doc) is doc


def test_before_and_after_belong_to_launches_outside_the_steps(baseline):
    """``before`` and ``after`` (format version 10) count launches of an entry outside the
    steps: on a step's entry, or more than its launches, the document is refused."""
    step_entry = next(i for i, e in enumerate(baseline["paths"]) if e["steps"])
    for where, extra, message in (
        (step_entry, {"after": 1}, f'paths[{step_entry}] has "after" and steps'),
        (0, {"before": 10**6}, "paths[0].before + after is more than its launches"),
    ):
        doc = copy.deepcopy(baseline)
        doc["paths"][where].update(extra)
        with pytest.raises(UsageError, match=re.escape(message)):
            tracelens.fingerprint.validate(doc)


def test_a_path_naming_an_unlisted_variant_is_still_refused(baseline):
    doc = copy.deepcopy(baseline)
    doc["paths"][0]["sequence"] = [len(doc["variants"])]
    with pytest.raises(UsageError, match="a path entry refers to a variant the file does not"):
        tracelens.fingerprint.validate(doc)


def test_a_trace_given_as_the_baseline_is_named_as_one(tmp_path, capsys):
    """--check run.sqlite (a trace where its fingerprint belongs) said "cannot read ('utf-8'
    codec can't decode byte ...)" (review8 minor); now one line says what it is and what
    to do, exit 2; other binary files say they are not text."""
    trace = demo_path("bs1")
    rc, out, err = run_cli(["fingerprint", "--demo", "bs1", "--check", trace], capsys)
    assert rc == 2 and out == "" and len(err.splitlines()) == 1, err
    assert "an SQLite file (an nsys export?), not a fingerprint" in err
    assert f"tracelens fingerprint {trace} -o BASELINE.json" in err and "utf-8" not in err
    junk = tmp_path / "junk.json"
    junk.write_bytes(b"\xf1\xff\x00binary")
    rc, out, err = run_cli(["fingerprint", "--demo", "bs1", "--check", junk], capsys)
    assert rc == 2 and len(err.splitlines()) == 1 and "not a fingerprint (not UTF-8 text" in err
