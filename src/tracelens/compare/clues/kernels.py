"""Clues about the kernels both runs launch: per-call outliers, a uniform change, calls per
step (variants, kernels of a category only one side runs: :mod:`.variants`)."""

from __future__ import annotations

import math
from typing import Any

from ...units import fmt_ns, fmt_ratio
from ..model import Clue, ratio
from ..model import typical_change as model_typical
from ..shift import kernel_note, shift_words
from .context import Context, count, outside, short_name
from .spec import make, prose, threshold


def per_call_outliers(x: Context) -> list[Clue]:
    """Same kernel, changed cost per call, beyond the trace-wide change; communication
    kernels from a lower bar (their calls include waiting for peers), and a kernel heavy
    enough to move the run (``outlier_heavy_impact``) from a lower bar still
    (``outlier_ratio_heavy``), unless its calls per step changed (:func:`calls_per_step`
    tells it). The largest impact first."""
    import polars as pl

    limit = pl.when(pl.col("category") == "communication")
    limit = limit.then(threshold("outlier_ratio_communication")).otherwise(
        threshold("outlier_ratio")
    )
    off = pl.col("per_call_ratio") / x.overall
    heavy = threshold("outlier_ratio_heavy")
    # A kernel called another number of times per step is the calls clue's: its mean per
    # call then mixes calls of another kind (cascade attention's prefix and suffix passes)
    recalled = [name for c in calls_per_step(x) for name in c.rows]
    both = x.kernels.filter(pl.col("status") == "both").with_columns(
        impact=(pl.col("b_avg_ns") - pl.col("a_avg_ns") * x.overall) * pl.col("b_instances"),
        far=(off >= limit) | (off <= 1 / limit),
    )
    outliers = (
        both.filter(
            ~pl.col("name").is_in(recalled)
            & (
                (
                    pl.col("far")
                    & (
                        (pl.col("a_total_ns") + pl.col("b_total_ns"))
                        >= threshold("outlier_share") * (x.time_a + x.time_b)
                    )
                )
                | (
                    ((off >= heavy) | (off <= 1 / heavy))
                    & (
                        pl.col("impact").abs()
                        >= threshold("outlier_heavy_impact") * max(x.time_a, x.time_b)
                    )
                )
            )
        )
        .sort(pl.col("impact").abs(), descending=True, maintain_order=True)
        .head(int(threshold("outliers_shown")))
    )
    return [_per_call_outlier(x, r) for r in outliers.iter_rows(named=True)]


def _per_call_outlier(x: Context, r: dict[str, Any]) -> Clue:
    same_calls = r["a_instances"] == r["b_instances"]
    calls = (
        f"{count(r['a_instances'])} calls in both"
        if same_calls
        else f"calls {count(r['a_instances'])} → {count(r['b_instances'])}"
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
        and outside(blocks_r, threshold("grid_ratio"))
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
    note = kernel_note(x.sa.shift, r["name"], "A") + kernel_note(x.sb.shift, r["name"], "B")
    few = _few_long_calls(x, r)
    if note:  # its calls changed with a run's level shift: its mean mixes the two levels
        side = "A and B" if note.count(" from it ") > 1 else note[2]
        cause = prose("per_call_outlier", "verdict_shifted", side=side)
    elif few is not None:  # its median call did not move: a few long calls moved its mean
        note = f"; median call {fmt_ns(r['a_med_ns'])} → {fmt_ns(r['b_med_ns'])}"
        cause = few
    elif not r["far"]:  # under outlier_ratio: named for the time it moves
        share = max(r["a_total_ns"] / (x.time_a or 1), r["b_total_ns"] / (x.time_b or 1))
        cause = prose("per_call_outlier", "verdict_heavy", share=f"{share:.0%}", cause=cause)
    else:
        cause = prose("per_call_outlier", "verdict", cause=cause)
    return make(
        "per_call_outlier",
        f"{calls}; {fmt_ns(r['a_total_ns'])} → {fmt_ns(r['b_total_ns'])} total; "
        f"per call {fmt_ns(r['a_avg_ns'])} → {fmt_ns(r['b_avg_ns'])}, while the typical "
        f"kernel changed {fmt_ratio(x.overall)}{grid}{note}",
        strength=None if same_calls else "moderate",
        impact_ns=x.per_unit(r["impact"]),
        rows=(r["name"],),
        name=short_name(r["name"]),
        word=word,
        attention=" (attention-related)" if attention else "",
        verdict=cause,
    )


def _few_long_calls(x: Context, r: dict[str, Any]) -> str | None:
    """The per-call verdict when a kernel's mean call moved off the typical change but its
    median call did not (within ``outlier_ratio_heavy`` of the kernels' typical median
    change): a few long calls of the run whose mean is the longer moved it (its warm-up,
    when ``tracelens steps`` set one aside there, named); None otherwise."""
    a_med, b_med = r["a_med_ns"], r["b_med_ns"]
    if not a_med or not b_med:
        return None
    typical = model_typical(x.kernels, threshold("typical_weight_cap"), "med")
    off = (b_med / a_med) / (typical.ratio if typical.kernels else 1.0)
    if outside(off, threshold("outlier_ratio_heavy")):
        return None
    which = "B" if r["b_avg_ns"] / b_med > r["a_avg_ns"] / a_med else "A"
    side = x.sb if which == "B" else x.sa
    warm = side.steps.figures().get("warmup_steps", 0) if side.steps is not None else 0
    few = (
        f"its warm-up ({count(int(warm))} step{'s' * (warm > 1)} that tracelens steps sets aside), "
    )
    return prose("per_call_outlier", "verdict_few", which=which, few=few if warm else "")


def uniform_change(x: Context) -> list[Clue]:
    """A change that hits every kernel alike: no single kernel stands out, the run does.
    Needs the middle half of the launches' kernels close to the typical change, and every
    device pair to have changed alike (else ``device_change`` says which did)."""
    import polars as pl

    from .devices import devices_apart

    t = x.typical
    if devices_apart(x):
        return []
    spread = threshold("uniform_spread")
    tight = t.q25 >= t.ratio / spread and t.q75 <= t.ratio * spread
    if not t.kernels or not outside(t.ratio, threshold("uniform_ratio")) or not tight:
        return []
    slower = t.ratio > 1
    both = x.kernels.filter(pl.col("status") == "both")
    impact = float((both["b_total_ns"] - both["a_avg_ns"] * both["b_instances"]).sum())
    evidence = (
        f"launch-weighted median of the per-call ratios of the {t.kernels} kernels both "
        f"runs launch (middle half {t.q25:.2f}–{t.q75:.2f}×); kernel time "
        f"{fmt_ns(x.time_a)} → {fmt_ns(x.time_b)} "
        f"with launches {count(x.launches_a)} → {count(x.launches_b)}"
    )
    fields = {
        "ratio": t.ratio if slower else 1 / t.ratio,
        "word": "longer" if slower else "shorter",
    }
    median = model_typical(x.kernels, threshold("typical_weight_cap"), "med")
    if median.kernels and not outside(median.ratio, threshold("uniform_ratio")):
        return [_few_calls(x, evidence, median.ratio, x.per_unit(impact), slower, fields)]
    verdict, strength = _uniform_verdict(x, slower)
    shifted = [
        (s, side.shift)
        for s, side in zip("AB", (x.sa, x.sb), strict=True)
        if side.shift is not None
    ]
    if shifted:  # a run whose kernels changed part-way: the ratio mixes its two levels
        evidence += "".join(f"; {s}: {shift_words(k, short_name)}" for s, k in shifted)
        verdict = prose(
            "uniform_change",
            "verdict_shifted",
            side=" and ".join(s for s, _ in shifted),
            word="slower" if slower else "faster",
        )
    return [
        make(
            "uniform_change",
            evidence,
            strength=strength,
            impact_ns=x.per_unit(impact),
            verdict=verdict,
            **fields,
        )
    ]


def _uniform_verdict(x: Context, slower: bool) -> tuple[str, str | None]:
    """The uniform change's verdict and strength (None: the rules file's): the GPU's, or,
    when the run whose calls are longer ran its compute kernels more at once
    (``overlap_growth``: :func:`overlap_shares`), that run's own concurrency as much."""
    shares = overlap_shares(x)
    long, other = (1, 0) if slower else (0, 1)
    if shares[long] - shares[other] < threshold("overlap_growth"):
        return prose("uniform_change", "verdict", word="slower" if slower else "faster"), None
    verdict = prose(
        "uniform_change",
        "verdict_concurrent",
        which="AB"[long],
        other="AB"[other],
        share=shares[long],
        other_share=shares[other],
    )
    return verdict, "moderate"


def overlap_shares(x: Context) -> tuple[float, float]:
    """Each run's share of its compute kernels' own time (the sum of their durations) that
    ran beside another compute kernel: 1 - util's compute time (their union on each
    device) over that sum; 0 without util's figures. The kernels util counts as compute:
    all but the communication and memory categories, and graph replays."""
    import polars as pl

    compute = x.kernels.filter(~pl.col("category").is_in(["communication", "memory"]))
    out = []
    for side, col in ((x.sa, "a_total_ns"), (x.sb, "b_total_ns")):
        union = (side.time or {}).get("compute_ns") or 0
        own = float(compute[col].sum()) + side.graph[1]
        out.append(max(1 - union / own, 0.0) if union and own else 0.0)
    return out[0], out[1]


def _few_calls(x: Context, evidence: str, median: float, impact, slower: bool, fields) -> Clue:
    """The mean call of every kernel moved alike, but not the median call (``median``: the
    typical change of the kernels' median calls): a few long calls of the run whose mean
    is longer moved the means, the typical call did not change; a warm-up ``tracelens
    steps`` set aside in that run is named."""
    side = x.sb if slower else x.sa
    warm = side.steps.figures().get("warmup_steps", 0) if side.steps is not None else 0
    which = "B" if slower else "A"
    few = (
        f"its warm-up ({count(int(warm))} step{'s' * (warm > 1)} that tracelens steps sets aside), "
        if warm
        else ""
    )
    return make(
        "few_calls_change",
        f"{evidence}; the kernels' median calls: {median:.2f}×",
        impact_ns=impact,
        median=f"{median:.2f}",
        few=few,
        which=which,
        **fields,
    )


def calls_per_step(x: Context) -> list[Clue]:
    """Kernels both runs launch, called more or less often for the same work: per step
    when both captures repeat a step, else on average per step when both have steps
    (their repeating steps launch every kernel as often: it changed in some steps only,
    partway through the run), else per launch (each kernel's share of launches)."""
    import polars as pl

    rows = []
    both = x.kernels.filter(pl.col("status") == "both")
    kernel = {r["name"]: r for r in both.iter_rows(named=True)}
    busiest = max(x.alignment, key=lambda al: al.launches_a + al.launches_b, default=None)
    unit, in_every_step = "step", busiest is not None and bool(busiest.step_calls)
    # B's work over A's: each kernel's time moved by its total less A's scaled to B's work
    ra, rb = x.replicas  # per step and device where the runs differ in devices
    work = x.steps * rb / (x.steps_a * ra) if x.steps and x.steps_a else None
    if in_every_step:
        limit = threshold("calls_per_step_ratio")
        for name, ca, cb in busiest.step_calls:
            if ca and cb and name in kernel and outside(cb / ca, limit):
                r = kernel[name]
                rows.append((name, ca, cb, _moved(r, work or 1.0)))
    elif x.launches_a and x.launches_b:
        unit = "step" if work else "launch"
        limit = threshold(f"calls_per_{unit}_ratio")
        scale = work if unit == "step" else x.launches_b / x.launches_a
        for r in both.iter_rows(named=True):
            ca, cb = r["a_instances"], r["b_instances"]
            if max(ca, cb) < threshold("calls_min"):
                continue
            if outside(cb / (ca * scale), limit):
                rows.append((r["name"], ca, cb, _moved(r, scale)))
    rows.sort(key=lambda r: -abs(r[3]))
    clues = []
    for name, ca, cb, impact in rows[: int(threshold("outliers_shown"))]:
        evidence, ratio_text = _calls_evidence(x, busiest if in_every_step else None, ca, cb)
        evidence += _mixed_calls(x, kernel[name])
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


def _moved(r: dict[str, Any], work: float) -> float:
    """The time a kernel's calls per step moved: its total in B less A's scaled to B's
    work (``work``: B's steps over A's), ns. Its mean per call mixes the calls of the
    step that were there with those added (removed), which may be of another kind (a
    prefix and a suffix pass): the other calls' count times that mean is no measure."""
    return r["b_total_ns"] - r["a_total_ns"] * work


def _mixed_calls(x: Context, r: dict[str, Any]) -> str:
    """The evidence's words on a kernel's mean call, when it moved beyond the uniform bar
    from the typical change: a mean over calls of other kinds, no per-call outlier."""
    if not r["a_avg_ns"] or not outside(
        r["per_call_ratio"] / x.overall, threshold("uniform_ratio")
    ):
        return ""
    return (
        f"; per call {fmt_ns(r['a_avg_ns'])} → {fmt_ns(r['b_avg_ns'])} on average, a mean "
        "over the calls that were there and those added or removed"
    )


def _calls_evidence(x: Context, busiest, ca: int, cb: int) -> tuple[str, str]:
    """The evidence and ratio of one calls clue: in every step (``busiest``, the device
    whose repeating steps launch the kernel another number of times), else on average
    over each run's steps, else per launch."""
    if busiest is not None:
        evidence = f"{ca:,} → {cb:,} calls in every step ({busiest.steps_b:,} steps in B)"
        if x.steps != busiest.steps_b:  # the impacts count other steps (trace.steps)
            evidence = (
                f"{ca:,} → {cb:,} calls in every repetition of the launch sequence "
                f"({busiest.steps_b:,} in B)"
            )
        return evidence, fmt_ratio(cb / ca)
    if x.steps and x.steps_a:
        (ra, rb), unit = x.replicas, "per step"
        per_a, per_b = ca / (x.steps_a * ra), cb / (x.steps * rb)
        steps = f"{count(x.steps_a)} → {count(x.steps)} steps"
        if (ra, rb) != (1, 1):
            steps = f"{count(x.steps_a)} steps on {ra:,} → {count(x.steps)} on {rb:,} devices"
            unit = "per step and device"
        return (
            f"calls {count(ca)} → {count(cb)} in {steps}: {per_a:.2f} → {per_b:.2f} {unit} "
            "on average",
            fmt_ratio(per_b / per_a),
        )
    share_a, share_b = ca / x.launches_a, cb / x.launches_b
    return (
        f"calls {count(ca)} → {count(cb)}: {share_a:.1%} → {share_b:.1%} of all "
        f"launches (no steps found, so normalized by launches)",
        fmt_ratio(share_b / share_a),
    )
