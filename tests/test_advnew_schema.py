"""fingerprint.schema.json states the documents this tracelens writes (advnew's review): a
version 12 document, its steps written as runs, validates against it with jsonschema, and
the schema's title names version 12 (it still said 'version 11' after format 12)."""

from __future__ import annotations

import json

import jsonschema
from fixtures.fingerprint_runs import Run, build_run

import tracelens
import tracelens.fingerprint as fp
from tracelens.fingerprint.build import VERSION
from tracelens.fingerprint.document import SCHEMA_PATH


def test_a_written_document_with_runs_is_the_schemas(tmp_path):
    path = build_run(tmp_path / "t.sqlite", Run(steps=5))
    with tracelens.open(path, cache=False) as trace:
        written = json.loads(fp.dumps(fp.build(trace)))
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    assert [e["steps"] for e in written["paths"]] == [[[1, 5]]] * 3
    jsonschema.validate(written, schema)
    assert schema["title"] == f"tracelens numerical-path fingerprint, version {VERSION}"
