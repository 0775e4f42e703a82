"""How the commands that show kernel names scale with the number of distinct names.

    python bench/names.py /tmp/bench/names_10k.sqlite /tmp/bench/names_100k.sqlite \\
        /tmp/bench/names_1m.sqlite [--timeout 900] [--json OUT] [--only census_csv,report]

Build the traces with ``make_trace.py --names N --kernels 2N`` (every name launches at
least once). Each command runs once per trace as a fresh child (``python -m tracelens``,
so ``PYTHONPATH`` picks the checkout), reading the trace directly (``--no-cache``), stdout
to /dev/null; CPU seconds (user + sys) and peak RSS come from ``os.wait4``'s rusage, as in
``run.py``. The table gives CPU s, peak RSS and the ratio to ``census --format csv`` of the
same trace in the same run, then, per command, how CPU s grew from one trace to the next
against how the names grew (near linear: both about 10x).
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from run import run_once  # noqa: E402

# (key, arguments after ``python -m tracelens``; TRACE and TMP are replaced)
COMMANDS = (
    ("census_csv", ["census", "TRACE", "--format", "csv"]),
    ("census_table", ["census", "TRACE"]),
    ("lineup", ["lineup", "TRACE"]),
    ("lineup_other", ["lineup", "TRACE", "--show-other", "--top", "3"]),
    ("danger", ["danger", "TRACE"]),
    ("decode_trace", ["decode", "--trace", "TRACE", "--format", "csv"]),
    ("stakeout_many", ["stakeout", "TRACE", "nvjet", "--match", "contains", "--limit", "100"]),
    ("report", ["report", "TRACE", "-o", "TMP/report.html"]),
    ("diff_self", ["diff", "TRACE", "TRACE"]),
)


def distinct_names(trace: Path) -> int:
    with sqlite3.connect(f"file:{trace}?mode=ro&immutable=1", uri=True) as db:
        q = "SELECT count(DISTINCT demangledName) FROM CUPTI_ACTIVITY_KIND_KERNEL"
        return int(db.execute(q).fetchone()[0])


def run(trace: Path, key: str, args: list[str], tmp: Path, timeout: float) -> dict:
    argv = [sys.executable, "-m", "tracelens", "--no-cache"]
    argv += [str(trace) if a == "TRACE" else a.replace("TMP", str(tmp)) for a in args]
    argv = ["timeout", "-s", "KILL", str(int(timeout)), *argv]
    r = run_once(argv)
    r.pop("stderr", None)
    return {"key": key, **r}


def fmt(results: dict[str, dict[str, dict]], names: dict[str, int]) -> str:
    traces = list(results)
    head = "| command | " + " | ".join(
        f"{names[t]:,} names: CPU s, RSS MB, × census" for t in traces
    )
    lines = [head + " |", "|---" * (len(traces) + 1) + "|"]
    keys = [k for k, _ in COMMANDS if any(k in results[t] for t in traces)]
    for k in keys:
        cells = []
        for t in traces:
            r, base = results[t].get(k), results[t].get("census_csv")
            if r is None:
                cells.append("—")
            elif r["rc"] != 0:
                cells.append(f"exit {r['rc']} after {r['cpu_s']:.1f} s")
            else:
                ratio = f"{r['cpu_s'] / base['cpu_s']:.2f}" if base and base["cpu_s"] else "—"
                cells.append(f"{r['cpu_s']:.1f}, {r['rss_mb']:,.0f}, {ratio}")
        lines.append(f"| `{k}` | " + " | ".join(cells) + " |")
    if len(traces) > 1:
        lines += ["", "| command | " + " | ".join(
            f"CPU ×{names[b] / names[a]:.0f} names" for a, b in zip(traces, traces[1:], strict=False)
        ) + " |", "|---" * len(traces) + "|"]  # fmt: skip
        for k in keys:
            cells = []
            for a, b in zip(traces, traces[1:], strict=False):
                ra, rb = results[a].get(k), results[b].get(k)
                ok = ra and rb and ra["rc"] == rb["rc"] == 0 and ra["cpu_s"]
                cells.append(f"{rb['cpu_s'] / ra['cpu_s']:.1f}" if ok else "—")
            lines.append(f"| `{k}` | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("traces", type=Path, nargs="+")
    ap.add_argument("--timeout", type=float, default=900, help="per command, s (default 900)")
    ap.add_argument("--only", help="comma-separated command keys")
    ap.add_argument("--json", type=Path, help="also write every result here")
    args = ap.parse_args(argv)
    only = set(args.only.split(",")) if args.only else None
    results: dict[str, dict[str, dict]] = {}
    names: dict[str, int] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for trace in args.traces:
            t = str(trace)
            names[t] = distinct_names(trace)
            results[t] = {}
            for key, cmd in COMMANDS:
                if only and key not in only and key != "census_csv":
                    continue
                results[t][key] = r = run(trace, key, cmd, Path(tmp), args.timeout)
                print(f"{trace.name} {key}: {r['cpu_s']:.1f} s CPU, {r['rss_mb']:,.0f} MB, "
                      f"rc {r['rc']}", file=sys.stderr, flush=True)  # fmt: skip
    print(fmt(results, names))
    if args.json:
        args.json.write_text(json.dumps({"names": names, "results": results}, indent=1))


if __name__ == "__main__":
    main()
