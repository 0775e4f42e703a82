"""The data `tracelens ranks` works from (``data/ranks.toml``): when a late rank is noise,
when clock alignment has failed, how many steps the summary lists, and which processes of
an export are ranks. Each entry carries its reason in the file."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cache

from .._resources import data_dir


@dataclass(frozen=True)
class RanksRules:
    on_time_ns: int  # a collective whose start times spread less than this is on time
    straggler_steps_shown: int  # steps listed under "stragglers per step" in the summary
    clock_suspect_ns: int  # collective ends disagreeing by more than this after alignment
    clock_error_max_ns: int  # larger corrections on UTC session starts: other calls paired
    session_gap_max_ns: int  # session starts further apart: captures of another run
    path_alignment_pairs: int  # launch pairs a rank's path may be aligned on, at most
    min_kernel_share: float  # without collectives: a rank's kernel time over the busiest's
    missing_max_span: int  # rank numbers further apart are no ranks of one run


@cache
def ranks_rules() -> RanksRules:
    with (data_dir() / "ranks.toml").open("rb") as fh:
        doc = tomllib.load(fh)
    return RanksRules(
        on_time_ns=int(doc["stragglers"]["on_time_ns"]),
        straggler_steps_shown=int(doc["summary"]["straggler_steps_shown"]),
        clock_suspect_ns=int(doc["clocks"]["suspect_residual_ns"]),
        clock_error_max_ns=int(doc["clocks"]["error_max_ns"]),
        session_gap_max_ns=int(doc["clocks"]["session_gap_max_ns"]),
        path_alignment_pairs=int(doc["consistency"]["path_alignment_pairs"]),
        min_kernel_share=float(doc["processes"]["min_kernel_share"]),
        missing_max_span=int(doc["missing"]["max_span"]),
    )
