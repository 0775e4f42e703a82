"""Add NVTX ranges to benchmark exports, or write an NVTX-heavy one (for `nvtx --gpu`).

    python bench/make_nvtx.py nest BASE.sqlite OUT.sqlite     # BASE + ~300k nested ranges
    python bench/make_nvtx.py wide OUT.sqlite [--ranges 10000000]

``nest`` copies BASE (e.g. bench/make_trace.py's 5M-kernel export) and wraps its CUDA API
calls, per thread in time order, in three levels of push/pop ranges: an op range around
every 20 call segments (PyTorch-style labels, ``aten::op_7, seq = 123, op_id = 123``), a
layer range around every 100 and a step range around every 2,000, where a segment is a run
of calls that overlap on the thread (make_trace.py's calls sometimes do; a real thread's
do not): properly nested, every call inside an op range.

``wide`` writes a small export (tracelens.synth, real nsys DDL) and bulk-fills it with
``--ranges`` ranges on 8 threads in groups of 10 (one outer range, nine inner ones; the
first inner range of each group holds one kernel launch), so 10M ranges come with 1M CUDA
API calls and kernels: the scale test for NVTX attribution's memory.

Rows are written by DuckDB through its sqlite extension (one INSERT ... SELECT per table),
not row by row from Python: ~300k ranges take seconds, 10M about a minute.
"""

from __future__ import annotations

import argparse
import shutil
import sqlite3
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "src"))

from tracelens import _engine  # noqa: E402
from tracelens.synth import TraceBuilder, ddl_path  # noqa: E402

NVTX_TABLE = "NVTX_EVENTS"


def _nvtx_ddl(schema: str) -> str:
    text = ddl_path(schema, full=True).read_text(encoding="utf-8")
    start = text.index(f"CREATE TABLE {NVTX_TABLE} (")
    return text[start : text.index(");", start) + 2]


def _attach(path: Path):
    con = _engine.connect()
    # ATTACH takes no bound parameter; the path is the output file we just made, quoted.
    con.execute("ATTACH '" + str(path).replace("'", "''") + "' AS out (TYPE sqlite)")
    return con


def nest(base: Path, out: Path, schema: str) -> None:
    shutil.copyfile(base, out)
    with sqlite3.connect(out) as db:
        if db.execute(f"SELECT count(*) FROM sqlite_master WHERE name = '{NVTX_TABLE}'").fetchone()[
            0
        ]:
            raise SystemExit(f"{base} already has {NVTX_TABLE}")
        db.execute(_nvtx_ddl(schema))
    con = _attach(out)
    # Segments: maximal runs of API calls that overlap one another on a thread (the synthetic
    # base overlaps some; a real thread is in one call at a time). Ranges are cut between
    # segments only, so that every call lies wholly inside its op, layer and step range.
    con.execute("""
        CREATE TEMP TABLE calls AS
        SELECT globalTid, start, "end",
               sum(cut) OVER (PARTITION BY globalTid ORDER BY start, "end"
                              ROWS UNBOUNDED PRECEDING) - cut AS seg
        FROM (
            SELECT globalTid, start, "end",
                   CASE WHEN max("end") OVER w < lead(start) OVER w THEN 1 ELSE 0 END AS cut
            FROM out.CUPTI_ACTIVITY_KIND_RUNTIME
            WINDOW w AS (PARTITION BY globalTid ORDER BY start, "end"
                         ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
        )
    """)
    con.execute(f"""
        INSERT INTO out.{NVTX_TABLE} (start, "end", eventType, text, globalTid)
        SELECT min(start), max("end"), 59,
               CASE size
                   WHEN 20 THEN 'aten::op_' || grp % 50 || ', seq = ' || grp
                                || ', op_id = ' || grp
                   WHEN 100 THEN 'layer_' || grp % 32
                   ELSE 'step'
               END,
               globalTid
        FROM (
            SELECT c.*, size, seg // size AS grp
            FROM calls AS c, (VALUES (20), (100), (2000)) AS levels(size)
        )
        GROUP BY globalTid, size, grp
    """)
    con.close()


def wide(out: Path, ranges: int, schema: str) -> None:
    b = TraceBuilder(schema)
    b.process(1000, "nvtx_heavy")
    b.string("cudaLaunchKernel_v7000")
    b.string("nvtx_kernel")
    b.nvtx_range("seed", start=0, end=1, pid=1000)
    cid = b.runtime("cudaLaunchKernel_v7000", start=0, end=1, pid=1000)
    b.kernel("nvtx_kernel", start=1, end=2, pid=1000, correlation_id=cid)
    b.write(out)
    with sqlite3.connect(out) as db:
        api_id = db.execute(
            "SELECT id FROM StringIds WHERE value = 'cudaLaunchKernel_v7000'"
        ).fetchone()[0]
        kernel_row = db.execute("SELECT * FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()
        kernel_cols = [r[1] for r in db.execute("PRAGMA table_info(CUPTI_ACTIVITY_KIND_KERNEL)")]
        gtid = db.execute(f"SELECT globalTid FROM {NVTX_TABLE}").fetchone()[0]
    con = _attach(out)
    groups = ranges // 10
    # group g on thread g % 8: outer [t, t + 1000], inner k at [t + 10 + 100k, + 80]
    con.execute(
        f"""
        INSERT INTO out.{NVTX_TABLE} (start, "end", eventType, text, globalTid)
        SELECT t + CASE k WHEN 0 THEN 0 ELSE 10 + 100 * (k - 1) END,
               t + CASE k WHEN 0 THEN 1000 ELSE 90 + 100 * (k - 1) END,
               59,
               CASE k WHEN 0 THEN 'group_' || g % 100 ELSE 'inner_' || k END,
               $gtid + g % 8
        FROM (SELECT g, 10 + (g // 8) * 1100 AS t FROM range($groups) AS r(g)),
             range(10) AS ks(k)
    """,
        {"gtid": gtid, "groups": groups},
    )
    con.execute(
        """
        INSERT INTO out.CUPTI_ACTIVITY_KIND_RUNTIME
            (start, "end", eventClass, globalTid, correlationId, nameId, returnValue)
        SELECT 10 + (g // 8) * 1100 + 30, 10 + (g // 8) * 1100 + 40, 0, $gtid + g % 8,
               g + 2, $api, 0
        FROM range($groups) AS r(g)
    """,
        {"gtid": gtid, "groups": groups, "api": api_id},
    )
    row = dict(zip(kernel_cols, kernel_row, strict=True))
    keep = [c for c in kernel_cols if c not in ("start", "end", "correlationId")]
    select = ", ".join(f"${c}" for c in keep)
    con.execute(
        f'INSERT INTO out.CUPTI_ACTIVITY_KIND_KERNEL (start, "end", correlationId, '
        f"{', '.join(keep)}) SELECT 10 + (g // 8) * 1100 + 50, 10 + (g // 8) * 1100 + 90, "
        f"g + 2, {select} FROM range($groups) AS r(g)",
        {"groups": groups, **{c: row[c] for c in keep}},
    )
    con.close()


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="mode", required=True)
    n = sub.add_parser("nest")
    n.add_argument("base", type=Path)
    n.add_argument("out", type=Path)
    n.add_argument("--schema", default="3.0.0", help="DDL of NVTX_EVENTS (the base's schema)")
    w = sub.add_parser("wide")
    w.add_argument("out", type=Path)
    w.add_argument("--ranges", type=int, default=10_000_000)
    w.add_argument("--schema", default="3.25.0")
    args = ap.parse_args(argv)
    if args.out.exists():
        raise SystemExit(f"{args.out} exists; remove it first")
    t0 = time.perf_counter()
    if args.mode == "nest":
        nest(args.base, args.out, args.schema)
    else:
        wide(args.out, args.ranges, args.schema)
    with sqlite3.connect(f"file:{args.out}?mode=ro", uri=True) as db:
        count = db.execute(f"SELECT count(*) FROM {NVTX_TABLE}").fetchone()[0]
    print(f"{args.out}: {count:,} NVTX ranges; {time.perf_counter() - t0:.1f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
