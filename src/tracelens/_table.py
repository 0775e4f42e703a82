"""The plain (uncoloured) text table, in time linear in its cells.

rich lays a table out by measuring and rendering every cell as a renderable (~70 µs a cell:
a census of 10^6 distinct kernels took over 10 minutes and 7 GB). This writes the same
text as rich's ``box.SIMPLE_HEAD`` table with the options :func:`tracelens.render.table`
uses, from plain strings: the column widths come from rich's own algorithm, run on a table
holding only the header and the widest cell of each column (the widths depend on nothing
else), and only a cell wider than its column goes through rich's word wrap.
tests/test_render_speed.py checks that the two agree on generated tables and that 10x the
rows cost about 10x the time.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache


@dataclass(frozen=True)
class ColumnSpec:
    """A column as render.table declares it to rich."""

    header: str
    right: bool  # numbers: right-justified
    wrap: bool  # wide text: may wrap (word wrap, long words folded); others never do
    min_width: int | None


def cell_len(text: str) -> int:
    """Terminal cells ``text`` takes (a CJK character two), fast for ASCII."""
    if text.isascii():
        return len(text)
    from rich.cells import cell_len as rich_cell_len

    return rich_cell_len(text)


def plain_table(
    columns: list[ColumnSpec],
    cells: list[list[str]],
    *,
    title: str | None,
    caption: str | None,
    console_width: int,
) -> list[str]:
    """The lines (trailing blanks kept) of the table rich prints for ``columns`` and
    ``cells`` (already formatted, control characters escaped) on a console
    ``console_width`` wide."""
    widths = _column_widths(columns, cells, console_width)
    inner = [w - 2 for w in widths]  # one blank either side of each cell
    out: list[str] = []
    table_width = sum(widths) + len(widths) + 1  # the edges and one rule between columns
    if title:
        out.extend(_annotation(title, table_width))
    blank = " " * table_width
    out.append(blank)  # SIMPLE_HEAD's top edge: a line of blanks
    out.extend(_row([c.header for c in columns], columns, inner))
    out.append(" " + "─" * (table_width - 2) + " ")
    for row in cells:
        out.extend(_row(row, columns, inner))
    out.append(blank)  # bottom edge
    if caption:
        out.extend(_annotation(caption, table_width))
    return out


def _row(row: list[str], columns: list[ColumnSpec], inner: list[int]) -> list[str]:
    parts: list[list[str]] = []
    for text, column, width in zip(row, columns, inner, strict=True):
        length = cell_len(text)
        if length <= width:
            if column.right:
                text = text.rstrip()
                parts.append([" " * (width - cell_len(text)) + text])
            else:
                parts.append([text + " " * (width - length)])
        else:
            parts.append(_wrapped(text, width, column))
    if all(len(p) == 1 for p in parts):
        return [" " + " ".join(f" {p[0]} " for p in parts) + " "]
    height = max(len(p) for p in parts)
    lines = []
    for i in range(height):
        pieces = (p[i] if i < len(p) else " " * w for p, w in zip(parts, inner, strict=True))
        lines.append(" " + " ".join(f" {piece} " for piece in pieces) + " ")
    return lines


def _wrapped(text: str, width: int, column: ColumnSpec) -> list[str]:
    """A cell wider than its column, as rich shows it: wide text word-wrapped (long words
    folded), other text cut (render.table sizes the console so that this does not
    happen)."""
    from rich.text import Text

    lines = Text(text).wrap(
        _console(max(width, 1)),
        width,
        justify="right" if column.right else "left",
        overflow="fold",
        no_wrap=not column.wrap,
    )
    return [line.plain for line in lines]


@lru_cache(maxsize=16)
def _console(width: int):
    """A plain console ``width`` wide, made once per width: a table wraps many cells to
    the same few widths, and making a rich Console costs ~0.15 ms (a census of 300 kernels
    with long names wrapped 250 cells: ~0.04 s). Wrapping only measures text with it."""
    from rich.console import Console

    return Console(width=width, color_system=None, highlight=False, emoji=False)


def _annotation(text: str, width: int) -> list[str]:
    """A title or caption, wrapped to the table's width as rich does."""
    from rich.console import Console
    from rich.text import Text

    console = Console(width=width, color_system=None, highlight=False, emoji=False)
    return [line.plain for line in Text(text).wrap(console, width, justify="left")]


def _column_widths(columns: list[ColumnSpec], cells: list[list[str]], width: int) -> list[int]:
    """rich's widths (cell plus padding) for these columns on a console ``width`` wide.

    rich measures a column by its widest cell (and its longest word, which the widths do not
    use): a rich table of the header and, per column, that one cell gets the same widths.
    """
    from rich import box
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    widest = [c.header for c in columns]
    longest = [cell_len(c.header) for c in columns]
    for row in cells:
        for j, text in enumerate(row):
            n = len(text) if text.isascii() else cell_len(text)
            if n > longest[j]:
                longest[j], widest[j] = n, text
    proxy = Table(box=box.SIMPLE_HEAD)
    for c in columns:
        proxy.add_column(
            Text(c.header),
            justify="right" if c.right else "left",
            no_wrap=not c.wrap,
            overflow="fold",
            ratio=1 if c.wrap else None,
            min_width=c.min_width,
        )
    if cells:
        proxy.add_row(*(Text(t) for t in widest))
    console = Console(width=width, color_system=None, highlight=False, emoji=False)
    options = console.options
    return proxy._calculate_column_widths(console, options.update_width(width - proxy._extra_width))
