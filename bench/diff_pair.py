"""How fast is `tracelens diff` on two big traces, next to census of each?

    python bench/diff_pair.py A.sqlite B.sqlite [--repeat 3] [--no-cache] [--report] [--json OUT]

Every row is a fresh child process (run.py's ``run_once``: wall time, CPU, peak RSS), after
one warm-up run of each command (warm page cache, and the columnar cache built when the
traces are large enough for it; ``--no-cache``: every command reads the exports directly);
timed runs are interleaved. The targets (issue 11): diff under 10 s, within 4x the sum of
the two census times, peak RSS under 2 GB. ``--report``: also the HTML report of the pair
(issue 14: under 10 s), in a private cache directory whose tables the warm-up builds, every
derived file removed before each timed run (the first report of two cached traces, as
run.py's "cached tables, nothing kept" rows). On a shared machine read the CPU columns (user +
sys of the child, median): wall time there is mostly waiting for a core. The load average
before and after is printed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import _drop_kept, run_once, tracelens_exe  # noqa: E402


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("a", type=Path)
    ap.add_argument("b", type=Path)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-cache", action="store_true", help="read the exports directly")
    ap.add_argument("--report", action="store_true", help="also time `report A B`")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    exe = tracelens_exe()
    direct = ["--no-cache"] if args.no_cache else []
    commands = {
        "diff": [exe, "diff", str(args.a), str(args.b), "-f", "json", *direct],
        "census_a": [exe, "census", str(args.a), "--format", "csv", *direct],
        "census_b": [exe, "census", str(args.b), "--format", "csv", *direct],
    }
    tmp = Path(tempfile.mkdtemp(prefix="tracelens-bench-"))
    envs = dict.fromkeys(commands)
    setups: dict[str, list[str]] = {}
    if args.report:
        commands["report"] = [exe, "report", str(args.a), str(args.b), "-o",
                              str(tmp / "pair.html"), *direct]  # fmt: skip
        envs["report"] = {"TRACELENS_CACHE_DIR": str(tmp / "cache")}
        if not args.no_cache:
            setups["report"] = _drop_kept(tmp / "cache")
    load_before = os.getloadavg()
    samples: dict[str, list[dict]] = {k: [] for k in commands}
    for key, argv_ in commands.items():
        warm = run_once(argv_, env=envs[key])
        if warm["rc"] != 0:
            sys.exit(f"{' '.join(argv_)} failed: {warm.get('stderr', '')}")
    for _ in range(args.repeat):
        for key, argv_ in commands.items():
            if key in setups:
                run_once(setups[key])
            samples[key].append(run_once(argv_, env=envs[key]))
    out = run_once(commands["diff"], capture=True)
    board = json.loads(out["stdout"])
    load_after = os.getloadavg()
    median = {k: statistics.median(s["wall_s"] for s in v) for k, v in samples.items()}
    cpu = {k: statistics.median(s["cpu_s"] for s in v) for k, v in samples.items()}
    rss = {k: max(s["rss_mb"] for s in v) for k, v in samples.items()}
    census = median["census_a"] + median["census_b"]
    census_cpu = cpu["census_a"] + cpu["census_b"]
    print(
        "| command | median s | × census A + B | CPU s (median) | CPU × census A + B "
        "| peak RSS MB |"
    )
    print("|---|---:|---:|---:|---:|---:|")
    for key in commands:
        print(
            f"| `{' '.join(commands[key][1:3])} …` ({key}) | {median[key]:.2f} | "
            f"{median[key] / census:.2f} | {cpu[key]:.2f} | {cpu[key] / census_cpu:.2f} | "
            f"{rss[key]:.0f} |"
        )
    print()
    print(
        "load average (1, 5, 15 min) before: "
        + ", ".join(f"{x:.1f}" for x in load_before)
        + "; after: "
        + ", ".join(f"{x:.1f}" for x in load_after)
    )
    for al in board["alignment"]:
        print(
            f"device {al['device']}: {al['launches_a']:,} vs {al['launches_b']:,} launches, "
            f"relation {al['relation']}, {al['matched_in_order']:,} matched in order"
        )
    print("clues:", ", ".join(c["id"] for c in board["clues"]) or "none")
    if args.json:
        args.json.write_text(json.dumps({"samples": samples, "alignment": board["alignment"]}))
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
