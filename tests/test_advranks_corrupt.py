"""tracelens ranks with a rank file whose bytes were damaged inside its schema: SQLite's
error quotes the damaged bytes, which are not UTF-8, so Python raised UnicodeDecodeError
instead of the DatabaseError, and the file was reported as "internal error: ... (please
report it)", a tracelens bug, not a corrupt file (adversarial review, advranks)."""

from __future__ import annotations

import sqlite3

from fixtures.ranks import build_rank_set

from tracelens.ranks import analyse_ranks

# "CREATE", two bytes that are not UTF-8, then the rest of a table's statement
DAMAGED_SQL = "CAST(X'435245415445D4DB205441424C45204E5654585F4556454E5453287829' AS TEXT)"


def test_a_schema_damaged_by_non_utf8_bytes_is_a_corrupt_file(tmp_path):
    rs = build_rank_set(tmp_path, ranks=3, steps=2, slow_rank=None)
    con = sqlite3.connect(rs.paths[1])
    con.execute("PRAGMA writable_schema=ON")
    con.execute(f"UPDATE sqlite_master SET sql = {DAMAGED_SQL} WHERE name = 'NVTX_EVENTS'")
    con.commit()
    con.close()
    r = analyse_ranks([rs.dest], jobs=1)
    assert r.ranks["rank"].to_list() == [0, 2]
    assert r.failures.rows() == [
        (
            str(rs.paths[1]),
            1,
            "is corrupt or not a database (sqlite: malformed database schema (NVTX_EVENTS) - "
            'near "CREATE\\xd4\\xdb": syntax error)',
        )
    ]
    assert r.missing_ranks == (1,)


def test_a_session_start_damaged_into_bytes_is_a_corrupt_file(tmp_path):
    # one of 120 random damages to a rank file: the session start read back as bytes, and
    # packing it into the overview failed ("internal error: ArrowInvalid ... (please
    # report it)")
    rs = build_rank_set(tmp_path, ranks=3, steps=2, slow_rank=None)
    con = sqlite3.connect(rs.paths[2])
    con.execute("UPDATE TARGET_INFO_SESSION_START_TIME SET utcEpochNs = X'EF003C'")
    con.commit()
    con.close()
    r = analyse_ranks([rs.dest], jobs=1)
    assert r.ranks["rank"].to_list() == [0, 1]
    assert r.failures.rows() == [
        (
            str(rs.paths[2]),
            2,
            "is corrupt: its session start (TARGET_INFO_SESSION_START_TIME.utcEpochNs) is "
            "bytes, not a number; copy or export it again",
        )
    ]
