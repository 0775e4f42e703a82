"""Steps from a motif with optional launches, and the warm-up iterations before the steps.

What :func:`tracelens.steps_period.device_period` asks when an exact period is not the whole
story (``[period]`` in ``data/steps.toml``):

- :func:`anchored_steps`: a short motif whose steps may also launch a few other kernels (an
  EMA or loss-scale update every 4th iteration, a logging kernel now and then). An exact
  period then either does not exist (the extra launches break ``name[i] == name[i + p]``)
  or is a multiple of the iteration (4 iterations and the extra kernel). Each step starts at
  a launch of the motif's first kernel (the one with the longest idle time before it, as
  the exact period's phase); a step fits when it launches the motif's kernels in order
  with at most ``max_optional_share`` of the motif's length of others among them. When no
  motif fits in launch order, the same search takes a step's launches in any order: two
  host threads that launch on one device interleave their launches as timing has it
  (correlation ids number the calls over all of a process's threads), so an iteration
  launches the same kernels each time but in another order (:func:`_segments`,
  ``any_order``).
- :func:`peel_warmup`: the iterations before the first step that launch the motif and
  other kernels too (autotuning, compilation), split where the GPU idles as long as
  between steps: they become warm-up steps, the extra kernels named.
- :func:`changed_shape`: the steps of a loop whose iteration changed shape part-way, which
  the exact period held only in part.
- :func:`step_shapes`: what each step launches besides the motif, which its time is judged
  by (:func:`tracelens.steps_judge.same_shape`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import polars as pl


@dataclass(frozen=True)
class Anchored:
    """Steps of a motif with optional launches: ``starts`` (launch positions of each step's
    first launch), ``end`` (one past the last step's last launch), the motif's tokens, how
    many steps launch exactly the motif, how many launch it with optional launches, and
    the tokens these launch besides it; ``reordered``: how many launch exactly the motif's
    kernels in another order (only when ``any_order``: the steps were fitted in any order,
    the motif being their most common order); ``by_host``: the steps start where the host
    paused (the GPU idled alike before every launch)."""

    starts: list[int]
    end: int
    motif: tuple[int, ...]
    exact: int
    optional: int
    extra: tuple[int, ...]
    reordered: int = 0
    any_order: bool = False
    by_host: bool = False


def idle_before(seq: pl.DataFrame) -> pl.Series:
    """Per launch in launch order: the GPU idle time before it (ns, from the latest end
    among the launches before it; null for the first)."""
    import polars as pl

    return seq.select(
        (pl.col("start_ns") - pl.col("end_ns").cum_max().shift(1)).clip(lower_bound=0)
    ).to_series()


def anchored_steps(
    ids: pl.Series,
    gaps: pl.DataFrame,
    periods: list[int],
    idle: pl.Series,
    step_idle: float | None,
    conf: dict[str, Any],
    host: Callable[[], pl.Series | None] = lambda: None,
) -> Anchored | None:
    """The first of ``periods`` (ascending) whose motif, with optional launches, explains
    ``ids``, or None. ``gaps``: each token's most common launch spacing (name_id, gap,
    total); ``idle``: :func:`idle_before` of the launches; ``step_idle``: the mean idle time
    before the exact period's steps, when one was found (a shorter motif replaces it only
    when its steps are bounded by idle time as long: the layers of a step are not);
    ``host()``: the host's pause before the launch calls of the first launches, or None
    (:class:`tracelens.steps_phase.HostPauses`), asked for when no launch waits on the GPU
    long enough to start a step (a GPU-bound loop: its queue never drains), the steps then
    starting where the host paused as long.

    Every period is tried with the steps' launches in order first, then in any order
    (:func:`_segments`): a motif that fits in order is never replaced by one that fits
    only in any order."""
    floor = float(idle.mean() or 0) * conf["boundary_idle_over_mean"]
    if step_idle is not None:
        floor = max(floor, step_idle * conf["boundary_idle_share"])
    anchors, by_host = _anchors(ids, idle, gaps, periods, floor), False
    if not anchors and (pauses := host()) is not None:
        floor = float(pauses.mean() or 0) * conf["boundary_idle_over_mean"]
        anchors = _anchors(ids.head(pauses.len()), pauses, gaps, periods, floor)
        by_host = True
    for any_order in (False, True):
        for anchor in anchors:
            found = _segments(ids, anchor, conf, any_order)
            if found is not None:
                return replace(found, by_host=by_host)
    return None


def changed_shape(
    ids: pl.Series,
    gaps: pl.DataFrame,
    candidates: list[int],
    p: int,
    idle: pl.Series,
    step_idle: float | None,
    conf: dict[str, Any],
    starts: list[int],
    end: int,
) -> Anchored | None:
    """The steps of a loop whose iteration changed shape part-way (a, b, c six times, then
    a, b, c, d): a motif of at most ``p`` launches (of the ``candidates`` periods) with
    optional launches (:func:`anchored_steps`) whose steps hold more launches than the exact
    period's (``starts``, ``end``), which held one shape's iterations and left the others'
    out, the last one cut. None when it holds no more; unless the steps that launch more than
    the motif are at least ``min_repeats`` consecutive steps from the first or up to the
    last (the shape changed there; an extra launch every tenth step is optional launches
    of the exact period's steps, an evaluation after the loop in no step); or when one of
    its steps before the exact ones launches more than the motif: iterations before the
    loop that launch more are warm-up (:func:`peel_warmup`)."""
    periods = sorted(q for q in candidates if q <= p)
    found = anchored_steps(ids, gaps, periods, idle, step_idle, conf)
    if found is None or found.end - found.starts[0] <= end - starts[0]:
        return None
    bounds = [*found.starts, found.end]
    lengths = [b - a for a, b in zip(bounds, bounds[1:], strict=False)]
    longer = [i for i, length in enumerate(lengths) if length > len(found.motif)]
    # the new shape from some step on (or until some step), repeated: not an extra launch
    # now and then (an optimizer step every tenth iteration), nor an evaluation after the loop
    if (
        len(longer) < conf["min_repeats"]
        or longer != list(range(longer[0], longer[-1] + 1))
        or (longer[0] != 0 and longer[-1] != len(lengths) - 1)
    ):
        return None
    before = [length for a, length in zip(found.starts, lengths, strict=True) if a < starts[0]]
    return None if any(length != len(found.motif) for length in before) else found


def _anchors(
    ids: pl.Series, waits: pl.Series, gaps: pl.DataFrame, periods: list[int], floor: float
) -> list[int]:
    """For each of ``periods``, the token that starts a step: spaced that far apart
    (``gaps``, for at least half of its launches) and waited for longest before its launch
    (``waits``: per launch of ``ids``), on average more than ``floor`` ns."""
    import polars as pl

    per_token = (
        pl.DataFrame({"name_id": ids, "wait": waits})
        .group_by("name_id")
        .agg(pl.col("wait").mean())
        .join(
            gaps.filter(pl.col("c") * 2 >= pl.col("total")).select("name_id", "gap"), on="name_id"
        )
    )
    anchors = []
    for q in periods:
        first = (
            per_token.filter(pl.col("gap") == q, pl.col("wait") > floor)
            .sort("wait", "name_id", descending=[True, False])
            .head(1)
        )
        if first.height:
            anchors.append(int(first["name_id"][0]))
    return anchors


def _segments(
    ids: pl.Series, anchor: int, conf: dict[str, Any], any_order: bool = False
) -> Anchored | None:
    """Steps that start at each launch of ``anchor``, when they fit one motif (the most
    common step) in at least ``min_match`` of them, from the first fitting step to the last,
    and these cover ``min_coverage`` of the launches. ``any_order``: a step fits when it
    launches the motif's kernels (as many of each) in any order, the motif being the most
    common order of the most common such set (two host threads' launches interleaved as
    timing has it); otherwise in the motif's order."""
    import polars as pl

    n = ids.len()
    if not _lengths_could_fit(ids, anchor, conf):
        return None
    seg = (
        pl.DataFrame({"token": ids})
        .with_row_index("i")
        .with_columns(seg=(pl.col("token") == anchor).cast(pl.Int64).cum_sum())
        .filter(pl.col("seg") > 0)
        .group_by("seg", maintain_order=True)
        .agg(
            start=pl.col("i").first().cast(pl.Int64),
            tokens=pl.col("token"),
            key=pl.col("token").cast(pl.String).str.join(","),
            kernels=pl.col("token").sort().cast(pl.String).str.join(","),
        )
    )
    if seg.height < conf["min_repeats"] + 1:
        return None
    full = seg.head(seg.height - 1)  # the last step may be cut short by the capture's end
    by = "kernels" if any_order else "key"
    common = full[by].mode().sort().first()
    key = full.filter(pl.col(by) == common)["key"].mode().sort().first()
    motif = tuple(seg.filter(pl.col("key") == key)["tokens"][0].to_list())
    room = int(len(motif) * conf["max_optional_share"])
    lengths = seg["tokens"].list.len()
    exact = seg[by] == common
    could = exact | ((lengths > len(motif)) & (lengths <= len(motif) + room))
    if int(could.sum()) < conf["min_match"] * (seg.height - 1):
        return None  # too few steps even of a fitting length (a random order)
    holds = _holds if any_order else _contains
    fits = [
        bool(e) or (bool(c) and holds(tokens, motif))
        for e, c, tokens in zip(exact, could, seg["tokens"].to_list(), strict=True)
    ]
    starts, ends = seg["start"].to_list(), [*seg["start"].to_list()[1:], n]
    last = len(fits) - 1
    if not fits[last]:
        # the launches after the last step's first: the step when they begin with the motif
        tail = tuple(seg["tokens"][last].to_list()[: len(motif)])
        fits[last] = sorted(tail) == sorted(motif) if any_order else tail == motif
        ends[last] = starts[last] + len(motif)
    fitting = [i for i, f in enumerate(fits) if f]
    if not fitting:
        return None
    lo, hi = fitting[0], fitting[-1]
    count = hi - lo + 1
    if (
        count < conf["min_repeats"]
        or len(fitting) < conf["min_match"] * count
        or ends[hi] - starts[lo] < conf["min_coverage"] * n
    ):
        return None
    optional = [i for i in fitting if not exact[i]]
    extra = sorted({t for i in optional for t in seg["tokens"][i]} - set(motif))
    in_order = sum(1 for i in fitting if seg["key"][i] == key) if any_order else None
    same = len(fitting) - len(optional)
    return Anchored(
        starts[lo : hi + 1],
        ends[hi],
        motif,
        same if in_order is None else in_order,
        len(optional),
        tuple(extra),
        0 if in_order is None else same - in_order,
        any_order,
    )


def _lengths_could_fit(ids: pl.Series, anchor: int, conf: dict[str, Any]) -> bool:
    """False when :func:`_segments` must give up on the steps' lengths alone: fewer than
    ``min_repeats`` + 1 steps start at ``anchor``, or, whatever the motif's length L, fewer
    steps than ``min_match`` of all but the last launch from L to L + ``max_optional_share``
    of L launches (no step of another length fits). Why: a shorter period's anchor in a long
    loop (a kernel launched twice an iteration, 300 and 700 launches apart) splits it into
    steps of two lengths, and :func:`_segments` joined every step's tokens into strings to
    find that out (6 tries a device: 1.0 of ``steps``' 4.9 s on the 2.5M-kernel loop trace
    of bench/make_trace.py --loop, 0.05 s with this test first)."""
    import polars as pl

    at = (ids == anchor).arg_true().cast(pl.Int64)
    if at.len() < conf["min_repeats"] + 1:
        return False
    # every step's length, the last one's (to the end) too, as _segments counts them
    ends = pl.concat([at.slice(1), pl.Series([ids.len()], dtype=pl.Int64)])
    lengths = (ends - at).sort()
    top = lengths + (lengths.cast(pl.Float64) * conf["max_optional_share"]).cast(pl.Int64)
    fitting = lengths.search_sorted(top, side="right") - lengths.search_sorted(lengths, "left")
    return int(fitting.max()) >= conf["min_match"] * (at.len() - 1)


def _contains(tokens, motif: tuple[int, ...]) -> bool:
    """Whether ``tokens`` launch the motif in order (others may come between)."""
    it = iter(tokens)
    return all(any(t == m for t in it) for m in motif)


def _holds(tokens, motif: tuple[int, ...]) -> bool:
    """Whether ``tokens`` launch the motif's kernels, as many of each, in any order."""
    have = Counter(tokens)
    return all(have[t] >= k for t, k in Counter(motif).items())


def peel_warmup(
    ids: pl.Series,
    idle: pl.Series,
    starts: list[int],
    motif: tuple[int, ...],
    conf: dict,
    any_order: bool = False,
) -> tuple[list[int], list[int], tuple[int, ...]]:
    """(step starts with the warm-up steps first, the warm-up steps' numbers, the tokens
    they launch besides the motif). The launches before the first step are cut where the
    GPU idled at least ``boundary_idle_share`` of the mean idle time before the steps; the
    pieces that launch the motif and other kernels too, back from the first step, are
    warm-up steps. A piece that does not launch the motif ends the search (the setup before
    the loop is no step); when the first step did not start after such an idle time, the
    piece before it is its beginning (its warm-up launches came first). ``any_order``: the
    steps were fitted in any order (:func:`_segments`), and so are the pieces."""
    first = starts[0]
    if first == 0:
        return starts, [], ()
    step_idle = float(idle.gather(starts).mean() or 0)
    if step_idle <= 0:
        return starts, [], ()
    cut = step_idle * conf["boundary_idle_share"]
    head = idle.head(first)
    bounds = [int(i) for i in (head >= cut).arg_true().to_list() if i > 0]
    tokens = ids.head(starts[1] if len(starts) > 1 else first).to_list()
    pieces = [0, *bounds]
    new, warm = list(starts), []
    holds = _holds if any_order else _contains
    if bounds and float(idle[first]) < cut and _extra(tokens[bounds[-1] : new[1]], motif, holds):
        new[0] = bounds[-1]
        warm.append(0)
        pieces.pop()
    for lo, hi in zip(reversed(pieces), reversed([*pieces[1:], new[0]]), strict=True):
        piece = tokens[lo:hi]
        if hi != new[0] or not holds(piece, motif) or not _extra(piece, motif, holds):
            break
        new.insert(0, lo)
        warm = [0] + [w + 1 for w in warm]
    if not warm:
        return starts, [], ()
    extra = sorted({t for w in warm for t in tokens[new[w] : new[w + 1]]} - set(motif))
    return new, [w + 1 for w in warm], tuple(extra)


def _extra(tokens: list[int], motif: tuple[int, ...], holds=_contains) -> bool:
    """Whether ``tokens`` launch the motif (``holds``: in order, or :func:`_holds`) and some
    other kernel too."""
    return len(tokens) > len(motif) and holds(tokens, motif)


def step_shapes(found: dict, name: Callable[[int], str]) -> dict[int, tuple[str, ...]]:
    """Per step of the devices' steps ``found`` (device -> its
    :class:`tracelens.steps_period.DevicePeriod`) that launches kernels besides its
    device's motif, warm-up aside: their names (``name`` of a token), over its devices,
    sorted. Only motifs with optional launches have such steps."""
    import polars as pl

    shapes: dict[int, set[str]] = {}
    for f in found.values():
        if f.anchored is None or not f.anchored.optional:
            continue
        extra = (
            f.steps.filter(~pl.col("token").is_in(list(f.motif)), ~pl.col("step").is_in(f.warmup))
            .group_by("step")
            .agg(pl.col("token").unique())
        )
        for step, tokens in extra.rows():
            shapes.setdefault(step, set()).update(name(t) for t in tokens)
    return {step: tuple(sorted(names)) for step, names in shapes.items()}
