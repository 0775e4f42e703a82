"""The evidence board: one small function per clue (or family of clue ids), each turning
the diff's tables into rows of the board. Thresholds, order, strength and prose are data
(``data/clues.toml``); this module only decides which numbers to show."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

from ..units import fmt_bytes, fmt_ns, fmt_pct_change, fmt_ratio
from .model import Clue, ratio

if TYPE_CHECKING:
    import polars as pl

    from .collect import Side
    from .model import SequenceAlignment

_RULES_FILE = "clues.toml"


@cache
def _rules() -> dict[str, Any]:
    import tomllib

    from .._resources import data_dir

    with open(data_dir() / _RULES_FILE, "rb") as f:
        return tomllib.load(f)


def threshold(name: str) -> float:
    """A named threshold of ``data/clues.toml`` (each has its reason there)."""
    return _rules()["threshold"][name]["value"]


def _spec(clue_id: str) -> dict[str, Any]:
    return _rules()["clue"][clue_id]


def make(clue_id: str, evidence: str, *, strength: str | None = None, **fields) -> Clue:
    """A Clue with the headline, verdict, strength and anchor of ``clue_id``'s entry;
    ``fields`` fill their ``{placeholders}``; ``verdict=`` overrides the verdict text."""
    spec = _spec(clue_id)
    verdict = fields.pop("verdict", None) or spec["verdict"].format(**fields)
    return Clue(
        clue_id,
        spec["clue"].format(**fields),
        evidence,
        verdict,
        strength or spec["strength"],
        spec["anchor"],
    )


def prose(clue_id: str, key: str, **fields) -> str:
    """Another text of ``clue_id``'s entry (a verdict variant), filled with ``fields``."""
    return _spec(clue_id)[key].format(**fields)


def board_order(clues: list[Clue]) -> list[Clue]:
    """Caveats first, then what explains the most (``order`` in the data); stable."""
    return sorted(clues, key=lambda c: _spec(c.id)["order"])


@dataclass
class Context:
    """What the clue functions read."""

    sa: Side
    sb: Side
    copies: pl.DataFrame
    kernels: pl.DataFrame
    swaps: pl.DataFrame
    alignment: tuple[SequenceAlignment, ...]
    danger: pl.DataFrame
    overall: float  # the typical per-call ratio
    overlap: float  # share of launches of kernels both sides run
    comparable: bool

    @property
    def time_a(self) -> int:
        return self.sa.totals["kernel_time_ns"] or 0

    @property
    def time_b(self) -> int:
        return self.sb.totals["kernel_time_ns"] or 0

    @property
    def launches_a(self) -> int:
        return self.sa.totals["kernel_launches"] or 0

    @property
    def launches_b(self) -> int:
        return self.sb.totals["kernel_launches"] or 0


def _count(n: int) -> str:
    return f"{n:,}"


def short_name(name: str | None, width: int = 60, *, templates: bool = False) -> str:
    """A kernel name short enough for a sentence (or, with ``templates``, a table cell)."""
    if not name:
        return "?"
    from ..kernelnames import normalize, qualified_name

    text = normalize(name) if templates else qualified_name(name)
    return text if len(text) <= width else text[: width - 1] + "…"


def _brief(text: str, width: int = 140) -> str:
    """The first sentence of a rule's explanation, cut at a word if long (full text in the
    danger table)."""
    sentence = text.split(". ")[0].rstrip(".")
    if len(sentence) > width:
        return sentence[:width].rsplit(" ", 1)[0].rstrip(",;:") + "…"
    return sentence + "."


def _outside(r: float | None, limit: float) -> bool:
    """``r`` at least ``limit``× away from 1, either way."""
    return r is not None and (r >= limit or r <= 1 / limit)


# -- the rules, in the order they run -----------------------------------------------------
def not_comparable(x: Context) -> list[Clue]:
    return [
        make(
            "not_comparable",
            f"only {x.overlap:.0%} of kernel launches are of kernels both traces run "
            f"({_count(x.launches_a)} vs {_count(x.launches_b)} launches)",
        )
    ]


def graph_replays_hidden(x: Context) -> list[Clue]:
    """Work the kernel tables do not show: CUDA graphs traced at graph level."""
    (ga, ga_ns), (gb, gb_ns) = x.sa.graph, x.sb.graph
    if not (ga or gb):
        return []
    return [
        make(
            "graph_replays_hidden",
            f"A: {_count(ga)} replays ({fmt_ns(ga_ns)}), B: {_count(gb)} replays ({fmt_ns(gb_ns)}) "
            "traced at graph level; their kernels, copies and memsets are in no table",
        )
    ]


def weak_evidence(x: Context) -> list[Clue]:
    """Different amounts of work: totals mislead, per-call figures don't. (Same launch
    count with a longer span is the same work taking longer: the question itself.)"""
    launch_r = ratio(x.launches_a, x.launches_b) or 1.0
    limit = threshold("work_ratio")
    if 1 / limit <= launch_r <= limit:
        return []
    return [
        make(
            "weak_evidence",
            f"launches {_count(x.launches_a)} → {_count(x.launches_b)} ({fmt_ratio(launch_r)}), "
            f"wall span {fmt_ns(x.sa.totals['span_ns'])} → {fmt_ns(x.sb.totals['span_ns'])}",
        )
    ]


def per_call_outliers(x: Context) -> list[Clue]:
    """Same kernel, changed cost per call, beyond the trace-wide change."""
    import polars as pl

    limit = threshold("outlier_ratio")
    both = x.kernels.filter(pl.col("status") == "both")
    outliers = both.filter(
        (
            (pl.col("per_call_ratio") / x.overall >= limit)
            | (pl.col("per_call_ratio") / x.overall <= 1 / limit)
        )
        & (
            (pl.col("a_total_ns") + pl.col("b_total_ns"))
            >= threshold("outlier_share") * (x.time_a + x.time_b)
        )
    ).head(int(threshold("outliers_shown")))
    return [_per_call_outlier(x, r) for r in outliers.iter_rows(named=True)]


def _per_call_outlier(x: Context, r: dict[str, Any]) -> Clue:
    same_calls = r["a_instances"] == r["b_instances"]
    calls = (
        f"{_count(r['a_instances'])} calls in both"
        if same_calls
        else f"calls {_count(r['a_instances'])} → {_count(r['b_instances'])}"
    )
    per_call = r["per_call_ratio"]
    word = f"{per_call:.2f}× longer" if per_call >= 1 else f"{1 / per_call:.2f}× shorter"
    attention = r["category"] == "attention"
    # Did each call get more work? The grid (thread blocks per launch) says so.
    blocks_a, blocks_b = x.sa.blocks.get(r["name"]), x.sb.blocks.get(r["name"])
    blocks_r = ratio(blocks_a, blocks_b)
    grid = ""
    if (
        blocks_r is not None
        and not math.isinf(blocks_r)
        and _outside(blocks_r, threshold("grid_ratio"))
    ):
        grid = f"; blocks per launch {blocks_a:,.0f} → {blocks_b:,.0f} ({fmt_ratio(blocks_r)})"
        cause = prose(
            "per_call_outlier",
            "verdict_grid",
            blocks=fmt_ratio(blocks_r),
            attention=prose("per_call_outlier", "verdict_grid_attention") if attention else "",
        )
    else:
        path = "verdict_path_attention" if attention else "verdict_path_other"
        cause = prose("per_call_outlier", "verdict_path", path=prose("per_call_outlier", path))
    return make(
        "per_call_outlier",
        f"{calls}; {fmt_ns(r['a_total_ns'])} → {fmt_ns(r['b_total_ns'])} total; "
        f"per call {fmt_ns(r['a_avg_ns'])} → {fmt_ns(r['b_avg_ns'])}, while the typical "
        f"kernel changed {fmt_ratio(x.overall)}{grid}",
        strength=None if same_calls else "moderate",
        name=short_name(r["name"]),
        word=word,
        attention=" (attention-related)" if attention else "",
        cause=cause,
    )


def uniform_change(x: Context) -> list[Clue]:
    """A change that hits every kernel alike: no single kernel stands out, the run does."""
    import polars as pl

    both = x.kernels.filter(pl.col("status") == "both")
    if not both.height or not _outside(x.overall, threshold("uniform_ratio")):
        return []
    slower = x.overall > 1
    return [
        make(
            "uniform_change",
            f"time-weighted median of the per-call ratios of the {both.height} kernels both "
            f"runs launch; kernel time {fmt_ns(x.time_a)} → {fmt_ns(x.time_b)} "
            f"with launches {_count(x.launches_a)} → {_count(x.launches_b)}",
            ratio=x.overall if slower else 1 / x.overall,
            word="longer" if slower else "shorter",
            verdict=prose("uniform_change", "verdict", word="slower" if slower else "faster"),
        )
    ]


def variant_swaps(x: Context) -> list[Clue]:
    """Kernels of one category that only one side runs: swapped, new or vanished."""
    clues = []
    for r in x.swaps.iter_rows(named=True):
        if r["only_b_kernels"] == 0 and r["only_a_kernels"] == 0:
            continue
        share = (r["only_a_ns"] + r["only_b_ns"]) / ((x.time_a + x.time_b) or 1)
        if share < threshold("variant_share"):
            continue
        cat = r["category"]
        parts = []
        if r["only_b_kernels"]:
            n = r["only_b_kernels"]
            parts.append(
                f"{n} {cat} kernel{'s' if n != 1 else ''} in B "
                f"({fmt_ns(r['only_b_ns'])}, {_count(r['only_b_calls'])} calls) that A does not run"
            )
        if r["only_a_kernels"]:
            n = r["only_a_kernels"]
            parts.append(
                f"A ran {n} other{'s' if n != 1 else ''} "
                f"({fmt_ns(r['only_a_ns'])}, {_count(r['only_a_calls'])} calls)"
            )
        swapped = bool(r["only_a_kernels"] and r["only_b_kernels"])
        evidence = "; ".join(parts)
        if swapped:
            strong = share >= threshold("variant_strong_share")
            verdict = prose("variant_swap", "verdict_gemm") if cat == "gemm" else None
            clues.append(
                make(
                    "variant_swap",
                    evidence,
                    strength="strong" if strong else None,
                    category=cat,
                    verdict=verdict,
                )
            )
        else:
            clue_id = "new_kernels" if r["only_b_kernels"] else "vanished_kernels"
            verdict = prose("variant_swap", "verdict_gemm") if cat == "gemm" else None
            clues.append(make(clue_id, evidence, category=cat, verdict=verdict))
    return clues


def copy_changes(x: Context) -> list[Clue]:
    """Copies by kind whose count or bytes moved (small absolute amounts are noise)."""
    limit = threshold("copy_ratio")
    clues = []
    for r in x.copies.iter_rows(named=True):
        cr, br = ratio(r["a_count"], r["b_count"]), ratio(r["a_bytes"], r["b_bytes"])
        many = max(r["a_count"], r["b_count"]) >= threshold("copy_min_count")
        big = max(r["a_bytes"], r["b_bytes"]) >= threshold("copy_min_bytes")
        count_moved = many and _outside(cr, limit)
        bytes_moved = big and _outside(br, limit)
        if not (count_moved or bytes_moved):
            continue
        grew = (cr or 1) >= limit or (br or 1) >= limit
        change = (
            f"{fmt_pct_change(cr)} {r['operation']}"
            if count_moved
            else f"{r['operation']}: {fmt_ratio(br)} the bytes"
        )
        d2d_grew = r["copy_kind"] == 8 and grew
        clues.append(
            make(
                "copy_growth" if grew else "copy_shrink",
                f"{_count(r['a_count'])} → {_count(r['b_count'])} copies, "
                f"{fmt_bytes(r['a_bytes'])} → {fmt_bytes(r['b_bytes'])}",
                change=change,
                verdict=prose("copy_growth", "verdict_d2d") if d2d_grew else None,
            )
        )
    return clues


def memset_changes(x: Context) -> list[Clue]:
    ma, mb = x.sa.totals["memset_count"] or 0, x.sb.totals["memset_count"] or 0
    mr = ratio(ma, mb)
    if max(ma, mb) < threshold("copy_min_count") or not _outside(mr, threshold("copy_ratio")):
        return []
    return [
        make(
            "memset_growth" if mr > 1 else "memset_shrink",
            f"{_count(ma)} → {_count(mb)} memsets, "
            f"{fmt_bytes(x.sa.totals['memset_bytes'])} → {fmt_bytes(x.sb.totals['memset_bytes'])}",
            change=fmt_pct_change(mr),
        )
    ]


def launch_structure(x: Context) -> list[Clue]:
    """The device whose launch order differs most: same count with other kernels, or
    sequences that diverge."""
    diverged = [al for al in x.alignment if not al.identical]
    if not diverged:
        return []
    al = max(diverged, key=lambda a: a.aligned - a.matched_in_order)
    differing = al.aligned - al.matched_in_order
    where = f"first divergence at launch #{al.first_divergence + 1:,} on device {al.device}" + (
        f" ({short_name(al.a_at_divergence)} in A, {short_name(al.b_at_divergence)} in B)"
        if al.a_at_divergence and al.b_at_divergence
        else ""
    )
    matched = f"{_count(al.matched_in_order)} of {_count(al.aligned)} launches match in order"
    if x.launches_a == x.launches_b:
        return [
            make(
                "same_count_different_path",
                f"{where}; {matched}, {_count(differing)} differ",
                launches=_count(x.launches_a),
            )
        ]
    return [make("launch_sequence_diverges", f"{where}; {matched}")]


def danger_changes(x: Context) -> list[Clue]:
    """Danger-zone kernels: one clue per rule, kernels that appear/vanish/grow together."""
    import polars as pl

    risky = x.danger.filter(
        pl.col("status").is_in(["new", "vanished", "grew"]) & (pl.col("level") != "info")
    )
    clues = []
    for rule_id in dict.fromkeys(risky["rule_id"].to_list()):
        rows = risky.filter(pl.col("rule_id") == rule_id).to_dicts()
        first = rows[0]
        parts = []
        for status, side in (("new", "only in B"), ("vanished", "only in A"), ("grew", "grew")):
            sel = [r for r in rows if r["status"] == status]
            if not sel:
                continue
            side_of = "a" if status == "vanished" else "b"
            ns = sum(r[f"{side_of}_total_ns"] for r in sel)
            calls = sum(r[f"{side_of}_calls"] for r in sel)
            names = ", ".join(short_name(r["name"], 40) for r in sel[:2]) + (
                f" and {len(sel) - 2} more" if len(sel) > 2 else ""
            )
            parts.append(f"{side}: {names} ({_count(calls)} calls, {fmt_ns(ns)})")
        n = len(rows)
        statuses = {r["status"] for r in rows}
        kind = (
            "swapped"
            if {"new", "vanished"} <= statuses
            else ("new" if "new" in statuses else first["status"])
        )
        clues.append(
            make(
                "danger_" + kind,
                "; ".join(parts),
                strength="strong" if first["level"] == "high" else None,
                what=short_name(first["name"], 50) if n == 1 else f"{n} kernels",
                rule_id=rule_id,
                level=first["level"],
                why=_brief(first["why"]),
                fix=first["fix"],
            )
        )
    return clues


RULES = (
    graph_replays_hidden,
    weak_evidence,
    per_call_outliers,
    uniform_change,
    variant_swaps,
    copy_changes,
    memset_changes,
    launch_structure,
    danger_changes,
)


def evidence_board(x: Context) -> list[Clue]:
    """Every rule's clues in board order; only ``not_comparable`` when the runs are not."""
    if not x.comparable:
        return not_comparable(x)
    return board_order([clue for rule in RULES for clue in rule(x)])
