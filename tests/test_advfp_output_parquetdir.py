"""``-o`` onto a table file of a parquetdir export the command reads
(``fingerprint export/ -o export/StringIds.parquet``) wrote the result over it, exit 0, and
the export was damaged for every later command; refused as -o onto a SQLite export is
(found by advfp)."""

from __future__ import annotations

import hashlib
import shutil

from conftest import run_cli
from fixtures.fingerprint_runs import build_run


def test_output_onto_a_table_file_of_the_export_is_refused(tmp_path, capsys, cache_dir):
    trace = build_run(tmp_path / "run.sqlite")
    assert run_cli(["fingerprint", trace], capsys)[0] == 0  # a parquetdir layout: its entry
    (entry,) = (cache_dir / "traces").iterdir()
    export = tmp_path / "export"
    export.mkdir()
    for table in ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_RUNTIME", "StringIds"):
        shutil.copyfile(entry / f"{table}.parquet", export / f"{table}.parquet")
    target = export / "StringIds.parquet"
    before = hashlib.sha256(target.read_bytes()).hexdigest()
    code, out, err = run_cli(["fingerprint", export, "-o", target], capsys)
    assert (code, out) == (2, "")
    assert err == f"tracelens: -o {target} is one of the input traces; choose another file\n"
    assert hashlib.sha256(target.read_bytes()).hexdigest() == before
    code, _, _ = run_cli(["fingerprint", export, "-o", export / "fp.json"], capsys)
    assert code == 0  # a file of another name beside the tables is no input
