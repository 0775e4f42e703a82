"""What each NVTX range that holds GPU work holds in all: the relation ``nvtx_held_totals``
the projection view reads (``queries/_nvtx_projection.sql``), made in polars from the
sweep's relations.

A range holds the operations whose launching call it holds innermost (``nvtx_range_ops``)
and, through its descendants, theirs; on the threads whose ranges overlap, every call that
lies inside it (``nvtx_overlap_holders``, not carried up: every holder is listed there).
The totals (first start, last end, operations) are carried up the parent links of
``nvtx_held`` one level per step, each step's rows combined per ancestor before the next
(min, max and sum combine in any grouping). DuckDB's recursive join carried every range's
own row to each of its ancestors and combined them at the end: on the 5M-kernel benchmark
(250k ranges, 622k rows carried) about 0.3 CPU s of the summary query.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import polars as pl

TOTAL_COLUMNS = ("range_id", "first_ns", "last_ns", "ops")


def register_totals(con) -> None:
    """Register ``nvtx_held_totals`` on ``con``: one row per range that holds GPU work
    (itself, through a descendant, or a call on a thread whose ranges overlap): range_id,
    first_ns (start of the first operation held, ns), last_ns (end of the last), ops
    (operations held, as nsys counts them: distinct launching calls) and children (its
    direct children that hold work). Needs nvtx_range_ops, nvtx_overlap_holders and
    nvtx_held."""
    import polars as pl

    from .nvtx_sweep import register

    own = con.execute("SELECT range_id, first_ns, last_ns, ops FROM nvtx_range_ops").pl()
    links = con.execute(
        "SELECT range_id, parent_id FROM nvtx_held WHERE parent_id IS NOT NULL"
    ).pl()
    overlap = con.execute("SELECT range_id, first_ns, last_ns FROM nvtx_overlap_holders").pl()
    parts = [own.select(_typed(TOTAL_COLUMNS))]
    step = parts[0]
    while step.height:
        step = _combined(
            step.join(links, on="range_id", how="inner").drop("range_id"), "parent_id"
        ).rename({"parent_id": "range_id"})
        parts.append(step)
    parts.append(overlap.with_columns(pl.lit(1).alias("ops")).select(_typed(TOTAL_COLUMNS)))
    held = _combined(pl.concat(parts), "range_id")
    del parts, step, own, overlap
    children = (
        held.select("range_id")
        .join(links, on="range_id", how="inner")
        .group_by("parent_id")
        .agg(pl.len().cast(pl.Int64).alias("children"))
        .rename({"parent_id": "range_id"})
    )
    totals = held.join(children, on="range_id", how="left").with_columns(
        pl.col("children").fill_null(0)
    )
    register(con, "nvtx_held_totals", totals)


def _typed(columns: tuple[str, ...]) -> list[pl.Expr]:
    import polars as pl

    return [pl.col(c).cast(pl.Int64) for c in columns]


def _combined(rows: pl.DataFrame, key: str) -> pl.DataFrame:
    """``rows`` combined per ``key``: earliest first_ns, latest last_ns, ops summed."""
    import polars as pl

    return rows.group_by(key).agg(
        pl.col("first_ns").min(), pl.col("last_ns").max(), pl.col("ops").sum()
    )
