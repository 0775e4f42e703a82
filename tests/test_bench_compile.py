"""bench/run.py byte-compiles the tracelens it times, as an installed wheel is, so that a
machine setting PYTHONDONTWRITEBYTECODE does not charge every timed run for compiling."""

from __future__ import annotations

import importlib.util
import runpy
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def _bench():
    return runpy.run_path(str(REPO / "bench" / "run.py"), run_name="bench_run")


def test_the_package_timed_is_byte_compiled(tmp_path, monkeypatch):
    package = tmp_path / "tracelens"
    package.mkdir()
    (package / "__init__.py").write_text("X = 1\n")
    (package / "mod.py").write_text("Y = 2\n")
    spec = importlib.util.spec_from_file_location(
        "tracelens", package / "__init__.py", submodule_search_locations=[str(package)]
    )
    bench = _bench()
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: spec)
    note = bench["byte_compile_tracelens"]()
    assert note == f"tracelens byte-compiled before timing, as an installed wheel is ({package})"
    compiled = sorted(p.name.split(".")[0] for p in (package / "__pycache__").glob("*.pyc"))
    assert compiled == ["__init__", "mod"]


def test_no_package_no_compile(monkeypatch):
    bench = _bench()
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    assert bench["byte_compile_tracelens"]() == "tracelens not found: not byte-compiled"
