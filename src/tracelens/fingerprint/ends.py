"""Where the launches outside the steps are: before a device's first step, after its last,
or between steps. A capture that started inside a step (or a warm-up) holds launches before
its first step; one that ended inside a step holds launches after its last. The document
has no times, so without this a comparison could not tell launches the other capture never
reached from launches removed (:mod:`tracelens.fingerprint.capture`): an entry outside the
steps (``steps`` []) says how many of its launches are before the first step (``before``)
and after the last (``after``); the rest are between steps (format version 10).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import polars as pl

    from ..trace import Trace


def outside_counts(frame: pl.DataFrame) -> pl.DataFrame:
    """Per (device, region_id) with launches outside the steps: ``before`` and ``after``,
    those launched before the first and after the last launch in a step of their device
    (and process, with several on a device), by correlation id (a process's CUDA calls in
    call order). Empty when no launch is in a step (a capture without steps is outside
    them throughout: neither before nor after)."""
    import polars as pl

    by = ["device", "process"] if "process" in frame.columns else ["device"]
    region = pl.col("region_id") if "region_id" in frame.columns else pl.lit(None, pl.Int64)
    stepped = pl.col("step").is_not_null()
    corr = pl.col("correlation_id")
    bounds = frame.lazy().filter(stepped).group_by(by).agg(first=corr.min(), last=corr.max())
    return (
        frame.lazy()
        .filter(~stepped)
        .select(*by, corr, region_id=region)
        .join(bounds, on=by, how="inner")
        .group_by("device", "region_id")
        .agg(
            before=(corr < pl.col("first")).sum().cast(pl.Int64),
            after=(corr > pl.col("last")).sum().cast(pl.Int64),
        )
        .filter((pl.col("before") > 0) | (pl.col("after") > 0))
        .collect()
    )


def mark_entries(trace: Trace, entries: list[dict[str, Any]], counts: pl.DataFrame) -> None:
    """Add ``before`` and ``after`` (when not 0) to the entries outside the steps (in place),
    from :func:`outside_counts`; a region id is looked up in fp_path_regions (its labels),
    none is the region []."""
    if counts.is_empty():
        return
    labels: dict[int | None, tuple[str, ...]] = {None: ()}
    if counts["region_id"].is_not_null().any():
        sql = "SELECT region_id, any_value(region) FROM fp_path_regions GROUP BY region_id"
        labels.update((rid, tuple(r)) for rid, r in trace.db.execute(sql).fetchall())
    found = {
        (device, labels[rid]): (before, after)
        for device, rid, before, after in counts.select(
            "device", "region_id", "before", "after"
        ).iter_rows()
    }
    for entry in entries:
        if entry["steps"]:
            continue
        before, after = found.get((entry["device"], tuple(entry["region"])), (0, 0))
        if before:
            entry["before"] = before
        if after:
            entry["after"] = after
