"""Which CUDA context nsys analyze 2022.4 reports where GPU operations of several contexts
end at the same nanosecond (:mod:`tracelens.findings_gpu`'s rules): its choice follows the
order of the export's own tables (kernels, memcpys, memsets, each in rowid order), so that
order is read, by SQLite and for those few operations only, when such ties exist. gpu_low_util
takes the first such row of a (process, device) range's last end
(:func:`range_contexts`), gpu_gaps the last one of the end where a gap starts
(:func:`gap_contexts`). A parquetdir input, which nsys analyze cannot read, keeps no rowid
order: the smallest context stays."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import polars as pl

    from .trace import Trace

#: The export's GPU operation tables in the order nsys analyze 2022.4 reads them (gpustats'
#: UNION ALL: kernels, memcpys, memsets), each with the query of its operations that end at
#: given times, in its rowid order, and their kind in ``queries/util_work.sql``.
_TABLE_ORDER = (
    ("CUPTI_ACTIVITY_KIND_KERNEL", "findings_range_ends_kernels_export", 0),
    ("CUPTI_ACTIVITY_KIND_MEMCPY", "findings_range_ends_memcpys_export", 1),
    ("CUPTI_ACTIVITY_KIND_MEMSET", "findings_range_ends_memsets_export", 2),
)


def range_contexts(
    trace: Trace, work: pl.DataFrame, ranges: pl.DataFrame
) -> dict[tuple[int, int], tuple[int, int]]:
    """Per (pid, device) of ``ranges`` (``last``, ``context``, ``highest``, as
    :func:`_range_end`) whose range's context in nsys is not the smallest of the operations
    that end it: (its last end, that context). nsys takes the context as a bare column of
    its GROUP BY device, pid beside min(start) and max(end): SQLite gives it from the
    first row that holds the latest end, its scan being the export's kernel, memcpy and
    memset tables one after the other, each in rowid order (its sort for the grouping
    keeps that order). Where those operations are of one context, it is theirs; where of
    several, the export's tables are read for their order (:func:`_in_export_order`). A
    parquetdir input, which nsys analyze cannot read, keeps no rowid order: the smallest
    context stays."""
    import polars as pl

    tied = ranges.filter(pl.col("context") != pl.col("highest"))
    if tied.is_empty() or trace._sqlite is None:
        return {}
    chosen: dict[tuple[int, int], tuple[int, int]] = {}
    for pid, device, end_ns, context in _in_export_order(trace, work, tied):
        chosen.setdefault((pid, device), (end_ns, context))
    smallest = {
        (pid, device): c for pid, device, c in tied.select("pid", "device", "context").iter_rows()
    }
    return {key: found for key, found in chosen.items() if found[1] != smallest[key]}


def _in_export_order(
    trace: Trace, work: pl.DataFrame, ends: pl.DataFrame
) -> list[tuple[int, int, int, int]]:
    """(pid, device, end, context) of the operations of ``work`` (the event filter's, that
    start after 0) that end at the ``last`` of their (pid, device) in ``ends``, in the order
    nsys analyze 2022.4 scans them: the export's kernel, memcpy and memset tables one after
    the other, each in rowid order, read by SQLite for those ends only (a full scan of each
    table: run only where operations of several contexts end together)."""
    import json

    import polars as pl

    from . import _resources

    end, lasts = pl.col("end_ns"), ends["last"].unique().sort().to_list()
    # the operations of the event filter that end there, as the export's rows show them
    ending = work.filter(end.is_in(lasts), pl.col("start_ns") > 0)
    ending = ending.join(ends.select("pid", "device", "last"), on=["pid", "device"])
    wanted = set(
        ending.filter(end == pl.col("last"))
        .select("pid", "device", "kind", "start_ns", "end_ns", "context")
        .iter_rows()
    )
    out = []
    for table, query, kind in _TABLE_ORDER:
        if table not in trace.tables:
            continue
        rows = trace._sqlite_rows(_resources.query(query), {"ends": json.dumps(lasts)})
        for start_ns, end_ns, device, pid, context in rows:
            if (pid, device, kind, start_ns, end_ns, context) in wanted:
                out.append((pid, device, end_ns, context))
    return out


def with_moved(ops: pl.DataFrame, moved: dict | None) -> pl.DataFrame:
    """``ops`` with the contexts ``moved`` (:func:`range_contexts`) on the operations that
    end those pairs' ranges; ``ops`` itself when none moved (the usual case: no copy)."""
    if not moved:
        return ops
    return ops.with_columns(moved_context(moved, "end_ns", ops.schema["context"]))


def moved_context(moved: dict[tuple[int, int], tuple[int, int]], end: str, dtype) -> pl.Expr:
    """The ``context`` column with the contexts ``moved`` (:func:`range_contexts`) on the
    rows of those pairs whose column ``end`` is the range's last end."""
    import polars as pl

    out = pl.col("context")
    for (pid, device), (last, context) in moved.items():
        here = (pl.col("pid") == pid) & (pl.col("device") == device) & (pl.col(end) == last)
        out = pl.when(here).then(pl.lit(context, dtype)).otherwise(out)
    return out.alias("context")


def gap_contexts(
    trace: Trace, work: pl.DataFrame, gaps: pl.DataFrame, tied: list[tuple[int, int, int]]
) -> pl.DataFrame:
    """``gaps`` with nsys's context at the ``tied`` ones, (pid, device, start) of the gaps
    that start where operations of several contexts end (their smallest in ``gaps``).
    nsys's gpu-starv numbers the ends of a (process, device) by ROW_NUMBER() OVER (ORDER
    BY pid, deviceId, end) and pairs the j-th with the (j+1)-th start: of the operations
    that end where a gap starts, the last in its scan (SQLite's sort keeps the scan's
    order: flush overheads first, then the export's kernel, memcpy and memset tables, each
    in rowid order; :func:`_in_export_order`). A parquetdir input, which nsys analyze
    cannot read, keeps no rowid order: the smallest context stays."""
    import polars as pl

    if trace._sqlite is None:
        return gaps
    keys = ["pid", "device", "start_ns"]
    ends = pl.DataFrame(tied, schema=["pid", "device", "last"], orient="row")
    ends = ends.cast({"pid": gaps.schema["pid"], "device": gaps.schema["device"]})
    chosen = {(pid, device, e): c for pid, device, e, c in _in_export_order(trace, work, ends)}
    found = pl.DataFrame(
        [(*key, c) for key, c in chosen.items()], schema=[*keys, "nsys"], orient="row"
    ).cast({c: gaps.schema[c] for c in keys} | {"nsys": gaps.schema["context"]})
    gaps = gaps.join(found, on=keys, how="left")
    return gaps.with_columns(pl.coalesce("nsys", "context").alias("context"))
