"""The wheel carries the SQL, templates and demo data; the CLI starts without heavy imports."""

from __future__ import annotations

import subprocess
import sys
import zipfile

import pytest
from conftest import REPO, imported_top_modules

HEAVY = ("duckdb", "polars", "pyarrow", "jinja2")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    pytest.importorskip("hatchling", reason="hatchling (in the [test] extra) builds the wheel")
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(out),
            str(REPO),
        ],
        check=True,
        capture_output=True,
    )
    (path,) = out.glob("nsys_tracelens-*.whl")
    with zipfile.ZipFile(path) as zf:
        yield set(zf.namelist())


def test_wheel_ships_every_query(wheel):
    queries = sorted(p.name for p in (REPO / "queries").glob("*.sql"))
    assert queries, "no queries in the repository?"
    for name in queries:
        assert f"tracelens/queries/{name}" in wheel


def test_wheel_ships_templates_and_package_data(wheel):
    for path in (REPO / "reports" / "templates").rglob("*"):
        if path.is_file():
            rel = path.relative_to(REPO / "reports" / "templates").as_posix()
            assert f"tracelens/templates/{rel}" in wheel
    for path in (REPO / "src" / "tracelens" / "data").rglob("*"):
        if path.is_file() and "__pycache__" not in path.parts:
            rel = path.relative_to(REPO / "src").as_posix()
            assert rel in wheel
    assert "tracelens/cli/__init__.py" in wheel


def test_wheel_has_entry_point(wheel):
    assert any(n.endswith(".dist-info/entry_points.txt") for n in wheel)


def _imported_modules(args: list[str]) -> set[str]:
    code = (
        f"import sys; sys.argv = ['tracelens', *{args!r}]; from tracelens.cli import main; main()"
    )
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "Usage: tracelens" in proc.stdout
    mods = set()
    for line in proc.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            mods.add(line.rsplit("|", 1)[1].strip().split(".")[0])
    return mods


def _commands() -> list[str]:
    from tracelens.cli import app

    return sorted(c.name or c.callback.__name__ for c in app.registered_commands)


@pytest.mark.parametrize("args", [["--help"]] + [[c, "--help"] for c in _commands()])
def test_help_does_not_import_heavy_modules(args):
    mods = _imported_modules(args)
    assert not mods.intersection(HEAVY), (
        f"{' '.join(args)} imported {sorted(mods.intersection(HEAVY))}"
    )


def test_every_command_has_help_text():
    from tracelens.cli import app

    for cmd in app.registered_commands:
        assert cmd.callback.__doc__, f"{cmd.callback.__name__} has no help text"


@pytest.mark.parametrize("fmt", ["table", "csv", "json", "markdown"])
def test_census_command_skips_polars_and_pyarrow(fmt):
    """On a small trace importing polars and pyarrow costs more than the query
    (bench/README.md): the census command renders straight from DuckDB's rows."""
    from tracelens.demo import demo_path

    proc, mods = imported_top_modules(["census", str(demo_path("bs1")), "--format", fmt])
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "duckdb" in mods
    assert not mods.intersection({"polars", "pyarrow"}), sorted(
        mods.intersection({"polars", "pyarrow"})
    )


def test_tracelens_diff_is_the_function_after_the_cli_and_the_module_load():
    code = (
        "import tracelens.compare, tracelens.cli, tracelens; "
        "from tracelens.compare import align_sequences; "
        "assert callable(tracelens.diff) and tracelens.diff.__name__ == 'diff', tracelens.diff"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_cached_census_imports_only_what_it_needs(tmp_path):
    """census of a cached trace (the start-up is most of its cost): no polars, pyarrow,
    jinja2 or rich, no other command's module, and not the sqlite extension's package
    (DuckDB reads the cache's Parquet; loading the extension alone cost 0.13 CPU s)."""
    import json
    import os
    import shutil

    from tracelens.demo import demo_path

    trace = shutil.copyfile(demo_path("bs1"), tmp_path / "run.sqlite")
    env = {**os.environ, "TRACELENS_CACHE_DIR": str(tmp_path / "cache")}
    env.update(TRACELENS_CACHE_MIN_MB="0", PYTHONPATH=str(REPO / "src"))
    seen = tmp_path / "modules.json"
    # sys.modules as the run exits (-X importtime misses importlib.import_module's imports)
    code = (
        "import atexit, json, sys; "
        f"atexit.register(lambda: open({str(seen)!r}, 'w').write(json.dumps(sorted(sys.modules)))); "
        "from tracelens.cli import main; "
        f"sys.argv = ['tracelens', 'census', {str(trace)!r}, '--format', 'csv']; main()"
    )
    runs = [
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
        for _ in range(2)
    ]
    assert [r.returncode for r in runs] == [0, 0], runs[1].stderr[-2000:]
    assert runs[0].stderr.startswith("tracelens: caching run.sqlite")  # the first built it
    assert runs[1].stderr == "" and runs[1].stdout == runs[0].stdout
    mods = set(json.loads(seen.read_text()))  # the second run's
    assert {"duckdb", "tracelens.cache", "tracelens.cli.census"} <= mods
    tops = {m.split(".")[0] for m in mods}
    unwanted = {"polars", "pyarrow", "jinja2", "rich", "duckdb_extension_sqlite_scanner"}
    assert not tops & unwanted, sorted(tops & unwanted)
    commands = {m for m in mods if m.startswith("tracelens.cli.") and "._" not in m}
    assert commands == {"tracelens.cli.census"}, sorted(commands)


@pytest.mark.parametrize("args", [["-h", "census"], ["--help"], ["censuss"]])
def test_root_help_and_unknown_commands_see_every_command(args):
    # a run loads only its command's module, except where click lists or suggests commands
    import os

    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    code = (
        f"import sys; sys.argv = ['tracelens', *{args!r}]; from tracelens.cli import main; main()"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    if args == ["censuss"]:
        assert proc.returncode == 2 and "Did you mean 'census'?" in proc.stderr, proc.stderr
    else:
        assert proc.returncode == 0, proc.stderr
        listed = {line.split()[0] for line in proc.stdout.splitlines() if line.startswith("  ")}
        assert {"census", "timeline", "util", "cache"} <= listed, proc.stdout
