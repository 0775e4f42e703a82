"""What the page shows about two traces: the diff (:func:`tracelens.diff`) shaped into the
evidence board, summary cards, charts and tables of the diff view."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from markupsafe import Markup

from ..units import fmt_ns, fmt_ratio
from . import svg
from .dangerview import danger_left_out, danger_rule_notes
from .kernelview import CHART_ROWS
from .omitted import Omitted
from .stakeoutview import STAKEOUT_KERNELS, StakeoutRow, stakeout_rows
from .text import count, danger_hits, decode, labels, ratio_class, short

if TYPE_CHECKING:
    from ..compare import TraceDiff
    from ..stakeout import KernelProfiles
    from ..trace import Trace

WIDTH = 1180  # px, charts span the page
STAKEOUT_NEWCOMERS = 2  # of the stakeout's kernels, those only one run launches
ALIGNMENT_REPLACED = 5  # most common replacements listed per device
ALIGNMENT_ONLY = 3  # launches only one side makes, listed per device
DANGER_TITLE = "Danger-zone kernels"  # the text board's title, to which it adds the basis
DANGER_HEADERS = ("Risk", "Change", "Kernel", "Rule", "Calls A", "Calls B", "Time A", "Time B")


@dataclass
class DiffView:
    d: Any
    clues: list[Any]  # the evidence board, in the diff's order
    # per clue (same order): the link to its evidence, the first row that backs it (or its
    # table when it names no row)
    clue_links: list[str]
    impacts: list[str]  # per clue: its impact as the text board writes it ("+1.32 ms/step")
    summary: list[tuple[str, str, str]]  # (label, value, css class)
    totals: list[dict[str, Any]]  # cells, row_id, clues (numbers of the clues it backs)
    categories: list[dict[str, Any]]
    category_chart: Markup
    kernels: list[dict[str, Any]]
    kernel_chart: Markup
    stakeout: list[StakeoutRow]
    variants: list[dict[str, Any]]
    copies: list[dict[str, Any]]
    alignment: list[dict[str, Any]]
    danger: list[dict[str, Any]]
    danger_rules: list[dict[str, Any]]  # each rule of ``danger`` once, with its why and fix
    kernels_more: int
    # what each danger change was judged on, as the text board says it: per step or the
    # totals' scale (None when both captures hold the same work), and the table's columns
    danger_judged: str | None = None
    danger_headers: list[str] = field(default_factory=lambda: list(DANGER_HEADERS))
    regions: list[dict[str, Any]] = field(default_factory=list)  # NVTX region deltas
    regions_more: int = 0
    region_steps: bool = False  # the deltas are per step (both runs have steps)
    # "totals of each capture: 20 steps in A, 60 in B; compare the per-call columns" when
    # the captures hold different amounts of work (the text board's words), else ""
    totals_caveat: str = ""


def _summary(d: TraceDiff) -> list[tuple[str, str, str]]:
    figures = d.figures
    totals = {r["metric"]: r for r in d.totals.iter_rows(named=True)}
    kt = totals.get("kernel time (ns)", {})
    kl = totals.get("kernel launches", {})
    strong = sum(1 for c in d.clues if c.strength == "strong")
    return [
        (
            "kernel time",
            f"{fmt_ns(kt.get('a'))} → {fmt_ns(kt.get('b'))}",
            ratio_class(kt.get("ratio")),
        ),
        ("B / A", fmt_ratio(kt.get("ratio")), ratio_class(kt.get("ratio"))),
        ("launches", f"{count(kl.get('a'))} → {count(kl.get('b'))}", ""),
        (
            "kernels only in A / B",
            f"{int(figures.get('vanished_kernels', 0))} / {int(figures.get('new_kernels', 0))}",
            "",
        ),
        ("clues", f"{len(d.clues)} ({strong} strong)", "up" if strong else ""),
        (
            "danger-zone changes",
            str(int(figures.get("new_danger", 0) + figures.get("vanished_danger", 0))),
            "up" if figures.get("new_danger", 0) else "",
        ),
    ]


def _category_chart(categories: list[dict[str, Any]]) -> Markup:
    rows = sorted(categories, key=lambda r: -max(r["a_total_ns"], r["b_total_ns"]))
    return svg.paired_hbars(
        [
            svg.PairBar(
                label=r["category"],
                a=r["a_total_ns"],
                b=r["b_total_ns"],
                color=r["color"],
                right=f"{fmt_ns(r['a_total_ns'])} → {fmt_ns(r['b_total_ns'])}  "
                f"{fmt_ratio(r['total_ratio'])}",
                tip=f"{r['category']}: {r['a_calls']:,} → {r['b_calls']:,} calls, "
                f"{fmt_ns(r['a_total_ns'])} → {fmt_ns(r['b_total_ns'])}",
                emphasis=ratio_class(r["total_ratio"]) != "",
            )
            for r in rows[:CHART_ROWS]
        ],
        width=640,
        label_width=130,
        right_width=200,
    )


def _kernel_chart(d: TraceDiff, palette: svg.Palette) -> Markup:
    import polars as pl

    by_time = d.kernels.with_columns(_m=pl.max_horizontal("a_total_ns", "b_total_ns")).sort(
        "_m", descending=True
    )
    shown = by_time.head(CHART_ROWS)
    label = labels(shown["name"].to_list(), svg.label_chars(420, mono=True))
    return svg.paired_hbars(
        [
            svg.PairBar(
                label=label[r["name"]],
                a=r["a_total_ns"],
                b=r["b_total_ns"],
                color=palette(r["category"]),
                right=_pair_right(r),
                tip=f"{short(r['name'], 200)}\n{r['category']} · calls {r['a_instances']:,} → "
                f"{r['b_instances']:,} · per call {fmt_ns(r['a_avg_ns'])} → {fmt_ns(r['b_avg_ns'])}",
                mono=True,
                emphasis=r["status"] != "both" or ratio_class(r["per_call_ratio"]) != "",
            )
            for r in shown.iter_rows(named=True)
        ],
        width=WIDTH,
        label_width=420,
        right_width=250,
    )


def _pair_right(r: dict[str, Any]) -> str:
    if r["status"] == "only_a":
        return f"{fmt_ns(r['a_total_ns'])} → gone (only in A)"
    if r["status"] == "only_b":
        return f"new in B: {fmt_ns(r['b_total_ns'])}"
    return (
        f"{fmt_ns(r['a_total_ns'])} → {fmt_ns(r['b_total_ns'])} · per call "
        f"{fmt_ratio(r['per_call_ratio'])}"
    )


def _alignment(d: TraceDiff) -> list[dict[str, Any]]:
    rows = []
    for al in d.alignment:
        rows.append(
            {
                "device": al.device,
                "device_b": al.device_b,
                "launches_a": al.launches_a,
                "launches_b": al.launches_b,
                "matched": al.matched_in_order,
                "aligned": al.aligned,
                # 1-based, as people count and as the evidence board says it
                "first": None if al.first_divergence is None else al.first_divergence + 1,
                "a_at": short(al.a_at_divergence, 70) if al.a_at_divergence else None,
                "b_at": short(al.b_at_divergence, 70) if al.b_at_divergence else None,
                "replaced": [
                    (short(x, 60), short(y, 60), n) for x, y, n in al.replaced[:ALIGNMENT_REPLACED]
                ],
                "only_a": [(short(x, 60), n) for x, n in al.only_in_a[:ALIGNMENT_ONLY]],
                "only_b": [(short(x, 60), n) for x, n in al.only_in_b[:ALIGNMENT_ONLY]],
                "truncated": al.truncated,
            }
        )
    return rows


# Which column of each anchored table keys its rows (Clue.rows holds such keys).
ROW_KEYS = {
    "kernels": "name",
    "variants": "category",
    "copies": "operation",
    "alignment": "device",
    "danger": "name",
    "totals": "metric",
}


def backing_rows(clues: list[Any]) -> dict[tuple[str, str], list[int]]:
    """(anchor table, row key) -> the numbers (1-based, board order) of the clues that row
    backs."""
    marks: dict[tuple[str, str], list[int]] = {}
    for number, c in enumerate(clues, 1):
        for key in c.rows:
            marks.setdefault((c.anchor, key), []).append(number)
    return marks


def link_evidence(clues: list[Any], tables: dict[str, list[dict[str, Any]]]) -> list[str]:
    """Give every row of ``tables`` (anchor -> rows as shown) an id and the clues it backs
    (``row_id``, ``clues``); return each clue's link: its first backing row, else its
    table."""
    marks = backing_rows(clues)
    first: dict[tuple[str, str], str] = {}
    for anchor, rows in tables.items():
        for i, row in enumerate(rows):
            key = str(row[ROW_KEYS[anchor]])
            row["row_id"] = f"{anchor}-r{i}"
            row["clues"] = marks.get((anchor, key), [])
            first.setdefault((anchor, key), row["row_id"])
    links = []
    for c in clues:
        shown = [first[(c.anchor, k)] for k in c.rows if (c.anchor, k) in first]
        links.append("#" + (shown[0] if shown else c.anchor))
    return links


def _clue_kernels(d: TraceDiff, top: int) -> list[str]:
    """Kernels a clue names that the first ``top`` rows of the kernel table leave out:
    the table lists them too, so that every clue links to its rows."""
    shown = set(d.kernels.head(top)["name"].to_list())
    named = [k for c in d.clues if c.anchor == "kernels" for k in c.rows]
    return [k for k in dict.fromkeys(named) if k not in shown]


def _kernel_rows(d: TraceDiff, top: int, palette: svg.Palette) -> list[dict[str, Any]]:
    """The kernel table: the ``top`` most surprising, then those a clue names beyond them."""
    import polars as pl

    extra = _clue_kernels(d, top)
    shown = pl.concat([d.kernels.head(top), d.kernels.filter(pl.col("name").is_in(extra))])
    label = labels(shown["name"].to_list())
    rows = []
    for r in shown.iter_rows(named=True):
        family, fields = decode(r["name"])
        rows.append(
            {
                **r,
                "short": label[r["name"]],
                "color": palette(r["category"]),
                "family": family,
                "fields": fields,
                "danger": danger_hits(r["name"]),
            }
        )
    return rows


def stakeout_picks(d: TraceDiff) -> tuple[list[str], list[int]]:
    """The kernels of the diff's stakeout (the most surprising kernels both runs launch,
    then the biggest newcomers) and how many launches they have in A and in B."""
    import polars as pl

    both = d.kernels.filter(pl.col("status") == "both").head(STAKEOUT_KERNELS - STAKEOUT_NEWCOMERS)
    others = d.kernels.filter(pl.col("status") != "both").head(STAKEOUT_NEWCOMERS)
    names = both["name"].to_list() + others["name"].to_list()
    picked = pl.concat([both, others])
    return names, [int(picked[c].fill_null(0).sum()) for c in ("a_instances", "b_instances")]


def diff_view(
    d: TraceDiff,
    ta: Trace,
    tb: Trace,
    *,
    top: int,
    name_kind: str,
    palette: svg.Palette,
    omitted: list[Omitted],
    profiles: list[KernelProfiles | None] | None = None,
) -> DiffView:
    """The diff's sections of the page. ``profiles``: each trace's profiles of
    :func:`stakeout_picks`'s kernels, already read (None: read here)."""
    from ..compare.render import impact_text, totals_caveat, totals_rows

    categories = [
        {**r, "color": palette(r["category"])} for r in d.categories.iter_rows(named=True)
    ]
    category_chart = _category_chart(categories)
    kernels = _kernel_rows(d, top, palette)
    if d.kernels.height > len(kernels):
        omitted.append(
            Omitted(
                "diff: kernels",
                f"{d.kernels.height - len(kernels):,} more kernels with smaller changes are not "
                "listed; raise --top to see them",
            )
        )
    kernel_chart = _kernel_chart(d, palette)
    names, launches = stakeout_picks(d)
    ratios = dict(
        zip(d.kernels["name"].to_list(), d.kernels["per_call_ratio"].to_list(), strict=True)
    )
    stakeout = stakeout_rows([ta, tb], names, name_kind, palette, ratios, launches, given=profiles)
    danger = _danger_rows(d, top)
    danger_left_out(len(danger), d.danger.height, "diff", omitted)
    tables = {
        "totals": [{"metric": row[0], "cells": row} for row in totals_rows(d)],
        "kernels": kernels,
        "variants": list(d.variant_swaps.iter_rows(named=True)),
        "copies": list(d.copies.iter_rows(named=True)),
        "alignment": _alignment(d),
        "danger": danger,
    }
    # The diff orders its clues once (caveats, then by impact); the page keeps that order.
    clues = list(d.clues)
    return DiffView(
        d=d,
        clues=clues,
        clue_links=link_evidence(clues, tables),
        impacts=[impact_text(d, c.impact_ns, c.id) for c in clues],
        summary=_summary(d),
        totals=tables["totals"],
        categories=categories,
        category_chart=category_chart,
        kernels=kernels,
        kernel_chart=kernel_chart,
        stakeout=stakeout,
        variants=tables["variants"],
        copies=tables["copies"],
        alignment=tables["alignment"],
        danger=danger,
        danger_rules=danger_rule_notes(danger),
        kernels_more=d.kernels.height - len(kernels),
        totals_caveat=totals_caveat(d),
        **_danger_heading(d),
        **_regions(d, top),
    )


def _danger_rows(d: TraceDiff, top: int) -> list[dict[str, Any]]:
    """The first ``top`` danger rows, each with its shown calls and time (``cells``): per
    step when the text board judges them per step, else each capture's totals."""
    from ..compare.render import danger_per_step

    shown = d.danger.head(top)
    label = labels(shown["name"].unique(maintain_order=True).to_list())
    if danger_per_step(d):
        calls, time = ("calls_per_step", "per_step_ns")
        show_calls = _per_step_calls
    else:
        calls, time = ("calls", "total_ns")
        show_calls = count
    return [
        {
            **r,
            "short": label[r["name"]],
            "cells": [
                *(show_calls(r[f"{side}_{calls}"]) for side in "ab"),
                *(fmt_ns(r[f"{side}_{time}"]) for side in "ab"),
            ],
        }
        for r in shown.iter_rows(named=True)
    ]


def _per_step_calls(n: float | None) -> str:
    """Calls per step as the text board writes them (2 decimals)."""
    return "—" if n is None else f"{n:,.2f}"


def _danger_heading(d: TraceDiff) -> dict[str, Any]:
    """The danger table's basis and columns, decided and worded by the text board's
    heading (compare.render), so that no total beside a status reads as its reason."""
    from ..compare.render import danger_heading as board_heading

    title, headers = board_heading(d, DANGER_TITLE, list(DANGER_HEADERS))
    judged = title.removeprefix(DANGER_TITLE).strip().removeprefix("(").removesuffix(")")
    return {
        "danger_judged": f"{judged[:1].upper()}{judged[1:]}." if judged else None,
        "danger_headers": headers,
    }


def _regions(d: TraceDiff, top: int) -> dict[str, Any]:
    """The NVTX region deltas the page lists: the ``top`` that moved most, each with its
    step-by-step deltas as a sparkline when both runs have steps."""
    if d.nvtx_regions is None:
        return {}
    import polars as pl

    per_step = d.nvtx_regions["a_step_ns"].null_count() == 0
    rows = []
    for r in d.nvtx_regions.head(top).iter_rows(named=True):
        deltas = d.nvtx_steps.filter(pl.col("path") == r["path"]) if per_step else None
        spark = None
        if deltas is not None and deltas.height > 1:
            spark = svg.sparkline(deltas["step"].to_list(), deltas["delta_ns"].to_list())
        rows.append({**r, "spark": spark})
    return {
        "regions": rows,
        "regions_more": max(d.nvtx_regions.height - top, 0),
        "region_steps": per_step,
    }
