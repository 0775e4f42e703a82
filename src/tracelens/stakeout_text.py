"""The text of a :class:`~tracelens.stakeout.Stakeout`: ``table`` (summary, launch
configurations, duration histogram, launches), ``markdown`` (the same sections), ``json``
(one object) or ``csv`` (the launches)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .escape import printable
from .render import DEFAULT_WIDTH
from .stakeout import CONFIG_COLUMNS, Stakeout, quoted, summary_frame

if TYPE_CHECKING:
    import polars as pl

__all__ = ["EARLY_NOTE", "histogram_lines", "render"]

HISTOGRAM_WIDTH = 40  # characters of the longest bar

EARLY_NOTE = (
    "early: the kernel started before its launch call returned (the call returns after "
    "queueing the work, or the host and GPU clocks differ), so the queue time is no latency"
)

# The launches table's columns, in order; those with one value in every listed launch are
# said once, above the table (see _fold_constant_columns).
_TABLE_COLUMNS = (
    "start_ns", "duration_ns", "queue_ns", "name", "config", "device", "stream", "pid", "tid",
    "correlation_id", "api", "nvtx",
)  # fmt: skip
_FOLDABLE = ("name", "config", "device", "stream", "pid", "tid", "api", "nvtx")


def render(
    result: Stakeout,
    *,
    fmt: str,
    timeunit: str,
    source: str,
    width: int = DEFAULT_WIDTH,
    color: bool = False,
) -> str:
    """The whole result as text: ``table`` (summary, configurations, histogram, launches;
    ``width`` and ``color`` as :func:`tracelens.render.table`), ``markdown`` (the same
    sections), ``json`` (one object) or ``csv`` (the launches)."""
    from . import render as r

    if fmt == "csv":
        return r.frame(result.launches, fmt="csv", timeunit=timeunit)
    if fmt == "json":
        return _json(result, timeunit)
    title, shown = _title(result, source), _launches_caption(result)
    if fmt == "markdown":
        return _markdown(result, title, shown, timeunit)
    if result.total_launches == 0:
        why = (
            "no kernel name matches in this case (some do ignoring case)"
            if result.hint
            else "no launch of a matching kernel passes the filters"
        )
        return f"{title}\n{why}\n"
    return _table(result, title, shown, timeunit, {"width": width, "color": color})


def _json(result: Stakeout, timeunit: str) -> str:
    import json

    from . import render as r

    summary = summary_frame(result)
    doc = {
        "pattern": result.pattern,
        "match": result.match,
        "name": result.name_kind,
        "kernels": r.convert_times(result.kernels, timeunit).to_dicts(),
        "summary": (r.convert_times(summary, timeunit).to_dicts() or [None])[0],
        "configs": r.convert_times(result.configs, timeunit).to_dicts(),
        "histogram": r.convert_times(result.histogram, timeunit).to_dicts(),
        "launches": r.convert_times(result.launches, timeunit).to_dicts(),
    }
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def _title(result: Stakeout, source: str) -> str:
    """'stakeout of SOURCE: 'PATTERN' (MATCH), N launches[ of NAME | of K kernels]'."""
    n = result.total_launches
    title = f"stakeout of {source}: {quoted(result.pattern)} ({result.match}), {n:,} launch" + (
        "" if n == 1 else "es"
    )
    if result.kernels.height == 1:
        # a name from the program: a line break in it would split the title (as \xNN, as the
        # launch rows and the hints show it)
        title += f" of {printable(result.kernels['name'][0])}"
    elif result.kernels.height:
        title += f" of {result.kernels.height} kernels"
    return title


def _launches_caption(result: Stakeout) -> str:
    """The launches table's caption: its order, and how many of how many it lists."""
    order = "longest first" if result.sort == "duration" else "by start"
    cut = cut_note(result)
    return f"launches, {order}" + (f" ({cut})" if cut else "")


def cut_note(result: Stakeout) -> str | None:
    """'first N of M; --limit 0 for all' when ``--limit`` cut the launches, else None: the
    launches caption's words, which csv and json (no caption) say on stderr."""
    n, listed = result.total_launches, result.launches.height
    return f"first {listed:,} of {n:,}; --limit 0 for all" if listed < n else None


def _markdown(result: Stakeout, title: str, shown: str, timeunit: str) -> str:
    from . import render as r

    launches, early = _mark_early(result.launches, timeunit)
    if early:
        shown += f"; {early:,} {EARLY_NOTE}"
    sections = [(summary_frame(result), title)]
    if result.kernels.height > 1:
        sections.append((result.kernels, "kernels"))
    sections += [(result.configs, "launch configurations")]
    parts = [
        r.markdown(r.convert_times(df, timeunit), timeunit=timeunit, title=t) for df, t in sections
    ]
    bins = r.convert_times(result.histogram, timeunit)
    decimals = histogram_decimals(result.histogram, timeunit)
    parts.append(r.markdown(bins, timeunit=timeunit, title="durations", decimals=decimals))
    parts.append(r.markdown(r.convert_times(launches, timeunit), timeunit=timeunit, title=shown))
    return "\n".join(parts)


def _table(result: Stakeout, title: str, shown: str, timeunit: str, tty: dict) -> str:
    """One line per launch; its configuration is its number in the configurations table,
    and what is the same in every listed launch is said once, above the table."""
    from . import render as r

    launches, same = _fold_constant_columns(result)
    if same:
        # of the launches listed: with --limit, not a claim about the others
        cut = result.launches.height < result.total_launches
        every = f"in each of these {result.launches.height:,}" if cut else "in every one"
        shown += f"; {every}: " + ", ".join(same)
    launches, early = _mark_early(launches, timeunit)
    parts = [title + "\n", r.frame(summary_frame(result), fmt="table", timeunit=timeunit, **tty)]
    if result.kernels.height > 1:
        parts.append(
            r.frame(result.kernels, fmt="table", timeunit=timeunit, **tty, title="kernels")
        )
    parts.append(
        r.frame(
            result.configs, fmt="table", timeunit=timeunit, **tty, title="launch configurations"
        )
    )
    parts.append(
        f"durations ({timeunit})\n"
        + "\n".join(histogram_lines(result.histogram, timeunit))
        + "\n\n"
    )
    parts.append(shown + "\n")
    parts.append(r.frame(launches, fmt="table", timeunit=timeunit, **tty))
    if early:
        parts.append(f"{early:,} {'launch' if early == 1 else 'launches'} {EARLY_NOTE}\n")
    return "".join(parts).rstrip("\n") + "\n"


def _fold_constant_columns(result: Stakeout) -> tuple[pl.DataFrame, list[str]]:
    """The launches with their configuration number, less the columns that hold one value
    in every listed launch (or none in any), and those values as 'Header value' texts."""
    from . import render as r

    launches = result.launches.join(
        result.configs.select("config", *CONFIG_COLUMNS),
        on=CONFIG_COLUMNS,
        how="left",
        nulls_equal=True,
        maintain_order="left",
    ).select(_TABLE_COLUMNS)
    same = []
    for col in _FOLDABLE:
        values = launches[col].unique()
        if launches.height > 1 and len(values) == 1 or values.null_count() == len(values):
            launches = launches.drop(col)
            if values[0] is not None and not (col == "name" and result.kernels.height == 1):
                same.append(f"{r.HEADERS.get(col, col)} {printable(str(values[0]))}")
    return launches, same


def histogram_lines(hist: pl.DataFrame, timeunit: str, width: int = HISTOGRAM_WIDTH) -> list[str]:
    """Text bars, one line per bin: 'lo – hi  ████ count'. The longest bar is ``width``
    characters; a bin with launches gets at least one."""
    from .filters import TIME_UNITS_NS

    if hist.is_empty():
        return []
    factor = TIME_UNITS_NS[timeunit]
    decimals = histogram_decimals(hist, timeunit)

    def fmt(ns: int) -> str:
        return f"{ns:,}" if factor == 1 else f"{ns / factor:,.{decimals}f}"

    peak = max(hist["launches"])
    rows = [(fmt(lo), fmt(hi), n) for lo, hi, n in hist.iter_rows()]
    w_lo = max(len(r[0]) for r in rows)
    w_hi = max(len(r[1]) for r in rows)
    lines = []
    for lo, hi, n in rows:
        bar = "█" * (max(1, round(n * width / peak)) if n else 0)
        lines.append(f"  {lo:>{w_lo}} – {hi:>{w_hi}}  {bar:<{width}}  {n:,}".rstrip())
    return lines


def histogram_decimals(hist: pl.DataFrame, timeunit: str) -> int:
    """Decimals of the bin edges in ``timeunit``: the tables' (at least µs resolution:
    render.DECIMALS), and more while two bins' edges would read alike (bins narrower than
    that: 3 decimals printed every bin of a 14.6-16.9 µs kernel as '0.015 – 0.015' ms), up
    to ns resolution."""
    from .filters import TIME_UNITS_NS
    from .render import DECIMALS

    factor = TIME_UNITS_NS[timeunit]
    finest = len(str(factor)) - 1  # 1 ns in the unit
    decimals = min(DECIMALS[timeunit], finest)
    edges = [hist["lo_ns"].to_list(), hist["hi_ns"].to_list()]

    def alike(values: list[int]) -> bool:
        return len({f"{v / factor:.{decimals}f}" for v in values}) < len(set(values))

    while decimals < finest and any(alike(values) for values in edges):
        decimals += 1
    return decimals


def _mark_early(launches: pl.DataFrame, timeunit: str) -> tuple[pl.DataFrame, int]:
    """``launches`` with its queue column as text in ``timeunit``, negative values marked
    ``early`` (see :data:`EARLY_NOTE`), and how many are; unchanged when none is."""
    import polars as pl

    from . import render as r
    from .filters import TIME_UNITS_NS

    early = int((launches["queue_ns"] < 0).sum())
    if not early:
        return launches, 0
    factor, decimals = TIME_UNITS_NS[timeunit], r.DECIMALS[timeunit] if timeunit != "ns" else 0
    text = [
        None if v is None else f"{v / factor:,.{decimals}f}" + (" early" if v < 0 else " " * 6)
        for v in launches["queue_ns"].to_list()
    ]
    width = max(len(t) for t in text if t is not None)
    text = [None if t is None else t.rjust(width) for t in text]  # numbers stay aligned
    column = pl.Series(f"queue_{timeunit}", text, dtype=pl.String)
    return launches.with_columns(column).select(
        [column.name if c == "queue_ns" else c for c in launches.columns]
    ), early
