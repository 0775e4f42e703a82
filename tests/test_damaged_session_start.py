"""A session start damaged into bytes (TARGET_INFO_SESSION_START_TIME.utcEpochNs read back as
a BLOB: one of advranks' random page damages) is a corrupt file, said in one line wherever
it is read: `info` printed 'internal error: TypeError: Object of type bytes is not JSON
serializable' with --format json and `report` 'internal error: TypeError: unsupported
operand type(s) for /: bytes and float', each asking to be reported. Commands that never
read the session start still run."""

from __future__ import annotations

import sqlite3

import pytest
from conftest import run_cli

from tracelens.synth import TraceBuilder

MESSAGE = (
    "is corrupt: its session start (TARGET_INFO_SESSION_START_TIME.utcEpochNs) is bytes, "
    "not a number; copy or export it again"
)


@pytest.fixture
def damaged(tmp_path, monkeypatch):
    monkeypatch.setenv("TRACELENS_NO_CACHE", "1")
    b = TraceBuilder("3.25.0")
    b.gpu(0)
    b.process(100, "python train.py")
    for i in range(4):
        cid = b.runtime("cudaLaunchKernel_v7000", start=1_000 + i * 10_000, end=2_000 + i * 10_000,
                        pid=100, tid=100)  # fmt: skip
        b.kernel("void k(float*)", start=3_000 + i * 10_000, end=8_000 + i * 10_000, pid=100,
                 correlation_id=cid)  # fmt: skip
    path = b.write(tmp_path / "t.sqlite")
    con = sqlite3.connect(path)
    assert con.execute("SELECT count(*) FROM TARGET_INFO_SESSION_START_TIME").fetchone()[0] == 1
    con.execute("UPDATE TARGET_INFO_SESSION_START_TIME SET utcEpochNs = X'EF003C'")
    con.commit()
    con.close()
    return path


@pytest.mark.parametrize(
    "args",
    [["info"], ["info", "--format", "json"], ["report", "-o", "{tmp}/r.html"]],
    ids=["info", "info-json", "report"],
)
def test_commands_that_read_it_say_the_file_is_corrupt(damaged, args, capsys):
    args = [a.replace("{tmp}", str(damaged.parent)) for a in args]
    code, out, err = run_cli([args[0], damaged, *args[1:]], capsys)
    assert (code, out, err) == (2, "", f"tracelens: {damaged}: {MESSAGE}\n")


def test_commands_that_do_not_read_it_still_run(damaged, capsys):
    code, out, err = run_cli(["census", damaged, "--format", "csv"], capsys)
    assert code == 0, err
    assert "void k(float*)" in out
