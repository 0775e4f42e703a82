"""The numerical-path comparison on the page (:mod:`tracelens.fingerprint`): the first
divergence, the first change of the math, and every changed region with its kernel-variant
changes, added and removed kernels and launch-configuration-only changes. For two traces
(each fingerprinted) or a fingerprint ``.json`` on either side."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..fingerprint import PathDiff

REGION_GROUPS = 40  # groups of changed regions listed (consecutive alike regions: one group)


@dataclass
class PathView:
    identical: bool
    # the board's opening lines (tracelens.fingerprint.board.headline): why the path is not
    # measured or may be another program's, when so; the verdict; the launches that only
    # changed device, when some
    verdict: list[str]
    note: str | None
    first: str | None  # the first divergence, in words
    first_math: str | None  # the first change of the math, when later
    summary: str
    figures: dict[str, int]
    groups: list[dict[str, Any]] = field(default_factory=list)
    groups_more: int = 0


def path_view(diff: PathDiff, label_a: str, label_b: str) -> PathView:
    """What the page shows of ``diff`` (A = ``label_a``, the baseline)."""
    from ..fingerprint.board import divergence_text, headline, lines

    board = lines(diff, label_a, label_b, top=1)
    f = diff.figures
    first_math = None
    if diff.first_math is not None and diff.first_math != diff.first:
        first_math = divergence_text(diff.first_math, diff.nvtx_regions)
    summary = next((line[len("changes: ") :] for line in board if line.startswith("changes: ")), "")
    groups = diff.grouped()
    return PathView(
        identical=diff.identical,
        verdict=headline(diff, label_a, label_b)[0],
        note=diff.note,
        first=None if diff.first is None else divergence_text(diff.first, diff.nvtx_regions),
        first_math=first_math,
        summary=summary,
        figures=dict(f),
        groups=[
            _group(regions, head, diff.nvtx_regions) for regions, head in groups[:REGION_GROUPS]
        ],
        groups_more=max(len(groups) - REGION_GROUPS, 0),
    )


def _group(regions, head, nvtx: bool) -> dict[str, Any]:
    from ..fingerprint.board import change_text, counted_lines, region_label

    in_step = bool(head.steps)
    names = region_label(head.region, in_step, nvtx)
    if len(regions) > 1:
        last = region_label(regions[-1].region, in_step, nvtx)
        names += f" … {last} ({len(regions)} regions alike)"
    order = {"variant": 0, "added": 1, "removed": 2, "config": 3}
    changes = [
        {
            "kind": c.kind,
            "position": c.position,
            "text": change_text(c, verb=False),
            "danger_new": list(c.danger_new),
        }
        for c in sorted(head.changes, key=lambda c: (order.get(c.kind, 9), c.position))
    ]
    return {
        "device": head.device,
        "region": names,
        "steps": _steps(head.steps),
        "status": {"added": "only in B", "removed": "only in A"}.get(head.status, ""),
        # other math first; same kernels with another grid or block (usually a shape
        # change) apart, folded on the page
        "math": [c for c in changes if c["kind"] != "config"],
        "configs": [c for c in changes if c["kind"] == "config"],
        "unlisted": head.unlisted,
        # the launches past the listed ones that differ, by variant counts (as the board)
        "counted": counted_lines(head.counted),
    }


def _steps(steps: tuple[int, ...]) -> str:
    if not steps:
        return "—"
    if len(steps) > 2 and list(steps) == list(range(steps[0], steps[0] + len(steps))):
        return f"{steps[0]}–{steps[-1]}"
    return ", ".join(map(str, steps))
