"""Turning a result DataFrame into text: a rich table, CSV, JSON or Markdown.

Pure functions returning strings; callers decide where the text goes. Columns whose name
ends in ``_ns`` are times and are converted to the requested unit (and renamed, e.g.
``total_ns`` -> ``total_ms``), so a CSV header always says its unit. Names and text from
the profiled program are made safe by :mod:`tracelens.escape`; a TraceInfo is written by
:mod:`tracelens.info_text`; CSV, JSON and the time conversion are :mod:`tracelens.render_data`'s
(all re-exported here, where callers have always found them). This module writes tables
(text and Markdown).
"""

from __future__ import annotations

import contextlib
import gc
import io
from typing import TYPE_CHECKING

from ._table import cell_len
from .escape import encodable, escape_controls, md_code, md_text, printable
from .filters import TIME_UNITS_NS
from .info_text import describe_info
from .render_data import convert_rows, convert_times, csv, csv_chunks, json, json_chunks
from .rows import Rows

if TYPE_CHECKING:
    import polars as pl
    from rich.console import Console

    Frame = pl.DataFrame | Rows

__all__ = [
    "DECIMALS",
    "DEFAULT_WIDTH",
    "HEADERS",
    "LAUNCH_DIMS",
    "RICH_MAX_ROWS",
    "UNIT_SUFFIXES",
    "convert_times",  # from render_data.py
    "csv",
    "csv_chunks",
    "describe_info",  # from info_text.py
    "encodable",  # from escape.py
    "escape_controls",
    "format_time",
    "frame",
    "json",
    "json_chunks",
    "launch_dims_text",
    "markdown",
    "md_code",
    "md_text",
    "printable",
    "rich_console",
    "table",
]

# Display headers for the columns the analyses produce ({u} is the time unit).
HEADERS = {
    "time_pct": "Time (%)",
    "total": "Total ({u})",
    "instances": "Instances",
    "calls": "Calls",
    "count": "Count",
    "avg": "Avg ({u})",
    "med": "Med ({u})",
    "min": "Min ({u})",
    "max": "Max ({u})",
    "stddev": "StdDev ({u})",
    "grid_xyz": "GridXYZ",
    "block_xyz": "BlockXYZ",
    "name": "Name",
    "pid": "PID",
    "tid": "TID",
    "api": "API",
    "nvtx": "NVTX",
    "utilization_pct": "Utilization (%)",
    "idle_pct": "Idle (%)",
    "share_pct": "Share (%)",
    "cpu_start": "CPU start ({u})",
    "cpu_end": "CPU end ({u})",
    "api_name": "API name",
}
# Other units a column name may end with: (header unit, decimals of a float).
UNIT_SUFFIXES = {"_mb": ("MB", 3), "_gbps": ("GB/s", 3), "_bytes": ("bytes", 0)}
_WIDE_TEXT = {"name", "operation", "text", "kernel", "top_kernel", "rule", "why", "fix", "value"}
_WIDE_TEXT |= {"meaning", "fields_summary"}  # tracelens decode
#: Integer columns that are ids, not amounts: shown as the export and the filters write
#: them (PID 48213, not 48,213, so that a value read in a table can be given to --pid).
_ID_COLUMNS = {"pid", "tid", "device", "stream", "context", "correlation_id"}


#: Decimals of a time shown in a table, per unit: at least 1 µs resolution (ns: the 0.1 of
#: averages), so that --timeunit s does not print 0.000 for every kernel.
DECIMALS = {"ns": 1, "us": 3, "ms": 3, "s": 6}


def format_time(ns: float, timeunit: str) -> str:
    """``ns`` in ``timeunit`` with the table's decimals: ``494.110 ms``."""
    value = ns / TIME_UNITS_NS[timeunit]
    return f"{value:,.0f} ns" if timeunit == "ns" else f"{value:,.{DECIMALS[timeunit]}f} {timeunit}"


def _as_rows(df: Frame) -> Rows:
    return df if isinstance(df, Rows) else Rows.from_polars(df)


#: A launch configuration in data (DataFrames, CSV, JSON): six integer columns.
LAUNCH_DIMS = ("grid_x", "grid_y", "grid_z", "block_x", "block_y", "block_z")


def launch_dims_text(rows: Rows) -> Rows:
    """For tables and Markdown: ``grid_x/y/z`` as one ``grid_xyz`` text column where
    ``grid_x`` was, printed as nsys prints GridXYZ (``'%4d %4d %4d'``), and the block
    likewise. Rows without those columns come back unchanged."""
    if not set(LAUNCH_DIMS) <= set(rows.columns):
        return rows
    at = {c: rows.columns.index(c) for c in LAUNCH_DIMS}
    groups = {"grid_xyz": LAUNCH_DIMS[:3], "block_xyz": LAUNCH_DIMS[3:]}
    columns, kinds, picks = [], [], []
    for i, col in enumerate(rows.columns):
        if col in ("grid_x", "block_x"):
            name = "grid_xyz" if col == "grid_x" else "block_xyz"
            columns.append(name)
            kinds.append("str")
            picks.append(tuple(at[c] for c in groups[name]))
        elif col not in LAUNCH_DIMS:
            columns.append(col)
            kinds.append(rows.kinds[i])
            picks.append(i)

    def dims(row: tuple, idx: tuple[int, ...]) -> str | None:
        values = [row[j] for j in idx]
        return None if None in values else "{:4d} {:4d} {:4d}".format(*values)

    data = tuple(
        tuple(dims(row, p) if isinstance(p, tuple) else row[p] for p in picks) for row in rows.data
    )
    return Rows(tuple(columns), tuple(kinds), data)


def _header(col: str, unit: str) -> str:
    for suffix in ("_ns", "_us", "_ms", "_s"):
        if col.endswith(suffix):
            base = col[: -len(suffix)]
            u = suffix[1:]
            return HEADERS.get(base, base.replace("_", " ").capitalize() + " ({u})").format(u=u)
    for suffix, (u, _decimals) in UNIT_SUFFIXES.items():
        if col.endswith(suffix):
            base = col[: -len(suffix)]
            return HEADERS.get(base, base.replace("_", " ").capitalize() + " ({u})").format(u=u)
    return HEADERS.get(col, col.replace("_", " ").capitalize())


def _cell(value: object, decimals: int, column: str = "") -> str:
    if column.endswith("_pct") and isinstance(value, float):
        return f"{value:.1f}"
    for suffix, (_u, fixed) in UNIT_SUFFIXES.items():
        if column.endswith(suffix) and isinstance(value, float):
            return f"{value:,.{fixed}f}"
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value) if column in _ID_COLUMNS else f"{value:,}"
    if isinstance(value, float):
        return f"{value:,.{decimals}f}"
    return printable(str(value))


def _formatter(column: str, decimals: int):
    """``_cell`` for one column, with the column's decisions taken once (a table of a
    million rows formats ten million cells)."""
    float_format = f"{{:,.{decimals}f}}"
    int_format = "{}" if column in _ID_COLUMNS else "{:,}"
    if column.endswith("_pct"):
        float_format = "{:.1f}"
    for suffix, (_u, fixed) in UNIT_SUFFIXES.items():
        if column.endswith(suffix):
            float_format = f"{{:,.{fixed}f}}"

    def cell(value: object) -> str:
        kind = type(value)
        if kind is str:
            return printable(value)
        if kind is int:
            return int_format.format(value)
        if kind is float:
            return float_format.format(value)
        return _cell(value, decimals, column)

    return cell


#: Width of a table when the output is not a terminal (a file, a pipe): wide enough for
#: the common columns, so that captured output reads as the terminal shows it.
DEFAULT_WIDTH = 160


def table(
    df: Frame,
    *,
    timeunit: str = "ns",
    title: str | None = None,
    caption: str | None = None,
    row_styles: list[str | None] | None = None,
    width: int = DEFAULT_WIDTH,
    color: bool = False,
) -> str:
    """An aligned text table at most ``width`` columns wide (wider only when its columns
    cannot fit: it wraps lines rather than crop). ``color``: emit ANSI styles, e.g.
    ``row_styles`` (one rich style per row, such as "cyan"); the caller decides (a color
    terminal, ``NO_COLOR`` unset), this function never looks at the terminal."""
    df = launch_dims_text(_as_rows(df))
    with _no_gc():
        return _table(df, timeunit, title, caption, row_styles, width, color)


@contextlib.contextmanager
def _no_gc():
    """The cycle collector off while a table is built: its millions of small strings all
    survive, and each generational pass re-scans them (10x the rows took 12x the time with
    it on, 10x with it off). Nothing made here forms a reference cycle."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _table(
    df: Rows,
    timeunit: str,
    title: str | None,
    caption: str | None,
    row_styles: list[str | None] | None,
    width: int,
    color: bool,
) -> str:
    decimals = DECIMALS[timeunit]
    formats = [_formatter(col, decimals) for col in df.columns]
    cells = [[f(v) for f, v in zip(formats, row, strict=True)] for row in df.iter_rows()]

    # Never crop: numbers keep their natural width and wide text (kernel names) at least 40
    # columns; a narrower terminal wraps the lines instead of losing characters.
    natural = 2
    for j, col in enumerate(df.columns):
        # in terminal cells: a CJK character takes two
        longest = max([cell_len(_header(col, timeunit))] + [cell_len(r[j]) for r in cells])
        natural += 43 if col in _WIDE_TEXT else longest + 3
    console_width = max(width, natural)
    if not color or len(cells) > RICH_MAX_ROWS:
        from ._table import ColumnSpec, plain_table

        specs = [
            ColumnSpec(
                _header(col, timeunit),
                right=df.is_numeric(col),
                wrap=col in _WIDE_TEXT,
                min_width=20 if col in _WIDE_TEXT else None,
            )
            for col in df.columns
        ]
        title_text = printable(title) if title else None
        caption_text = printable(caption) if caption else None
        lines = plain_table(
            specs, cells, title=title_text, caption=caption_text, console_width=console_width
        )
        return "\n".join(line.rstrip() for line in lines) + "\n"
    return _rich_table(df, cells, title, caption, row_styles, timeunit, console_width, color=True)


#: Above this many rows a table is written without colour (the plain writer, linear in the
#: cells): rich takes ~70 µs a cell, minutes for a census of a million kernels.
RICH_MAX_ROWS = 5_000


def _rich_table(
    df: Rows,
    cells: list[list[str]],
    title: str | None,
    caption: str | None,
    row_styles: list[str | None] | None,
    timeunit: str,
    console_width: int,
    *,
    color: bool,
) -> str:
    """The table as rich writes it, with ANSI styles when ``color``: without, the same
    text as the plain writer (tests/test_render_speed.py compares them)."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    t = Table(
        title=Text(printable(title)) if title else None,
        caption=Text(printable(caption)) if caption else None,
        box=box.SIMPLE_HEAD,
        title_justify="left",
        caption_justify="left",
    )
    for col in df.columns:
        numeric = df.is_numeric(col)
        wide = col in _WIDE_TEXT
        t.add_column(
            Text(_header(col, timeunit)),
            justify="right" if numeric else "left",
            no_wrap=not wide,
            overflow="fold",
            ratio=1 if wide else None,
            min_width=20 if wide else None,
        )
    for i, row in enumerate(cells):
        # Text(), not str: kernel names such as `[lambda(float) (instance 1)]` are not markup.
        t.add_row(*(Text(c) for c in row), style=row_styles[i] if row_styles else None)
    out = io.StringIO()
    rich_console(out, width=console_width, color=color).print(t)
    # Rich pads every line to the console width; trailing blanks only hurt when pasting.
    return "\n".join(line.rstrip() for line in out.getvalue().splitlines()) + "\n"


def rich_console(file: io.StringIO, *, width: int, color: bool) -> Console:
    """A rich console writing to ``file``, ``width`` columns wide, with ANSI styles only
    when ``color``; it highlights nothing and reads no emoji codes, so names print as they
    are. Every rich text output (tables, the diff's board) goes through one."""
    from rich.console import Console

    return Console(
        file=file,
        width=width,
        color_system="auto" if color else None,
        force_terminal=color,
        highlight=False,
        emoji=False,
        soft_wrap=False,
    )


# -- Markdown -------------------------------------------------------------------------------------


def markdown(
    df: Frame, *, timeunit: str = "ns", title: str | None = None, decimals: int | None = None
) -> str:
    """A GitHub-flavoured Markdown table; text columns of names (:data:`_WIDE_TEXT`) are
    code spans, every other cell and the title escaped text. ``decimals``: of the floats
    (None: the unit's, :data:`DECIMALS`)."""
    df = launch_dims_text(_as_rows(df))
    decimals = DECIMALS[timeunit] if decimals is None else decimals
    lines = []
    if title:
        lines += [f"**{md_text(title)}**", ""]
    heads = [md_text(_header(c, timeunit)) for c in df.columns]
    lines.append("| " + " | ".join(heads) + " |")
    aligns = ["---:" if df.is_numeric(c) else ":---" for c in df.columns]
    lines.append("| " + " | ".join(aligns) + " |")
    for row in df.iter_rows():
        cells = []
        for v, col in zip(row, df.columns, strict=True):
            c = _cell(v, decimals, col)
            code = col in _WIDE_TEXT and c != "—"
            cells.append(md_code(c, table=True) if code else md_text(c))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def frame(
    df: pl.DataFrame,
    *,
    fmt: str,
    timeunit: str = "ns",
    title: str | None = None,
    caption: str | None = None,
    row_styles: list[str | None] | None = None,
    width: int = DEFAULT_WIDTH,
    color: bool = False,
) -> str:
    """``df`` (times in ns) as text in ``fmt``: table, csv, json or markdown (``width``,
    ``color``, ``row_styles``: see :func:`table`)."""
    if fmt in ("csv", "json"):
        rows = isinstance(df, Rows)
        data = convert_rows(df, timeunit) if rows else convert_times(df, timeunit)
        return csv(data) if fmt == "csv" else json(data)
    df = convert_rows(_as_rows(df), timeunit)
    if fmt == "markdown":
        return markdown(df, timeunit=timeunit, title=title)
    return table(
        df,
        timeunit=timeunit,
        title=title,
        caption=caption,
        row_styles=row_styles,
        width=width,
        color=color,
    )
