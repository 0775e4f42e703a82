"""The unit the diff's time accounting compares in (per step of each run when both repeat
a step, else per device with A scaled to B's launches) and each run's time accounting
(compute, exposed communication, exposed memory, idle) in it: what the GPU wall time per
step clue (:mod:`tracelens.compare.clues.accounting`) reads."""

from __future__ import annotations

from .context import Context
from .spec import threshold

# util's idle at the ends of the capture, which no step holds
_EDGES = ("before_first", "after_last")
TIME_PARTS = (
    ("compute_ns", "compute"),
    ("exposed_communication_ns", "exposed communication"),
    ("exposed_memory_ns", "exposed memory"),
    ("idle_ns", "idle"),
)


def per_unit(x: Context) -> tuple[dict[str, float], dict[str, float], str]:
    """Each run's time accounting (``Side.time``'s keys) in the unit the board compares,
    and the unit's words. Per step of each run when both repeat a step, else A scaled to
    B's launches (the same amount of work); per device (the mean over devices). Per step of
    the steps ``tracelens steps`` places in time: :func:`_located_times`; of the
    repetitions of the launch sequence: :func:`_times` over the repetitions."""
    if x.steps and x.steps_a:
        if _steps_counted(x):
            unit = LOCATED_UNIT + _warmup_words(_has_warmup(x.sa), _has_warmup(x.sb))
            shares = _memory_kernel_shares(x)
            return _located_times(x.sa, shares[0]), _located_times(x.sb, shares[1]), unit
        fa = 1 / (x.steps_a * max(x.sa.devices, 1))
        fb = 1 / (x.steps * max(x.sb.devices, 1))
        ta = _times(x.sa, _repetition_gap(x, 0))
        tb = _times(x.sb, _repetition_gap(x, 1))
        return _scaled(ta, fa), _scaled(tb, fb), "per step"
    scale = x.launches_b / x.launches_a if x.launches_a else 1.0
    fa, fb = scale / max(x.sa.devices, 1), 1 / max(x.sb.devices, 1)
    return _scaled(x.sa.time, fa), _scaled(x.sb.time, fb), "per device, A scaled to B's launches"


# The unit of the steps ``tracelens steps`` places in time (:func:`_located_times`)
LOCATED_UNIT = "per step, start to start"


def _scaled(time: dict[str, int], factor: float) -> dict[str, float]:
    return {key: value * factor for key, value in time.items()}


def _steps_counted(x: Context) -> bool:
    """Whether the per-step unit counts the steps ``tracelens steps`` finds on both runs
    (``Side.steps``, which hold most of their busy time), not the repetitions of the
    launch sequence: then each step's place in time is known."""
    sa, sb = x.sa.steps, x.sb.steps
    if sa is None or sb is None or (sa.count, sb.count) != (x.steps_a, x.steps):
        return False
    return min(step_coverage(x.sa), step_coverage(x.sb)) >= threshold("step_time_coverage")


def _warmup_words(in_a: bool, in_b: bool) -> str:
    """What the per-step unit says of warm-up steps set aside: whose, when only one run had
    any (the other run's steps all count, a slow start it did not set aside included)."""
    if in_a and in_b:
        return ", warm-up left out"
    if in_a or in_b:
        return f", {'A' if in_a else 'B'}'s warm-up left out"
    return ""


def _has_warmup(side) -> bool:
    """Whether ``tracelens steps`` set warm-up steps aside in ``side`` (and kept others)."""
    warmup = side.steps.frame["warmup"]
    return bool(warmup.any()) and not bool(warmup.all())


def _memory_kernel_shares(x: Context) -> tuple[float, float]:
    """Each run's share of its memory time (util's, over the whole capture) that is
    memory-category kernels (copy kernels, which run in steps) rather than copies and
    memsets (which may run before the first step: weights loaded); 1.0 without util's
    figures."""
    import polars as pl

    memory = x.kernels.filter(pl.col("category") == "memory")
    out = []
    for side, col in ((x.sa, "a_total_ns"), (x.sb, "b_total_ns")):
        held = float(side.util.frame["memory_ns"].sum()) if side.util is not None else 0.0
        out.append(min(float(memory[col].sum()) / held, 1.0) if held else 1.0)
    return out[0], out[1]


def _located_times(side, memory_kernels: float = 0.0) -> dict[str, float]:
    """One run's time accounting per step of the steps ``tracelens steps`` places in time,
    the mean over the devices that hold steps. Per device, a step lasts from its start (its
    first GPU operation) to the next step's: n steps are timed start to start, the time
    from the first step's start to the last's over n - 1, and their busy time is that of
    the first n - 1 steps over n - 1 (n - 1: the difference of the step numbers, should a
    device hold no work in some step; a device with one step: its window and its busy
    time). So the wait after a step counts as its idle time, the last step (whose wait the
    capture ends before) and the capture's edges (work before the first step) do not weigh,
    and two captures of one program that hold different numbers of steps read the same
    step time: exact for steps of one period. The busy time splits by what the steps ran
    (:func:`_step_parts`); idle is the rest of the step. Warm-up steps (``tracelens steps``
    sets them aside, at the start) are left out, as the steady-step clue leaves them out.
    ``memory_kernels``: the share of the run's memory time in copy kernels. With CUDA
    graph replays traced at graph level (busy time no kernel row lists), the busy time
    splits in the device's proportions (util's over the whole capture) instead."""
    import polars as pl

    frame = side.steps.frame.filter(pl.col("start_ns").is_not_null())
    if _has_warmup(side):
        frame = frame.filter(~pl.col("warmup"))
    per_device = frame.group_by("device").agg(
        n=pl.col("step").max() - pl.col("step").min(),
        first=pl.col("start_ns").sort_by("step").first(),
        last=pl.col("start_ns").sort_by("step").last(),
        busy=pl.col("busy_ns").sum(),
        last_busy=pl.col("busy_ns").sort_by("step").last(),
        kernel=pl.col("kernel_ns").sum(),
        last_kernel=pl.col("kernel_ns").sort_by("step").last(),
        window=pl.col("duration_ns").sum(),
    )
    parts = _device_parts(side)
    out = dict.fromkeys(side.time, 0.0)
    for row in per_device.iter_rows(named=True):
        n = row["n"]  # steps from the device's first to its last
        if n:
            span = (row["last"] - row["first"]) / n
            busy = (row["busy"] - row["last_busy"]) / n
            kernel = ((row["kernel"] or 0) - (row["last_kernel"] or 0)) / n
        else:
            span, busy = float(row["window"]), float(row["busy"])
            kernel = float(row["kernel"] or 0)
        shares = parts.get(row["device"], parts[None])
        if side.graph[0]:  # replays traced at graph level: busy time no kernel row lists
            split = {key: busy * share for key, share in shares.items()}
        else:
            split = _step_parts(busy, kernel, shares, memory_kernels)
        for key, value in split.items():
            out[key] += value
        held = busy
        out["busy_ns"] += held
        out["idle_ns"] += max(span - held, 0.0)
        out["span_ns"] += max(span, held)
    devices = max(per_device.height, 1)
    return {key: value / devices for key, value in out.items()}


_BUSY_PARTS = ("compute_ns", "exposed_communication_ns", "exposed_memory_ns")


def _step_parts(
    busy: float, kernel: float, shares: dict[str, float], memory_kernels: float
) -> dict[str, float]:
    """A step's busy time (``busy``) by part, from what the step ran: the busy time its
    kernels do not cover (``kernel``: their summed durations) is copies and memsets,
    exposed memory; the time its kernels cover splits in the device's proportions
    (``shares``: util's over the whole capture) of compute, exposed communication and the
    exposed memory of copy kernels (``memory_kernels``: their share of the memory time).
    Not the whole capture's share of exposed memory: copies outside the steps (weights
    loaded before the first) are in no step."""
    copies = max(busy - kernel, 0.0)
    weights = {
        "compute_ns": shares["compute_ns"],
        "exposed_communication_ns": shares["exposed_communication_ns"],
        "exposed_memory_ns": shares["exposed_memory_ns"] * memory_kernels,
    }
    total = sum(weights.values())
    out = {key: (busy - copies) * w / total if total else 0.0 for key, w in weights.items()}
    if not total:
        out["compute_ns"] = busy - copies
    out["exposed_memory_ns"] += copies
    return out


def _device_parts(side) -> dict[int | None, dict[str, float]]:
    """Per device, the share of its busy time each busy part holds (util's figures over
    the whole capture); under None, the shares of the run's summed figures (a device util
    does not list, or without util's frame)."""

    def shares(row) -> dict[str, float]:
        busy = sum(row[key] for key in _BUSY_PARTS)
        return {key: row[key] / busy if busy else 0.0 for key in _BUSY_PARTS}

    out: dict[int | None, dict[str, float]] = {None: shares(side.time)}
    if side.util is not None:
        for row in side.util.frame.iter_rows(named=True):
            out[row["device"]] = shares(row)
    return out


def _times(side, gap: int) -> dict[str, int]:
    """A run's time accounting (``Side.time``) per repetition of the launch sequence:
    without the idle time before its devices' first GPU operation and after their last
    (util's before_first and after_last causes): a capture's edges, where no step runs;
    and with the wait after the last step added (``gap``, :func:`_repetition_gap`)."""
    import polars as pl

    if side.util is None or side.util.idle_causes.is_empty():
        return side.time
    causes = side.util.idle_causes
    edge = int(causes.filter(pl.col("cause").is_in(_EDGES))["time_ns"].sum())
    if not edge and not gap:
        return side.time
    return side.time | {
        "span_ns": side.time["span_ns"] - edge + gap,
        "idle_ns": side.time["idle_ns"] - edge + gap,
    }


def _repetition_gap(x: Context, run: int) -> int:
    """The idle time run ``run`` (0: A, 1: B) adds to its span for the wait after its last
    step, summed over its devices, ns. The repetitions of the launch sequence have no
    window of their own, but a step is still one repetition of the program and the wait
    until the next one starts, timed by the kernel that starts them (:mod:`..repetitions`:
    the same program captured for more or fewer steps costs the same per step)."""
    from ..repetitions import device_spans, device_steps, repetition_gap

    side = (x.sa, x.sb)[run]
    steps = device_steps(x.alignment, run)
    return repetition_gap(side, steps, device_spans(side.util, _EDGES))


# util's idle causes at a capture's edges: before the first GPU operation, after the last.


def step_coverage(side) -> float:
    """The share of a run's GPU busy time its steps (+ Side.cut_busy_ns) hold; 1 if unknown."""
    busy = (side.time or {}).get("busy_ns")
    return float(side.steps.frame["busy_ns"].sum() + side.cut_busy_ns) / busy if busy else 1.0
