"""The stakeout section: each top kernel's duration histogram (one trace, or A against B),
its spread and its most common launch configurations (:func:`tracelens.stakeout.kernel_profiles`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from markupsafe import Markup

from . import svg
from .text import DecodedField, category_of, decode, labels

if TYPE_CHECKING:
    from ..stakeout import KernelProfiles
    from ..trace import Trace

STAKEOUT_KERNELS = 8  # kernels with a duration histogram


PER_OCTAVE = 4  # histogram bins per doubling of duration


STAKEOUT_CONFIGS = 3  # launch configurations listed per kernel and trace


@dataclass
class StakeoutRow:
    name: str
    short: str
    category: str
    color: str
    chart: Markup
    stats_a: dict[str, Any] | None
    stats_b: dict[str, Any] | None
    configs: list[dict[str, Any]]
    configs_more: int
    per_call_ratio: float | None = None
    fields: list[DecodedField] = field(default_factory=list)
    family: str | None = None


def _profiles_by_name(p: KernelProfiles) -> tuple[dict, dict, dict]:
    """(spread row, {bin: launches}, [config rows]) per kernel name."""
    spread = {r["name"]: r for r in p.spread.iter_rows(named=True)}
    hists: dict[str, dict[int, int]] = {}
    for name, b, n in p.histogram.select("name", "bin", "launches").iter_rows():
        hists.setdefault(name, {})[b] = n
    configs: dict[str, list[dict]] = {}
    for r in p.configs.iter_rows(named=True):
        configs.setdefault(r["name"], []).append(r)
    return spread, hists, configs


def stakeout_rows(
    traces: list[Trace],
    names: list[str],
    name_kind: str,
    palette: svg.Palette,
    ratios: dict[str, float | None] | None = None,
) -> list[StakeoutRow]:
    """Duration distribution and launch configurations of ``names`` in one or two traces
    (:func:`tracelens.stakeout.kernel_profiles` of each)."""
    from ..stakeout import kernel_profiles

    if not names:
        return []
    sides = [
        _profiles_by_name(kernel_profiles(t, names, name=name_kind, per_octave=PER_OCTAVE))
        for t in traces
    ]
    two = len(traces) > 1
    label = labels(names)
    rows = []
    for name in names:
        cat = category_of(name)
        color = palette(cat)
        sa = sides[0][0].get(name)
        sb = sides[1][0].get(name) if two else None
        if two:
            chart = svg.histogram(
                sides[0][1].get(name, {}),
                sides[1][1].get(name, {}),
                per_octave=PER_OCTAVE,
                color=color,
                medians=(sa and sa["p50_ns"], sb and sb["p50_ns"]),
            )
        else:
            chart = svg.histogram(
                sides[0][1].get(name, {}),
                per_octave=PER_OCTAVE,
                color=color,
                medians=(None, sa and sa["p50_ns"]),
            )
        cfg = []
        seen = 0
        for side_key, (_spread, _hists, configs) in zip("AB", sides, strict=False):
            mine = configs.get(name, [])
            seen += len(mine)
            cfg += [{**r, "side": side_key} for r in mine[:STAKEOUT_CONFIGS]]
        family, fields = decode(name)
        rows.append(
            StakeoutRow(
                name=name,
                short=label[name],
                category=cat,
                color=color,
                chart=chart,
                stats_a=sa,
                stats_b=sb,
                configs=cfg,
                configs_more=seen - len(cfg),
                per_call_ratio=(ratios or {}).get(name),
                fields=fields,
                family=family,
            )
        )
    return rows
