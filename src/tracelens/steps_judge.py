"""Judging the steps once found: which are warm-up and which are outliers, and the words
for them in :attr:`tracelens.steps.Steps.detail`.

Two things the step search knows beyond the step times (both from the launch-sequence
period, :mod:`tracelens.steps_period`):

- warm-up iterations known from what they launch (autotuning, compilation) are set aside
  per device: each device's launch sequence is searched on its own, so step N of one
  device is that device's Nth iteration, and one device's warm-up says nothing of
  another's (the union over devices set aside the first steady iterations of a device
  without warm-up);
- steps that also launch optional kernels (an EMA update every 4th iteration) are judged
  against the steps of the same shape, when there are enough of them: such a step is
  longer for being that variant, which the outlier rule (5% when the steps are identical)
  would otherwise flag each time. A shape with too few steps to judge on its own is judged
  with the others, and a flagged step of it says what it launched.

Then :func:`tracelens.steps_pacing.judge_steps` flags warm-up, outliers and a level shift
on the step times in order.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

from .steps_pacing import judge_steps, level_shift, median, spread_words, warmup_cap_hit

if TYPE_CHECKING:
    import polars as pl

#: A step's shape: the names of the kernels it launches besides its device's motif.
Shape = tuple[str, ...]


def judge(
    frame: pl.DataFrame,
    set_aside: tuple[dict[int, list[int]], str],
    shapes: dict[int, Shape],
    conf: dict[str, Any],
) -> tuple[pl.DataFrame, str]:
    """(``frame`` with its warmup and outlier flags, the detail's words after the source:
    '; warm-up: …; step time changed …; outliers: …'). ``set_aside``: per device, the
    leading steps known to be warm-up, and why; ``shapes``: per step, its
    :data:`Shape` (steps not listed launch only the motif); ``conf``: ``data/steps.toml``.
    A step lasts as long as its slowest device, not counting rows set aside."""
    import polars as pl

    known, why = set_aside
    rows = frame.with_columns(aside=_aside(frame, known))
    per_step = (
        rows.group_by("step")
        .agg(
            duration_ns=pl.coalesce(
                pl.col("duration_ns").filter(~pl.col("aside")).max(), pl.col("duration_ns").max()
            ),
            aside=pl.col("aside").all(),
        )
        .sort("step")
    )
    steps, durations = per_step["step"].to_list(), per_step["duration_ns"].to_list()
    lead = int(per_step["aside"].sum())  # each device's known warm-up is its first steps
    step_shapes = [shapes.get(s, ()) for s in steps[lead:]]
    judged, alone = same_shape(durations[lead:], step_shapes, conf["robust"])
    warmup, outlier, shift = judge_steps(durations[:lead] + judged, lead, conf)
    flags = pl.DataFrame(
        {"step": steps, "warmup": warmup, "outlier": outlier},
        schema={"step": pl.Int64, "warmup": pl.Boolean, "outlier": pl.Boolean},
    )
    frame = (
        rows.join(flags, on="step", how="left")
        .with_columns(warmup=pl.col("warmup") | pl.col("aside"))
        .drop("aside")
        .sort("step", "device")
    )
    words = _warmup_words(frame, why, slower=sum(warmup) > lead)
    if not words and shift is None and (capped := warmup_cap_hit(judged, conf["robust"])):
        words = f"; warm-up: {capped}"
    if shift is not None:
        steady_from = sum(warmup)
        at = shift - steady_from
        words += "; " + level_shift(steps[steady_from:], durations[steady_from:], at).words()
    odd = [s for s, o in zip(steps, outlier, strict=True) if o]
    steady = (durations[:lead] + judged)[sum(warmup) :]
    if not odd and shift is None and (spread := spread_words(steady, conf["robust"])):
        words += f"; {spread}"
    if odd:
        # 'outliers: step 38', not 'outliers: 38': a bare number reads as a count
        words += (
            f"; outliers: {_steps_word(odd)} {step_list(odd)}{_alone_words(odd, shapes, alone)}"
        )
    return frame, words


def _aside(frame: pl.DataFrame, known: dict[int, list[int]]) -> pl.Expr:
    """Whether a row of ``frame`` is one of its device's steps known to be warm-up."""
    import polars as pl

    aside = pl.lit(False)
    for device, steps in known.items():
        aside = aside | ((pl.col("device") == device) & pl.col("step").is_in(steps))
    return aside


def same_shape(
    durations: list[int], shapes: list[Shape], robust: dict[str, float]
) -> tuple[list[float], set[Shape]]:
    """(the step times to judge, the shapes judged with the most common one): a shape of at
    least ``min_steps`` steps (``[robust]``) other than the most common is moved by the
    difference of its median from the most common shape's, so that its steps are judged
    against each other; a shape with fewer steps is left as it is (too few to tell what
    is usual for it)."""
    counts = Counter(shapes)
    if len(counts) < 2:
        return list(durations), set()
    main = max(counts, key=lambda s: (counts[s], s == ()))
    base = median([d for d, s in zip(durations, shapes, strict=True) if s == main])
    offsets, alone = {}, set()
    for shape, count in counts.items():
        if shape == main:
            continue
        if count < robust["min_steps"]:
            alone.add(shape)
            continue
        those = [d for d, s in zip(durations, shapes, strict=True) if s == shape]
        offsets[shape] = median(those) - base
    return [d - offsets.get(s, 0) for d, s in zip(durations, shapes, strict=True)], alone


def _warmup_words(frame: pl.DataFrame, why: str, slower: bool) -> str:
    """'; warm-up: steps 1, 2 (why; set aside)', or per device when the devices' warm-up
    steps differ ('; warm-up: device 1: steps 1, 2, 3 (why, set aside; none on device 0)');
    '' without warm-up."""
    import polars as pl

    warm = frame.filter("warmup")
    if warm.is_empty():
        return ""
    reasons = "; ".join(r for r in (why, "slower than the steady state" if slower else "") if r)
    aside = f"{reasons}{'; ' if why else ', '}set aside"
    union = sorted(set(warm["step"].to_list()))
    per_device = {
        device: sorted(steps)
        for device, steps in warm.group_by("device").agg("step").sort("device").rows()
    }
    # the same steps on every device that has them (its rows of the union's steps)
    held = frame.filter(pl.col("step").is_in(union)).group_by("device").agg("step")
    if all(sorted(steps) == per_device.get(device) for device, steps in held.rows()):
        return f"; warm-up: {_steps_word(union)} {step_list(union)} ({aside})"
    named = ", ".join(f"device {d}: {_steps_word(s)} {step_list(s)}" for d, s in per_device.items())
    without = sorted(set(frame["device"].to_list()) - set(per_device))
    none = (
        f"; none on device{'s' if len(without) > 1 else ''} {_devices(without)}" if without else ""
    )
    return f"; warm-up: {named} ({aside}{none})"


def _alone_words(odd: list[int], shapes: dict[int, Shape], alone: set[Shape]) -> str:
    """' (steps 5, 11 also launch X, which too few steps do to judge them apart)' for the
    outliers of a shape judged with the most common one (:func:`same_shape`)."""
    parts = []
    for shape in sorted(alone):
        these = [s for s in odd if shapes.get(s, ()) == shape]
        if these:
            names = ", ".join(shape[:3]) + (
                f" and {len(shape) - 3:,} more" if len(shape) > 3 else ""
            )
            launch = "launches" if len(these) == 1 else "launch"
            parts.append(f"{_steps_word(these)} {step_list(these)} also {launch} {names}")
    if not parts:
        return ""
    return f" ({'; '.join(parts)}, which too few steps do to judge them apart)"


def _steps_word(steps: list[int]) -> str:
    return "steps" if len(steps) > 1 else "step"


def _devices(devices: list[int]) -> str:
    return ", ".join(str(d) for d in devices)


def step_list(steps: list[int]) -> str:
    """'1, 2, 3', the first 8 and 'and N more'."""
    shown = ", ".join(str(s) for s in steps[:8])
    return shown + (f" and {len(steps) - 8} more" if len(steps) > 8 else "")
