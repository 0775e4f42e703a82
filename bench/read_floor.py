"""The read floor of each slow command: what reading only the columns it must read costs.

census is at the engine's floor (README, "Census against its floors"); the slow commands
(util, findings, the fingerprint, `nvtx --gpu`, steps, the report) read more of the export
than census does, and an open issue asks each to stay within a few times census's time.
This script answers how much of that budget the read alone takes: for each command, a bare
child process imports DuckDB and polars, loads the same signed sqlite extension file
tracelens loads, and reads the export's columns that command's queries read (listed in
READS, each with the query that reads it), as tracelens reads its big tables: in any row
order, on every DuckDB thread, into polars. Nothing is computed from the rows. Each read
floor is timed interleaved with `tracelens census --no-cache --format csv` and with the
command itself, so that all of them share the machine's load.

    python bench/read_floor.py /tmp/bench/llm_5m.sqlite --repeat 5
    python bench/read_floor.py /tmp/bench/llm_5m_nvtx.sqlite --only nvtx_gpu --repeat 5

Prints a Markdown table: median wall s, CPU s and peak RSS of each row, and its ratio to
census. Not part of the tests (bench/README.md).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import run_once  # noqa: E402  (bench/run.py: one child, wall, CPU, peak RSS)

KERNELS = "CUPTI_ACTIVITY_KIND_KERNEL"
MEMCPY = "CUPTI_ACTIVITY_KIND_MEMCPY"
MEMSET = "CUPTI_ACTIVITY_KIND_MEMSET"
RUNTIME = "CUPTI_ACTIVITY_KIND_RUNTIME"
NVTX = "NVTX_EVENTS"

# The GPU work util and findings sweep (queries/util_work.sql over gpu_work in _shared.sql):
# each operation's device, interval, kernel name, process and correlation id.
_WORK = ("deviceId", "start", "end", "globalPid", "correlationId")
_UTIL_WORK = [(KERNELS, (*_WORK, "demangledName")), (MEMCPY, _WORK), (MEMSET, _WORK)]
# Every CUDA API call (queries/util_calls.sql): the launching call of each operation that
# ends an idle gap, the synchronizing calls, the calls' span.
_UTIL_CALLS = [(RUNTIME, ("globalTid", "correlationId", "start", "end", "nameId"))]

#: command key -> (its tracelens arguments after TRACE, the tables and columns it must read)
READS: dict[str, tuple[list[str], list[tuple[str, tuple[str, ...]]]]] = {
    "util": (["util", "--format", "csv"], _UTIL_WORK + _UTIL_CALLS),
    # findings' GPU rules also report each operation's CUDA context.
    "findings": (
        ["findings", "--format", "csv"],
        [(t, (*c, "contextId")) for t, c in _UTIL_WORK] + _UTIL_CALLS,
    ),
    # queries/fingerprint_launches.sql (a launch's variant is its grid and block) and
    # fingerprint_thread_calls.sql (the host thread of each launch, by correlation id).
    "fingerprint": (
        ["fingerprint"],
        [
            (
                KERNELS,
                (*_WORK, "demangledName", "gridX", "gridY", "gridZ", "blockX", "blockY", "blockZ"),
            ),
            (RUNTIME, ("globalTid", "correlationId")),
        ],
    ),
    # queries/work_in_order.sql: the launch sequence the step search reads.
    "steps": (["steps", "--format", "csv"], [(KERNELS, (*_WORK, "demangledName"))]),
    # The NVTX projection: the ranges, every call (thread, correlation id, start) and every
    # GPU operation's interval by correlation id (nvtx_sweep.py).
    "nvtx_gpu": (
        ["nvtx", "--gpu", "--format", "csv"],
        [
            (NVTX, ("start", "end", "globalTid", "eventType", "textId", "text")),
            (RUNTIME, ("globalTid", "correlationId", "start")),
            *[(t, _WORK) for t in (KERNELS, MEMCPY, MEMSET)],
        ],
    ),
    # The report: work_in_order.sql with streams and short names, every call (util), and
    # census's kernel summary (a second scan of three kernel columns).
    "report": (
        ["report", "-o", os.devnull],
        [
            (KERNELS, (*_WORK, "demangledName", "shortName", "streamId")),
            (MEMCPY, (*_WORK, "streamId")),
            (MEMSET, (*_WORK, "streamId")),
            *_UTIL_CALLS,
            (KERNELS, ("demangledName", "start", "end")),
        ],
    ),
}

# One child: read each (table, columns) of argv[2] (JSON) from the export argv[1].
CHILD = r"""
import json, sys
from pathlib import Path
import duckdb
import polars as pl
import duckdb_extension_sqlite_scanner as pkg
path = str(Path(sys.argv[1]).resolve())
ext = sorted((Path(pkg.__file__).resolve().parent / "extensions" / f"v{duckdb.__version__}").glob("*.duckdb_extension"))[0]
con = duckdb.connect(":memory:", config={"autoinstall_known_extensions": False, "autoload_known_extensions": False})
con.execute("LOAD '" + str(ext).replace("'", "''") + "'")
con.execute("SET preserve_insertion_order = false")
con.execute("SET VARIABLE p = $p", {"p": path})
tables = {r[0] for r in con.execute("SELECT name FROM sqlite_scan(getvariable('p'), 'sqlite_master') WHERE type = 'table'").fetchall()}
frames = []
for table, columns in json.loads(sys.argv[2]):
    if table not in tables:
        continue
    cols = ", ".join('"' + c + '"' for c in columns)
    rel = con.sql(f"SELECT {cols} FROM sqlite_scan(getvariable('p'), '{table}')")
    frames.append(pl.from_arrow(rel.to_arrow_table()))
print(sum(f.height for f in frames))
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--only", help=f"comma-separated keys of {', '.join(READS)}")
    ap.add_argument("--tracelens", default=str(Path(sys.executable).with_name("tracelens")))
    args = ap.parse_args()
    import json

    keys = args.only.split(",") if args.only else list(READS)
    unknown = [k for k in keys if k not in READS]
    if unknown:
        ap.error(f"unknown key {unknown[0]!r}: one of {', '.join(READS)}")
    rows: dict[str, list[str]] = {"census": [args.tracelens, "census", args.trace]}
    rows["census"] += ["--no-cache", "--format", "csv"]
    for key in keys:
        argv, reads = READS[key]
        rows[f"{key}: read floor"] = [sys.executable, "-c", CHILD, args.trace, json.dumps(reads)]
        rows[key] = [args.tracelens, argv[0], args.trace, "--no-cache", *argv[1:]]
    samples: dict[str, list[dict]] = {label: [] for label in rows}
    for label, argv in rows.items():  # a warm-up of each: the page cache, the .pyc files
        rc = run_once(argv)["rc"]
        if rc not in (0, 1):  # findings exits 1 when a rule found something
            sys.exit(f"{label}: exit {rc}: {' '.join(argv[:3])} ...")
    for _ in range(args.repeat):  # interleaved: background load falls on every row alike
        for label, argv in rows.items():
            samples[label].append(run_once(argv))
    base = statistics.median(s["wall_s"] for s in samples["census"])
    base_cpu = statistics.median(s["cpu_s"] for s in samples["census"])
    print(f"`{Path(args.trace).name}`, medians of {args.repeat} interleaved runs:\n")
    print("| row | wall s | × census wall | CPU s | × census CPU | peak RSS MB |")
    print("|---|---:|---:|---:|---:|---:|")
    for label, runs in samples.items():
        wall = statistics.median(s["wall_s"] for s in runs)
        cpu = statistics.median(s["cpu_s"] for s in runs)
        rss = max(s["rss_mb"] for s in runs)
        print(
            f"| {label} | {wall:.2f} | {wall / base:.2f} | {cpu:.2f} | "
            f"{cpu / base_cpu:.2f} | {rss:.0f} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
