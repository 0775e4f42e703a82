"""Where the launches outside the steps are: before a device's first step, after its last,
or between steps. A capture that started inside a step (or a warm-up) holds launches before
its first step; one that ended inside a step holds launches after its last. The document
has no times, so without this a comparison could not tell launches the other capture never
reached from launches removed (:mod:`tracelens.fingerprint.capture`): an entry outside the
steps (``steps`` []) says how many of its launches are before the first step (``before``)
and after the last (``after``); the rest are between steps (format version 10).

A comparison of two captures that start or end apart says so as data (:class:`CaptureEnds`,
``PathDiff.ends``), which the board words (:func:`tracelens.fingerprint.board.capture_text`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import polars as pl

    from ..trace import Trace


@dataclass(frozen=True)
class CaptureEnds:
    """Where two captures of one program (A the baseline, B the run checked) start and end
    apart, as a comparison found them: each one's steps, and the launches each holds before
    the other's capture starts and past its end (summed over the compared regions), which
    are not compared. A side's launches before the other's start say that the other
    capture starts later, past its end that the other ends earlier.

    ``ambiguous``: every step of the capture that holds launches beyond the other (of each,
    when both do) is the same program, and no run outside the steps that both hold (a
    warm-up) fixes where their steps begin or end: the documents hold no times, so the
    launches are where each capture's step numbering puts them, and a capture that started
    a step later reads as one that ended a step earlier
    (:func:`tracelens.fingerprint.outside.either_end`)."""

    steps_a: int
    steps_b: int
    method_a: str  # how each capture's steps were found (the documents' steps.method)
    method_b: str
    before_start_a: int = 0  # launches of A before B's capture starts
    past_end_a: int = 0  # launches of A past B's capture's end
    before_start_b: int = 0  # launches of B before A's capture starts
    past_end_b: int = 0  # launches of B past A's capture's end
    ambiguous: bool = False

    @property
    def starts_later(self) -> str | None:
        """ "A" or "B": the side whose capture starts later (the other holds launches before
        its start); None when neither does, or each does in some region."""
        return _one_side(self.before_start_b, self.before_start_a)

    @property
    def ends_earlier(self) -> str | None:
        """ "A" or "B": the side whose capture ends earlier (the other holds launches past
        its end); None when neither does, or each does in some region."""
        return _one_side(self.past_end_b, self.past_end_a)

    @property
    def more_steps(self) -> int:
        """How many more steps B holds than A (negative: fewer)."""
        return self.steps_b - self.steps_a

    def only_in(self, side: str) -> int:
        """The launches only ``side`` ("A" or "B") holds, at its start and end."""
        if side == "A":
            return self.before_start_a + self.past_end_a
        return self.before_start_b + self.past_end_b


def _one_side(of_a: int, of_b: int) -> str | None:
    """ "A" when only ``of_a`` is non-zero, "B" when only ``of_b`` is, else None."""
    if bool(of_a) == bool(of_b):
        return None
    return "A" if of_a else "B"


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
