"""A DuckDB error an export caused, raised by a statement run on ``trace.db`` directly (not
through Trace.query or Trace.sql, which explain their own), leaves the ``with`` block of the
trace as the file's one TraceError line (Trace.__exit__): `fingerprint` of an export whose
NVTX_EVENTS.eventType holds a blob said 'internal error: TypeMismatchException ... please
report it' (a random page damage of a shared export). With two traces open (diff), the
line names the file that caused it, whichever side it is."""

from __future__ import annotations

import shutil
import sqlite3

import pytest
from conftest import run_cli

import tracelens
from tracelens.errors import TraceError
from tracelens.synth import TraceBuilder

PID = 100


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    b = TraceBuilder("3.25.0")
    b.gpu(0)
    b.process(PID, "python train.py")
    t = 10_000
    for step in range(6):
        start = t
        for _ in range(5):
            cid = b.runtime("cudaLaunchKernel_v7000", start=t, end=t + 2_000, pid=PID, tid=PID)
            b.kernel("void k(float*)", start=t + 3_000, end=t + 5_000, pid=PID,
                     correlation_id=cid)  # fmt: skip
            t += 6_000
        b.nvtx_range(f"step {step}", start=start - 500, end=t, pid=PID, tid=PID)
    tmp = tmp_path_factory.mktemp("escaped")
    good = b.write(tmp / "good.sqlite")
    bad = tmp / "bad.sqlite"
    shutil.copy(good, bad)
    con = sqlite3.connect(bad)
    con.execute("UPDATE NVTX_EVENTS SET eventType = X'3B7B276D6F6427' WHERE rowid = 3")
    con.commit()
    con.close()
    return good, bad


LINE = (
    "is damaged: NVTX_EVENTS.eventType holds blob (\";{'mod'\") where nsys writes integers; "
    "export it again"
)


def test_a_statement_on_db_leaves_the_block_as_the_files_line(pair):
    _, bad = pair
    with pytest.raises(TraceError) as err:
        with tracelens.open(bad, cache=False) as trace:
            trace.db.execute("SELECT count(*) FROM nvtx_events WHERE eventType = 59").fetchall()
    assert str(err.value) == f"{bad}: {LINE}"


def test_fingerprint_says_it_in_one_line(pair, capsys, monkeypatch):
    monkeypatch.setenv("TRACELENS_NO_CACHE", "1")
    _, bad = pair
    code, out, err = run_cli(["fingerprint", bad, "-o", "-"], capsys)
    assert (code, out, err) == (2, "", f"tracelens: {bad}: {LINE}\n")


@pytest.mark.parametrize("bad_side", ["a", "b"])
def test_a_diff_names_the_damaged_side(pair, bad_side, capsys, monkeypatch):
    monkeypatch.setenv("TRACELENS_NO_CACHE", "1")
    good, bad = pair
    a, b = (bad, good) if bad_side == "a" else (good, bad)
    code, out, err = run_cli(["diff", a, b], capsys)
    assert code == 2 and err == f"tracelens: {bad}: {LINE}\n"


def test_an_error_the_file_did_not_cause_is_left_as_it_is(pair):
    good, _ = pair
    import duckdb

    with pytest.raises(duckdb.Error):
        with tracelens.open(good, cache=False) as trace:
            trace.db.execute("SELECT no_such_column FROM kernels").fetchall()


@pytest.mark.parametrize("bad_side", ["outer", "inner"])
def test_with_two_traces_open_the_line_names_the_file_that_caused_it(pair, bad_side):
    """The inner trace's block ends first: a corrupt-file or bad-value error raised by the
    outer trace's statement must pass through it untranslated (its own file holds no bad
    value) and be named by the outer one."""
    good, bad = pair
    outer, inner = (bad, good) if bad_side == "outer" else (good, bad)
    with pytest.raises(TraceError) as err:
        with (
            tracelens.open(outer, cache=False) as t_outer,
            tracelens.open(inner, cache=False) as t_inner,
        ):
            culprit = t_outer if bad_side == "outer" else t_inner
            culprit.db.execute("SELECT count(*) FROM nvtx_events WHERE eventType = 59").fetchall()
    assert str(err.value) == f"{bad}: {LINE}"
