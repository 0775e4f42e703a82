"""A rank file that cannot be read, whose name holds a line break and ESC: the table's
"failed:" line showed the ESC as \\x1b but broke at the line break, so the rest of the name
read as a line of its own (found by ranksfix)."""

from __future__ import annotations

from fixtures.ranks import build_rank_set
from typer.testing import CliRunner

from tracelens.cli import app


def test_a_failed_files_name_stays_on_its_line(tmp_path):
    rs = build_rank_set(tmp_path, ranks=2, steps=2, slow_rank=None)
    bad = rs.dest / "rank_1\nrank_9\x1b[2J.sqlite"
    bad.write_bytes(b"not a database at all" * 100)
    out = CliRunner().invoke(app, ["ranks", str(rs.dest), "--jobs", "1"]).stdout
    (line,) = [x for x in out.splitlines() if x.startswith("failed:")]
    assert line.startswith(f"failed: {rs.dest}/rank_1\\x0arank_9\\x1b[2J.sqlite: ")
    assert not any(x.startswith("rank_9") for x in out.splitlines())
