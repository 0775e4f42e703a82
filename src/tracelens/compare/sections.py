"""The diff's tables as rows of text, for every view (terminal, Markdown, the report's
diff view): totals, categories, kernels, variants, copies, launch order, NVTX regions, the
danger zone (:data:`SECTIONS`: key, title, headers; :func:`section_rows`), and their
headings' words (:func:`heading`, :func:`left_out`, :func:`totals_caveat`)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from ..units import fmt_bytes, fmt_ns, fmt_ratio, fmt_signed_ns

if TYPE_CHECKING:
    import polars as pl

    from .model import TraceDiff


def _num(v: object) -> str:
    if v is None:
        return "—"
    if isinstance(v, float):
        if math.isinf(v):
            return "new"
        return f"{v:,.2f}"
    if isinstance(v, int):
        return f"{v:,}"
    return str(v)


def _signed(fmt, value) -> str:
    """A delta with its sign, like the counts' "+84": "+114.1 ms", "-3.2 MB"."""
    if value is None:
        return "—"
    return ("+" if value >= 0 else "-") + fmt(abs(value))


def totals_rows(d: TraceDiff) -> list[list[str]]:
    """The totals table as text cells: metric, A, B, delta, B/A (times and bytes in units)."""
    rows = []
    for r in d.totals.iter_rows(named=True):
        metric = r["metric"]
        if metric.endswith("(ns)"):
            a, b, delta = fmt_ns(r["a"]), fmt_ns(r["b"]), _signed(fmt_ns, r["delta"])
            metric = metric[: -len(" (ns)")]
        elif "bytes" in metric:
            a, b, delta = fmt_bytes(r["a"]), fmt_bytes(r["b"]), _signed(fmt_bytes, r["delta"])
        else:
            a, b, delta = _num(r["a"]), _num(r["b"]), f"{r['delta']:+,}"
        rows.append([metric, a, b, delta, fmt_ratio(r["ratio"])])
    return rows


def _category_rows(d: TraceDiff) -> list[list[str]]:
    return [
        [
            r["category"],
            _num(r["a_calls"]),
            _num(r["b_calls"]),
            fmt_ns(r["a_total_ns"]),
            fmt_ns(r["b_total_ns"]),
            fmt_ratio(r["per_call_ratio"]),
            fmt_ratio(r["total_ratio"]),
            fmt_signed_ns(r["delta_ns"]),
        ]
        for r in d.categories.iter_rows(named=True)
    ]


def _kernel_rows(df: pl.DataFrame, short) -> list[list[str]]:
    return [
        [
            short(r["name"]),
            r["category"],
            r["status"].replace("_", " "),
            _num(r["a_instances"]),
            _num(r["b_instances"]),
            fmt_ns(r["a_avg_ns"]),
            fmt_ns(r["b_avg_ns"]),
            fmt_ratio(r["per_call_ratio"]),
            fmt_ns(r["a_total_ns"]),
            fmt_ns(r["b_total_ns"]),
            fmt_signed_ns(r["delta_ns"]),
        ]
        for r in df.iter_rows(named=True)
    ]


def _variant_rows(d: TraceDiff) -> list[list[str]]:
    return [
        [
            r["category"],
            _num(r["only_a_kernels"]),
            fmt_ns(r["only_a_ns"]),
            _num(r["only_b_kernels"]),
            fmt_ns(r["only_b_ns"]),
        ]
        for r in d.variant_swaps.iter_rows(named=True)
    ]


def _copy_rows(d: TraceDiff) -> list[list[str]]:
    return [
        [
            r["operation"],
            _num(r["a_count"]),
            _num(r["b_count"]),
            fmt_bytes(r["a_bytes"]),
            fmt_bytes(r["b_bytes"]),
            fmt_ratio(r["count_ratio"]),
            fmt_ratio(r["bytes_ratio"]),
        ]
        for r in d.copies.iter_rows(named=True)
    ]


def _alignment_rows(d: TraceDiff, short) -> list[list[str]]:
    rows = []
    for al in d.alignment:
        replaced = "; ".join(f"{short(x, 30)} → {short(y, 30)} ×{n}" for x, y, n in al.replaced[:3])
        rows.append(
            [
                al.where.removeprefix("device "),
                _num(al.launches_a),
                _num(al.launches_b),
                f"{al.matched_in_order:,} of {al.aligned:,}",
                "identical"
                if al.identical
                else f"#{al.first_divergence + 1:,}",  # 1-based, as people count
                replaced or "—",
            ]
        )
    return rows


def _region_rows(d: TraceDiff, top: int) -> list[list[str]]:
    """The NVTX regions that moved most (per step when both runs have steps)."""
    if d.nvtx_regions is None:
        return []
    return [
        [
            r["path"],
            _num(r["a_ops"]),
            _num(r["b_ops"]),
            fmt_ns(r["a_total_ns"]),
            fmt_ns(r["b_total_ns"]),
            fmt_ns(r["a_step_ns"]),
            fmt_ns(r["b_step_ns"]),
            fmt_signed_ns(r["delta_ns"]),
            fmt_ratio(r["ratio"]),
        ]
        for r in d.nvtx_regions.head(top).iter_rows(named=True)
    ]


def _danger_rows(d: TraceDiff, top: int, short) -> list[list[str]]:
    """The first ``top`` danger-zone rows (riskiest and newest first); :func:`left_out`
    says how many more. Calls and time per step when the two captures hold different
    numbers of steps (a change is judged per step: :func:`danger_heading`), else totals."""
    per_step = danger_per_step(d)
    calls, time = ("calls_per_step", "per_step_ns") if per_step else ("calls", "total_ns")
    return [
        [
            r["level"],
            r["status"],
            short(r["name"]),
            r["rule_id"],
            _num(r[f"a_{calls}"]),
            _num(r[f"b_{calls}"]),
            fmt_ns(r[f"a_{time}"]),
            fmt_ns(r[f"b_{time}"]),
            r["fix"],
        ]
        for r in d.danger.head(top).iter_rows(named=True)
    ]


def danger_per_step(d: TraceDiff) -> bool:
    """Whether both captures have steps, and not as many (or on as many devices: the
    table is then per step and device, ``TraceDiff.replicas``): the danger table's totals
    then differ by the capture lengths, and a change is judged per step."""
    ra, rb = d.replicas
    return bool(d.steps_a and d.steps_b and d.steps_a * ra != d.steps_b * rb)


def _per_step_words(d: TraceDiff) -> str:
    """What the danger table's per-step columns count: ``d.steps_a`` and ``d.steps_b``
    steps, on the devices that run them where the runs differ in it."""
    if d.replicas == (1, 1):
        return f"per step: {d.steps_a:,} steps in A, {d.steps_b:,} in B"
    ra, rb = d.replicas
    return (
        f"per step and device: {d.steps_a:,} steps on {ra:,} device{'s' * (ra > 1)} in A, "
        f"{d.steps_b:,} on {rb:,} device{'s' * (rb > 1)} in B"
    )


def danger_heading(d: TraceDiff, title: str, headers: list[str]) -> tuple[str, list[str]]:
    """The danger table's title and columns, saying what each change was judged on, so
    that no total beside a status reads as its reason: per step (its columns too) when
    the captures hold different numbers of steps; totals against A's total scaled by B's
    launches over A's without steps on both sides; as given when the work is the same."""
    from .model import work_ratio

    if danger_per_step(d):
        per_step = ["Calls/step A", "Calls/step B", "Time/step A", "Time/step B"]
        return (
            f"{title} ({_per_step_words(d)}; each change is judged per step)",
            [*headers[:4], *per_step, *headers[8:]],
        )
    f = d.figures
    work = work_ratio((d.steps_a, d.steps_b), (int(f["launches_a"]), int(f["launches_b"])))
    if round(work, 2) == 1:
        return title, headers
    return (
        f"{title} (totals of each capture; each change is judged against A's total × "
        f"{work:.3g}, B's kernel launches over A's)",
        headers,
    )


def left_out(d: TraceDiff, key: str, top: int) -> str | None:
    """What a section leaves out beyond ``top`` rows (kernels, danger), in words."""
    if key == "kernels" and d.kernels.height > top:
        return f"{d.kernels.height - top:,} more kernels not shown (use --top)"
    if key == "danger" and d.danger.height > top:
        return (
            f"{d.danger.height - top:,} more danger-zone rows not shown (use --top, or "
            "--format json for every row)"
        )
    return None


SECTIONS = (
    ("totals", "Totals", ["", "A", "B", "Δ", "B/A"]),
    (
        "categories",
        "Time by category (kernel time only: memcpy and memset are under Memory copies)",
        ["Category", "Calls A", "Calls B", "Total A", "Total B", "Per call B/A", "Total B/A", "Δ"],
    ),
    (
        "kernels",
        "Kernels, most surprising change first",
        [
            "Kernel",
            "Category",
            "Seen in",
            "Calls A",
            "Calls B",
            "Per call A",
            "Per call B",
            "B/A",
            "Total A",
            "Total B",
            "Δ",
        ],
    ),
    (
        "variants",
        "Kernels only one run launches, by category",
        ["Category", "Only in A", "Time A", "Only in B", "Time B"],
    ),
    (
        "copies",
        "Memory copies",
        ["Copy kind", "Count A", "Count B", "Bytes A", "Bytes B", "Count B/A", "Bytes B/A"],
    ),
    (
        "alignment",
        "Launch order per device",
        [
            "Device",
            "Launches A",
            "Launches B",
            "Match in order",
            "First divergence",
            "Most common replacements",
        ],
    ),
    (
        "nvtx_regions",
        "NVTX regions: GPU time of the work each range path launched itself (Δ per step when "
        "both runs have steps: the median over steady steps)",
        [
            "Region",
            "Ops A",
            "Ops B",
            "Total A",
            "Total B",
            "Per step A",
            "Per step B",
            "Δ",
            "B/A",
        ],
    ),
    (
        "danger",
        "Danger-zone kernels",
        ["Risk", "Change", "Kernel", "Rule", "Calls A", "Calls B", "Time A", "Time B", "Fix"],
    ),
)


def heading(d: TraceDiff, key: str, title: str, headers) -> tuple[str, list[str]]:
    """A section's title and column headers (the danger table's say what it judged on; the
    kernel and category tables', when the captures hold different amounts of work, that
    their totals are each capture's)."""
    if key == "danger":
        return danger_heading(d, title, list(headers))
    caveat = totals_caveat(d) if key in ("kernels", "categories") else ""
    if caveat and title.endswith(")"):  # one parenthesis: "(kernel time only: …; totals …)"
        return f"{title[:-1]}; {caveat})", list(headers)
    if caveat:
        return f"{title} ({caveat})", list(headers)
    return title, list(headers)


def totals_caveat(d: TraceDiff) -> str:
    """``totals of each capture: 20 steps in A, 60 in B; compare the per-call columns``
    when the two captures hold different numbers of steps or, without steps on both sides,
    launch counts apart by ``work_ratio`` (clues.toml): their totals and Δ then differ by
    the capture lengths, not by what each step or call costs. Else nothing."""
    from .clues import threshold
    from .model import work_ratio

    if danger_per_step(d):
        held = f"{d.steps_a:,} steps in A, {d.steps_b:,} in B"
    else:
        f = d.figures
        work = work_ratio((d.steps_a, d.steps_b), (int(f["launches_a"]), int(f["launches_b"])))
        limit = threshold("work_ratio")
        if 1 / limit < work < limit:
            return ""
        held = f"B holds {work:.3g}× A's launches"
    return f"totals of each capture: {held}; compare the per-call columns"


def section_rows(d: TraceDiff, key: str, top: int, short) -> list[list[str]]:
    if key == "totals":
        return totals_rows(d)
    if key == "categories":
        return _category_rows(d)
    if key == "kernels":
        return _kernel_rows(d.kernels.head(top), short)
    if key == "variants":
        return _variant_rows(d)
    if key == "copies":
        return _copy_rows(d)
    if key == "alignment":
        return _alignment_rows(d, short)
    if key == "nvtx_regions":
        return _region_rows(d, top)
    return _danger_rows(d, top, short)
