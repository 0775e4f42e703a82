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

Which ranges are held (the seeds of ``queries/_nvtx_held_seeds.sql`` and their ancestors)
is found here too, before the totals: :func:`register_held`.
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


# The held ranges' ancestors are followed through a table indexed by RangeId while the
# largest id is at most this many per parent link (or under nvtx_sweep.DENSE_SLOTS_FLOOR):
# RangeIds are NVTX_EVENTS rowids, dense unless the export holds far more other events than
# ranges. Otherwise every link is tested for membership, one level at a time.
DENSE_IDS_PER_LINK = 4


def register_held(con) -> None:
    """Register ``nvtx_held_ids`` (one column, range_id): the ranges of
    ``queries/_nvtx_held_seeds.sql`` and every ancestor of one, by nvtx_tree's parent links
    (``queries/_nvtx_tree_links.sql``) followed up one level per step. The 10M-range
    fixture's links are 80 MB here; DuckDB's recursive join over the tree held 0.5 GB."""
    import polars as pl

    from . import _resources, nvtx_sweep

    seeds = con.execute(_resources.query("_nvtx_held_seeds")).pl()["range_id"].drop_nulls()
    links = con.execute(_resources.query("_nvtx_tree_links")).pl()
    ids, parents = links["range_id"], links["parent_id"]
    del links
    # a parent's id may be the larger (a range is written when it ends: an enclosing one later)
    top = max(ids.max() or 0, parents.max() or 0, seeds.max() or 0)
    if top < max(DENSE_IDS_PER_LINK * ids.len(), nvtx_sweep.DENSE_SLOTS_FLOOR):
        parent_of = pl.repeat(None, top + 1, dtype=parents.dtype, eager=True)
        parent_of = parent_of.scatter(ids, parents)
        del ids, parents
        held = pl.repeat(False, top + 1, eager=True)
        frontier = seeds.unique()
        while frontier.len():
            held = held.scatter(frontier, True)
            up = parent_of.gather(frontier).drop_nulls().unique()
            frontier = up.filter(~held.gather(up))
        found = held.arg_true().cast(pl.Int64)
    else:
        ids, parents = ids.cast(pl.Int64), parents.cast(pl.Int64)
        found = frontier = seeds.unique()
        while frontier.len():
            up = parents.filter(ids.is_in(frontier.implode())).unique()
            frontier = up.filter(~up.is_in(found.implode()))
            found = pl.concat([found, frontier])
    nvtx_sweep.register(con, "nvtx_held_ids", pl.DataFrame({"range_id": found}))
