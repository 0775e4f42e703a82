"""The evidence board: one small function per clue (or family of clue ids), each turning
the diff's tables into rows of the board. Thresholds, order, strength and prose are data
(``data/clues.toml``, read by ``spec.py``); these modules only decide which numbers to show:

    spec.py           the rules file: thresholds, weights, prose, board order; make()
    context.py        Context (what the clue functions read) and their shared words
    comparability.py  not comparable (or only just), capture difference, graph replays,
                      weak evidence
    accounting.py     GPU time accounting: the steady step, wall time per step, exposed
                      communication
    kernels.py        per-call outliers, uniform change, calls per step
    variants.py       variants: kernels of a category only one run launches
    devices.py        a device that changed unlike the others
    memory.py         copies and memsets
    path.py           launch order
    danger.py         danger-zone kernels
"""

from __future__ import annotations

from ..model import Clue
from .accounting import exposed_communication, step_time, step_time_alone, time_accounting
from .comparability import (
    capture_difference,
    graph_replays_hidden,
    low_comparability,
    not_comparable,
    weak_evidence,
)
from .context import Context, short_name
from .danger import danger_changes
from .devices import device_change, devices_differ
from .kernels import calls_per_step, per_call_outliers, uniform_change
from .memory import copy_changes, memset_changes
from .path import launch_structure
from .spec import board_order, comparability_weights, make, prose, threshold
from .variants import variant_swaps

__all__ = [
    "RULES",
    "Context",
    "board_order",
    "comparability_weights",
    "evidence_board",
    "make",
    "prose",
    "short_name",
    "threshold",
]

RULES = (
    low_comparability,
    capture_difference,
    devices_differ,
    step_time,
    time_accounting,
    exposed_communication,
    graph_replays_hidden,
    weak_evidence,
    per_call_outliers,
    device_change,
    uniform_change,
    calls_per_step,
    variant_swaps,
    copy_changes,
    memset_changes,
    launch_structure,
    danger_changes,
)


def evidence_board(x: Context) -> list[Clue]:
    """Every rule's clues in board order. When the runs are not comparable, no causal
    clue: ``not_comparable``, and the work the kernel tables do not show (graph replays
    traced at graph level can be why the kernels in common are few)."""
    if not x.comparable:
        return board_order(not_comparable(x) + graph_replays_hidden(x))
    return board_order(step_time_alone(x, [clue for rule in RULES for clue in rule(x)]))
