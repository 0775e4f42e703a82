"""What each GPU operation is to util's sweeps: its class of work (compute, communication or
memory) and collective kind, from its kernel name, and the sweeps' input
(:func:`operations`).

Kernels are classified on their demangled names by the category rules
(``data/categories.toml``: ``communication``, ``memory``; everything else is compute), each
distinct name once, and each operation takes its name's class from a table indexed by name
id (:class:`_NameLookup`): nothing runs per kernel in Python. Sync API names and collective
kinds are data (``data/util.toml``).
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from ._resources import data_dir
from .categories import classify_column
from .util_sweep import COMMUNICATION, COMPUTE, GRAPH, KERNEL, MEMORY, has_launches

if TYPE_CHECKING:
    import polars as pl

    from .trace import Trace

__all__ = ["collective_kinds", "kernel_classes", "operations", "sync_api_regex"]

_NON_COMPUTE = ("communication", "memory")


@dataclass(frozen=True)
class _Collective:
    kind: str
    pattern: re.Pattern[str]
    why: str


@dataclass(frozen=True)
class _UtilData:
    sync_apis: tuple[str, ...]
    collectives: tuple[_Collective, ...]

    @property
    def sync_regex(self) -> str:
        names = "|".join(re.escape(n) for n in self.sync_apis)
        return f"(?:{names})(?:_v[0-9]+)?"

    def collective_of(self, name: str) -> str:
        for c in self.collectives:
            if c.pattern.search(name):
                return c.kind
        return "other"


@lru_cache(maxsize=1)
def _data() -> _UtilData:
    with open(data_dir() / "util.toml", "rb") as fh:
        doc = tomllib.load(fh)
    return _UtilData(
        tuple(s["name"] for s in doc["sync_api"]),
        tuple(
            _Collective(c["kind"], re.compile(c["regex"], re.IGNORECASE), c["why"])
            for c in doc["collective"]
        ),
    )


def sync_api_regex() -> str:
    """The full-match regex of the CUDA API names that block the host (``data/util.toml``)."""
    return _data().sync_regex


def kernel_classes(
    trace: Trace, name_ids: pl.Series | None = None
) -> tuple[list[int], list[str], list[str | None]]:
    """(name ids, work class, collective kind) of every kernel name that is not compute:
    of ``name_ids`` (demangled name ids, repeats allowed) when given, else of every kernel
    name of the trace."""
    ids: list[int] = []
    classes: list[str] = []
    collectives: list[str | None] = []
    import polars as pl

    data = _data()
    if name_ids is None:
        rows = trace.query_rows("util_kernel_names").data
    else:
        ids_text = ",".join(map(str, _distinct_ids(name_ids)))
        rows = trace.query_rows("util_name_texts", ids=ids_text).data
    names = pl.Series("name", [name for _, name in rows], dtype=pl.String)
    categories = classify_column(names)["category"].to_list()  # vectorized, each name once
    for (name_id, name), category in zip(rows, categories, strict=True):
        if category in _NON_COMPUTE:
            ids.append(name_id)
            classes.append(category)
            collectives.append(data.collective_of(name) if category == "communication" else None)
    return ids, classes, collectives


def _distinct_ids(name_ids: pl.Series) -> list[int]:
    """The distinct ids of ``name_ids`` (NULLs left out), in order. StringIds ids are small
    and dense: a flag per id in their range, set where an id occurs, stands in for a hash of
    every row (5M kernels: ~0.025 CPU s where unique() took ~0.06); a wide range hashes."""
    import polars as pl

    ids = name_ids.drop_nulls()
    low, high = ids.min(), ids.max()
    if low is None:
        return []
    if high - low >= max(4 * ids.len(), 1 << 20):
        return ids.unique().sort().to_list()
    seen = pl.repeat(False, high - low + 1, eager=True).scatter(ids - low, True)
    return (seen.arg_true().cast(pl.Int64) + low).to_list()


def collective_kinds(params: dict[str, Any]) -> list[str]:
    """The distinct collective kinds of the communication kernel names, sorted: collective
    ``k`` of :func:`operations` is ``kinds[k - 1]``."""
    return sorted(
        {
            kind or "other"
            for work, kind in zip(params["work_classes"], params["collectives"], strict=True)
            if work == "communication"
        }
    )


def operations(work: pl.DataFrame, params: dict[str, Any]) -> pl.DataFrame:
    """The input of the util sweeps from :func:`work_in_order`'s rows: each operation
    clipped to the window ``t0``..``t1`` (those left with no time dropped), with its class
    of work and collective kind (:data:`util_sweep.OPS_COLUMNS`, and ``launch_start`` and
    ``launch_tid`` when ``work`` has them), still by device and start. Clipping keeps the order: operations that start before ``t0`` all start at it."""
    import polars as pl

    number = {kind: k for k, kind in enumerate(collective_kinds(params), start=1)}
    ids = params["name_ids"]
    classes = [
        COMMUNICATION if work == "communication" else MEMORY for work in params["work_classes"]
    ]
    collectives = [
        number[kind or "other"] if work == "communication" else 0
        for work, kind in zip(params["work_classes"], params["collectives"], strict=True)
    ]
    kind = pl.col("kind")
    is_kernel = kind == KERNEL
    start, end = pl.col("start_ns"), pl.col("end_ns")
    t0, t1 = params["t0"], params["t1"]
    # Clipping and dropping copy every row; usually (no --start/--end) nothing needs either,
    # and the columns are the read's own (~200 MB less on a 5M-kernel trace).
    inside = timed = False
    if work.height and t0 is not None and t1 is not None:
        checks = work.select(((start >= t0) & (end <= t1)).all(), (end > start).all().alias("t"))
        inside, timed = checks.row(0)
    lookup = _NameLookup(work, ids)
    ops = work.select(
        "device",
        (start if inside else start.clip(lower_bound=t0)).alias("s"),
        (end if inside else end.clip(upper_bound=t1)).alias("e"),
        pl.when(is_kernel)
        .then(lookup.of(classes, COMPUTE, pl.Int8))
        .when(kind == GRAPH)
        .then(pl.lit(COMPUTE, pl.Int8))
        .otherwise(pl.lit(MEMORY, pl.Int8))
        .alias("cls"),
        pl.when(is_kernel)
        .then(lookup.of(collectives, 0, pl.Int32))
        .otherwise(pl.lit(0, pl.Int32))
        .alias("collective"),
        "pid",
        "correlation_id",
        *(["launch_start", "launch_tid"] if has_launches(work) else []),
    )
    return ops if inside and timed else ops.filter(pl.col("e") > pl.col("s"))


class _NameLookup:
    """A value per kernel name id, for the ``name_id`` column of ``work``: ``values[i]`` for
    ``ids[i]``, ``default`` for every other id and for NULL. StringIds ids are small and
    dense, so a table with one slot per id, gathered by name id, stands in for
    ``replace_strict``, which hash-joins every row (5M kernels: ~0.1 CPU s each, and two
    per util); ids too large for a table fall back to it."""

    def __init__(self, work: pl.DataFrame, ids: list[int]) -> None:
        import polars as pl

        self.ids = ids
        name_id = pl.col("name_id")
        low, high = work.select(name_id.min().alias("low"), name_id.max()).row(0)
        dense = high is not None and low >= 0 and high < max(4 * work.height, 1 << 20)
        self.size = high + 1 if dense else None

    def of(self, values: list[int], default: int, dtype: pl.DataType) -> pl.Expr:
        import polars as pl

        name_id = pl.col("name_id")
        if not any(v != default for v in values):  # every kernel takes the default
            return pl.lit(default, dtype)
        if self.size is None:
            return name_id.replace_strict(
                self.ids, values, default=default, return_dtype=dtype
            ).fill_null(default)
        kept = [(i, v) for i, v in zip(self.ids, values, strict=True) if 0 <= i < self.size]
        table = pl.repeat(default, self.size, dtype=dtype, eager=True)
        if kept:
            at, to = zip(*kept, strict=True)
            table = table.scatter(list(at), pl.Series(to, dtype=dtype))
        return pl.lit(table).gather(name_id).fill_null(default)
