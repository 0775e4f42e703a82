"""What one rank trace costs `tracelens ranks`: the map's wall time, the worker's peak RSS,
and the size of the summary the driver keeps (in memory and pickled, as it travels from a
worker process or Ray task). Run it in a fresh process per trace:

    python bench/ranks_cost.py TRACE [TRACE...]

Prints one JSON line per trace. docs/scale.md quotes the results.
"""

from __future__ import annotations

import json
import pickle
import resource
import subprocess
import sys
import time


def main(paths: list[str]) -> None:
    from tracelens.ranks import summarise

    for path in paths:
        t0 = time.perf_counter()
        s = summarise(path)
        wall = time.perf_counter() - t0
        rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        row = {
            "trace": path,
            "kernels": s.overview.column("kernels")[0].as_py(),
            "collective_calls": s.collectives.num_rows,
            "steps": s.steps.num_rows,
            "map_s": round(wall, 2),
            "peak_rss_mb": round(rss_mb),
            "summary_bytes": s.nbytes,
            "pickled_bytes": len(pickle.dumps(s)),
            # the same trace's census in a fresh process right after (warm page cache): the
            # yardstick, so that a loaded machine still gives a meaningful ratio
            "census_s": _census_seconds(path),
        }
        row["map_over_census"] = round(row["map_s"] / row["census_s"], 2)
        print(json.dumps(row), flush=True)


def _census_seconds(path: str) -> float:
    t0 = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "tracelens", "census", path, "--format", "csv"],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return round(time.perf_counter() - t0, 2)


if __name__ == "__main__":
    main(sys.argv[1:])
