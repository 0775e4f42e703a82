"""What one rank trace costs `tracelens ranks`: the map's CPU seconds (user + sys, DuckDB's
threads included) and wall time, the worker's peak RSS, and the size of the summary the
driver keeps (in memory and pickled, as it travels from a worker process or Ray task); with
the CPU seconds of `tracelens census` on the same trace in the same run as the yardstick
(a loaded machine still gives a meaningful ratio). Run it in a fresh process per trace:

    python bench/ranks_cost.py [--threads N] TRACE [TRACE...]

Prints one JSON line per trace. docs/scale.md quotes the results.
"""

from __future__ import annotations

import json
import pickle
import resource
import subprocess
import sys
import time


def _cpu(who: int) -> float:
    r = resource.getrusage(who)
    return r.ru_utime + r.ru_stime


def main(paths: list[str], threads: int | None) -> None:
    from tracelens.ranks import summarise

    for path in paths:
        t0, c0 = time.perf_counter(), _cpu(resource.RUSAGE_SELF)
        s = summarise(path, threads=threads)
        wall, cpu = time.perf_counter() - t0, _cpu(resource.RUSAGE_SELF) - c0
        rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        row = {
            "trace": path,
            "kernels": s.overview.column("kernels")[0].as_py(),
            "collective_calls": s.collectives.num_rows,
            "steps": s.steps.num_rows,
            "duckdb": s.duckdb_settings,
            "map_cpu_s": round(cpu, 2),
            "map_s": round(wall, 2),
            "peak_rss_mb": round(rss_mb),
            "summary_bytes": s.nbytes,
            "pickled_bytes": len(pickle.dumps(s)),
            # the same trace's census in a fresh process right after (warm page cache): the
            # yardstick, so that a loaded machine still gives a meaningful ratio
            **_census_seconds(path),
        }
        row["map_cpu_over_census_cpu"] = round(row["map_cpu_s"] / row["census_cpu_s"], 2)
        print(json.dumps(row), flush=True)


def _census_seconds(path: str) -> dict[str, float]:
    t0, c0 = time.perf_counter(), _cpu(resource.RUSAGE_CHILDREN)
    subprocess.run(
        [sys.executable, "-m", "tracelens", "census", path, "--format", "csv"],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    cpu = _cpu(resource.RUSAGE_CHILDREN) - c0
    return {"census_cpu_s": round(cpu, 2), "census_s": round(time.perf_counter() - t0, 2)}


if __name__ == "__main__":
    args = sys.argv[1:]
    n = None
    if args[:1] == ["--threads"]:
        n, args = int(args[1]), args[2:]
    main(args, n)
