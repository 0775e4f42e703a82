"""The evidence board: one small function per clue (or family of clue ids), each turning
the diff's tables into rows of the board. Thresholds, order, strength and prose are data
(``data/clues.toml``); this module only decides which numbers to show."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

from ..units import fmt_bytes, fmt_ns, fmt_pct_change, fmt_ratio, fmt_signed_ns
from .model import Clue, ratio

if TYPE_CHECKING:
    import polars as pl

    from .collect import Side
    from .model import Comparability, SequenceAlignment, TypicalChange

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


def make(
    clue_id: str,
    evidence: str,
    *,
    strength: str | None = None,
    impact_ns: float | None = None,
    rows: tuple[str, ...] | list[str] = (),
    **fields,
) -> Clue:
    """A Clue with the headline, verdict, strength and anchor of ``clue_id``'s entry;
    ``fields`` fill their ``{placeholders}``; ``verdict=`` overrides the verdict text;
    ``rows``: the keys of the anchor table's rows that back it."""
    spec = _spec(clue_id)
    verdict = fields.pop("verdict", None) or spec["verdict"].format(**fields)
    return Clue(
        clue_id,
        spec["clue"].format(**fields),
        evidence,
        verdict,
        strength or spec["strength"],
        spec["anchor"],
        None if impact_ns is None else float(impact_ns),
        tuple(str(r) for r in rows),
    )


def comparability_weights() -> dict[str, float]:
    return dict(_rules()["comparability"])


def prose(clue_id: str, key: str, **fields) -> str:
    """Another text of ``clue_id``'s entry (a verdict variant), filled with ``fields``."""
    return _spec(clue_id)[key].format(**fields)


def board_order(clues: list[Clue]) -> list[Clue]:
    """Caveats first (``order`` below 2 in the data), then by impact, largest first, then
    clues without a time impact (they explain results, not time) in their data order."""

    def key(c: Clue) -> tuple:
        order = _spec(c.id)["order"]
        if order < 2:
            return (0, order, 0.0)
        if c.impact_ns is None:
            return (2, order, 0.0)
        return (1, -abs(c.impact_ns), order)

    return sorted(clues, key=key)


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
    typical: TypicalChange
    score: Comparability
    comparable: bool
    steps: int | None  # steps in B when both captures repeat a step: impacts per step
    steps_a: int | None = None

    @property
    def overall(self) -> float:
        return self.typical.ratio

    def per_unit(self, ns: float) -> float:
        """A time in B's terms, per step when steps are known."""
        return ns / self.steps if self.steps else ns

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
    s = x.score
    return [
        make(
            "not_comparable",
            f"only {s.factors['shared_launches']:.0%} of kernel launches are of kernels both "
            f"traces run ({_count(x.launches_a)} vs {_count(x.launches_b)} launches); "
            f"comparability {s.score:.2f} (bar {s.bar:.2f})"
            + (f": {s.reason}" if s.reason else ""),
        )
    ]


def capture_difference(x: Context) -> list[Clue]:
    """One capture is the other cut short or shifted, or both repeat the same step a
    different number of times: different amounts of the same work."""
    cut = [al for al in x.alignment if al.capture_difference]
    if not cut:
        return []
    al = max(cut, key=lambda a: abs(a.launches_a - a.launches_b))
    fewer_b = al.launches_b <= al.launches_a
    share = abs(al.launches_a - al.launches_b) / (max(al.launches_a, al.launches_b) or 1)
    how = {
        "prefix": "B is A cut short" if fewer_b else "A is B cut short",
        "suffix": "B is the end of A" if fewer_b else "A is the end of B",
        "slice": "B is a slice of A" if fewer_b else "A is a slice of B",
        "capture": f"both repeat one step: {al.steps_a:,} steps in A, {al.steps_b:,} in B"
        if al.steps_a and al.steps_b
        else "both repeat one step",
    }[al.relation]
    return [
        make(
            "capture_difference",
            f"{al.where}: {_count(al.launches_a)} → {_count(al.launches_b)} launches; "
            f"{_count(al.matched_in_order)} in common, in order",
            impact_ns=None,
            rows=(al.device,),
            side="B" if fewer_b else "A",
            share=f"{share:.0%}",
            fewer="fewer",
            how=how,
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


_TIME_PARTS = (
    ("compute_ns", "compute"),
    ("exposed_communication_ns", "exposed communication"),
    ("exposed_memory_ns", "exposed memory"),
    ("idle_ns", "idle"),
)


def _time_unit(x: Context) -> tuple[float, float, str]:
    """Per step of each run when both repeat a step; else A scaled to B's launches (the
    same amount of work): factors for A's and B's figures, and the unit's words. Per device
    (the mean over devices)."""
    da, db = max(x.sa.devices, 1), max(x.sb.devices, 1)
    if x.steps and x.steps_a:
        return 1 / (x.steps_a * da), 1 / (x.steps * db), "per step"
    scale = x.launches_b / x.launches_a if x.launches_a else 1.0
    return scale / da, 1 / db, "per device, A scaled to B's launches"


def time_accounting(x: Context) -> list[Clue]:
    """The lead line: GPU wall time per step (or per unit of work) and which part of it
    (compute, exposed communication, exposed memory, idle) moved it."""
    if x.sa.time is None or x.sb.time is None:
        return []
    fa, fb, unit = _time_unit(x)
    ta, tb = x.sa.time, x.sb.time
    span_a, span_b = ta["span_ns"] * fa, tb["span_ns"] * fb
    limit = threshold("time_share") * max(span_a, span_b)
    moved = [
        (tb[key] * fb - ta[key] * fa, words)
        for key, words in _TIME_PARTS
        if abs(tb[key] * fb - ta[key] * fa) >= limit
    ]
    if not moved or abs(span_b - span_a) < limit:
        return []
    moved.sort(key=lambda m: -abs(m[0]))
    parts = ", ".join(f"{words} {fmt_signed_ns(delta)}" for delta, words in moved)
    return [
        make(
            "time_accounting",
            "; ".join(
                f"{words} {fmt_ns(ta[key] * fa)} → {fmt_ns(tb[key] * fb)}"
                for key, words in _TIME_PARTS
            )
            + f" ({unit}; from util)",
            impact_ns=span_b - span_a,
            rows=("GPU busy", "wall span"),
            unit=unit.split(",")[0],
            a=fmt_ns(span_a),
            b=fmt_ns(span_b),
            delta=fmt_signed_ns(span_b - span_a),
            parts=parts,
        )
    ]


def exposed_communication(x: Context) -> list[Clue]:
    """Communication that compute used to hide and no longer does (per call unchanged or
    not: the per-call clues say that)."""
    if x.sa.time is None or x.sb.time is None:
        return []
    fa, fb, unit = _time_unit(x)
    ea = x.sa.time["exposed_communication_ns"] * fa
    eb = x.sb.time["exposed_communication_ns"] * fb
    span = max(x.sa.time["span_ns"] * fa, x.sb.time["span_ns"] * fb)
    grew = eb >= ea * threshold("exposed_growth")
    if not grew or eb - ea < threshold("time_share") * span:
        return []
    return [
        make(
            "exposed_communication",
            f"exposed communication {fmt_ns(ea)} → {fmt_ns(eb)} {unit}, of a GPU wall time of "
            f"{fmt_ns(x.sa.time['span_ns'] * fa)} → {fmt_ns(x.sb.time['span_ns'] * fb)}",
            impact_ns=eb - ea,
            rows=("GPU busy", "wall span"),
            a=fmt_ns(ea),
            b=fmt_ns(eb),
            unit=unit.split(",")[0],
        )
    ]


def weak_evidence(x: Context) -> list[Clue]:
    """Different amounts of work: totals mislead, per-call figures don't. (Same launch
    count with a longer span is the same work taking longer: the question itself.)"""
    launch_r = ratio(x.launches_a, x.launches_b) or 1.0
    limit = threshold("work_ratio")
    if 1 / limit <= launch_r <= limit or any(al.capture_difference for al in x.alignment):
        return []
    return [
        make(
            "weak_evidence",
            f"launches {_count(x.launches_a)} → {_count(x.launches_b)} ({fmt_ratio(launch_r)}), "
            f"wall span {fmt_ns(x.sa.totals['span_ns'])} → {fmt_ns(x.sb.totals['span_ns'])}",
            rows=("kernel launches", "wall span"),
        )
    ]


def per_call_outliers(x: Context) -> list[Clue]:
    """Same kernel, changed cost per call, beyond the trace-wide change; communication
    kernels from a lower bar (their calls include waiting for peers). The largest impact
    first."""
    import polars as pl

    limit = pl.when(pl.col("category") == "communication")
    limit = limit.then(threshold("outlier_ratio_communication")).otherwise(
        threshold("outlier_ratio")
    )
    off = pl.col("per_call_ratio") / x.overall
    both = x.kernels.filter(pl.col("status") == "both")
    outliers = (
        both.filter(
            ((off >= limit) | (off <= 1 / limit))
            & (
                (pl.col("a_total_ns") + pl.col("b_total_ns"))
                >= threshold("outlier_share") * (x.time_a + x.time_b)
            )
        )
        .with_columns(
            impact=(pl.col("b_avg_ns") - pl.col("a_avg_ns") * x.overall) * pl.col("b_instances")
        )
        .sort(pl.col("impact").abs(), descending=True, maintain_order=True)
        .head(int(threshold("outliers_shown")))
    )
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
        impact_ns=x.per_unit(r["impact"]),
        rows=(r["name"],),
        name=short_name(r["name"]),
        word=word,
        attention=" (attention-related)" if attention else "",
        cause=cause,
    )


def uniform_change(x: Context) -> list[Clue]:
    """A change that hits every kernel alike: no single kernel stands out, the run does.
    Needs the middle half of the launches' kernels close to the typical change."""
    import polars as pl

    t = x.typical
    spread = threshold("uniform_spread")
    tight = t.q25 >= t.ratio / spread and t.q75 <= t.ratio * spread
    if not t.kernels or not _outside(t.ratio, threshold("uniform_ratio")) or not tight:
        return []
    slower = t.ratio > 1
    both = x.kernels.filter(pl.col("status") == "both")
    impact = float((both["b_total_ns"] - both["a_avg_ns"] * both["b_instances"]).sum())
    return [
        make(
            "uniform_change",
            f"launch-weighted median of the per-call ratios of the {t.kernels} kernels both "
            f"runs launch (middle half {t.q25:.2f}–{t.q75:.2f}×); kernel time "
            f"{fmt_ns(x.time_a)} → {fmt_ns(x.time_b)} "
            f"with launches {_count(x.launches_a)} → {_count(x.launches_b)}",
            impact_ns=x.per_unit(impact),
            ratio=t.ratio if slower else 1 / t.ratio,
            word="longer" if slower else "shorter",
            verdict=prose("uniform_change", "verdict", word="slower" if slower else "faster"),
        )
    ]


def calls_per_step(x: Context) -> list[Clue]:
    """Kernels both runs launch, called more or less often for the same work: per step
    when both captures repeat a step, else per launch (each kernel's share of launches)."""
    import polars as pl

    rows = []
    both = x.kernels.filter(pl.col("status") == "both")
    avg_b = dict(zip(both["name"], both["b_avg_ns"], strict=True))
    busiest = max(x.alignment, key=lambda al: al.launches_a + al.launches_b, default=None)
    if busiest is not None and busiest.step_calls:
        limit = threshold("calls_per_step_ratio")
        for name, ca, cb in busiest.step_calls:
            if ca and cb and name in avg_b and _outside(cb / ca, limit):
                rows.append((name, ca, cb, (cb - ca) * avg_b[name] * (busiest.steps_b or 1)))
        unit = "step"
    elif x.launches_a and x.launches_b:
        limit = threshold("calls_per_launch_ratio")
        scale = x.launches_b / x.launches_a
        for r in both.iter_rows(named=True):
            ca, cb = r["a_instances"], r["b_instances"]
            if max(ca, cb) < threshold("calls_min"):
                continue
            if _outside(cb / (ca * scale), limit):
                rows.append((r["name"], ca, cb, (cb - ca * scale) * r["b_avg_ns"]))
        unit = "launch"
    rows.sort(key=lambda r: -abs(r[3]))
    clues = []
    for name, ca, cb, impact in rows[: int(threshold("outliers_shown"))]:
        if unit == "step":
            evidence = f"{ca:,} → {cb:,} calls in every step ({busiest.steps_b:,} steps in B)"
            ratio_text = fmt_ratio(cb / ca)
        else:
            share_a, share_b = ca / x.launches_a, cb / x.launches_b
            evidence = (
                f"calls {_count(ca)} → {_count(cb)}: {share_a:.1%} → {share_b:.1%} of all "
                f"launches (no steps found, so normalized by launches)"
            )
            ratio_text = fmt_ratio(share_b / share_a)
        clues.append(
            make(
                "calls_per_step",
                evidence,
                impact_ns=x.per_unit(impact),
                rows=(name,),
                name=short_name(name),
                ratio=ratio_text,
                unit=unit,
            )
        )
    return clues


def _variant_rows(x: Context) -> list[tuple[dict[str, Any], float]]:
    """The categories whose kernels only one side runs, with enough time to be a clue:
    (row of the variants table, share of both runs' kernel time)."""
    rows = []
    for r in x.swaps.iter_rows(named=True):
        if r["only_b_kernels"] == 0 and r["only_a_kernels"] == 0:
            continue
        share = (r["only_a_ns"] + r["only_b_ns"]) / ((x.time_a + x.time_b) or 1)
        if share >= threshold("variant_share"):
            rows.append((r, share))
    return rows


def _explained_by_variants(x: Context) -> set[str]:
    """Kernels whose time a variant clue (variant_swap, new_kernels, vanished_kernels)
    already counts: those only one side runs, in the categories that have such a clue."""
    import polars as pl

    cats = [r["category"] for r, _share in _variant_rows(x)]
    only = x.kernels.filter((pl.col("status") != "both") & pl.col("category").is_in(cats))
    return set(only["name"].to_list())


def variant_swaps(x: Context) -> list[Clue]:
    """Kernels of one category that only one side runs: swapped, new or vanished."""
    clues = []
    for r, share in _variant_rows(x):
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
        impact = x.per_unit(r["only_b_ns"] - r["only_a_ns"])
        if swapped:
            strong = share >= threshold("variant_strong_share")
            verdict = prose("variant_swap", "verdict_gemm") if cat == "gemm" else None
            clues.append(
                make(
                    "variant_swap",
                    evidence,
                    strength="strong" if strong else None,
                    impact_ns=impact,
                    rows=(cat,),
                    category=cat,
                    verdict=verdict,
                )
            )
        else:
            clue_id = "new_kernels" if r["only_b_kernels"] else "vanished_kernels"
            verdict = prose("variant_swap", "verdict_gemm") if cat == "gemm" else None
            clues.append(
                make(
                    clue_id, evidence, impact_ns=impact, rows=(cat,), category=cat, verdict=verdict
                )
            )
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
                impact_ns=x.per_unit(_copy_ns(x.sb, r) - _copy_ns(x.sa, r)),
                rows=(r["operation"],),
                change=change,
                verdict=prose("copy_growth", "verdict_d2d") if d2d_grew else None,
            )
        )
    return clues


def _copy_ns(side: Side, row: dict[str, Any]) -> int:
    return side.copies.get(row["copy_kind"], {}).get("total_ns", 0) or 0


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
            rows=("memset count", "memset bytes"),
            change=fmt_pct_change(mr),
        )
    ]


def launch_structure(x: Context) -> list[Clue]:
    """The device whose launch order differs most (captures of the same work aside): same
    count with other kernels, or sequences that diverge; with steps, what changed in
    every step."""
    diverged = [al for al in x.alignment if not al.identical and not al.capture_difference]
    if not diverged:
        return []
    al = max(diverged, key=lambda a: a.aligned - a.matched_in_order)
    differing = al.aligned - al.matched_in_order
    where = f"first divergence at launch #{al.first_divergence + 1:,} on {al.where}" + (
        f" ({short_name(al.a_at_divergence)} in A, {short_name(al.b_at_divergence)} in B)"
        if al.a_at_divergence and al.b_at_divergence
        else ""
    )
    matched = f"{_count(al.matched_in_order)} of {_count(al.aligned)} launches match in order"
    per_step = ""
    if al.step_changes and al.steps_a and al.steps_b:
        pos, was, now = al.step_changes[0]
        steps = min(al.steps_a, al.steps_b)
        change = (
            f"{short_name(was, 40)} → {short_name(now, 40)}"
            if was and now
            else (f"{short_name(now, 40)} added" if now else f"{short_name(was, 40)} left out")
        )
        more = len(al.step_changes) - 1
        matched += f"; in every step, launch #{pos:,} changed: {change} ({steps:,} steps" + (
            f", {more}{'+' if more >= 9 else ''} more changes per step)" if more else ")"
        )
    # Launches of kernels only one run has are the variant clue's time, extra or missing
    # calls of a kernel per step the calls-per-step clue's: the path clue counts the rest
    # (kernels both runs have, reordered), and says what the others explain.
    explained = dict.fromkeys(
        _explained_by_variants(x), "the variant clues (kernels only one run launches)"
    )
    for c in calls_per_step(x):
        explained.update(dict.fromkeys(c.rows, "the calls-per-step clue"))
    rest, counted = _path_ns(x, al, explained)
    impact = x.per_unit(rest) if rest or not counted else None
    note = "".join(
        f"; {fmt_signed_ns(x.per_unit(ns))}{'/step' if x.steps else ''} of the time these "
        f"launches moved is counted by {who}"
        for who, ns in counted.items()
    )
    if x.launches_a == x.launches_b:
        return [
            make(
                "same_count_different_path",
                f"{where}; {matched}, {_count(differing)} differ{per_step}{note}",
                impact_ns=impact,
                rows=(al.device,),
                launches=_count(x.launches_a),
            )
        ]
    return [
        make(
            "launch_sequence_diverges",
            f"{where}; {matched}{per_step}{note}",
            impact_ns=impact,
            rows=(al.device,),
        )
    ]


def _path_ns(
    x: Context, al: SequenceAlignment, explained: dict[str, str]
) -> tuple[float, dict[str, float]]:
    """GPU time the changed launches moved: each replaced launch's mean time in B minus its
    predecessor's in A, plus launches only one side makes. Split: the launches of kernels
    not in ``explained`` (name -> the clue that counts it), and per explaining clue the
    time of the launches involving its kernels."""
    avg_a = dict(zip(x.kernels["name"], x.kernels["a_avg_ns"], strict=True))
    avg_b = dict(zip(x.kernels["name"], x.kernels["b_avg_ns"], strict=True))
    rest = 0.0
    counted: dict[str, float] = {}

    def add(names: tuple[str, ...], ns: float) -> None:
        nonlocal rest
        who = next((explained[n] for n in names if n in explained), None)
        if who is None:
            rest += ns
        else:
            counted[who] = counted.get(who, 0.0) + ns

    for a, y, n in al.replaced:
        add((a, y), n * ((avg_b.get(y) or 0) - (avg_a.get(a) or 0)))
    for y, n in al.only_in_b:
        add((y,), n * (avg_b.get(y) or 0))
    for a, n in al.only_in_a:
        add((a,), -n * (avg_a.get(a) or 0))
    return rest, counted


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
        impact = sum(r["b_total_ns"] - r["a_total_ns"] for r in rows)
        clues.append(
            make(
                "danger_" + kind,
                "; ".join(parts),
                strength="strong" if first["level"] == "high" else None,
                impact_ns=x.per_unit(impact),
                rows=[r["name"] for r in rows],
                what=short_name(first["name"], 50) if n == 1 else f"{n} kernels",
                rule_id=rule_id,
                level=first["level"],
                why=_brief(first["why"]),
                fix=first["fix"],
            )
        )
    return clues


RULES = (
    capture_difference,
    time_accounting,
    exposed_communication,
    graph_replays_hidden,
    weak_evidence,
    per_call_outliers,
    uniform_change,
    calls_per_step,
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
