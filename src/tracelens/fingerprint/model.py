"""What a comparison of two fingerprints gives (:func:`tracelens.fingerprint.compare`): the
kernel variants, the launch slots that differ, the regions they differ in, the first
divergence and the whole comparison (:class:`PathDiff`)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .ends import CaptureEnds

# Change kinds, most telling first (the order of the board). ORDER: a unit whose launches
# are the same variants as often as A's, in another order (one change per unit, at its first
# differing launch): not kernels added and removed, but still another path.
VARIANT, CONFIG, ADDED, REMOVED, ORDER = "variant", "config", "added", "removed", "order"
KINDS = (VARIANT, CONFIG, ADDED, REMOVED, ORDER)


@dataclass(frozen=True)
class Kernel:
    """One kernel variant as a fingerprint lists it."""

    name: str
    grid: tuple[int | None, ...]
    block: tuple[int | None, ...]
    family: str
    fields: tuple[tuple[str, str], ...]
    danger: tuple[str, ...]

    @classmethod
    def of(cls, v: dict[str, Any]) -> Kernel:
        return cls(
            v["name"],
            tuple(v["grid"]),
            tuple(v["block"]),
            v.get("family", "other"),
            tuple(sorted(v.get("fields", {}).items())),
            tuple(v.get("danger", ())),
        )


@dataclass(frozen=True)
class KernelChange:
    """One launch slot that differs. ``position`` is 1-based in B's sequence (A's for a
    removed kernel); ``a``/``b`` are None for an added/removed kernel. An ``order`` change
    stands for its whole unit: ``position`` is its first launch that differs, ``a``/``b``
    the two kernels launched there. ``danger``: the rules that fire on the new kernel (the
    removed one for ``removed``); ``danger_new``: the risky ones it brings
    (:func:`tracelens.fingerprint.edits._change`; an added launch brings none where A runs
    that kernel in the same region and step, on that device or, on a device only B holds,
    on A's others: :mod:`tracelens.fingerprint.brought`)."""

    kind: str
    position: int
    a: Kernel | None
    b: Kernel | None
    danger: tuple[str, ...] = ()
    danger_new: tuple[str, ...] = ()


@dataclass(frozen=True)
class CountedChange:
    """Launches past a unit's listed ones (a unit of more than ``block_launches`` keeps its
    first block one by one, the rest as block digests and launches per variant) that
    differ, found from the variant counts (:mod:`tracelens.fingerprint.counted`):
    ``launches`` launches of ``a`` became ``b`` (``config``: same name; ``variant``: same
    family), were added (``a`` None) or removed (``b`` None); ``order``: the same variants
    as often in another order (one change for the unit, ``a`` and ``b`` None). ``danger``
    and ``danger_new`` as :class:`KernelChange`'s."""

    kind: str
    launches: int
    a: Kernel | None
    b: Kernel | None
    danger: tuple[str, ...] = ()
    danger_new: tuple[str, ...] = ()


@dataclass(frozen=True)
class RegionChange:
    """A region whose path differs, in the listed steps (empty: no steps)."""

    device: int
    region: tuple[str, ...]
    steps: tuple[int, ...]
    changes: tuple[KernelChange, ...]
    # Differences beyond the launches listed one by one (long regions keep digests only):
    # a sentence saying which launches differ, or None.
    unlisted: str | None = None
    status: str = "changed"  # changed | added (only in B) | removed (only in A)
    # Only one side holds it, and the other side's device ``same_as`` runs its launches,
    # launch for launch, in the same region and step (a replica: fingerprint.devices); None
    # otherwise (and then not in the JSON).
    same_as: int | None = None
    # The launches past the listed ones that differ, by variant counts (in each step of
    # ``steps``); empty when every launch is listed or those agree (then not in the JSON).
    counted: tuple[CountedChange, ...] = ()

    def count(self, kind: str) -> int:
        """Launches changed of ``kind``: the listed ones and those counted past them."""
        listed = sum(1 for c in self.changes if c.kind == kind)
        return listed + sum(c.launches for c in self.counted if c.kind == kind)


@dataclass(frozen=True)
class Divergence:
    """The first place where B's path leaves A's."""

    device: int
    region: tuple[str, ...]
    step: int | None
    change: KernelChange | None  # None: only the digests of unlisted launches differ
    detail: str | None = None
    # The change's launch, from 1, in launch order (fingerprint.places): among its step's
    # launches on the device, outside the steps (``step`` None) among the capture's; None
    # when the documents do not say (``change.position`` counts in its region only).
    launch: int | None = None


@dataclass(frozen=True)
class PathDiff:
    """The comparison of two fingerprints (A = baseline, B = the run being checked)."""

    regions: tuple[RegionChange, ...]
    first: Divergence | None
    # The first change of the math itself (a kernel variant replaced, added or removed; not
    # the same kernels in another order),
    # which is often later than the first divergence (a grid that grew with the batch).
    first_math: Divergence | None = None
    figures: dict[str, int] = field(default_factory=dict)
    compared_units: int = 0
    note: str | None = None  # e.g. why steps were not compared one by one
    # The launches only one capture holds at its start or end, in words (also in
    # ``note``, board.capture_text of ``ends``); they are not changes (see capture.py).
    capture: str | None = None
    # CUDA graph replays traced at graph level in A and in B (the documents'
    # ``graph_replays``): the kernels they ran are not recorded, so no change is measured.
    graph_replays: tuple[int, int] = (0, 0)
    # The documents' ``regions`` ("nvtx" or "step") in A and in B: a capture profiled
    # without NVTX has its steps as regions, and no region of one matches one of the other.
    regions_kinds: tuple[str, str] = ("", "")
    # Where the two captures start and end apart, as data (``capture`` says it), or None.
    ends: CaptureEnds | None = None
    # Why A and B may be different programs (their launches share too few kernels:
    # fingerprint.programs), or None. The board opens with it.
    unrelated: str | None = None
    # The units whose launches only changed device (fingerprint.devices: in their region
    # and step, every kernel as often with the same launch configuration over all
    # devices), as regions; not in ``regions``, not a path change. ``devices`` says which
    # devices each side launches on when there are some, else None.
    moved: tuple[RegionChange, ...] = ()
    devices: str | None = None

    @property
    def identical(self) -> bool:
        return not self.regions

    @property
    def unannotated(self) -> str | None:
        """Why the regions cannot be compared: one capture's are NVTX ranges, the other's
        its steps (profiled without NVTX, or no kernel launched inside a range), so every
        launch would read as added in one region and removed from another; None when both
        are of one kind."""
        kinds = dict(zip("AB", self.regions_kinds, strict=True))
        if "" in kinds.values() or kinds["A"] == kinds["B"]:
            return None
        plain = "A" if kinds["A"] == "step" else "B"
        other = "B" if plain == "A" else "A"
        return (
            f"{other}'s regions are NVTX ranges, {plain}'s are its steps ({plain} launched no "
            f"kernel inside an NVTX range: profiled without `-t nvtx`?), so no region of one "
            f"is a region of the other (profile both with the same NVTX annotation)"
        )

    @property
    def nvtx_regions(self) -> bool:
        """Whether either capture's regions are NVTX ranges (unknown kinds: True), which
        the board's name of a region outside every range says."""
        return "step" not in self.regions_kinds or "nvtx" in self.regions_kinds

    @property
    def not_measured(self) -> str | None:
        """Why no change of the path is measured (:attr:`unrecorded`, :attr:`unannotated`),
        or None."""
        return self.unrecorded or self.unannotated

    @property
    def unrecorded(self) -> str | None:
        """Why the path cannot be measured (a side's work in CUDA graph replays traced at
        graph level, whose kernels no table lists), or None when both paths are recorded."""
        sides = [(side, n) for side, n in zip("AB", self.graph_replays, strict=True) if n]
        if not sides:
            return None
        (side, n), *other = sides
        if other:
            held = f"A and B hold {n:,} and {other[0][1]:,}"
            whose, again = "their paths are", "both"
        else:
            held = f"{side} holds {n:,}"
            whose, again = f"{side}'s path is", side
        return (
            f"{held} CUDA graph replay{'s' if sides[-1][1] != 1 else ''} traced at graph level, "
            f"whose kernels the export does not list: {whose} not recorded there (profile "
            f"{again} again with nsys --cuda-graph-trace=node)"
        )

    def gate_figures(self):
        """The figures for ``--fail-if`` (:class:`tracelens.compare.gates.Figures`): with a
        path not recorded, every change count is not measured (a gate on it exits 2), only
        ``regions_compared`` is."""
        from ..compare.gates import Figures

        why = self.not_measured
        if why is None:
            return Figures(self.figures)
        kept = {k: v for k, v in self.figures.items() if k == "regions_compared"}
        return Figures(kept, {k: why for k in self.figures if k not in kept})

    def grouped(self) -> list[tuple[tuple[RegionChange, ...], RegionChange]]:
        """Consecutive changed regions with the same changes in the same steps (the same
        layer in every block of a model), as (the regions, the first one)."""
        out: list[tuple[list[RegionChange], RegionChange]] = []
        for r in self.regions:
            same = (r.device, r.steps, r.changes, r.unlisted, r.status, r.same_as, r.counted)
            if out:
                head = out[-1][1]
                were = (head.device, head.steps, head.changes, head.unlisted, head.status)
                if (*were, head.same_as, head.counted) == same:
                    out[-1][0].append(r)
                    continue
            out.append(([r], r))
        return [(tuple(regions), head) for regions, head in out]

    def to_dict(self) -> dict[str, Any]:
        out = {
            "identical": self.identical,
            "figures": dict(self.figures),
            "note": self.note,
            "first": None if self.first is None else asdict(self.first),
            "first_math": None if self.first_math is None else asdict(self.first_math),
            "regions": [_region_dict(r) for r in self.regions],
        }
        if self.capture is not None:  # only then, so every other comparison's JSON stays
            out["capture"] = self.capture
        if self.ends is not None:  # only then, as ``capture``
            out["capture_ends"] = asdict(self.ends)
        if self.unrelated is not None:  # only then, as ``capture``
            out["unrelated"] = self.unrelated
        if self.unrecorded is not None:  # only then, as ``capture``
            out["graph_replays"] = dict(zip(("a", "b"), self.graph_replays, strict=True))
        if self.unannotated is not None:  # only then, as ``capture``
            out["regions_kinds"] = dict(zip(("a", "b"), self.regions_kinds, strict=True))
        if self.moved:  # only then, as ``capture``
            out["moved"] = [_region_dict(r) for r in self.moved]
            out["devices"] = self.devices
        if self.not_measured is not None:
            out["not_measured"] = self.gate_figures().not_measured
        return out


def _region_dict(region: RegionChange) -> dict[str, Any]:
    """``region`` as JSON, ``same_as`` and ``counted`` only when set (every other
    comparison's JSON stays)."""
    out = asdict(region)
    if out["same_as"] is None:
        del out["same_as"]
    if not out["counted"]:
        del out["counted"]
    return out
