"""Heat maps: a grid of cells (e.g. rank x step), each coloured by its value over its
column's median."""

from __future__ import annotations

from markupsafe import Markup, escape

from .style import INK, MUTED, coord, element


def _heat_color(ratio: float | None) -> str:
    """A cell's colour from its value over the column's median: grey at the median, red
    when above (up to 1.5x), blue when below (down to 2/3)."""
    if ratio is None:
        return "#ffffff"
    base = (241, 245, 249)
    if ratio >= 1:
        far, t = (220, 38, 38), min((ratio - 1) / 0.5, 1.0)
    else:
        far, t = (37, 99, 235), min((1 - ratio) / (1 / 3), 1.0)
    r, g, b = (round(x + (y - x) * t) for x, y in zip(base, far, strict=True))
    return f"#{r:02x}{g:02x}{b:02x}"


def heatmap(
    rows: list[str],
    columns: list[str],
    cells: list[list[tuple[float, str] | None]],
    *,
    width: int = 1180,
    label_width: int = 80,
) -> Markup:
    """``cells[i][j]``: (value, tooltip) of row i and column j, or None (no value). Each
    cell is coloured by its value over its column's median (:func:`_heat_color`)."""
    import statistics

    n_cols = max(len(columns), 1)
    cw = max(min((width - label_width) / n_cols, 28.0), 2.0)
    ch = max(min(600 / max(len(rows), 1), 18.0), 3.0)
    top = 16
    height = top + ch * len(rows) + 4
    medians = []
    for j in range(len(columns)):
        values = [r[j][0] for r in cells if r[j] is not None]
        medians.append(statistics.median(values) if values else None)
    out = []
    every = max(1, int(40 / cw))  # column labels that fit
    for j, label in enumerate(columns):
        if j % every == 0:
            x = label_width + j * cw
            out.append(
                f'<text x="{coord(x + 1)}" y="{top - 4}" fill="{MUTED}" font-size="9.5">'
                f"{escape(label)}</text>"
            )
    for i, (label, row) in enumerate(zip(rows, cells, strict=True)):
        y = top + i * ch
        if ch >= 8:
            out.append(
                f'<text x="{label_width - 6}" y="{coord(y + ch - 2)}" text-anchor="end" '
                f'fill="{INK}" font-size="{min(11, ch - 1):.0f}">{escape(label)}</text>'
            )
        for j, cell in enumerate(row):
            if cell is None:
                continue
            value, tip = cell
            m = medians[j]
            color = _heat_color(value / m if m else None)
            out.append(
                f'<rect x="{coord(label_width + j * cw)}" y="{coord(y)}" width="{coord(max(cw - 0.5, 1))}" '
                f'height="{coord(max(ch - 0.5, 1))}" fill="{color}" data-tip="{escape(tip)}"/>'
            )
    return element(label_width + cw * n_cols, height, out, cls="heat")
