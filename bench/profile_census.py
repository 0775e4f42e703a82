"""Where the time of ``tracelens census`` goes, phase by phase, and what alternatives cost.

    python bench/profile_census.py TRACE [--repeat 5]

Three tables:

1. Import costs, each in a fresh ``python -c 'import X'`` (median of ``--repeat``; wall and
   CPU). These are paid by every ``tracelens census`` run and not by the bare DuckDB floor.
2. The census pipeline in one process, phase by phase, as ``tracelens census --format csv``
   runs it (Trace open, DuckDB connect + extension LOAD, views, StringIds, query, ``.pl()``,
   CSV rendering), plus alternatives for the StringIds phase.
3. Query variants on one warm connection (median of ``--repeat``, interleaved): the shipped
   ``queries/kernel_summary.sql`` with and without ``$by_launch_config``, the floor query,
   a by-launch-config variant that formats grid/block after aggregating, the query without
   the median, and bare scans of 1, 3 and 14 kernel columns (what the sqlite scan costs per
   column).

Nothing here changes the library; variants are SQL text in this file.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

IMPORTS = [
    "pass",
    "import duckdb",
    "import tracelens",
    "import tracelens.cli",
    "import typer._adapters",
    "import pyarrow",
    "import pyarrow, pyarrow.dataset",
    "import polars",
    "import tracelens.cli, duckdb, polars, pyarrow, pyarrow.dataset",
]


def fresh(code: str, n: int) -> tuple[float, float, float]:
    wall, cpu, rss = [], [], 0.0
    for _ in range(n + 1):
        t0 = time.perf_counter()
        p = subprocess.Popen([sys.executable, "-c", code])
        _, _, ru = os.wait4(p.pid, 0)
        wall.append(time.perf_counter() - t0)
        cpu.append(ru.ru_utime + ru.ru_stime)
        rss = max(rss, ru.ru_maxrss / 1024)
    return statistics.median(wall[1:]), statistics.median(cpu[1:]), rss


# The by-launch-config variant: group by the six integers, printf the ~hundreds of result
# rows instead of every launch (two printf calls per kernel row in the shipped query).
LC_AFTER = """
WITH launches AS (
    SELECT "end" - start AS dur_ns, demangledName AS name_id,
           gridX, gridY, gridZ, blockX, blockY, blockZ
    FROM kernels
),
per_id AS (
    SELECT name_id, gridX, gridY, gridZ, blockX, blockY, blockZ,
        sum(dur_ns) AS total_ns, count(*) AS instances, avg(dur_ns) AS avg_ns,
        median(dur_ns) AS med_ns, min(dur_ns) AS min_ns, max(dur_ns) AS max_ns,
        coalesce(stddev_samp(dur_ns), 0) AS stddev_ns
    FROM launches GROUP BY ALL
)
SELECT
    round(total_ns * 100.0 / sum(total_ns) OVER (), 1) AS time_pct,
    total_ns::BIGINT AS total_ns, instances, round(avg_ns, 1) AS avg_ns,
    round(med_ns, 1) AS med_ns, min_ns, max_ns, round(stddev_ns, 1) AS stddev_ns,
    printf('%4d %4d %4d', gridX, gridY, gridZ) AS grid_xyz,
    printf('%4d %4d %4d', blockX, blockY, blockZ) AS block_xyz,
    coalesce(s.value, '<unknown string id ' || name_id || '>') AS name
FROM per_id LEFT JOIN strings AS s ON s.id = per_id.name_id
ORDER BY total_ns DESC, name, grid_xyz, block_xyz
"""


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("trace", type=Path)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--skip-imports", action="store_true")
    args = ap.parse_args(argv)
    n = args.repeat
    trace = args.trace.resolve()

    if not args.skip_imports:
        print("| fresh process | median wall s | median CPU s | peak RSS MB |")
        print("|---|---:|---:|---:|")
        for code in IMPORTS:
            w, c, r = fresh(code, n)
            print(f"| `python -c '{code}'` | {w:.3f} | {c:.3f} | {r:.0f} |")
        print()

    # -- 2. the pipeline, phase by phase (first run in this process: cold imports) -------
    T = time.perf_counter
    phases: list[tuple[str, float]] = []
    t = T()
    import duckdb
    import pyarrow as pa

    import tracelens
    from tracelens import _engine, _resources, _schema, render
    from tracelens._sqlite import decode_text
    from tracelens.filters import EventFilter

    phases.append(("imports: duckdb, pyarrow, tracelens (not polars, typer)", T() - t))
    t = T()
    tr = tracelens.open(trace)
    tr.require_kernels()
    phases.append(("Trace open: check_file, sqlite3 connect, table_columns", T() - t))
    t = T()
    con = _engine.connect()
    phases.append(("_engine.connect(): DuckDB + LOAD sqlite extension", T() - t))
    t = T()
    con.execute("SET VARIABLE trace_path = $path", {"path": str(tr._real_path)})
    for view, (table, _cols) in _schema.VIEWS.items():
        con.execute(_schema.view_sql(view, tr.tables.get(table)))
    phases.append(("6 views", T() - t))
    t = T()
    ids, values = [], []
    for sid, value in tr._sqlite_rows("SELECT id, value FROM StringIds"):
        ids.append(sid)
        values.append(decode_text(value))
    phases.append((f"StringIds via sqlite3 + decode ({len(ids):,} strings)", T() - t))
    t = T()
    con.register(
        "_string_ids",
        pa.table({"id": pa.array(ids, pa.int64()), "value": pa.array(values, pa.string())}),
    )
    con.execute("CREATE TEMP TABLE strings AS SELECT * FROM _string_ids")
    con.unregister("_string_ids")
    phases.append(("StringIds: register pyarrow table (imports pyarrow.dataset) + copy", T() - t))
    t = T()
    con.execute(
        "CREATE TEMP TABLE strings_native AS SELECT id, value "
        "FROM sqlite_scan(getvariable('trace_path'), 'StringIds')"
    )
    phases.append(("alternative: StringIds by DuckDB sqlite_scan (valid UTF-8 case)", T() - t))
    params = dict(name_kind="demangled", by_launch_config=False, **EventFilter().params())
    query = _resources.query("kernel_summary")
    t = T()
    res = con.execute(query, params)
    phases.append(("kernel_summary.sql execute", T() - t))
    t = T()
    import polars  # noqa: F401

    phases.append(("import polars", T() - t))
    t = T()
    df = res.pl()
    phases.append(("result .pl()", T() - t))
    t = T()
    render.frame(df.drop("grid_xyz", "block_xyz"), fmt="csv")
    phases.append(("render CSV", T() - t))
    print("| census phase (one process, as the CLI runs it) | s |")
    print("|---|---:|")
    for name, secs in phases:
        print(f"| {name} | {secs:.3f} |")
    print()

    # -- 3. query variants on the warm connection -----------------------------------------
    scan = f"sqlite_scan(getvariable('trace_path'), '{_schema.VIEWS['kernels'][0]}')"
    floor = f"""
        WITH k AS (SELECT demangledName AS id, "end" - start AS d FROM {scan}),
        agg AS (SELECT id, sum(d) AS total, count(*) AS n, avg(d), median(d), min(d), max(d),
                       stddev_samp(d) FROM k GROUP BY id)
        SELECT s.value, agg.* EXCLUDE (id) FROM agg LEFT JOIN strings AS s ON s.id = agg.id
        ORDER BY total DESC"""
    lc = dict(params, by_launch_config=True)
    variants = {
        "kernel_summary.sql (census default)": (query, params),
        "floor query (same connection)": (floor, {}),
        "kernel_summary.sql, $by_launch_config": (query, lc),
        "by-launch-config, printf after aggregation": (LC_AFTER, {}),
        "floor query without median": (floor.replace("median(d),", ""), {}),
        "scan 1 column (demangledName)": (f"SELECT count(*), sum(demangledName) FROM {scan}", {}),
        "scan 3 columns (start, end, demangledName)": (
            f'SELECT count(*), sum(demangledName), sum("end" - start) FROM {scan}',
            {},
        ),
        "scan 9 columns (3 + grid/block)": (
            f'SELECT count(*), sum(demangledName), sum("end" - start), '
            f"sum(gridX + gridY + gridZ + blockX + blockY + blockZ) FROM {scan}",
            {},
        ),
    }
    for th in (None, 1):
        if th:
            con.execute(f"SET threads = {th}")
        times: dict[str, list[float]] = {k: [] for k in variants}
        results = {}
        for _ in range(n):
            for k, (q, p) in variants.items():
                t = T()
                results[k] = con.execute(q, p).fetchall()
                times[k].append(T() - t)
        a = results["kernel_summary.sql, $by_launch_config"]
        b = results["by-launch-config, printf after aggregation"]
        same = "same rows" if a == b else "ROWS DIFFER"
        threads = con.execute("SELECT current_setting('threads')").fetchone()[0]
        print(f"| query variant, threads = {threads} | median s | min s |")
        print("|---|---:|---:|")
        for k, v in times.items():
            print(f"| {k} | {statistics.median(v):.3f} | {min(v):.3f} |")
        print(f"\n(by-launch-config variant vs shipped query: {same})\n")
    con.close()
    tr.close()
    del duckdb


if __name__ == "__main__":
    main()
