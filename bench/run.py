"""Benchmark ``tracelens census`` against its engine's floor and the alternatives.

    python bench/run.py TRACE [--repeat 5] [--json OUT] [--startup 10] [--investigate]

Every measurement is a fresh child process whose wall time is taken around
``Popen`` .. ``os.wait4`` and whose peak RSS and CPU time come from the rusage ``wait4``
returns (``ru_maxrss`` of the largest process in the child's tree; Linux reports KiB).
Each command runs once first as a warm-up (its output is checked against census, see
``verify``), so every timed run is warm-cache; nothing drops the page cache. The timed runs
are interleaved (rep 1 of every command, then rep 2, ...) so background load hits all rows
alike. See bench/README.md for what each row means.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import platform
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

KERNEL = "CUPTI_ACTIVITY_KIND_KERNEL"
COLUMNS = "name,total_ns,instances,avg_ns,med_ns,min_ns,max_ns,stddev_ns"

# -- child programs (run as `python -c CODE TRACE`) -------------------------------------------

# (b) the engine's floor: DuckDB + the same signed sqlite extension file tracelens loads (found
# the same way, by path, offline), one aggregation query, results printed as CSV.
DUCKDB_FLOOR = r"""
import sys
from pathlib import Path
import duckdb
import duckdb_extension_sqlite_scanner as pkg
path = str(Path(sys.argv[1]).resolve())
ext = sorted((Path(pkg.__file__).resolve().parent / "extensions" / f"v{duckdb.__version__}").glob("*.duckdb_extension"))[0]
con = duckdb.connect(":memory:", config={"autoinstall_known_extensions": False, "autoload_known_extensions": False})
con.execute("LOAD '" + str(ext).replace("'", "''") + "'")
if len(sys.argv) > 2:
    con.execute(f"SET threads = {int(sys.argv[2])}")
rows = con.execute('''
    WITH k AS (SELECT demangledName AS id, "end" - start AS d FROM sqlite_scan($p, 'CUPTI_ACTIVITY_KIND_KERNEL')),
    agg AS (
        SELECT id, sum(d)::BIGINT AS total, count(*) AS n, avg(d) AS a, median(d) AS med,
               min(d) AS lo, max(d) AS hi, coalesce(stddev_samp(d), 0) AS sd
        FROM k GROUP BY id)
    SELECT s.value, total, n, a, med, lo, hi, sd
    FROM agg LEFT JOIN sqlite_scan($p, 'StringIds') AS s ON s.id = agg.id
    ORDER BY total DESC''', {"p": path}).fetchall()
import csv
w = csv.writer(sys.stdout, lineterminator="\n")
w.writerow("name,total_ns,instances,avg_ns,med_ns,min_ns,max_ns,stddev_ns".split(","))
w.writerows(rows)
"""

# (d) Python's sqlite3: GROUP BY in SQLite with its built-in aggregates; the median is a
# Python aggregate (collect, sort, middle), as nsys registers a median() aggregate in its own
# SQLite; stddev from sums of squares (total() is a double, so no integer overflow).
SQLITE3 = r"""
import csv, sqlite3, sys, urllib.parse
class Median:
    def __init__(self):
        self.v = []
    def step(self, x):
        self.v.append(x)
    def finalize(self):
        v = self.v
        v.sort()
        n = len(v)
        m = n // 2
        return float(v[m]) if n % 2 else (v[m - 1] + v[m]) / 2
con = sqlite3.connect("file:" + urllib.parse.quote(sys.argv[1]) + "?mode=ro&immutable=1", uri=True)
con.create_aggregate("median", 1, Median)
rows = con.execute('''
    SELECT s.value, k.total, k.n, k.a, k.med, k.lo, k.hi, k.sd
    FROM (
        SELECT demangledName AS id, sum(d) AS total, count(*) AS n, avg(d) AS a, median(d) AS med,
               min(d) AS lo, max(d) AS hi,
               CASE WHEN count(*) > 1
                    THEN sqrt(max(total(d * d) - total(d) * total(d) / count(*), 0) / (count(*) - 1))
                    ELSE 0 END AS sd
        FROM (SELECT demangledName, "end" - start AS d FROM CUPTI_ACTIVITY_KIND_KERNEL)
        GROUP BY demangledName) AS k
    LEFT JOIN StringIds AS s ON s.id = k.id
    ORDER BY k.total DESC''').fetchall()
w = csv.writer(sys.stdout, lineterminator="\n")
w.writerow("name,total_ns,instances,avg_ns,med_ns,min_ns,max_ns,stddev_ns".split(","))
w.writerows(rows)
"""

# --investigate: the floor, but paying for the imports the census command does.
FLOOR_WITH_CENSUS_IMPORTS = (
    "import tracelens.cli, polars, pyarrow, pyarrow.dataset\n" + DUCKDB_FLOOR
)

# --investigate: census through the library's own views and queries/kernel_summary.sql (same
# result as `tracelens census --format csv`), with two changes: StringIds is read by DuckDB's
# sqlite_scan (the library's sqlite3 + pyarrow path only when that fails on bytes that are not
# UTF-8; registering a pyarrow table imports pyarrow.dataset), and the CSV is written by the
# csv module instead of polars. No typer: this is the library, not the CLI.
CENSUS_LEAN = r"""
import csv, sys
import duckdb
import tracelens
from tracelens import _engine, _resources, _schema
from tracelens._sqlite import decode_text
tr = tracelens.open(sys.argv[1])
tr.require_kernels()
con = _engine.connect()
con.execute("SET VARIABLE trace_path = $path", {"path": str(tr._real_path)})
for view, (table, _cols) in _schema.VIEWS.items():
    con.execute(_schema.view_sql(view, tr.tables.get(table)))
try:
    con.execute(
        "CREATE TEMP TABLE strings AS SELECT id, value "
        "FROM sqlite_scan(getvariable('trace_path'), 'StringIds')"
    )
except duckdb.InvalidInputException:  # not UTF-8: the library's decoding path
    import pyarrow as pa
    rows = tr._sqlite_rows("SELECT id, value FROM StringIds")
    con.register("_s", pa.table({"id": pa.array([r[0] for r in rows], pa.int64()),
                                 "value": pa.array([decode_text(r[1]) for r in rows], pa.string())}))
    con.execute("CREATE TEMP TABLE strings AS SELECT * FROM _s")
params = {"name_kind": "demangled", "by_launch_config": False, "device": None, "pid": None,
          "stream": None, "start_ns": None, "end_ns": None}
cur = con.execute(_resources.query("kernel_summary"), params)
cols = [d[0] for d in cur.description]
keep = [i for i, c in enumerate(cols) if not c.startswith(("grid_", "block_"))]
w = csv.writer(sys.stdout, lineterminator="\n")
w.writerow([cols[i] for i in keep])
for row in cur.fetchall():
    w.writerow([row[i] for i in keep])
"""

# --investigate: a column cache. setup writes the kernel columns census can use (duration,
# the three name ids, device, stream, pid, start, end, launch config) to a Parquet file once;
# the timed child answers the same query from it.
CACHE_BUILD = r"""
import sys
import tracelens
tr = tracelens.open(sys.argv[1])
tr.db.execute('''COPY (SELECT "end" - start AS dur_ns, demangledName, shortName, mangledName, deviceId,
    streamId, (globalPid >> 24) & 16777215 AS pid, start, "end", gridX, gridY, gridZ, blockX, blockY, blockZ
    FROM kernels) TO '%s' (FORMAT parquet, COMPRESSION zstd)''' % sys.argv[2].replace("'", "''"))
tr.db.execute("COPY strings TO '%s' (FORMAT parquet)" % sys.argv[3].replace("'", "''"))
"""
CACHE_QUERY = r"""
import csv, sys
import duckdb
con = duckdb.connect(":memory:")
rows = con.execute('''
    WITH agg AS (
        SELECT demangledName AS id, sum(dur_ns)::BIGINT AS total, count(*) AS n, avg(dur_ns) AS a,
               median(dur_ns) AS med, min(dur_ns) AS lo, max(dur_ns) AS hi,
               coalesce(stddev_samp(dur_ns), 0) AS sd
        FROM read_parquet($k) GROUP BY id)
    SELECT s.value, total, n, a, med, lo, hi, sd
    FROM agg LEFT JOIN read_parquet($s) AS s ON s.id = agg.id ORDER BY total DESC''',
    {"k": sys.argv[2], "s": sys.argv[3]}).fetchall()
w = csv.writer(sys.stdout, lineterminator="\n")
w.writerow("name,total_ns,instances,avg_ns,med_ns,min_ns,max_ns,stddev_ns".split(","))
w.writerows(rows)
"""


# -- measurement ------------------------------------------------------------------------------


@dataclass
class Command:
    key: str
    label: str
    argv: list[str]
    check: str | None = None  # how to verify its output: census, census_lc, nsys, floor
    cwd: str | None = None
    note: str = ""
    samples: list[dict] = field(default_factory=list)
    error: str | None = None
    skip: str | None = None  # why it is not run
    env: dict[str, str] | None = None  # added to the environment of every run
    setup: list[str] | None = None  # run (untimed) before every timed run


def run_once(
    argv: list[str], cwd: str | None = None, capture: bool = False, env: dict | None = None
) -> dict:
    """One child: wall s, CPU s (user + sys), peak RSS MB; stdout text when ``capture``."""
    with tempfile.TemporaryFile() as err, tempfile.TemporaryFile() as out:
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            argv,
            stdout=out if capture else subprocess.DEVNULL,
            stderr=err,
            cwd=cwd,
            env={**os.environ, **env} if env else None,
        )
        _, status, ru = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        result = {
            "wall_s": wall,
            "cpu_s": ru.ru_utime + ru.ru_stime,
            "rss_mb": ru.ru_maxrss / 1024,
            "rc": proc.returncode,
        }
        if proc.returncode != 0:
            err.seek(0)
            result["stderr"] = err.read().decode(errors="replace")[-2000:]
        if capture:
            out.seek(0)
            result["stdout"] = out.read().decode(errors="replace")
        return result


def _csv_rows(text: str, header_starts: str) -> list[dict]:
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(header_starts))
    return list(csv.DictReader(io.StringIO("\n".join(lines[start:]))))


def summarize(kind: str, text: str) -> dict[tuple, tuple]:
    """key -> (total ns, instances, median ns) from a command's CSV output."""
    out = {}
    if kind == "nsys":
        for r in _csv_rows(text, "Time (%)"):
            key = (r["Name"], r["GridXYZ"], r["BlockXYZ"])
            out[key] = (int(r["Total Time (ns)"]), int(r["Instances"]), float(r["Med (ns)"]))
    elif kind == "census_lc":
        for r in _csv_rows(text, "time_pct"):
            dims = ("grid_x", "grid_y", "grid_z", "block_x", "block_y", "block_z")
            grid, block = (
                " ".join(f"{int(r[d]):4d}" for d in part) for part in (dims[:3], dims[3:])
            )
            key = (r["name"], grid, block)
            out[key] = (int(r["total_ns"]), int(r["instances"]), float(r["med_ns"]))
    else:
        for r in _csv_rows(text, "time_pct" if kind == "census" else "name"):
            out[(r["name"],)] = (int(float(r["total_ns"])), int(r["instances"]), float(r["med_ns"]))
    return out


def verify(results: dict[str, dict]) -> list[str]:
    """Compare each warm-up output with census (nsys: with census --by-launch-config)."""
    notes = []
    if "census" not in results and "census_direct" in results:
        results = {**results, "census": results["census_direct"]}
    for key, got in results.items():
        ref = "census_lc" if key == "nsys" else "census"
        if key in ("census", "census_lc", "census_direct") or ref not in results:
            continue
        want = results[ref]
        bad = [
            k
            for k in want.keys() | got.keys()
            if k not in want
            or k not in got
            or want[k][:2] != got[k][:2]
            or abs(want[k][2] - got[k][2]) > 0.051
        ]
        status = "same" if not bad else f"{len(bad)} DIFFER, e.g. {sorted(bad)[:1]}"
        notes.append(
            f"output check, {key} vs {ref}: {len(got)} rows; total, instances and median {status}"
        )
    return notes


def machine_info(trace: Path) -> dict:
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
        mem_kb = next(
            int(line.split()[1])
            for line in Path("/proc/meminfo").read_text().splitlines()
            if line.startswith("MemTotal")
        )
    except OSError:
        mem_kb = 0
    con = sqlite3.connect(f"file:{trace}?mode=ro&immutable=1", uri=True)
    kernels = con.execute(f"SELECT count(*) FROM {KERNEL}").fetchone()[0]
    names = con.execute(f"SELECT count(DISTINCT demangledName) FROM {KERNEL}").fetchone()[0]
    con.close()
    nsys = shutil.which("nsys")
    nsys_version = None
    if nsys:
        out = subprocess.run([nsys, "--version"], capture_output=True, text=True).stdout
        nsys_version = out.strip().removeprefix("NVIDIA Nsight Systems version ")

    def version(pkg: str) -> str | None:
        try:
            return metadata.version(pkg)
        except metadata.PackageNotFoundError:
            return None

    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "cores_usable": len(os.sched_getaffinity(0)),
        "ram_gb": round(mem_kb / 2**20, 1),
        "os": platform.platform(),
        "python": platform.python_version(),
        "duckdb": version("duckdb"),
        "sqlite_extension": version("duckdb-extension-sqlite-scanner"),
        "polars": version("polars"),
        "sqlite": sqlite3.sqlite_version,
        "nsys": nsys_version,
        "trace": str(trace),
        "trace_mb": round(trace.stat().st_size / 1e6, 1),
        "kernels": kernels,
        "kernel_names": names,
    }


def tracelens_exe() -> str:
    exe = Path(sys.executable).parent / "tracelens"
    return str(exe) if exe.exists() else (shutil.which("tracelens") or "tracelens")


def _has_nvtx(trace: Path) -> bool:
    with sqlite3.connect(f"file:{trace}?mode=ro&immutable=1", uri=True) as db:
        found = "SELECT count(*) FROM sqlite_master WHERE name = 'NVTX_EVENTS'"
        return bool(db.execute(found).fetchone()[0])


def build_commands(trace: Path, tmp: Path, investigate: bool, use_nsys: bool) -> list[Command]:
    py, tl, t = sys.executable, tracelens_exe(), str(trace)
    cmds = [
        # read directly: against the engine's floor, the export read as the floor reads it
        # (a trace this big goes through the cache by default: the --commands rows time that)
        Command(
            "census",
            "tracelens census TRACE --format csv --no-cache",
            [tl, "census", t, "--format", "csv", "--no-cache"],
            "census",
        ),
        Command(
            "census_lc",
            "tracelens census TRACE --by-launch-config --format csv --no-cache",
            [tl, "census", t, "--by-launch-config", "--format", "csv", "--no-cache"],
            "census_lc",
            note="grouping of nsys gpukernsum (name + grid + block)",
        ),
        Command(
            "floor",
            "bare DuckDB floor (python -c, same extension)",
            [py, "-c", DUCKDB_FLOOR, t],
            "floor",
        ),
    ]
    if _has_nvtx(trace):
        cmds.append(
            Command(
                "nvtx_gpu",
                "tracelens nvtx TRACE --gpu --format csv --no-cache",
                [tl, "nvtx", t, "--gpu", "--format", "csv", "--no-cache"],
                note="every NVTX range projected onto the GPU (bench/make_nvtx.py nest)",
            )
        )
    nsys = shutil.which("nsys")
    if use_nsys and not nsys:
        cmds.append(
            Command("nsys", "nsys stats --report gpukernsum", [], skip="nsys is not on PATH")
        )
    if use_nsys and nsys:
        copy = tmp / "nsys" / trace.name
        copy.parent.mkdir()
        shutil.copyfile(trace, copy)
        cmds.append(
            Command(
                "nsys",
                "nsys stats --report gpukernsum --format csv -o - COPY",
                [nsys, "stats", "--report", "gpukernsum", "--format", "csv", "-o", "-", str(copy)],
                "nsys",
                cwd=str(copy.parent),
                note="on a copy in a temp dir",
            )
        )
    cmds.append(
        Command(
            "sqlite3",
            "python sqlite3: GROUP BY + Python median aggregate",
            [py, "-c", SQLITE3, t],
            "floor",
        )
    )
    cmds.append(Command("cat", "cat TRACE > /dev/null", ["cat", t]))
    if investigate:
        kc, sc = str(tmp / "kernels.parquet"), str(tmp / "strings.parquet")
        cmds += [
            Command(
                "floor_1t",
                "bare DuckDB floor, SET threads = 1",
                [py, "-c", DUCKDB_FLOOR, t, "1"],
                "floor",
            ),
            Command(
                "floor_imports",
                "bare DuckDB floor + census's imports (tracelens.cli, polars, pyarrow.dataset)",
                [py, "-c", FLOOR_WITH_CENSUS_IMPORTS, t],
                "floor",
            ),
            Command(
                "census_lean",
                "census via library views + kernel_summary.sql, no pyarrow/polars (prototype)",
                [py, "-c", CENSUS_LEAN, t],
                "census",
            ),
            Command(
                "cache",
                "column cache: same aggregation from a Parquet copy of the kernel columns",
                [py, "-c", CACHE_QUERY, t, kc, sc],
                "floor",
            ),
        ]
    return cmds


# Commands that keep nothing derived in the cache entry: their cached row is all there is.
# (census, lineup and danger read the whole-trace kernel summary census keeps: census_kept.)
_KEEPS_NOTHING = ("memory", "info", "timeline", "timeline_10ms")


def _drop_kept(cache_dir: Path) -> list[str]:
    """A setup command removing every derived file (``tracelens_*``) of the cache's entries;
    a manifest listing a removed file reads it as absent (cache.derived_path)."""
    code = (
        "import glob, os, sys; "
        "[os.remove(p) for p in glob.glob(os.path.join(sys.argv[1], 'traces', '*', 'tracelens_*'))]"
    )
    return [sys.executable, "-c", code, str(cache_dir)]


def command_rows(trace: Path, tmp: Path, kernel: str) -> list[Command]:
    """--commands: every tracelens command on the trace, read directly (--no-cache) and from
    the columnar cache (built once before timing, in a private cache dir), plus the build."""
    tl, t = tracelens_exe(), str(trace)
    cached = {"TRACELENS_CACHE_DIR": str(tmp / "cache")}
    build = {"TRACELENS_CACHE_DIR": str(tmp / "build")}
    uses = [
        ("census", ["census", t, "--format", "csv"]),
        ("lineup", ["lineup", t, "--format", "csv"]),
        ("danger", ["danger", t, "--format", "csv"]),
        ("memory", ["memory", t, "--format", "csv"]),
        ("info", ["info", t]),
        ("timeline", ["timeline", t, "--limit", "100"]),
        ("timeline_10ms", ["timeline", t, "--start", "5s", "--end", "5.01s"]),
        ("stakeout", ["stakeout", t, kernel, "--limit", "100"]),
        ("report", ["report", t, "-o", str(tmp / "report.html")]),
        ("steps", ["steps", t, "--format", "csv"]),
        ("util", ["util", t, "--format", "csv"]),
        ("findings", ["findings", t, "--format", "csv"]),
        ("fingerprint", ["fingerprint", t, "-o", str(tmp / "fingerprint.json")]),
        ("diff", ["diff", t, t, "--format", "json"]),
    ]
    cmds = []
    for key, args in uses:
        label = "tracelens " + " ".join("TRACE" if a == t else a for a in args)
        label = label.replace(str(tmp), "TMP")
        cmds.append(
            Command(f"{key}_direct", label + " --no-cache", [tl, *args, "--no-cache"],
                    "census" if key == "census" else None)
        )  # fmt: skip
        if key not in _KEEPS_NOTHING:
            # The cached tables alone: what any command kept in the cache entry on an earlier
            # run (sorted work, whole results) is removed before this timed run, so it is the
            # first run of the command on a cached trace, and it pays for keeping them again.
            # It runs before the plain cached row, which then reads what this run kept.
            cmds.append(
                Command(f"{key}_cached_first", label + " (cached tables, nothing kept)",
                        [tl, *args], env=cached, setup=_drop_kept(tmp / "cache"))
            )  # fmt: skip
        cmds.append(
            Command(f"{key}_cached", label + " (cached)", [tl, *args],
                    "census" if key == "census" else None, env=cached)
        )  # fmt: skip
    cmds.append(
        Command(
            "cache_build",
            "tracelens census TRACE, building the cache (cleared before each run)",
            [tl, "census", t, "--format", "csv"],
            "census",
            env=build,
            setup=[tl, "cache", "clear"],
        )
    )
    return cmds


def fmt_table(cmds: list[Command], info: dict) -> str:
    floor = next((c for c in cmds if c.key == "floor" and c.samples), None)
    base = statistics.median(s["wall_s"] for s in floor.samples) if floor else None
    # × census is over census read directly (census_direct with --commands, else census)
    census = next((c for c in cmds if c.key == "census_direct" and c.samples), None) or next(
        (c for c in cmds if c.key == "census" and c.samples), None
    )
    census_s = statistics.median(s["wall_s"] for s in census.samples) if census else None
    lines = [
        "| command | median s | min s | CPU s (median) | peak RSS MB | × census | × bare DuckDB |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for c in cmds:
        if c.error:
            lines.append(f"| `{c.label}` | failed: {c.error} | | | | | |")
            continue
        if c.skip or not c.samples:
            lines.append(f"| `{c.label}` | skipped: {c.skip or 'no samples'} | | | | | |")
            continue
        wall = [s["wall_s"] for s in c.samples]
        med = statistics.median(wall)
        ratio = f"{med / base:.2f}" if base else "—"
        to_census = f"{med / census_s:.2f}" if census_s else "—"
        label = f"`{c.label}`" + (f" ({c.note})" if c.note else "")
        lines.append(
            f"| {label} | {med:.2f} | {min(wall):.2f} | "
            f"{statistics.median(s['cpu_s'] for s in c.samples):.2f} | "
            f"{max(s['rss_mb'] for s in c.samples):.0f} | {to_census} | {ratio} |"
        )
    i = info
    machine = (
        f"Machine: {i['cpu']}, {i['cores']} cores ({i['cores_usable']} usable), {i['ram_gb']} GB RAM; "
        f"{i['os']}; Python {i['python']}, DuckDB {i['duckdb']} (sqlite extension "
        f"{i['sqlite_extension']}), polars {i['polars']}, SQLite {i['sqlite']}, nsys "
        f"{i['nsys'] or 'not installed'}. Trace: {i['trace']}, {i['trace_mb']:,} MB, "
        f"{i['kernels']:,} kernels, {i['kernel_names']} names. Warm page cache (each command "
        f"ran once before timing); {i['repeat']} timed runs each, interleaved; load average "
        f"{i['load_before']} before, {i['load_after']} after."
    )
    return "\n".join(lines) + "\n\n" + machine + "\n"


def startup(n: int) -> tuple[str, list[dict]]:
    py, tl = sys.executable, tracelens_exe()
    cmds = [
        ("tracelens --help", [tl, "--help"]),
        ("tracelens census --help", [tl, "census", "--help"]),
        ("python -c pass", [py, "-c", "pass"]),
        ("python -c 'import duckdb'", [py, "-c", "import duckdb"]),
        ("python -c 'import polars'", [py, "-c", "import polars"]),
        (
            "python -c 'import pyarrow, pyarrow.dataset'",
            [py, "-c", "import pyarrow, pyarrow.dataset"],
        ),
    ]
    samples: dict[str, list[dict]] = {label: [] for label, _ in cmds}
    for _label, argv in cmds:
        run_once(argv)  # warm-up
    for _ in range(n):
        for label, argv in cmds:
            samples[label].append(run_once(argv))
    lines = [
        "| start-up | median s | min s | CPU s (median) | peak RSS MB |",
        "|---|---:|---:|---:|---:|",
    ]
    out = []
    for label, _ in cmds:
        s = samples[label]
        wall = [x["wall_s"] for x in s]
        lines.append(
            f"| `{label}` | {statistics.median(wall):.3f} | {min(wall):.3f} | "
            f"{statistics.median(x['cpu_s'] for x in s):.3f} | {max(x['rss_mb'] for x in s):.0f} |"
        )
        out.append({"command": label, "samples": s})
    return "\n".join(lines) + f"\n\n(median of {n} runs each, interleaved)\n", out


def byte_compile_tracelens() -> str:
    """Byte-compile the tracelens the commands run, as ``pip install`` does for a wheel: a
    machine that sets ``PYTHONDONTWRITEBYTECODE`` (as ours does) would otherwise compile
    every module from source on every run (~0.1 s each), which no installed copy pays. The
    note says where (an editable install's ``__pycache__`` directories go in its source)."""
    import importlib.util

    spec = importlib.util.find_spec("tracelens")
    if spec is None or not spec.submodule_search_locations:
        return "tracelens not found: not byte-compiled"
    where = list(spec.submodule_search_locations)[0]
    done = subprocess.run([sys.executable, "-m", "compileall", "-q", where], capture_output=True)
    if done.returncode != 0:
        return f"byte-compiling {where} failed: not byte-compiled"
    return f"tracelens byte-compiled before timing, as an installed wheel is ({where})"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("trace", type=Path)
    ap.add_argument("--repeat", type=int, default=5, help="timed runs per command (default 5)")
    ap.add_argument("--json", type=Path, help="also write every sample and the machine info here")
    ap.add_argument("--startup", type=int, default=10, metavar="N", help="start-up runs (0: skip)")
    ap.add_argument("--investigate", action="store_true", help="add the analysis rows (see README)")
    ap.add_argument(
        "--no-nsys", action="store_true", help="skip nsys stats even if it is installed"
    )
    ap.add_argument("--only", help="comma-separated command keys to run (census,floor,...)")
    ap.add_argument(
        "--commands",
        action="store_true",
        help="add every tracelens command, read directly and from the cache, and the build",
    )
    ap.add_argument(
        "--kernel", default="reshape_and_cache", help="stakeout's kernel for --commands"
    )
    args = ap.parse_args(argv)
    trace = args.trace.resolve()
    if not trace.is_file():
        ap.error(f"{trace}: no such file (make one with bench/make_trace.py)")

    info = machine_info(trace)
    info["repeat"] = args.repeat
    info["load_before"] = " ".join(f"{x:.1f}" for x in os.getloadavg())
    notes = [byte_compile_tracelens()]
    if shutil.which("nsys") is None and not args.no_nsys:
        notes.append("nsys is not on PATH: its row is skipped (see ../shared/nsys/INSTALL.md)")

    with tempfile.TemporaryDirectory(prefix="tracelens-bench-") as tmpdir:
        tmp = Path(tmpdir)
        cmds = build_commands(trace, tmp, args.investigate, not args.no_nsys)
        if args.commands:
            cmds += command_rows(trace, tmp, args.kernel)
        if args.only:
            keep = set(args.only.split(","))
            cmds = [c for c in cmds if c.key in keep]
        if any(c.key == "cache" for c in cmds):
            kc, sc = str(tmp / "kernels.parquet"), str(tmp / "strings.parquet")
            r = run_once([sys.executable, "-c", CACHE_BUILD, str(trace), kc, sc])
            notes.append(
                f"column cache built once in {r['wall_s']:.2f} s (peak RSS {r['rss_mb']:.0f} MB), "
                f"{(Path(kc).stat().st_size + Path(sc).stat().st_size) / 1e6:.1f} MB of Parquet"
                if r["rc"] == 0
                else f"column cache build failed: {r.get('stderr', '')}"
            )

        outputs = {}
        for c in cmds:  # warm-up, doubles as the output check
            if c.skip:
                continue
            print(f"warm-up: {c.label}", file=sys.stderr, flush=True)
            # the warm-up of a cached row builds its cache
            r = run_once(c.argv, c.cwd, capture=c.check is not None, env=c.env)
            if r["rc"] != 0:
                last = r.get("stderr", "").strip().splitlines()[-1:] or [""]
                c.error = f"warm-up exit {r['rc']}: {last[0]}"
                continue
            if c.check:
                try:
                    outputs[c.key] = summarize(c.check, r["stdout"])
                except (StopIteration, KeyError, ValueError) as exc:
                    notes.append(f"{c.key}: cannot parse its output ({exc!r})")
        for rep in range(args.repeat):
            for c in cmds:
                if c.error or c.skip:
                    continue
                print(f"run {rep + 1}/{args.repeat}: {c.label}", file=sys.stderr, flush=True)
                if c.setup:
                    run_once(c.setup, c.cwd, env=c.env)
                r = run_once(c.argv, c.cwd, env=c.env)
                if r["rc"] != 0:  # e.g. the trace vanished: never time a failure
                    last = r.get("stderr", "").strip().splitlines()[-1:] or [""]
                    c.error = f"run {rep + 1} exit {r['rc']}: {last[0]}"
                    continue
                c.samples.append(r)
        nsys_dir = tmp / "nsys"
        if nsys_dir.is_dir():
            extra = sorted(p.name for p in nsys_dir.iterdir() if p.name != trace.name)
            if extra:
                notes.append(f"nsys stats wrote next to its copy: {', '.join(extra)}")
    info["load_after"] = " ".join(f"{x:.1f}" for x in os.getloadavg())
    notes += verify(outputs)

    report = fmt_table(cmds, info)
    if notes:
        report += "\n" + "\n".join(f"- {n}" for n in notes) + "\n"
    start_json = None
    if args.startup > 0:
        text, start_json = startup(args.startup)
        report += "\n" + text
    print(report)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        payload = {
            "machine": info,
            "notes": notes,
            "results": [
                {
                    "key": c.key,
                    "command": c.label,
                    "argv": c.argv,
                    "note": c.note,
                    "error": c.error,
                    "samples": c.samples,
                }
                for c in cmds
            ],
            "startup": start_json,
            "markdown": report,
        }
        args.json.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
