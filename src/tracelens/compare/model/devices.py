"""The typical per-call change of each device pair (:class:`DeviceChange`): the census is
by kernel name over all devices, so one GPU three times slower beside an unchanged one
reads as every kernel twice as slow; per device it reads as what it is."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from .kernels import typical_change

if TYPE_CHECKING:
    import polars as pl

    from ..collect import Side
    from .result import SequenceAlignment, TypicalChange


@dataclass(frozen=True)
class DeviceChange:
    """The kernels one device pair runs, A vs B."""

    where: str  # the device(s) as the board says them (SequenceAlignment.where)
    device: int  # A's device
    typical: TypicalChange  # of the kernels both sides of the pair launch
    time_a: int  # kernel time, ns
    time_b: int
    impact_ns: float  # B's kernel time beyond A's per call, over B's calls (kernels in both)


def device_kernel_ids(launches: pl.DataFrame, name_kind: str) -> pl.DataFrame:
    """device, id, instances, total_ns, avg_ns of the kernels ``launches`` (device,
    start_ns, end_ns, name_id, short_id; one row per kernel) by device and the id of the
    names the diff shows (``name_kind``): what :func:`device_kernels` needs of the work,
    taken while the side is read (a few rows per kernel name, not a row per launch)."""
    import polars as pl

    column = "short_id" if name_kind == "short" else "name_id"
    return (
        launches.select("device", id=column, duration=pl.col("end_ns") - pl.col("start_ns"))
        .group_by("device", "id")
        .agg(
            instances=pl.len(),
            total_ns=pl.col("duration").sum(),
            avg_ns=pl.col("duration").mean(),
        )
    )


def device_kernels(side: Side) -> dict[int, pl.DataFrame] | None:
    """Per device: name, instances, total_ns, avg_ns of its kernels, from their figures by
    name id read with ``side`` (``Side.kernel_ids_by_device``, :func:`device_kernel_ids`).
    The names are ``Side.sequence_names``: one per id of the kernels read, in id order
    (``collect.launch_sequences``). None without the figures, or when their ids are not
    those."""
    import polars as pl

    per_id = side.kernel_ids_by_device
    if per_id is None:
        return None
    ids = per_id["id"].unique().sort()
    if ids.null_count() or ids.len() != len(side.sequence_names):
        return None
    names = pl.DataFrame(
        {"id": ids, "name": side.sequence_names}, schema={"id": ids.dtype, "name": pl.String}
    )
    per_device = per_id.join(names, on="id", how="left").drop("id")
    return {
        int(device): part.drop("device")
        for (device,), part in per_device.partition_by("device", as_dict=True).items()
    }


def device_changes(
    alignment: tuple[SequenceAlignment, ...],
    kernels_a: dict[int, pl.DataFrame] | None,
    kernels_b: dict[int, pl.DataFrame] | None,
    cap: float,
) -> tuple[DeviceChange, ...]:
    """The typical change (``typical_change``, weights capped at ``cap``) of each device
    pair that launched on both sides, when there are two such pairs or more."""
    import polars as pl

    if kernels_a is None or kernels_b is None:
        return ()
    pairs = [al for al in alignment if al.only is None and al.launches_a and al.launches_b]
    if len(pairs) < 2:
        return ()
    changes = []
    cols = ["instances", "total_ns", "avg_ns"]
    for al in pairs:
        device_b = al.device if al.device_b is None else al.device_b
        ka, kb = kernels_a.get(al.device), kernels_b.get(device_b)
        if ka is None or kb is None:
            continue
        joined = (
            ka.rename({c: f"a_{c}" for c in cols})
            .join(kb.rename({c: f"b_{c}" for c in cols}), on="name", how="full", coalesce=True)
            .with_columns(pl.col("a_instances", "b_instances").fill_null(0))
        )
        both = joined.filter((pl.col("a_instances") > 0) & (pl.col("b_instances") > 0))
        impact = float((both["b_total_ns"] - both["a_avg_ns"] * both["b_instances"]).sum())
        changes.append(
            DeviceChange(
                al.where,
                al.device,
                typical_change(joined, cap),
                int(ka["total_ns"].sum()),
                int(kb["total_ns"].sum()),
                impact,
            )
        )
    return tuple(changes) if len(changes) >= 2 else ()
