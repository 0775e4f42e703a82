"""Build the numerical-path fingerprint of a trace: which kernel variants ran, in which
order, with which launch configuration, per region and step. Not its timing.

The document (``FORMAT``, version ``VERSION``; JSON Schema in ``fingerprint.schema.json``):

- ``variants``: every distinct (normalized kernel name, grid, block), sorted, with its id,
  family, the decoded fields that change the math (``fingerprint.toml``) and the danger
  rules that fire on it;
- ``paths``: one entry per (device, region, sequence of variants): the steps it covers, its
  launch count and the sequence (variant ids in launch order). Steps with the same path in
  a region collapse into one entry. A region is the NVTX path of the launching call,
  without the ranges that enclose the whole step; without NVTX it is the whole step.

All aggregation over launches is done by DuckDB (``queries/fingerprint_units.sql``); Python
sees distinct names and units only.
"""

from __future__ import annotations

import hashlib
import json
import re
import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..trace import Trace

FORMAT = "tracelens-fingerprint"
VERSION = 1
_DIR = Path(__file__).resolve().parent

# What is not numerical in a kernel name, on top of tracelens's normalization (argument
# list cut, casts and spaces canonical): addresses (a pointer template argument is printed
# as the address, different in every process) and process ids some JIT kernels embed.
_POINTER_ARG = re.compile(r"\(([^()<>]*\*)\)\d+")  # (float*)140737488355328
_HEX_ADDRESS = re.compile(r"0x[0-9a-fA-F]{6,}")
_PID = re.compile(r"(?<![A-Za-z0-9])pid[_=]?\d+")


@dataclass(frozen=True)
class Settings:
    """``fingerprint.toml``: the math-relevant decoded fields and the block size."""

    math_fields: tuple[str, ...]
    block_launches: int


@cache
def settings() -> Settings:
    data = tomllib.loads((_DIR / "fingerprint.toml").read_text(encoding="utf-8"))
    fields: list[str] = []
    for group in data["math_fields"]:
        fields.extend(f for f in group["fields"] if f not in fields)
    return Settings(tuple(fields), int(data["limits"]["block_launches"]))


def normalized_name(name: str) -> str:
    """The kernel name with what is not numerical removed: tracelens's normal form
    (``decode(name).normalized``), pointer template arguments and addresses as ``0x…``,
    embedded pids as ``pid…``."""
    from .. import decode

    text = decode(name).normalized
    text = _POINTER_ARG.sub(lambda m: f"({m.group(1)})0x…", text)
    text = _HEX_ADDRESS.sub("0x…", text)
    return _PID.sub("pid…", text)


def variant_code(name: str, grid: list, block: list) -> int:
    """31-bit code of a variant, a function of its name and configuration only (so block
    digests of two traces can be compared)."""
    key = json.dumps([name, grid, block], ensure_ascii=False).encode("utf-8")
    return int.from_bytes(hashlib.md5(key, usedforsecurity=False).digest()[:4], "big") >> 1


def _math_fields(name: str) -> dict[str, str]:
    from .. import decode

    keep = settings().math_fields
    out: dict[str, str] = {}
    for f in decode(name).fields:
        if f.name in keep and f.name not in out:
            out[f.name] = f.value
    return dict(sorted(out.items()))


def _variants(trace: Trace) -> tuple[list[dict[str, Any]], list[tuple]]:
    """(variants sorted by name and configuration, rows for fp_variant_keys)."""
    from .. import decode
    from ..danger import match_danger

    rows = trace.query("fingerprint_variants").rows(named=True)
    by_key: dict[tuple, dict[str, Any]] = {}
    raw_keys: list[tuple[tuple, dict[str, Any]]] = []
    for r in rows:  # one per distinct (name id, grid, block): hundreds, not launches
        grid = [r["grid_x"], r["grid_y"], r["grid_z"]]
        block = [r["block_x"], r["block_y"], r["block_z"]]
        name = normalized_name(r["name"])
        key = (name, tuple(-1 if v is None else v for v in grid + block))
        variant = by_key.get(key)
        if variant is None:
            variant = by_key[key] = {
                "name": name,
                "grid": grid,
                "block": block,
                "family": decode(r["name"]).family,
                "fields": _math_fields(r["name"]),
                "danger": set(),
            }
        variant["danger"].update(h.rule_id for h in match_danger(r["name"]))
        raw_keys.append((tuple(r[c] for c in _KEY_COLUMNS), variant))
    variants = [by_key[k] for k in sorted(by_key)]
    for vid, v in enumerate(variants):
        v["id"] = vid
        v["danger"] = sorted(v["danger"])
    key_rows = [
        (*raw, v["id"], variant_code(v["name"], v["grid"], v["block"])) for raw, v in raw_keys
    ]
    ordered = [
        {k: v[k] for k in ("id", "name", "grid", "block", "family", "fields", "danger")}
        for v in variants
    ]
    return ordered, key_rows


_KEY_COLUMNS = ("name_id", "grid_x", "grid_y", "grid_z", "block_x", "block_y", "block_z")


def _steps_rows(trace: Trace) -> tuple[dict[str, Any], list[tuple]]:
    """(the document's ``steps`` description, rows for fp_steps)."""
    steps_of = getattr(trace, "steps", None)  # trace.steps() (tracelens.steps) when present
    if steps_of is None:
        return {"method": "none", "count": 0}, []
    steps = steps_of()
    if steps.method == "none" or steps.frame.is_empty():
        return {"method": "none", "count": 0}, []
    cols = ("device", "step", "start_ns", "end_ns", "cpu_start_ns", "cpu_end_ns")
    rows = steps.frame.select(cols).rows()
    return {"method": steps.method, "count": int(steps.frame["step"].n_unique())}, rows


def _has_nvtx_ranges(trace: Trace) -> bool:
    sql = 'SELECT count(*) FROM nvtx_events WHERE is_nvtx_range(eventType, "end")'
    return bool(trace.db.execute(sql).fetchone()[0])


def _create_inputs(trace: Trace, key_rows: list[tuple], step_rows: list[tuple]) -> bool:
    """The temp tables fingerprint_units reads; True when NVTX paths were found."""
    con = trace.db
    con.execute(
        "CREATE OR REPLACE TEMP TABLE fp_variant_keys (name_id BIGINT, grid_x BIGINT, "
        "grid_y BIGINT, grid_z BIGINT, block_x BIGINT, block_y BIGINT, block_z BIGINT, "
        "vid BIGINT, code BIGINT)"
    )
    if key_rows:
        con.executemany("INSERT INTO fp_variant_keys VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", key_rows)
    con.execute(
        "CREATE OR REPLACE TEMP TABLE fp_steps (device BIGINT, step BIGINT, start_ns BIGINT, "
        "end_ns BIGINT, cpu_start_ns BIGINT, cpu_end_ns BIGINT)"
    )
    if step_rows:
        con.executemany("INSERT INTO fp_steps VALUES (?, ?, ?, ?, ?, ?)", step_rows)
    empty_paths = (
        "CREATE OR REPLACE TEMP TABLE fp_paths (pid BIGINT, correlation_id BIGINT, "
        'ranges STRUCT(label VARCHAR, start BIGINT, "end" BIGINT)[])'
    )
    if not _has_nvtx_ranges(trace):
        con.execute(empty_paths)
        return False
    from .._resources import query

    trace.load_nvtx_text()
    con.execute("SET merge_join_threshold = 0")  # see fingerprint_nvtx_paths.sql
    try:
        con.execute("CREATE OR REPLACE TEMP TABLE fp_paths AS " + query("fingerprint_nvtx_paths"))
    finally:
        con.execute("RESET merge_join_threshold")
    return bool(con.execute("SELECT count(*) FROM fp_paths").fetchone()[0])


def _digest(block: dict[str, int]) -> str:
    return f"{int(block['code_sum']):x}.{int(block['position_sum']):x}"


def _entries(units: list[dict[str, Any]], block: int) -> list[dict[str, Any]]:
    """Units with the same device, region and sequence collapse into one entry."""
    entries: dict[tuple, dict[str, Any]] = {}
    for u in units:  # ordered by device, step, first launch
        long = u["launches"] > block
        digests = tuple(_digest(b) for b in u["blocks"]) if long else ()
        key = (u["device"], tuple(u["region"]), tuple(u["head"]), digests)
        entry = entries.get(key)
        if entry is None:
            entry = entries[key] = {
                "device": u["device"],
                "region": list(u["region"]),
                "steps": [],
                "launches": u["launches"],
                "sequence": list(u["head"]),
            }
            if long:
                entry["blocks"] = list(digests)
                entry["counts"] = [[c["vid"], c["launches"]] for c in u["counts"]]
        if u["step"] is not None:
            entry["steps"].append(u["step"])
    return list(entries.values())


def build(trace: Trace) -> dict[str, Any]:
    """The fingerprint document of ``trace`` (a JSON-able dict; see the module docstring).

    Raises MissingDataError when the export has no kernel table."""
    from .. import __version__

    trace.require_kernels()
    variants, key_rows = _variants(trace)
    steps, step_rows = _steps_rows(trace)
    nvtx = _create_inputs(trace, key_rows, step_rows)
    block = settings().block_launches
    units = trace.query("fingerprint_units", block=block).rows(named=True)
    return {
        "format": FORMAT,
        "version": VERSION,
        "generator": f"tracelens {__version__}",
        "regions": "nvtx" if nvtx else "step",
        "steps": steps,
        "block_launches": block,
        "devices": sorted({u["device"] for u in units}),
        "launches": sum(u["launches"] for u in units),
        "variants": variants,
        "paths": _entries(units, block),
    }
