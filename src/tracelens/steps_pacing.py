"""How regular the steps are: warm-up, outliers and level shifts in step time.

Judged on each step's duration (its slowest device), in step order, with the thresholds of
``[robust]`` and ``[pacing]`` in ``data/steps.toml``: leading slow steps are warm-up and
other steps off the median are outliers, by the modified z-score of Iglewicz and Hoaglin;
a level shift (the run slows down or speeds up part-way and stays there) is the split of
the steady steps that minimises the spread within its two parts, when their medians differ
by more than the noise and a set share.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = [
    "LevelShift",
    "flag_steps",
    "judge_steps",
    "level_shift",
    "median",
    "shift_fields",
    "shift_index",
    "spread_words",
    "warmup_cap_hit",
]


@dataclass(frozen=True)
class LevelShift:
    """A level shift in step time (``[pacing]`` in ``data/steps.toml``): the steady steps
    before ``step`` took ``before_median_ns`` (median), those from it ``after_median_ns``."""

    step: int
    before_steps: int
    before_median_ns: float
    after_steps: int
    after_median_ns: float

    def words(self) -> str:
        """'step time changed at step 13: 115 us -> 215 us median'."""
        from .units import fmt_ns

        return (
            f"step time changed at step {self.step:,}: {fmt_ns(self.before_median_ns)} -> "
            f"{fmt_ns(self.after_median_ns)} median"
        )


def shift_fields(shift: LevelShift | None, timeunit: str) -> dict[str, Any] | None:
    """The level shift as JSON: step, before_steps, before_median_<unit>, after_steps,
    after_median_<unit>; None without one."""
    from .render import TIME_UNITS_NS

    if shift is None:
        return None
    factor = TIME_UNITS_NS[timeunit]
    return {
        "step": shift.step,
        "before_steps": shift.before_steps,
        f"before_median_{timeunit}": shift.before_median_ns / factor,
        "after_steps": shift.after_steps,
        f"after_median_{timeunit}": shift.after_median_ns / factor,
    }


def judge_steps(
    durations: list[int], lead: int, conf: dict[str, Any]
) -> tuple[list[bool], list[bool], int | None]:
    """(warm-up flags, outlier flags, the index of the first step after a level shift or
    None) for step durations in order, the first ``lead`` of them known warm-up (``conf``:
    ``data/steps.toml``). With a shift, each part's outliers are judged against its own
    median: a step as slow as the others after a slowdown is no outlier."""
    warmup, outlier = flag_steps(durations[lead:], conf["robust"])
    warmup, outlier = [True] * lead + warmup, [False] * lead + outlier
    steady_from = sum(warmup)
    shift = shift_index(durations[steady_from:], conf["pacing"])
    if shift is None:
        return warmup, outlier, None
    at = steady_from + shift
    parts = (durations[steady_from:at], durations[at:])
    judged = [o for part in parts for o in _rare(_off_steps(part, conf["robust"])[0], conf)]
    return warmup, outlier[:steady_from] + judged, at


def level_shift(steps: list[int], durations: list[int], at: int) -> LevelShift:
    """The level shift before ``steps[at]`` of steady steps and their durations."""
    before, after = durations[:at], durations[at:]
    return LevelShift(steps[at], len(before), median(before), len(after), median(after))


def flag_steps(durations: list[int], robust: dict[str, float]) -> tuple[list[bool], list[bool]]:
    """(warm-up, outlier) flags for step durations in order, by the modified z-score
    (``robust``: z_cutoff, min_steps, max_warmup_fraction, zero_mad_tolerance,
    min_off_share). The leading
    run of slow steps is warm-up when it ends within the first ``max_warmup_fraction`` of
    the steps; past that, step times keep changing (a trend, :func:`warmup_cap_hit` says
    so): none is set aside, and none of the run is an outlier either."""
    n = len(durations)
    if n < robust["min_steps"]:
        return [False] * n, [False] * n
    off, lead = _off_steps(durations, robust)
    warm = lead if lead <= int(n * robust["max_warmup_fraction"]) else 0
    if _too_many(off[lead:], robust):
        # step times spread (two levels, a wide distribution): no step is an outlier, and
        # the leading slow steps are warm-up only when slower than every later step
        later = durations[lead:]
        warm = warm if warm and later and min(durations[:lead]) > max(later) else 0
        return [i < warm for i in range(n)], [False] * n
    warmup = [i < warm for i in range(n)]
    outlier = [o and i >= lead for i, o in enumerate(off)]
    return warmup, outlier


def _too_many(off: list[bool], robust: dict[str, float]) -> bool:
    """Whether more than ``max_outlier_fraction`` of the steps are off the median: then the
    step times spread, and no step stands out as an outlier."""
    return sum(off) > robust["max_outlier_fraction"] * len(off)


def _rare(off: list[bool], conf: dict[str, Any]) -> list[bool]:
    """``off`` as outlier flags: none when too many steps are off (:func:`_too_many`)."""
    return [False] * len(off) if _too_many(off, conf["robust"]) else off


def spread_words(durations: list[int], robust: dict[str, float]) -> str | None:
    """'step time varies: 15 of 37 steps are off the median (3.00 ms), too many to call
    outliers (over 20%)' for steady step durations whose off steps are too many to be
    outliers (:func:`_too_many`), else None."""
    from .units import fmt_ns

    if len(durations) < robust["min_steps"]:
        return None
    off = _off_steps(durations, robust)[0]
    if not _too_many(off, robust):
        return None
    return (
        f"step time varies: {sum(off):,} of {len(off):,} steps are off the median "
        f"({fmt_ns(median(durations))}), too many to call outliers "
        f"(over {robust['max_outlier_fraction']:.0%})"
    )


def warmup_cap_hit(durations: list[int], robust: dict[str, float]) -> str | None:
    """Why no warm-up is set aside when the leading slow steps run past the first
    ``max_warmup_fraction`` of the steps (a workload that shrinks for a third of the
    capture is not warming up), else None."""
    n = len(durations)
    if n < robust["min_steps"]:
        return None
    lead = _off_steps(durations, robust)[1]
    if lead <= int(n * robust["max_warmup_fraction"]):
        return None
    return (
        f"not detected within the first {robust['max_warmup_fraction']:.0%} of the steps "
        f"(step times keep changing: steps 1 to {lead:,} are all slower than the median, "
        "neither set aside nor outliers)"
    )


def shift_index(durations: list[int], pacing: dict[str, float]) -> int | None:
    """The index of the first step after a level shift in step times in order, or None
    (``pacing``: min_part_steps, min_change, over_spread; ``[pacing]`` in
    ``data/steps.toml``). The split minimises the within-part sum of squares of the
    durations' ranks (prefix sums: one pass over the splits)."""
    n = len(durations)
    least = int(pacing["min_part_steps"])
    if n < 2 * least:
        return None
    sums, squares = [0.0], [0.0]
    for r in _ranks(durations):
        sums.append(sums[-1] + r)
        squares.append(squares[-1] + r * r)

    def spread(a: int, b: int) -> float:
        return squares[b] - squares[a] - (sums[b] - sums[a]) ** 2 / (b - a)

    # the best split of all, then whether both parts are long enough: the best split with
    # long enough parts can cut a short slow stretch at the end off its first steps
    at = min(range(1, n), key=lambda k: (spread(0, k) + spread(k, n), k))
    if min(at, n - at) < least:
        return None
    before, after = durations[:at], durations[at:]
    change = abs(median(after) - median(before))
    noise = 1.4826 * max(_mad(before), _mad(after))
    if change <= pacing["min_change"] * min(median(before), median(after)):
        return None
    return at if change > pacing["over_spread"] * noise else None


def _ranks(values: list[int]) -> list[float]:
    """The ranks of ``values`` (1-based; ties share their mean rank)."""
    order = sorted(range(len(values)), key=values.__getitem__)
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in order[i : j + 1]:
            ranks[k] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def _mad(values: list[int]) -> float:
    med = median(values)
    return median([abs(v - med) for v in values])


def _off_steps(durations: list[int], robust: dict[str, float]) -> tuple[list[bool], int]:
    """(whether each step is off the median, by the modified z-score; how many leading
    steps are off and slower)."""
    med = median(durations)
    mad = _mad(durations)
    least = robust["min_off_share"] * med  # closer to the median is never off

    def off(d: float) -> bool:
        if mad == 0:
            return abs(d - med) > robust["zero_mad_tolerance"] * med
        return abs(d - med) > least and 0.6745 * abs(d - med) / mad > robust["z_cutoff"]

    flags = [off(d) for d in durations]
    lead = 0
    while lead < len(durations) and flags[lead] and durations[lead] > med:
        lead += 1
    return flags, lead


def median(values: list[float]) -> float:
    s = sorted(values)
    mid = len(s) // 2
    return float(s[mid]) if len(s) % 2 else (s[mid - 1] + s[mid]) / 2
