"""What every chart shares: the category colours (stable within a report), fonts and inks,
coordinates written short, and the ``<svg>`` element around a chart's body."""

from __future__ import annotations

from collections.abc import Iterable

from markupsafe import Markup, escape

# Categories the classifier is known to produce get fixed colors, so a category looks the same
# in every report; any other category gets the next color of EXTRA.
CATEGORY_COLORS: dict[str, str] = {
    "gemm": "#3b6fb6",
    "attention": "#d6453d",
    "convolution": "#2f8fbf",
    "communication": "#9b59b6",
    "elementwise": "#4f9d52",
    "reduction": "#7fb5a8",
    "normalization": "#e2b02e",
    "memory": "#8d6e63",
    "sort_sampling": "#d17fb1",
    "moe": "#b8860b",
    "quantization": "#5f9ea0",
    "embedding": "#8c6bb1",
    "compiler_generated": "#f08a3c",
    "other": "#a3a3a3",
    "memcpy": "#26a5b8",
    "memset": "#b0bec5",
}


EXTRA = (
    "#6a8fd0",
    "#e07a5f",
    "#81b29a",
    "#c08497",
    "#3d405b",
    "#f2cc8f",
    "#7b9e89",
    "#b56576",
    "#457b9d",
    "#9a8c98",
)


FONT = "ui-sans-serif, system-ui, -apple-system, 'Segoe UI', Roboto, Helvetica, Arial, sans-serif"


MONO = "ui-monospace, SFMono-Regular, Menlo, Consolas, 'DejaVu Sans Mono', monospace"


INK = "#1f2937"


MUTED = "#6b7280"


GRID = "#e5e7eb"


COLOR_A = "#9ca3af"  # baseline (A) bars


COLOR_B = "#2563eb"  # compared (B) bars


class Palette:
    """Category -> color, stable within one report."""

    def __init__(self) -> None:
        self._extra: dict[str, str] = {}

    def __call__(self, category: str | None) -> str:
        key = (category or "other").lower()
        if key in CATEGORY_COLORS:
            return CATEGORY_COLORS[key]
        if key not in self._extra:
            self._extra[key] = EXTRA[len(self._extra) % len(EXTRA)]
        return self._extra[key]


def coord(x: float) -> str:
    """A coordinate: short, no exponent."""
    if abs(x - round(x)) < 0.005:
        return str(int(round(x)))
    return f"{x:.2f}".rstrip("0").rstrip(".")


def element(
    width: float, height: float, body: Iterable[str], *, cls: str = "", **attrs: str
) -> Markup:
    extra = "".join(f' {k.replace("_", "-")}="{escape(v)}"' for k, v in attrs.items())
    head = (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart {escape(cls)}" '
        f'width="{coord(width)}" height="{coord(height)}" viewBox="0 0 {coord(width)} {coord(height)}" '
        f'font-family="{FONT}" font-size="11"{extra}>'
    )
    return Markup(head + "".join(body) + "</svg>")


def clip_text(text: str, chars: int) -> str:
    return text if len(text) <= chars else text[: max(chars - 1, 1)] + "…"
