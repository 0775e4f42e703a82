"""The stakeout section: each top kernel's duration histogram (one trace, or A against B),
its spread and its most common launch configurations (:func:`tracelens.stakeout.kernel_profiles`,
or the same from one read of the kernels' launches: ``queries/stakeout_profiles.sql``; on an
export read directly, the spread and histogram from the GPU work the page already read and
the configurations aggregated by SQLite: :mod:`.stakeoutread`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from markupsafe import Markup

from ..trace import list_param
from . import svg
from .text import DecodedField, category_of, decode, labels

if TYPE_CHECKING:
    import pyarrow as pa

    from ..filters import EventFilter
    from ..stakeout import KernelProfiles
    from ..trace import Trace
    from .stakeoutread import PendingConfigs

STAKEOUT_KERNELS = 8  # kernels with a duration histogram


PER_OCTAVE = 4  # histogram bins per doubling of duration


STAKEOUT_CONFIGS = 3  # launch configurations listed per kernel and trace


# queries/stakeout_profiles.sql reads the stakeout's kernels once, holding their launches
# in memory (~150 bytes each: 5M launches measured at ~700 MB), where kernel_profiles's
# three queries stream the kernel table three times (on a direct read of 5M launches: 2.8
# against 4.7 CPU s). Up to this many launches (~300 MB) the page takes the one read.
HELD_LAUNCHES = 2_000_000

# The columns of each part, as stakeout_spread, stakeout_log_histogram and stakeout_configs
SPREAD_COLUMNS = ("name", "launches", "total_ns", "min_ns", "p10_ns", "p50_ns", "p90_ns",
                  "p99_ns", "max_ns", "cv", "devices", "streams")  # fmt: skip
HISTOGRAM_COLUMNS = ("name", "bin", "launches")
CONFIG_COLUMNS = ("name", "grid", "block", "registers", "shared_bytes", "launches", "total_ns",
                  "avg_ns")  # fmt: skip


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


def profiles(
    trace: Trace,
    names: list[str],
    name_kind: str,
    launches: int | None = None,
    work: pa.Table | None = None,
    pending: PendingConfigs | None = None,
    where: EventFilter | None = None,
) -> KernelProfiles:
    """:func:`tracelens.stakeout.kernel_profiles` of ``names``: on an export read directly,
    from ``work`` (the GPU work the page read, :func:`.sharedread.for_duckdb`) and SQLite
    (:func:`.stakeoutread.direct_profiles`, with SQLite's aggregate ``pending`` when
    started); else from one read of their launches when the census says they have at most
    HELD_LAUNCHES (``launches``), else (or when not said) from kernel_profiles's three;
    of the launches ``where`` selects (None: all) from kernel_profiles with that filter."""
    import polars as pl

    from ..stakeout import KernelProfiles, kernel_profiles
    from .stakeoutread import direct_profiles

    if work is not None:
        found = direct_profiles(trace, names, name_kind, work, PER_OCTAVE, pending)
        if found is not None:
            return found
    if launches is None or launches > HELD_LAUNCHES or (where is not None and not where.is_whole()):
        return kernel_profiles(trace, names, name=name_kind, per_octave=PER_OCTAVE, where=where)
    rows = trace.query(
        "stakeout_profiles", names=list_param(names), name_kind=name_kind, per_octave=PER_OCTAVE
    )

    def part(name: str, columns: tuple[str, ...]) -> pl.DataFrame:
        return rows.filter(pl.col("part") == name).select(columns)

    return KernelProfiles(
        names=tuple(names),
        per_octave=PER_OCTAVE,
        spread=part("spread", SPREAD_COLUMNS),
        histogram=part("histogram", HISTOGRAM_COLUMNS),
        configs=part("configs", CONFIG_COLUMNS),
    )


def stakeout_rows(
    traces: list[Trace],
    names: list[str],
    name_kind: str,
    palette: svg.Palette,
    ratios: dict[str, float | None] | None = None,
    launches: list[int] | None = None,
    works: list[pa.Table | None] | None = None,
    given: list[KernelProfiles | None] | None = None,
) -> list[StakeoutRow]:
    """Duration distribution and launch configurations of ``names`` in one or two traces
    (:func:`profiles` of each; ``launches``: how many launches the names have in each trace,
    from its census; ``works``: the GPU work the page read of each; ``given``: each
    trace's profiles of ``names`` where already read)."""
    if not names:
        return []
    n = len(traces)
    counts, reads, known = launches or [None] * n, works or [None] * n, given or [None] * n
    sides = [
        _profiles_by_name(p or profiles(t, names, name_kind, c, w))
        for t, c, w, p in zip(traces, counts, reads, known, strict=True)
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
