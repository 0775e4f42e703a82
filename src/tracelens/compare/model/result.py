"""The diff's result types: :class:`TraceDiff` (everything ``tracelens diff`` shows),
:class:`Clue` (a row of the evidence board), :class:`SequenceAlignment` (one device's launch
order, A vs B), :class:`TypicalChange` and :class:`Comparability`, and the clues and the
alignment as DataFrames."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from ...results import Result

if TYPE_CHECKING:
    import polars as pl

    from ..collect import Side


@dataclass(frozen=True)
class Clue:
    """One row of the evidence board."""

    id: str  # rule that produced it: per_call_outlier, variant_swap, copy_growth, ...
    clue: str  # what was seen, in a few words
    evidence: str  # the numbers, from both traces
    verdict: str  # what it suggests
    strength: str  # strong | moderate | weak
    anchor: str  # id of the table that supports it (report links), e.g. "kernels"
    # GPU time the clue accounts for, ns (B's terms; per step when steps_b is set on the
    # TraceDiff, total otherwise); None for clues that explain results, not time
    impact_ns: float | None = None
    # The rows of the ``anchor`` table that back it, by their key there: kernel names
    # (kernels, danger), categories (variants), copy kinds' operation (copies), devices
    # (alignment), metrics (totals); empty: the table as a whole
    rows: tuple[str, ...] = ()


@dataclass(frozen=True)
class SequenceAlignment:
    """How the in-order launch sequences of one device compare."""

    device: int
    launches_a: int
    launches_b: int
    aligned: int  # launches aligned: the longer side's (see ``compared``)
    matched_in_order: int  # launches that match, in order (longest matching blocks)
    first_divergence: int | None  # 0-based index of the first differing launch (None: same);
    # shown 1-based ("launch #4") everywhere people read it
    a_at_divergence: str | None
    b_at_divergence: str | None
    replaced: tuple[tuple[str, str, int], ...]  # (name in A, name in B, launches) most common
    only_in_a: tuple[tuple[str, int], ...]  # launches A makes where B makes none
    only_in_b: tuple[tuple[str, int], ...]
    truncated: bool  # True when some launches were compared by counts, not in order
    # How the sequences relate: identical | prefix | suffix | subsequence | slice (one is
    # the other with launches left out at an end or one place: a capture difference) |
    # capture (two overlapping windows of one run that repeats a step: compare/captures.py)
    # | shifted (such an overlap exists, but it matches no more launches than the sequences
    # have in place, so aligned as a path change (exact or windows): a change in one run's
    # first steps, or windows of one run from other points; the launches cannot tell, and
    # the path clue says the diff is unsure; not a capture_difference) | periodic (both
    # repeat a step, and the steps differ) | aligned (exact alignment) | windows (long,
    # aperiodic or changed partway: aligned in windows, see compare/align.py for the bound)
    relation: str = "aligned"
    steps_a: int | None = None  # whole steps (repetitions of the launch motif), if periodic
    steps_b: int | None = None
    step_launches_a: int | None = None  # launches per step
    step_launches_b: int | None = None
    # How one step of B differs from one step of A: (launch # in the step, 1-based, name in
    # A or None, name in B or None), at most 10
    step_changes: tuple[tuple[int, str | None, str | None], ...] = ()
    # The kernel A's step is counted from in ``step_changes`` (launch #1: the kernel the
    # steps are phased on, launched once per step), when there are step changes
    step_first: str | None = None
    # Kernels launched a different number of times per step: (name, per step in A, in B)
    step_calls: tuple[tuple[str, int, int], ...] = ()
    # B's device when it is not ``device``: each run launched on one device only, a
    # different one (two ranks of one job), and those two sequences are the ones compared
    device_b: int | None = None
    # "A" or "B": the one run that launched on ``device``, when the devices were paired by
    # what they launch, not by number (its number alone would read as the other run's
    # device of that number, which was compared with another one); None otherwise
    only: str | None = None
    # A's (B's) last launches past the end of B's (A's) capture: aligned as a path change,
    # the shorter capture's last launches matched in order, and the other holds more after
    # them (compare/stretches.py, cut_captures). Not compared: in neither only_in_a nor
    # only_in_b. Likewise the first launches before the start of a capture started later.
    past_end_a: int = 0
    past_end_b: int = 0
    before_start_a: int = 0
    before_start_b: int = 0

    @property
    def compared(self) -> int:
        """Launches compared: ``aligned`` without those outside the other capture."""
        return max(
            self.launches_a - self.past_end_a - self.before_start_a,
            self.launches_b - self.past_end_b - self.before_start_b,
        )

    @property
    def where(self) -> str:
        """The device(s) compared, as the board says them: ``device 0``, ``device 0 (A) /
        5 (B)`` when the runs used different devices, or ``device 0 (B)`` for a device only
        B launched on when the devices were paired by what they launch."""
        if self.only is not None:
            return f"device {self.device} ({self.only})"
        if self.device_b is None or self.device_b == self.device:
            return f"device {self.device}"
        return f"device {self.device} (A) / {self.device_b} (B)"

    @property
    def capture_difference(self) -> bool:
        """The two sequences are the same work, one capture holding less or starting later
        (``capture``; not ``shifted``, which may be a path change)."""
        return self.relation in ("prefix", "suffix", "slice", "capture")

    @property
    def identical(self) -> bool:
        return self.first_divergence is None

    def to_dict(self) -> dict[str, Any]:
        """The fields by name; each nested tuple a list of dicts with named members
        (:data:`ALIGNMENT_PARTS`), as the JSON and :func:`alignment_frame` give them."""
        out = {k: getattr(self, k) for k in self.__dataclass_fields__}
        for key, parts in ALIGNMENT_PARTS.items():
            out[key] = [dict(zip(parts, item, strict=True)) for item in out[key]]
        return out


# The members of SequenceAlignment's nested tuples, by name: names are text, the rest counts
# of launches (``launch``: its 1-based position in the step).
ALIGNMENT_PARTS: dict[str, tuple[str, ...]] = {
    "replaced": ("name_a", "name_b", "launches"),
    "only_in_a": ("name", "launches"),
    "only_in_b": ("name", "launches"),
    "step_changes": ("launch", "name_a", "name_b"),
    "step_calls": ("name", "per_step_a", "per_step_b"),
}


_ALIGNMENT_TEXT = frozenset(
    {
        "a_at_divergence",
        "b_at_divergence",
        "relation",
        "name",
        "name_a",
        "name_b",
        "only",
        "step_first",
    }
)


def alignment_frame(alignment: tuple[SequenceAlignment, ...]) -> pl.DataFrame:
    """One row per device (:class:`SequenceAlignment`'s fields as columns): positions and
    counts Int64, names String, ``truncated`` Boolean, each nested tuple a
    ``List(Struct)`` with the members of :data:`ALIGNMENT_PARTS` (explode and unnest it)."""
    import polars as pl

    def dtype(key: str) -> pl.DataType:
        if key in ALIGNMENT_PARTS:
            return pl.List(pl.Struct({p: dtype(p) for p in ALIGNMENT_PARTS[key]}))
        if key == "truncated":
            return pl.Boolean()
        return pl.String() if key in _ALIGNMENT_TEXT else pl.Int64()

    schema = {k: dtype(k) for k in SequenceAlignment.__dataclass_fields__}
    return pl.DataFrame([al.to_dict() for al in alignment], schema=schema)


def clues_frame(clues: tuple[Clue, ...]) -> pl.DataFrame:
    """One row per clue (:class:`Clue`'s fields as columns): text String, ``impact_ns``
    Float64, ``rows`` List(String); the same columns and types when there are none."""
    import polars as pl

    schema = {k: pl.String() for k in Clue.__dataclass_fields__}
    schema |= {"impact_ns": pl.Float64(), "rows": pl.List(pl.String())}
    return pl.DataFrame([asdict(c) for c in clues], schema=schema)


@dataclass(frozen=True)
class TypicalChange:
    """The typical per-call change B / A over the kernels both runs launch: a median
    weighted by launches with no kernel above ``cap`` of the weight (so one kernel never
    decides it), and the quartiles of the same distribution (its spread)."""

    ratio: float
    q25: float
    q75: float
    kernels: int  # kernels both runs launch

    @property
    def tight(self) -> bool:
        """Half the launches' kernels changed within 15% of the typical change."""
        return self.q25 >= self.ratio / 1.15 and self.q75 <= self.ratio * 1.15


@dataclass(frozen=True)
class Comparability:
    """Whether two traces are runs of the same program: a score 0..1 from named factors
    (each 0..1, weights in data/clues.toml) against a bar."""

    score: float
    bar: float
    factors: dict[str, float]
    comparable: bool
    reason: str  # the weakest factors, in words


@dataclass
class TraceDiff(Result):
    """Everything ``tracelens diff`` shows. Times in ns; ratios are B / A."""

    label_a: str
    label_b: str
    name_kind: str
    totals: pl.DataFrame  # metric, a, b, delta, ratio
    copies: pl.DataFrame  # copy kind: label, a/b count, bytes, ratios
    categories: pl.DataFrame  # per category: calls, total, ratios, delta
    kernels: pl.DataFrame  # per kernel, both sides, ranked by surprise
    variant_swaps: pl.DataFrame  # per category: kernels only in A / only in B and their time
    alignment: tuple[SequenceAlignment, ...]
    danger: pl.DataFrame  # danger-zone kernels that appear, vanish, grow or shrink
    clues: tuple[Clue, ...]
    figures: dict[str, float]  # named numbers for --fail-if gates
    comparable: bool
    notes: tuple[str, ...] = field(default=())
    typical: TypicalChange | None = None
    comparability: Comparability | None = None
    # Steps per capture that clue impacts are per (compare.impact_steps): trace.steps of
    # each side when both have steps holding most of their GPU time, else the launch
    # motif's repetitions on the busiest device when both sequences repeat one; None:
    # impacts in total
    steps_a: int | None = None
    steps_b: int | None = None
    # How many devices run each side's work, where the runs differ in it (model.replicas;
    # else (1, 1)): the danger table is then per step and device
    replicas: tuple[int, int] = (1, 1)
    # NVTX ranges whose launched work each side compares (--nvtx), None: no selection
    nvtx_ranges: tuple[int | None, int | None] = (None, None)
    # NVTX region deltas (compare.regions) when both runs have ranges that launched work:
    # per region (region_table) and step k against step k (steps_table); None otherwise
    nvtx_regions: pl.DataFrame | None = None
    nvtx_steps: pl.DataFrame | None = None
    # What the diff read from each trace (compare.collect.Side: totals, census, util, ...),
    # for callers that show more of the same traces (the report) without reading it again.
    # Not part of the JSON.
    sides: tuple[Side, Side] | None = field(default=None, repr=False, compare=False)

    @property
    def incomparable_note(self) -> str | None:
        """The sentence a page puts above the board when the runs were not compared clue
        by clue (not comparable, or their kernels hidden in CUDA graph replays), as the
        board's clue knows it; None otherwise."""
        if self.comparable:
            return None
        from ..clues.comparability import incomparable_note

        return incomparable_note(self.clues)

    def to_dict(self) -> dict[str, Any]:
        from dataclasses import asdict

        return {
            "a": self.label_a,
            "b": self.label_b,
            "name_kind": self.name_kind,
            "comparable": self.comparable,
            "notes": list(self.notes),
            "clues": [asdict(c) for c in self.clues],
            "figures": self.figures,
            "totals": self.totals.to_dicts(),
            "copies": self.copies.to_dicts(),
            "categories": self.categories.to_dicts(),
            "kernels": self.kernels.to_dicts(),
            "variant_swaps": self.variant_swaps.to_dicts(),
            "alignment": [a.to_dict() for a in self.alignment],
            "danger": self.danger.to_dicts(),
            "typical": asdict(self.typical) if self.typical else None,
            "comparability": asdict(self.comparability) if self.comparability else None,
            "steps_a": self.steps_a,
            "steps_b": self.steps_b,
            "nvtx_ranges": list(self.nvtx_ranges),
            "nvtx_regions": None if self.nvtx_regions is None else self.nvtx_regions.to_dicts(),
            "nvtx_steps": None if self.nvtx_steps is None else self.nvtx_steps.to_dicts(),
        }

    def tables(self) -> dict[str, pl.DataFrame]:
        """kernels (the main table), clues (the evidence board), alignment (launch order per
        device), totals, categories, copies, variant_swaps, danger."""
        return {
            "kernels": self.kernels,
            "clues": clues_frame(self.clues),
            "alignment": alignment_frame(self.alignment),
            "totals": self.totals,
            "categories": self.categories,
            "copies": self.copies,
            "variant_swaps": self.variant_swaps,
            "danger": self.danger,
        }

    def _summary(self) -> str:
        return f"A = {self.label_a} → B = {self.label_b}: {len(self.clues)} clues"
