"""What ``tracelens diff`` computes: the ``TraceDiff`` dataclass and one builder per
section. The alignment is in ``align.py``, the evidence board in ``clues/``; nothing here
prints.

    result.py         TraceDiff, Clue, SequenceAlignment, TypicalChange, Comparability
    totals.py         totals and copies by kind; ratio (B / A)
    kernels.py        kernels joined and ranked, typical change, categories, variants
    comparability.py  are these runs of one program: factors and score
    danger.py         danger-zone kernels: new, vanished, grew, shrank
    figures.py        the named numbers of --fail-if; steps per capture
    devices.py        the typical per-call change of each device pair
"""

from __future__ import annotations

from .comparability import FACTOR_WORDS, category_overlap, category_time_mix, comparability
from .danger import DANGER_SCHEMA, danger_table, work_ratio
from .devices import DeviceChange, device_changes, device_kernels
from .figures import figures, replicas, steps_of
from .kernels import (
    KERNEL_COLUMNS,
    categories_table,
    joined_kernels,
    ranked_kernels,
    typical_change,
    variants_table,
)
from .result import (
    ALIGNMENT_PARTS,
    Clue,
    Comparability,
    SequenceAlignment,
    TraceDiff,
    TypicalChange,
    alignment_frame,
    clues_frame,
)
from .totals import COPY_KIND_LABELS, TOTAL_METRICS, copies_table, ratio, totals_table

__all__ = [
    "ALIGNMENT_PARTS",
    "COPY_KIND_LABELS",
    "DANGER_SCHEMA",
    "FACTOR_WORDS",
    "KERNEL_COLUMNS",
    "TOTAL_METRICS",
    "Clue",
    "Comparability",
    "DeviceChange",
    "SequenceAlignment",
    "TraceDiff",
    "TypicalChange",
    "alignment_frame",
    "categories_table",
    "category_overlap",
    "category_time_mix",
    "clues_frame",
    "comparability",
    "copies_table",
    "danger_table",
    "device_changes",
    "device_kernels",
    "figures",
    "joined_kernels",
    "ranked_kernels",
    "ratio",
    "replicas",
    "steps_of",
    "totals_table",
    "typical_change",
    "variants_table",
    "work_ratio",
]
