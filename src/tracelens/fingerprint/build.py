"""Build the numerical-path fingerprint of a trace: which kernel variants ran, in which
order, with which launch configuration, per region and step. Not its timing.

The document (``FORMAT``, version ``VERSION``; JSON Schema in ``fingerprint.schema.json``):

- ``variants``: every distinct (normalized kernel name, grid, block), sorted, with its id,
  family, the decoded fields that change the math (``fingerprint.toml``) and the danger
  rules that fire on it;
- ``paths``: one entry per (device, region, sequence of variants): the steps it covers, its
  launch count and the sequence (variant ids in launch order). Steps with the same path in
  a region collapse into one entry; the launches outside the steps of a region are an entry
  of their own (no steps), so each launch is in one entry: the entries' launches, each
  times its steps (once with none), add up to ``launches``. A region is the NVTX path of the launching call,
  without the ranges that enclose the whole step; without NVTX it is the whole step.
- ``notes`` (only when there is one): what the path leaves out, as every command says it:
  kernel records that end before they start (a damaged export), launches whose kernel name
  the export's StringIds lacks.
- ``graph_replays`` (only when there are some): CUDA graph replays traced at graph level;
  the kernels they ran are in no table, so the path is not recorded there.

The launches are read once, as integers (``fingerprint_launches``: each carries its NVTX
path id, its name id and its launch configuration packed in two integers; the few hundred
distinct ones are mapped to variants once each); one sort puts them in host launch order,
which serves the step search and the units (device, step, region) alike, in vectorized
polars (``units``; no loop per launch; a second sort only where the units do not follow
that order: NVTX regions). Regions are worked out once per distinct
(device, step, path) (``fingerprint_path_regions``) and the units collapse into the
document's entries in DuckDB (``fingerprint_paths``). Python objects are made for distinct
names, variants and entries only.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .ends import mark_entries
from .names import name_code, normalized_name
from .nvtxpaths import create_paths
from .order import launch_order, start_ties
from .threads import thread_calls, untie
from .unitrows import capture_index
from .units import read_launches, with_steps, with_variants

if TYPE_CHECKING:
    from concurrent.futures import Future

    from ..steps import Steps
    from ..trace import Trace

FORMAT = "tracelens-fingerprint"
#: 2: NVTX labels normalized by torch_label (PyTorch's seq, op_id, sizes, ... dropped).
#: 3: a launch is in the step the step search puts it in (its call's NVTX step range, or its
#: place in host launch order), not in the step whose GPU window holds its start: windows
#: overlap where the host runs ahead (llm_5m_nvtx: step 1 held 161 of its 2,509 launches).
#: 4: regions take the nvtx command's ranges (nvtx_ranges(), as nsys): a range left open at
#: the end of the capture holds the work launched in it (version 3 dropped it, so a capture
#: cut inside a range had its work outside the region a full capture puts it in), a
#: start/end range that ended on another thread holds none, and a range in a named domain
#: is 'domain:label'. The 13 shared traces and both demos fingerprint the same as in 3.
#: 5: NVTX steps are numbered per process (step N is each rank's Nth iteration), not across
#: the processes by start, which made a multi-process job's step keys depend on which rank
#: started first. Single-process traces (the 13 shared ones, both demos) are the same as in 4.
#: 6: the launches outside the steps (before the first, between steps, after the last) of a
#: device and region are an entry of their own, with no steps: version 5 merged them into a
#: step's entry with the same sequence, where they had no step and the entries' launches fell
#: short of the document's (a capture cut mid-step: 277 of 283).
#: 7: a launching call made after the last NVTX event inside a range left open at the end of
#: the capture is in that range (fingerprint_open_range_paths): version 6 ended the range at
#: the last NVTX event, as nsys does for the nvtx command, so a capture cut inside a long
#: range ('generate' without annotated inner steps) had its last launches outside every
#: range, where the full capture holds them in it. The 13 shared traces and both demos are
#: the same as in 6.
#: 8: a process's launches in a unit (and its entries) are taken one host thread after
#: another, the busiest thread first (fingerprint.threads), not interleaved by correlation
#: id: two threads whose calls interleave differently from run to run (a communication
#: thread beside the compute thread) read as a launch-order change. Processes that launch
#: from one thread (the 13 shared traces, both demos) are the same as in 7.
#: 9: a call made after the last NVTX event is held by the ranges left open at the end of
#: the capture on its thread, and by those alone, on every thread: version 8 gave it the
#: innermost open range's whole chain, with a closed start/end range that enclosed the open
#: one up to the last NVTX event (its end), and skipped threads whose ranges cross
#: (start/end ranges), where those launches fell outside every range. A capture cut inside
#: an open start/end range then read as a path change against the full capture. The 13
#: shared traces and both demos are the same as in 8.
#: 10: an entry outside the steps says how many of its launches are before the first step
#: (``before``) and after the last (``after``), so a comparison tells launches the other
#: capture never reached from launches removed (fingerprint.ends).
#: 11: an entry says where its launches are in the capture (``at``, fingerprint.places), so a
#: comparison's first divergence is the first in launch order, not the first in the first
#: region listed (the demo's "launch #4" of the prefill was the capture's #340). A version
#: 10 document is still read, without places.
#: 12: an entry's steps are written as runs: consecutive steps, three or more, as one
#: ``[first, last]`` pair (``[1, [3, 5000]]`` is steps 1 and 3 to 5000), so a steady-state
#: capture of thousands of steps is a few kilobytes (5,000 steps x 8 layers wrote 262 kB of
#: step numbers); read back, every step is listed again (fingerprint.document). The same
#: document otherwise: versions 10 and 11 are still read.
VERSION = 12
# fingerprint_launches.sql raises this when a launch does not fit the packed variant.
_BEYOND_LIMITS = "fingerprint: launch configuration beyond CUDA limits"
_DIR = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Settings:
    """``fingerprint.toml``: the math-relevant decoded fields and the limits."""

    math_fields: tuple[str, ...]
    block_launches: int
    all_strings_up_to: int


@cache
def settings() -> Settings:
    data = tomllib.loads((_DIR / "fingerprint.toml").read_text(encoding="utf-8"))
    fields: list[str] = []
    for group in data["math_fields"]:
        fields.extend(f for f in group["fields"] if f not in fields)
    limits = data["limits"]
    return Settings(tuple(fields), int(limits["block_launches"]), int(limits["all_strings_up_to"]))


def _math_fields(name: str) -> dict[str, str]:
    from .. import decode

    keep = settings().math_fields
    out: dict[str, str] = {}
    for f in decode(name).fields:
        if f.name in keep and f.name not in out:
            out[f.name] = f.value
    return dict(sorted(out.items()))


@dataclass
class _Names:
    normalized: list[str]  # sorted; norm_id = index
    raw: dict[int, list[str]]  # norm_id -> the raw names that normalize to it
    rows: list[tuple[int, int, int]]  # (name_id, norm_id, name_code) of every name id
    codes: list[int]  # norm_id -> name_code


def _names(trace: Trace) -> _Names:
    """Every candidate kernel name, normalized once (strings, not launches)."""
    count = trace.db.execute("SELECT count(*) FROM strings").fetchone()[0]
    rows = trace.query_rows("fingerprint_names", all_strings=count <= settings().all_strings_up_to)
    normal = {name_id: normalized_name(name) for name_id, name in rows.data if name is not None}
    ordered = sorted(set(normal.values()))
    index = {n: i for i, n in enumerate(ordered)}
    codes = [name_code(n) for n in ordered]
    raw: dict[int, list[str]] = {}
    for name_id, name in rows.data:
        if name is not None:
            raw.setdefault(index[normal[name_id]], []).append(name)
    out = [(nid, index[n], codes[index[n]]) for nid, n in normal.items()]
    return _Names(ordered, raw, out, codes)


def _name_facts(names: _Names, norm_id: int) -> tuple[str, dict[str, str], list[str]]:
    """(family, math fields, danger rule ids) of a normalized name: what its variants share."""
    from .. import decode
    from ..danger import match_danger

    raw = sorted(names.raw[norm_id])
    danger = sorted({h.rule_id for name in raw for h in match_danger(name)})
    return decode(raw[0]).family, _math_fields(raw[0]), danger


def _variant(names: _Names, key: tuple, facts: dict[int, tuple]) -> dict[str, Any]:
    """One variant of the document from its key (norm_id, grid xyz, block xyz); ``facts``
    holds each name's (``_name_facts``), worked out once per name, not once per variant."""
    if key[0] not in facts:
        facts[key[0]] = _name_facts(names, key[0])
    family, fields, danger = facts[key[0]]
    return {
        "name": names.normalized[key[0]],
        "grid": list(key[1:4]),
        "block": list(key[4:7]),
        "family": family,
        "fields": dict(fields),
        "danger": list(danger),
    }


def _steps_rows(
    trace: Trace, launches, order, found: Steps | None = None
) -> tuple[dict[str, Any], list[tuple], tuple | None]:
    """(the document's ``steps`` description, rows for fp_steps, the step of each launch
    and whether it was found by the step search's rule: by the NVTX range of its call,
    ``members.range_steps``, or in host launch order, ``members.host_order_steps``) from
    the step search (``trace.steps()``: ``found``, else handed the launch sequence already
    read: ``units.find_launch_steps``). ``order``: the launches' rows in host launch order
    (``order.launch_order``)."""
    import polars as pl

    from .members import host_order_steps, range_steps
    from .units import find_launch_steps

    steps = found if found is not None else find_launch_steps(trace, launches, order)
    if steps.method == "none" or steps.frame.is_empty():
        return {"method": "none", "count": 0}, [], None
    cols = ("device", "step", "start_ns", "end_ns", "cpu_start_ns", "cpu_end_ns")
    rows = steps.frame.select(cols).rows()
    described = {"method": steps.method, "count": int(steps.frame["step"].n_unique())}
    in_ranges = range_steps(trace, launches, steps)
    if in_ranges is not None:  # every launch by the range its call was made in
        every = pl.repeat(True, launches.height, dtype=pl.Boolean, eager=True)
        return described, rows, (in_ranges, every)
    return described, rows, host_order_steps(launches, order, steps)


def _steps_first(trace: Trace, ranges: bool) -> Steps | None:
    """The steps of the whole trace when they need none of the launches the fingerprint
    reads: those an earlier search kept in the trace's cache entry, else, on a trace with
    NVTX ranges (``ranges``), the search itself, run before the launches are read (NVTX
    steps read their own operations, and the search then keeps what it found, as
    ``tracelens steps`` does). Held with the launches, the search's peak was the
    fingerprint's: on the NVTX bench trace (5M kernels, 519 marker steps) 1.85 GB. None:
    found from the launches later (:func:`_steps_rows`), the period search's sequence
    handed over. A trace with NVTX ranges whose steps are periodic reads its launch
    sequence twice (the search's and the fingerprint's)."""
    from ..steps import find_steps
    from ..steps_kept import kept_steps

    kept = kept_steps(trace)
    if kept is not None or not ranges:
        return kept
    return find_steps(trace)


def _create_table(trace: Trace, name: str, columns: tuple[str, ...], rows: list[tuple]) -> None:
    """The temp table ``name`` of BIGINT ``columns`` holding ``rows``, handed over as one
    Arrow table (executemany inserted a row per statement: 0.4 CPU s for the 625 names of
    the 5M-kernel bench trace)."""
    import pyarrow as pa

    data = {c: pa.array([row[i] for row in rows], pa.int64()) for i, c in enumerate(columns)}
    con = trace.db
    con.register(f"_{name}_rows", pa.table(data))
    try:
        con.execute(f"CREATE OR REPLACE TEMP TABLE {name} AS SELECT * FROM _{name}_rows")
    finally:
        con.unregister(f"_{name}_rows")


def _create_units(trace: Trace, frame, variants, step_rows: list[tuple], nvtx: bool, launched=None):
    """fp_steps, fp_path_regions and fp_units, the tables fingerprint_variants and
    fingerprint_paths read, from the launches with their steps (``units.with_steps``);
    ``launched``: their rows in host launch order, when they are the launches'. Returns
    the launches outside the steps before the first and after the last, per device and
    region (:func:`.ends.outside_counts`)."""
    import polars as pl

    from . import unitrows, units
    from .ends import outside_counts

    step_columns = ("device", "step", "start_ns", "end_ns", "cpu_start_ns", "cpu_end_ns")
    _create_table(trace, "fp_steps", step_columns, step_rows)
    if nvtx:
        frame = units.with_regions(trace, frame)
    else:
        trace.db.execute(
            "CREATE OR REPLACE TEMP TABLE fp_path_regions (device BIGINT, step BIGINT, "
            "path_id BIGINT, region_id BIGINT, region VARCHAR[])"
        )
        frame = frame.with_columns(region_id=pl.lit(None, pl.Int64))
    unitrows.create_units(trace, frame, variants, settings().block_launches, launched)
    return outside_counts(trace, frame, step_rows)


@contextmanager
def _launches_within_cuda_limits(trace: Trace) -> Iterator[None]:
    """TraceError instead of DuckDB's error when a launch configuration is beyond CUDA's
    limits (fingerprint_launches.sql packs a variant into integers within them; whichever
    query first reads the launches raises it)."""
    import duckdb

    from ..errors import TraceError

    try:
        yield
    except duckdb.InvalidInputException as exc:
        if _BEYOND_LIMITS not in str(exc):
            raise
        raise TraceError(
            trace.path,
            "a kernel launch's grid or block is beyond CUDA's limits (grid 2^31-1 x 65535 x "
            "65535, block 1024 x 1024 x 64): the export is damaged",
        ) from None


def _launches_in_order(trace: Trace, ranges: bool) -> tuple[Any, Any]:
    """(the launches, ``units.read_launches``; their rows in host launch order: one sort,
    the step search's launch sequence, period steps' blocks and the units' order). Read
    without their stream, which orders only launches that tie on device, process,
    correlation id and start (``order.start_ties``: then read again with it)."""
    # the calls beside each process's busiest thread: a unit's launches are taken one
    # thread after another (fingerprint.threads)
    calls = thread_calls(trace)
    with _launches_within_cuda_limits(trace):
        launches = read_launches(trace, paths=ranges, calls=calls, streams=False)
        order = launch_order(launches)
        if start_ties(launches, order):
            del launches, order  # freed before the second read
            launches = read_launches(trace, paths=ranges, calls=calls, streams=True)
            order = launch_order(launches)
    return launches, order


def _digest(block: dict[str, int]) -> str:
    return f"{int(block['code_sum']):x}.{int(block['position_sum']):x}"


def _facts_meanwhile(names: _Names, variants) -> Future:
    """The facts (``_name_facts``) of the normalized names of ``variants``
    (``units.with_variants``: norm_id is variant_hi's high half), worked out on a thread
    while the step search and the units run in polars and DuckDB: decoding and matching
    danger rules is Python, 0.7 ms a name (296 names of the 5M-kernel bench trace)."""
    from concurrent.futures import ThreadPoolExecutor

    wanted = sorted(set((variants["variant_hi"] // 2**32).to_list()))
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tracelens-names")
    try:
        return pool.submit(lambda: {m: _name_facts(names, m) for m in wanted})
    finally:
        pool.shutdown(wait=False)  # the thread ends with its one task


def _variants(
    trace: Trace, names: _Names, facts: dict[int, tuple]
) -> tuple[list[dict[str, Any]], int]:
    """The document's variants (fingerprint_variants: every one some unit counted, with the
    ids the units use) and the launches they count. ``facts``: each name's, where known
    (``_facts_meanwhile``)."""
    rows = trace.query_rows("fingerprint_variants").data
    variants = [{"id": row[0], **_variant(names, row[2:9], facts)} for row in rows]
    return variants, sum(row[9] for row in rows)


def _paths(trace: Trace, block: int) -> list[dict[str, Any]]:
    """The document's path entries (fingerprint_paths), in order. The rows come as columns
    (polars; its lists become Python lists at a fraction of the cost of DuckDB's row fetch:
    209k entries of the NVTX bench trace, 2.1 -> 1.0 CPU s), and an entry is built from
    the values of its row."""
    frame = trace.query("fingerprint_paths", block=block)
    columns = ("device", "region", "steps", "launches", "sequence", "blocks", "counts", "at")
    values = [frame[c].to_list() for c in columns]
    del frame
    entries = []
    for device, region, steps, launches, sequence, blocks, counts, at in zip(*values, strict=True):
        entry = {
            "device": device,
            "region": region,
            "steps": steps,
            "launches": launches,
            "sequence": sequence,
        }
        if blocks is not None:
            entry["blocks"] = [_digest(b) for b in blocks]
            entry["counts"] = counts
        if at is not None:
            entry["at"] = at
        entries.append(entry)
    return entries


def _unnamed_note(unnamed: int) -> str | None:
    """What the path leaves out when some launches' kernel names are not in the export's
    StringIds (a damaged or truncated export): their variants cannot be named, so they are
    in no entry; said, where a document of 0 launches read as a capture that ran none."""
    if unnamed <= 0:
        return None
    return (
        f"{unnamed:,} kernel launch{'' if unnamed == 1 else 'es'} name a string the export "
        "does not hold (StringIds lacks their ids: a damaged export): left out of the path"
    )


def build(trace: Trace, *, steps: Steps | None = None) -> dict[str, Any]:
    """The fingerprint document of ``trace`` (a JSON-able dict; see the module docstring).
    ``steps``: ``trace.steps()`` when the caller has already found them (the report: the
    diff's), so the step search is not run again. Without ``steps``, a trace read through
    a cache entry keeps its document there, and later runs read it back
    (:mod:`tracelens.fingerprint.kept`).

    Raises MissingDataError when the export has no kernel table."""
    from .. import __version__
    from . import kept

    trace.require_kernels()
    if steps is None and (doc := kept.read(trace)) is not None:
        return doc  # an earlier run through the same cache entry built it (fingerprint.kept)
    names = _names(trace)
    ranges = create_paths(trace)
    found = steps if steps is not None else _steps_first(trace, ranges)
    launches, order = _launches_in_order(trace, ranges)
    # every kept kernel record: the count of damaged ones then needs no scan of its own
    trace.kept_whole({"kernel": launches.height})
    kept_launches = launches.height
    # NVTX regions when some kernel was launched inside a range
    nvtx = ranges and bool(launches["path_id"].is_not_null().any())
    norm_ids = {name_id: norm_id for name_id, norm_id, _ in names.rows}
    variants, launches = with_variants(launches, norm_ids, names.codes)
    launches = untie(launches)  # threads that tie on calls, by their variants (fp.threads)
    launches = launches.with_columns(capture=capture_index(launches, order))
    facts = _facts_meanwhile(names, variants)
    described, step_rows, host = _steps_rows(trace, launches, order, found)
    frame = with_steps(launches, None, step_rows, host)
    # the units' rows are the launches' unless some had no name (or regions joined them)
    launched = order if frame.height == launches.height and not nvtx else None
    del launches, order, host  # the step search's columns: freed before the units' sort
    outside = _create_units(trace, frame, variants, step_rows, nvtx, launched)
    del frame, launched
    block = settings().block_launches
    variants, launches = _variants(trace, names, facts.result())
    paths = _paths(trace, block)
    mark_entries(trace, paths, outside)  # before / after the steps (fingerprint.ends)
    doc = {
        "format": FORMAT,
        "version": VERSION,
        "generator": f"tracelens {__version__}",
        "regions": "nvtx" if nvtx else "step",
        "steps": described,
        "block_launches": block,
        "devices": sorted({e["device"] for e in paths}),
        "launches": launches,
        "variants": variants,
        "paths": paths,
    }
    # What the path leaves out (Trace.damage_note): a key only when there is something to
    # say, so a sound trace's document has the same bytes as before it existed.
    notes = [
        n for n in (trace.damage_note(("kernel",)), _unnamed_note(kept_launches - launches)) if n
    ]
    if notes:
        doc["notes"] = notes
    # CUDA graph replays traced at graph level: their kernels are in no table, so the path
    # is not recorded there (a comparison says so instead of counting kernels removed).
    replays = trace.graph_replays()[0]
    if replays:
        doc["graph_replays"] = replays
    if steps is None:
        kept.write(trace, doc)
    return doc
