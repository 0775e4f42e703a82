"""The page for many ranks of one run (:func:`tracelens.ranks.analyse_ranks`): the
findings, the rank x step heat map, the straggler table per step, the per-rank overview,
the clock corrections, and the ranks that run other kernels or could not be read."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from markupsafe import Markup

from ..ranks.render import costliest_steps
from ..units import fmt_ns
from . import svg

if TYPE_CHECKING:
    from ..ranks import RanksResult

HEAT_CELLS = 40_000  # heat-map cells drawn (ranks x steps); later steps are left out
STRAGGLER_ROWS = 100  # steps listed in the straggler table: the costliest (ranks.render)


@dataclass
class RanksView:
    findings: list[str]
    heatmap: Markup | None
    steps_shown: int
    steps_total: int
    stragglers: list[dict[str, Any]]
    stragglers_more: int
    ranks: list[dict[str, Any]]
    clock: list[dict[str, Any]]
    inconsistencies: list[dict[str, Any]]
    failures: list[dict[str, Any]]
    missing: tuple[int, ...]


def ranks_view(result: RanksResult) -> RanksView:
    steps = sorted(set(result.steps["step"].to_list())) if result.steps.height else []
    ranks = result.ranks["rank"].to_list()
    shown = steps[: max(HEAT_CELLS // max(len(ranks), 1), 1)]
    stragglers = costliest_steps(result.step_stragglers, STRAGGLER_ROWS).sort("step")
    return RanksView(
        findings=list(result.findings),
        heatmap=_heatmap(result, ranks, shown) if shown else None,
        steps_shown=len(shown),
        steps_total=len(steps),
        stragglers=stragglers.to_dicts(),
        stragglers_more=result.step_stragglers.height - stragglers.height,
        ranks=result.ranks.to_dicts(),
        clock=result.clock.to_dicts(),
        inconsistencies=result.inconsistencies.to_dicts(),
        failures=result.failures.to_dicts(),
        missing=result.missing_ranks,
    )


def _heatmap(result: RanksResult, ranks: list[int], steps: list[int]) -> Markup:
    """Rank x step of the active time (the step's duration less the time the rank waited
    for others in collectives): the straggler's cells stand out, which the durations of
    ranks that wait for each other do not show."""
    by_cell = {(r["rank"], r["step"]): r for r in result.steps.iter_rows(named=True)}
    cells = []
    for rank in ranks:
        row = []
        for step in steps:
            r = by_cell.get((rank, step))
            if r is None or r["active_ns"] is None:
                row.append(None)
                continue
            tip = (
                f"rank {rank}, step {step}{' (warm-up)' if r['warmup'] else ''}: active "
                f"{fmt_ns(r['active_ns'])} of {fmt_ns(r['duration_ns'])}, waited "
                f"{fmt_ns(r['wait_ns'])}, made others wait {fmt_ns(r['caused_ns'])}"
            )
            row.append((float(r["active_ns"]), tip))
        cells.append(row)
    return svg.heatmap([f"rank {r}" for r in ranks], [str(s) for s in steps], cells)
