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


def outside_counts(
    trace: Trace, frame: pl.DataFrame, step_rows: list[tuple] | None = None
) -> pl.DataFrame:
    """Per (device, region_id) with launches outside the steps: ``before`` and ``after``,
    those launched before the first and after the last launch in a step of their device,
    process (with several on a device) and host thread (with several in a process): by
    correlation id, a thread's CUDA calls in its own order. Empty when no launch is in a
    step (a capture without steps is outside them throughout: neither before nor after).

    Why per thread: CUPTI numbers the calls of all of a process's threads in one sequence,
    as the host scheduler ran them, so a communication thread's launch just before or just
    after the compute thread's first launch of the first step was counted before the steps
    in one run and between them in the next (other bytes, read as a capture that started
    earlier). A thread that launched nothing in the steps of its process (one beside NVTX
    step ranges opened on another thread) has no sequence of its own to place them by: its
    launches are before the steps when their calls were made before the device's first
    step began, after them when made after its last one ended (``step_rows``: the steps'
    device, step, start_ns, end_ns, cpu_start_ns, cpu_end_ns; :func:`_call_starts`), a
    collective called inside a step being neither whichever thread called first; steps
    without a CPU span (period steps: each thread launches in them as a rule) leave them
    to correlation ids. A process with no launch in a step is outside them throughout, as
    before."""
    import polars as pl

    process = [c for c in ("device", "process") if c in frame.columns]
    by = process + (["thread"] if "thread" in frame.columns else [])
    region = pl.col("region_id") if "region_id" in frame.columns else pl.lit(None, pl.Int64)
    stepped = pl.col("step").is_not_null()
    corr = pl.col("correlation_id")
    lazy = frame.lazy()
    bounds = lazy.filter(stepped).group_by(by).agg(first=corr.min(), last=corr.max())
    spans = lazy.filter(stepped).group_by(process).agg(p_first=corr.min(), p_last=corr.max())
    pid = pl.col("global_pid") if "global_pid" in frame.columns else pl.lit(None, pl.Int64)
    outside = (
        lazy.filter(~stepped)
        .select(pl.col("device").cast(pl.Int64), *by[1:], corr, region_id=region, global_pid=pid)
        .join(spans.with_columns(pl.col("device").cast(pl.Int64)), on=process, how="inner")
        .join(bounds.with_columns(pl.col("device").cast(pl.Int64)), on=by, how="left")
        .join(_cpu_spans(step_rows), on="device", how="left")
        .collect()
    )
    # A thread's launch made after a call of its process in the first step and before one
    # in the last is inside the steps' span (CUPTI numbers a process's calls as they are
    # made): only those outside it need the time of their call. Steps without a CPU span
    # (period steps) place them by correlation id, as before.
    own = pl.col("first").is_not_null()
    timed = pl.col("lo").is_not_null()
    loose = ~own & timed & ((corr < pl.col("p_first")) | (corr > pl.col("p_last")))
    if outside.select(loose.any()).item():
        outside = _call_starts(trace, outside, loose)
    else:
        outside = outside.with_columns(call_ns=pl.lit(None, pl.Int64))
    call = pl.col("call_ns")
    before = (
        pl.when(own)
        .then(corr < pl.col("first"))
        .when(timed)
        .then(call < pl.col("lo"))
        .otherwise(corr < pl.col("p_first"))
    )
    after = (
        pl.when(own)
        .then(corr > pl.col("last"))
        .when(timed)
        .then(call > pl.col("hi"))
        .otherwise(corr > pl.col("p_last"))
    )
    return (
        outside.lazy()
        .group_by("device", "region_id")
        .agg(
            before=before.fill_null(False).sum().cast(pl.Int64),
            after=after.fill_null(False).sum().cast(pl.Int64),
        )
        .filter((pl.col("before") > 0) | (pl.col("after") > 0))
        .collect()
    )


def _cpu_spans(step_rows: list[tuple] | None) -> pl.LazyFrame:
    """Per device: its first step's CPU start (``lo``) and its last one's CPU end
    (``hi``), from the steps' rows (device, step, start_ns, end_ns, cpu_start_ns,
    cpu_end_ns); NULL where the steps have none (period steps)."""
    import polars as pl

    rows = [(row[0], row[4], row[5]) for row in step_rows or ()]
    schema = {"device": pl.Int64, "cpu_start_ns": pl.Int64, "cpu_end_ns": pl.Int64}
    return (
        pl.DataFrame(rows, schema=schema, orient="row")
        .lazy()
        .group_by("device")
        .agg(lo=pl.col("cpu_start_ns").min(), hi=pl.col("cpu_end_ns").max())
    )


def _call_starts(trace: Trace, outside: pl.DataFrame, loose: pl.Expr) -> pl.DataFrame:
    """``outside`` (launches outside the steps) with ``call_ns``, the start of the call of
    each ``loose`` launch (of a thread without launches in the steps, outside its process's
    span of them: ``queries/fingerprint_call_starts.sql``)."""
    import polars as pl

    on = ["device", "global_pid", "correlation_id"]
    outside = outside.with_columns(pl.col("global_pid").cast(pl.Int64))
    keys = outside.lazy().filter(loose).select(on).unique().collect()
    con = trace.db
    con.register("fp_call_keys", keys.to_arrow())
    try:
        pids = not keys["global_pid"].has_nulls()
        calls = trace.query("fingerprint_call_starts", pids=pids)
    finally:
        con.unregister("fp_call_keys")
    return outside.join(calls, on=on, how="left", nulls_equal=True)


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
