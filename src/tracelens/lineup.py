"""Line-up: which kinds of kernels take the GPU time.

* :func:`category_summary`: GPU time per kernel category (:mod:`tracelens.categories`, the one
  source of truth), memcpys and memsets included, with a subfamily breakdown;
* :func:`unclassified_kernels`: the kernels no category rule matched, to write rules for;
* :func:`decoded_kernels`: every distinct kernel of a trace, decoded, with its GPU time.

Categories are decided on the demangled kernel name, whatever ``name`` asks to display. Each
distinct name is classified once (a trace has a few hundred) and joined back; nothing runs
per launch in Python.

The GPU time a share (``time_pct``) is taken of is the sum of the durations of every kernel,
memcpy and memset that passes the filters. It is a sum of durations, not the time the GPU
was busy: work that overlaps (several streams or devices) counts once per event.
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path
from typing import TYPE_CHECKING

from .categories import CATEGORIES, Rules, classify_column, load_rules
from .census import check_name_kind, kernel_summary
from .choices import LINEUP_BY
from .errors import check_at_least, check_choice
from .filters import EventFilter

if TYPE_CHECKING:
    import polars as pl

    from .trace import Trace

__all__ = [
    "BY",
    "DEFAULT_BREAKDOWN",
    "NO_SUBFAMILY",
    "category_summary",
    "check_by",
    "by_columns",
    "decoded_kernels",
    "shown_streams",
    "unclassified_kernels",
]

#: Grouping columns ``by`` accepts.
BY = LINEUP_BY
#: Categories broken down by subfamily unless asked otherwise: GEMM libraries (nvjet,
#: cublas_legacy, cutlass, triton_template, gemv, splitk_reduce, ...) and memory (copy
#: kernels, and each memcpy kind and memset as its own row).
DEFAULT_BREAKDOWN = ("gemm", "memory")
#: The breakdown row of kernels whose category rule names no subfamily.
NO_SUBFAMILY = "(none)"
# What a group is, in lineup_activities' columns, in sort order: a stream id is a stream's
# only within one device and process (stream 7 of GPU 0 and of GPU 1 are two streams), so
# by stream the group is all three; by device or pid the stream_* columns are NULL.
_GROUP = ["stream_device", "stream_pid", "group_key"]


def check_by(by: str | None) -> str | None:
    return by if by is None else check_choice("by", by, BY)


def _rules(rules: Rules | str | Path | None) -> Rules:
    if isinstance(rules, Rules):
        return rules
    return load_rules(rules)


def _activities(
    trace: Trace,
    by: str | None,
    rules: Rules | str | Path | None,
    where: EventFilter | None,
    name: str,
    activities: pl.DataFrame | None = None,
) -> pl.DataFrame:
    """``lineup_activities`` rows (``activities`` when the caller has read them) with
    ``category`` and ``subfamily`` joined on."""

    check_by(by)
    check_name_kind(name)
    rules = _rules(rules)
    if activities is not None:
        return _classified(activities, rules)
    trace.require_cuda_work()
    where = where or EventFilter()
    acts = trace.query("lineup_activities", by=by, name_kind=name, **where.params())
    if where.is_whole():  # every kept record: spares the damage count its scan
        import polars as pl

        kept = acts.group_by("kind").agg(pl.col("calls").sum())
        trace.kept_whole(dict(kept.iter_rows()))
    return _classified(acts, rules)


def _classified(acts: pl.DataFrame, rules: Rules) -> pl.DataFrame:
    import polars as pl

    classes = classify_column(acts["name"], rules)
    return acts.with_columns(
        category=classes["category"].cast(pl.String),
        subfamily=classes["subfamily"].cast(pl.String),
    )


def _round1(expr: pl.Expr) -> pl.Expr:
    # Half away from zero, as DuckDB's round(x, 1) in kernel_summary (values are >= 0).
    # The final round() only removes the binary noise of the division (806 / 10 -> 80.6).
    return ((expr * 10.0 + 0.5).floor() / 10.0).round(1)


def _share(grand: int) -> pl.Expr:
    import polars as pl

    if grand <= 0:
        return pl.lit(0.0, dtype=pl.Float64)
    return _round1(pl.col("total_ns").cast(pl.Float64) * 100.0 / grand)


def _summarise(acts: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    """calls, total_ns and the top kernel (display name with the most time) per ``keys``."""
    import polars as pl

    per_display = acts.group_by([*keys, "display"]).agg(
        pl.col("calls").sum(), pl.col("total_ns").sum()
    )
    return (
        per_display.sort(["total_ns", "display"], descending=[True, False])
        .group_by(keys, maintain_order=True)
        .agg(
            calls=pl.col("calls").sum(),
            total_ns=pl.col("total_ns").sum(),
            top_kernel=pl.col("display").first(),
            top_kernel_ns=pl.col("total_ns").first(),
        )
    )


def category_summary(
    trace: Trace,
    *,
    by: str | None = None,
    rules: Rules | str | Path | None = None,
    where: EventFilter | None = None,
    subfamily: bool | Collection[str] | None = None,
    name: str = "demangled",
    top: int | None = None,
    activities: pl.DataFrame | None = None,
) -> pl.DataFrame:
    """GPU time per kernel category, with memcpys and memsets in ``memory``.

    One row per category (``subfamily`` null), each followed by its breakdown rows
    (``subfamily`` set), largest first. Kernels break down by the subfamily their category
    rule names (:data:`NO_SUBFAMILY` when it names none); memory operations by their label
    (``[CUDA memcpy HtoD]``, ..., ``[CUDA memset]``, as ``tracelens memory`` prints them), so
    each copy kind and memset is its own row. Sum the rows whose ``subfamily`` is null for
    totals: breakdown rows repeat their category's time.

    ``subfamily``: None breaks down :data:`DEFAULT_BREAKDOWN` (gemm and memory), True every
    category, False none, or a collection of category names. A breakdown that would be a
    single :data:`NO_SUBFAMILY` row is left out.

    ``by`` (``device``, ``stream`` or ``pid``) adds that leading column and repeats the
    line-up per value (ordered by value); by stream the leading columns are device, pid and
    stream, a stream id being a stream's only within one device and process. ``rules``: a :class:`~tracelens.categories.Rules`,
    or a TOML file whose rules go before the built-in ones. ``name`` says how ``top_kernel``
    is spelled (``demangled``, ``short``, ``mangled``); categories are always decided on the
    demangled name. ``top`` keeps the ``top`` largest categories (per ``by`` value) with
    their breakdown rows (None or 0: every category). ``activities``: the ``queries/lineup_activities.sql`` rows of
    ``by``, ``name`` and ``where`` when the caller has already read them (the report takes
    the kernels' from the GPU work it reads once: ``queries/report_lineup_activities.sql``).

    Columns: [by (device, pid, stream by stream),] category, subfamily, time_pct (share of all GPU time, kernels + memcpy +
    memset, that passes ``where``, %, 0.1), total_ns, calls (launches or operations), avg_ns
    (ns, 0.1), top_kernel_ns (time of the top kernel), top_kernel (the kernel, or memory
    operation, with the most time in the row).
    """
    import polars as pl

    top = check_at_least("top", top, 0, meaning="every row") or None
    acts = _activities(trace, by, rules, where, name, activities)
    grand = int(acts["total_ns"].sum() or 0)
    acts = acts.with_columns(
        part=pl.when(pl.col("kind") == "kernel")
        .then(pl.col("subfamily").fill_null(NO_SUBFAMILY))
        .otherwise(pl.col("name"))
    )
    cats = _summarise(acts, [*_GROUP, "category"]).with_columns(part=pl.lit(None, dtype=pl.String))
    parts = _summarise(acts, [*_GROUP, "category", "part"])
    parts = parts.filter(
        pl.col("category").is_in(sorted(_broken_down(subfamily)))
        & (pl.col("part") != NO_SUBFAMILY).any().over(*_GROUP, "category")
    )
    rows = _in_order(cats.select(parts.columns), parts)
    if top is not None:
        rows = rows.filter((~pl.col("_is_part")).cast(pl.Int64).cum_sum().over(_GROUP) <= top)
    return _finish_by(_summary_columns(rows, grand), by)


def _broken_down(subfamily: bool | Collection[str] | None) -> set[str]:
    """The categories whose rows break down (see :func:`category_summary`)."""
    if subfamily is True:
        return set(CATEGORIES)
    if subfamily is None:
        return set(DEFAULT_BREAKDOWN)
    if subfamily is False:
        return set()
    return set(subfamily)


def _in_order(cats: pl.DataFrame, parts: pl.DataFrame) -> pl.DataFrame:
    """Category rows and their breakdown rows as one table: per group, categories largest
    first (ties in :data:`CATEGORIES` order), each followed by its parts, largest first.
    ``_is_part`` says which rows are parts."""
    import polars as pl

    order = {c: i for i, c in enumerate(CATEGORIES)}
    return (
        pl.concat([cats, parts], how="vertical")
        .with_columns(
            _cat_total=pl.col("total_ns")
            .filter(pl.col("part").is_null())
            .first()
            .over(*_GROUP, "category"),
            _cat_order=pl.col("category").replace_strict(
                order, default=len(order), return_dtype=pl.Int64
            ),
            _is_part=pl.col("part").is_not_null(),
        )
        .sort(
            [*_GROUP, "_cat_total", "_cat_order", "category", "_is_part", "total_ns", "part"],
            descending=[False, False, False, True, False, False, False, True, False],
            nulls_last=True,
        )
    )


def _summary_columns(rows: pl.DataFrame, grand: int) -> pl.DataFrame:
    """The columns of :func:`category_summary` (the group's columns still first)."""
    import polars as pl

    return rows.select(
        *_GROUP,
        "category",
        pl.col("part").alias("subfamily"),
        _share(grand).alias("time_pct"),
        pl.col("total_ns").cast(pl.Int64),
        pl.col("calls").cast(pl.Int64),
        _round1(pl.col("total_ns").cast(pl.Float64) / pl.col("calls")).alias("avg_ns"),
        pl.col("top_kernel_ns").cast(pl.Int64),
        "top_kernel",
    )


def _finish_by(df: pl.DataFrame, by: str | None) -> pl.DataFrame:
    if by is None:
        return df.drop(_GROUP)
    if by == "stream":
        return df.rename({"stream_device": "device", "stream_pid": "pid", "group_key": "stream"})
    return df.drop("stream_device", "stream_pid").rename({"group_key": by})


def by_columns(df: pl.DataFrame, by: str | None) -> list[str]:
    """The leading columns of a :func:`category_summary` or :func:`unclassified_kernels`
    result of ``by`` that say its group: ``[by]``, or by stream the device, pid and stream
    (those of them ``df`` still has: see :func:`shown_streams`); [] without ``by``."""
    if by != "stream":
        return [by] if by else []
    return [c for c in ("device", "pid", "stream") if c in df.columns]


def shown_streams(df: pl.DataFrame, by: str | None) -> pl.DataFrame:
    """``df`` (a result of ``by``) as ``tracelens lineup`` shows it: by stream, without its
    device and pid columns when every row has the same device and process, where the
    stream id alone names the stream (the command's output before streams were told apart
    by device and process); otherwise ``df`` itself."""
    if by != "stream" or df.select("device", "pid").n_unique() > 1:
        return df
    return df.drop("device", "pid")


def unclassified_kernels(
    trace: Trace,
    *,
    by: str | None = None,
    rules: Rules | str | Path | None = None,
    where: EventFilter | None = None,
    top: int | None = None,
) -> pl.DataFrame:
    """The kernels no category rule matches (category ``other``), largest first: what to
    write a rule for.

    Columns: [by (device, pid, stream by stream),] time_pct (share of all GPU time, as in :func:`category_summary`),
    total_ns, calls, base (the last identifier: what a rule with ``on = "base"`` sees), name
    (the demangled name the rules were tried on). ``top`` keeps the first ``top`` names (per
    ``by`` value; None or 0: every name).
    """
    import polars as pl

    from .kernelnames import base_name

    top = check_at_least("top", top, 0, meaning="every row") or None
    acts = _activities(trace, by, rules, where, "demangled")
    grand = int(acts["total_ns"].sum() or 0)
    other = (
        acts.filter((pl.col("kind") == "kernel") & (pl.col("category") == "other"))
        .group_by(*_GROUP, "name")
        .agg(pl.col("calls").sum(), pl.col("total_ns").sum())
        .sort(
            [*_GROUP, "total_ns", "name"],
            descending=[False, False, False, True, False],
            nulls_last=True,
        )
    )
    if top is not None:
        other = other.filter(pl.int_range(pl.len()).over(_GROUP) < top)
    bases = {n: base_name(n) for n in other["name"].unique().to_list()}
    out = other.select(
        *_GROUP,
        _share(grand).alias("time_pct"),
        pl.col("total_ns").cast(pl.Int64),
        pl.col("calls").cast(pl.Int64),
        pl.col("name").replace_strict(bases, default=None, return_dtype=pl.String).alias("base"),
        "name",
    )
    return _finish_by(out, by)


def decoded_kernels(
    trace: Trace, *, where: EventFilter | None = None, top: int | None = None
) -> pl.DataFrame:
    """Every distinct kernel (demangled name) with its GPU time, decoded; largest first.

    Columns: time_pct (share of kernel time, as census), total_ns, instances, family (the
    decoder that recognised the name; ``other`` when none did), category, subfamily, name,
    fields_summary (``field=value`` pairs, space-separated; ``?`` after a field whose meaning
    is unknown, e.g. an undocumented token), fields (list of {field, value, meaning,
    confidence}, as ``KernelName.to_dict()["fields"]``).
    """
    import polars as pl

    from .kernelnames import decode_column

    census = kernel_summary(trace, where=where, top=top)
    dec = decode_column(census["name"])
    fields = dec["fields"]
    e = pl.element().struct
    summary = pl.col("fields").list.eval(
        pl.concat_str(
            e.field("field"),
            pl.lit("="),
            e.field("value"),
            pl.when(e.field("confidence") == "unknown").then(pl.lit("?")).otherwise(pl.lit("")),
        )
    )
    return (
        census.select("time_pct", "total_ns", "instances", "name")
        .with_columns(
            family=dec["family"],
            category=dec["category"],
            subfamily=dec["subfamily"],
            fields=fields,
        )
        .with_columns(fields_summary=summary.list.join(" "))
        .select(
            "time_pct",
            "total_ns",
            "instances",
            "family",
            "category",
            "subfamily",
            "name",
            "fields_summary",
            "fields",
        )
    )
