"""Which of the reference rank's communicators each rank's communicator is.

``ranks_collectives`` numbers a trace's communicators (its NCCL streams) in the order of
their first collective, which every rank shares when its capture holds the whole run. A
capture that started inside a step does not: with the AllGathers on one stream and the
AllReduces on another, a rank whose capture started after the first AllGather sees the
AllReduce stream first and numbers it 0, so each of its calls was paired with the other
communicator's (every one "another collective than the others'"). A communicator's
collectives say which one it is: each rank's communicators are given the numbers of the
reference's that run the same set of collectives, in first-use order among those that run
the same set. A rank with a communicator that no free reference one matches keeps its
numbers (pairing by number is all there is to go on).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import polars as pl


def match_communicators(colls: pl.DataFrame, reference: int | None) -> pl.DataFrame:
    """``colls`` (every rank's calls: rank, comm, kind, ...) with each rank's
    communicators renumbered as the reference rank's that run the same collectives."""
    import polars as pl

    if reference is None or not colls.height:
        return colls
    kinds = colls.group_by("rank", "comm").agg(kinds=pl.col("kind").cast(pl.String).unique().sort())
    # per rank, its communicators in first-use order with the collectives each runs
    classes: dict[int, list[tuple[int, tuple[str, ...]]]] = {}
    for rank, comm, names in kinds.sort("rank", "comm").iter_rows():
        classes.setdefault(rank, []).append((comm, tuple(names)))
    ref = classes.get(reference, [])
    moves: dict[tuple[int, int], int] = {}
    for rank, own in classes.items():
        if rank == reference:
            continue
        found = _assign(own, ref)
        if found is not None:
            moves |= {(rank, comm): new for comm, new in found.items() if comm != new}
    if not moves:
        return colls
    table = pl.DataFrame(
        [(rank, comm, new) for (rank, comm), new in moves.items()],
        schema={"rank": pl.Int64, "comm": colls.schema["comm"], "new_comm": pl.Int64},
        orient="row",
    )
    return (
        colls.join(table, on=["rank", "comm"], how="left")
        .with_columns(
            pl.coalesce("new_comm", pl.col("comm").cast(pl.Int64))
            .cast(colls.schema["comm"])
            .alias("comm")
        )
        .drop("new_comm")
        .select(colls.columns)
    )


def _assign(
    own: list[tuple[int, tuple[str, ...]]], ref: list[tuple[int, tuple[str, ...]]]
) -> dict[int, int] | None:
    """Each of ``own``'s communicators (in first-use order) -> the first reference
    communicator not taken that runs the same collectives; None when one has none."""
    free = list(ref)
    out = {}
    for comm, names in own:
        match = next((i for i, (_, theirs) in enumerate(free) if theirs == names), None)
        if match is None:
            return None
        out[comm] = free.pop(match)[0]
    return out
