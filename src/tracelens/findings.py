"""Findings: the rules of ``nsys analyze`` 2022.4, with its defaults and the same rows,
plus the idle causes of :mod:`tracelens.util` as findings, each with a fix.

The rules, their thresholds and the reasons for each default are data
(``data/findings.toml``). Four nsys rules are one query each (``queries/findings_*.sql``);
the two GPU ones (gpu_gaps, gpu_low_util) sweep one read of what nsys counts as GPU work
(:mod:`tracelens.findings_gpu`); ``exposed_communication`` and ``launch_bound`` read :func:`tracelens.util.gpu_time_accounting`.
A rule whose tables the export lacks is *skipped* (as nsys skips it), which is not the same
as finding nothing. Of a whole trace read through the cache, the GPU rules' rows are kept in
its entry per rule and thresholds, and util's accounting as util keeps it
(:mod:`tracelens.util_workfile`): a later run reads both back and no GPU work.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from . import findings_gpu
from .errors import UsageError
from .filters import EventFilter
from .findings_args import (
    check_thresholds_run,
    checked_limit,
    checked_only,
    checked_thresholds,
    rule_ids,
    rules,
)
from .findings_args import parse_threshold as parse_threshold
from .results import Result
from .util_workfile import bundle_name, code_version, read_kept, write_kept

if TYPE_CHECKING:
    import polars as pl

    from .trace import Trace

__all__ = ["Findings", "RuleResult", "find_issues", "parse_threshold", "rule_ids", "rules"]

#: The nsys rules swept over one read of the GPU operations (:mod:`tracelens.findings_gpu`).
_GPU_RULES = ("gpu_gaps", "gpu_low_util")
#: The rules that read util's accounting.
_UTIL_RULES = ("exposed_communication", "launch_bound")

#: Rows of each rule when not told otherwise: nsys analyze prints at most 50.
DEFAULT_LIMIT = 50
#: The longest time an int64 of ns holds.
_INT64_MAX = 2**63 - 1


@dataclass(frozen=True)
class RuleResult:
    """What one rule found. ``frame``: its rows (at most ``limit``; columns as the rule's
    query, times in ns); ``total``: rows before the limit; ``skipped``: why the rule could
    not run on this export (None when it ran); ``thresholds``: the values used."""

    rule: str
    nsys: str | None
    title: str
    why: str
    fix: str
    frame: pl.DataFrame
    total: int
    skipped: str | None = None
    thresholds: dict[str, float] = field(default_factory=dict)
    # rows that are listed but do not count (gpu_gaps: gaps CUDA graph replays filled;
    # gpu_low_util: stretches replays kept in use), and why
    excused: int = 0
    excuse: str | None = None

    @property
    def fired(self) -> bool:
        return self.skipped is None and self.total > self.excused


@dataclass(frozen=True)
class Findings(Result):
    results: tuple[RuleResult, ...]
    notes: tuple[str, ...] = ()

    def result(self, rule: str) -> RuleResult:
        return next(r for r in self.results if r.rule == rule)

    @property
    def fired(self) -> tuple[str, ...]:
        """The rules that found something."""
        return tuple(r.rule for r in self.results if r.fired)

    def unchecked(self, gates: tuple[str, ...]) -> str | None:
        """Why the gates (rule ids, or 'any') cannot pass or fail, else None: a gated rule
        was skipped (its data is not in the export), or with 'any' every rule was. A gate
        that looked at nothing must not pass (a CPU-only export: 0 of 8 rules found
        something)."""
        run = [r.rule for r in self.results]
        # a gate on a rule --rule left out: it looked at nothing, so it must not pass
        if not_run := [g for g in gates if g != "any" and g not in run]:
            return f"{not_run[0]} could not look: it was not run (the rules run: {', '.join(run)})"
        skipped = {r.rule: r.skipped for r in self.results if r.skipped}
        named = [g for g in gates if g in skipped]
        if named:
            return f"{named[0]} could not look: skipped, {skipped[named[0]]}"
        if "any" in gates and self.results and len(skipped) == len(self.results):
            first = self.results[0]
            return f"no rule could look: each was skipped ({first.rule}: {first.skipped})"
        return None

    @property
    def frame(self) -> pl.DataFrame:
        """Every row of every rule, with a ``rule`` column first (columns a rule does not
        have are null)."""
        import polars as pl

        parts = [
            r.frame.with_columns(rule=pl.lit(r.rule)).select("rule", *r.frame.columns)
            for r in self.results
            if r.skipped is None and r.frame.height
        ]
        if not parts:
            return pl.DataFrame(schema={"rule": pl.String})
        return pl.concat(parts, how="diagonal_relaxed")

    def figures(self) -> dict[str, float]:
        """Rows per rule (``findings_<rule>``) and ``findings`` in all, for gates."""
        ran = [r for r in self.results if r.skipped is None]
        out = {f"findings_{r.rule}": float(r.total - r.excused) for r in ran}
        out["findings"] = float(sum(r.total - r.excused for r in ran))
        return out

    def tables(self) -> dict[str, pl.DataFrame]:
        """findings (one row per rule, the main table), then each rule's rows by rule id."""
        return {"findings": self.frame, **{r.rule: r.frame for r in self.results}}

    def _summary(self) -> str:
        fired = self.fired
        return f"{len(fired)} of {len(self.results)} rules fired" + (
            f": {', '.join(fired)}" if fired else ""
        )


def find_issues(
    trace: Trace,
    *,
    only: str | tuple[str, ...] = (),
    thresholds: dict[tuple[str, str], float] | None = None,
    limit: int | None = DEFAULT_LIMIT,
    where: EventFilter | None = None,
) -> Findings:
    """Run the rules (``only`` these ids, or this one, when given) on ``trace``;
    ``thresholds`` overrides defaults by (rule, key); ``limit`` rows per rule (None or 0:
    all). A rule id, threshold key or limit no rule takes is a UsageError
    (:mod:`tracelens.findings_args`), whoever calls."""
    only = checked_only(only)
    overrides = checked_thresholds(thresholds)
    check_thresholds_run(overrides, only)
    limit = checked_limit(limit)
    where = where or EventFilter()
    results = []
    selected = [r for r in rules() if not only or r["id"] in only]
    skipped = {r["id"]: _skipped(trace, r) for r in selected}
    work = _SharedWork(trace, where, [rule_id for rule_id, why in skipped.items() if not why])
    for rule in selected:
        values = {
            k: overrides.get((rule["id"], k), v) for k, v in rule.get("thresholds", {}).items()
        }
        if skipped[rule["id"]]:
            frame = None
        elif rule["id"] in _GPU_RULES:
            frame = work.gpu_rule(rule["id"], values)
        elif "query" in rule:
            frame = _nsys_rule(trace, rule, values, where)
        else:
            frame = _util_rule(work.util(), rule["id"], values)
        results.append(_result(rule, frame, skipped[rule["id"]], values, limit))
    notes: tuple[str, ...] = ()
    if where.selection is not None and any(r.rule == "sync_api" for r in results):
        notes += (
            "sync_api looks at host calls, which are in no work selection: those that overlap "
            "the selected work's GPU span",
        )
    if where.selection is not None and any(r.rule in _GPU_RULES and not r.skipped for r in results):
        notes += (
            "gpu_gaps and gpu_low_util judge the devices: every GPU operation in the selected "
            "work's span counts, selected or not (a GPU running other work is not idle)",
        )
    narrowed = where.device is not None or where.stream is not None
    if narrowed and any(r.rule == "sync_api" and not r.skipped for r in results):
        notes += (
            "sync_api looks at host calls, which have no device or stream: the device and "
            "stream filters do not narrow it (the process and the window do)",
        )
    replays = trace.graph_replays(where)[0]
    if replays and any(r.rule in ("gpu_gaps", "gpu_low_util") for r in results):
        notes += (
            f"gpu_gaps and gpu_low_util follow nsys analyze 2022.4, which does not count the "
            f"{replays:,} CUDA graph replays traced at graph level as GPU work: their time "
            "can show as idle here (tracelens util counts it)",
        )
    return Findings(tuple(results), notes)


class _SharedWork:
    """The GPU work the rules read, read once (``util.read_work``): the util rules'
    accounting and the GPU rules' operations come from it, each dropped once no rule left
    needs it (on a 5M-kernel trace the read is ~300 MB, the GPU rules' copy ~250 MB)."""

    def __init__(self, trace: Trace, where: EventFilter, rule_ids: list[str]) -> None:
        self.trace, self.where = trace, where
        self.gpu_rules = {r for r in rule_ids if r in _GPU_RULES}
        self.util_rules = {r for r in rule_ids if r in _UTIL_RULES}
        self._work: pl.DataFrame | None = None
        self._gpu: pl.DataFrame | None = None
        self._all_work: pl.DataFrame | None = None  # under a selection: the GPU rules' work
        self._util = None

    def _kept_util(self):
        """util's accounting of the whole trace when a cache entry kept it (and the work
        was not read yet); else None."""
        from . import util_workfile

        if self._util is None and self._work is None and self.where.is_whole():
            kept = util_workfile.kept_accounting(self.trace)
            self._util = None if kept is None else kept[0]
        return self._util

    def _read(self) -> pl.DataFrame:
        from .util import accounting_and_work, read_work

        if self._work is None:
            # util's accounting kept by a cache entry: the work is for the GPU rules alone
            if self.util_rules and self._kept_util() is not None:
                self.util_rules.clear()
            if self.util_rules:  # the accounting computed with the read
                self._util, _, self._work = accounting_and_work(self.trace, self.where)
            else:
                columns = findings_gpu.WORK_COLUMNS
                self._work = read_work(self.trace, self.where, columns=columns)
        return self._work

    def _release(self) -> None:
        if not (self.gpu_rules or self.util_rules):
            self._work = None
        if not self.gpu_rules:
            self._all_work = None

    def gpu_rule(self, rule_id: str, values: dict[str, float]) -> pl.DataFrame:
        """GPU rule ``rule_id`` with thresholds ``values`` over the work (:func:`_gpu_rule`).
        The whole trace's rows are kept in its cache entry, if any, per rule and thresholds,
        and read back by later runs, which then read no GPU work for the rule."""
        whole = self.where.is_whole()
        frame = _kept_rows(self.trace, rule_id, values) if whole else None
        if frame is None:
            work = self._device_work()
            ops = self._gpu
            if ops is None:
                ops = findings_gpu.gpu_ops(self.trace, work)
            self._gpu = ops
            frame = _gpu_rule(ops, rule_id, values, self.trace, work)
            if whole:
                _keep_rows(self.trace, rule_id, values, frame)
        self.gpu_rules.discard(rule_id)
        self._gpu = self._gpu if self.gpu_rules else None
        self._release()
        return frame

    def _device_work(self) -> pl.DataFrame:
        """The work the GPU rules sweep. Under a work selection (--nvtx, --step) every GPU
        operation in the selected work's span of the processes and devices it ran as,
        selected or not: gpu_gaps and gpu_low_util judge a process's use of a device (as
        nsys analyze does), and a GPU running work the selection leaves out is not idle
        (sparse ranges with other work between them read 'in use 6.1%' while the GPU was
        busy with that work)."""
        import polars as pl

        from .util import read_work

        if self.where.selection is None:
            return self._read()
        if self._all_work is None:
            unselected = replace(self.where, selection=None, nvtx_label_re=None)
            columns = findings_gpu.WORK_COLUMNS
            work = read_work(self.trace, unselected, columns=columns)
            # the rules are per process and device: those the selected work ran as
            ran = [(pl.col("pid") == p) & (pl.col("device") == d) for p, d in self._pairs()]
            self._all_work = work.filter(pl.any_horizontal(ran)) if ran else work.clear()
        return self._all_work

    def _pairs(self) -> list[tuple[int, int]]:
        """The (pid, device) pairs the selected work ran as: from the work when read (or to
        be read for the util rules), else ``queries/findings_selected_pairs.sql`` (the
        selected work was read only to learn them)."""
        if self._work is None and not self.util_rules:
            params = {"selection": None, **self.where.params()}
            return self.trace.query_rows("findings_selected_pairs", **params).data
        return self._read().select("pid", "device").unique().rows()

    def util(self):
        """:func:`tracelens.util.gpu_time_accounting` of the work (of the whole trace: the
        accounting a cache entry kept, when an earlier run kept it)."""
        if self._util is None and self._kept_util() is None:
            self._read()  # the accounting is computed with the read
        self.util_rules.clear()
        self._release()
        return self._util


def _rows_name(rule_id: str, values: dict[str, float]) -> str:
    """The file name of a GPU rule's kept rows: the rule, a digest of its thresholds and
    the code version (:func:`tracelens.util_workfile.bundle_name`)."""
    import hashlib
    import json

    digest = hashlib.sha256(json.dumps(sorted(values.items())).encode()).hexdigest()[:16]
    return bundle_name("tracelens_findings", f"{rule_id}_{digest}")


def _kept_rows(trace: Trace, rule_id: str, values: dict[str, float]) -> pl.DataFrame | None:
    """The rows GPU rule ``rule_id`` found with thresholds ``values`` in the whole trace,
    when an earlier run kept them in its cache entry; else None."""
    return read_kept(trace, _rows_name(rule_id, values), code_version())


def _keep_rows(trace: Trace, rule_id: str, values: dict[str, float], rows: pl.DataFrame) -> None:
    """Keep what GPU rule ``rule_id`` found in the whole trace (every row, before the limit)
    in the trace's cache entry; nothing when it reads none."""
    write_kept(trace, _rows_name(rule_id, values), code_version(), rows)


def _skipped(trace: Trace, rule: dict[str, Any]) -> str | None:
    missing = [t for t in rule.get("requires", []) if not trace.has_table(t)]
    any_of = rule.get("requires_any", [])
    if missing or (any_of and not any(trace.has_table(t) for t in any_of)):
        tables = missing or any_of
        return f"the export has no {' or '.join(tables)} table (nothing of that kind was captured)"
    return None


def _gpu_rule(
    ops: pl.DataFrame, rule_id: str, values: dict[str, float], trace: Trace, work: pl.DataFrame
) -> pl.DataFrame:
    """gpu_gaps or gpu_low_util over ``ops`` (:func:`findings_gpu.gpu_ops` of ``work``, read
    from ``trace``: gpu_gaps reads the export's order where several contexts tie)."""
    if rule_id == "gpu_gaps":
        # no gap is longer than an int64 of ns: a larger threshold finds none (polars
        # refuses a Python int past int64)
        gap_ns = min(round(values["gap_ms"] * 1_000_000), _INT64_MAX)
        gaps = findings_gpu.gpu_gaps(ops, gap_ns, trace, work)
        return findings_gpu.with_replay_cover(gaps, work)
    chunks = int(values["chunks"])
    if chunks != values["chunks"] or not 1 <= chunks <= 1000:  # 2.5 ran with 2 chunks
        raise UsageError(
            f"gpu_low_util.chunks must be a whole number between 1 and 1000 "
            f"(got {values['chunks']:g})"
        )
    low = findings_gpu.gpu_low_util(ops, chunks, float(values["threshold_pct"]))
    return findings_gpu.with_replay_cover(low, work)


def _nsys_rule(trace: Trace, rule: dict[str, Any], values: dict[str, float], where: EventFilter):
    params = dict(where.params())
    if rule["id"] == "sync_api":
        params = {k: params[k] for k in ("pid", "start_ns", "end_ns")}
        if where.selection is not None:
            params |= _selection_window(trace, where)
    return trace.query(rule["query"], **params)


def _selection_window(trace: Trace, where: EventFilter) -> dict[str, int | None]:
    """Host calls launch no GPU work, so a work selection (--nvtx, --step) cannot hold them:
    the sync calls looked at are those overlapping the selected work's GPU span, inside
    ``where``'s window."""
    t0, t1 = trace.query_rows("_selection_span", selection=where.selection).data[0]
    if where.start_ns is not None and t0 is not None:
        t0 = max(t0, where.start_ns)
    if where.end_ns is not None and t1 is not None:
        t1 = min(t1, where.end_ns)
    return {"start_ns": t0, "end_ns": t1}


def _util_rule(util, rule_id: str, values: dict[str, float]):
    import polars as pl

    devices = util.frame
    if rule_id == "exposed_communication":
        frame = devices.select(
            "device",
            pl.col("exposed_communication_ns").alias("duration_ns"),
            "communication_ns",
            "span_ns",
        )
    else:
        bound = util.idle_causes.filter(cause="launch_bound").select(
            "device", pl.col("count").alias("gaps"), pl.col("time_ns").alias("duration_ns")
        )
        frame = bound.join(devices.select("device", "span_ns"), on="device")
    frame = frame.with_columns(share_pct=(pl.col("duration_ns") * 100 / pl.col("span_ns")).round(1))
    return frame.filter(
        pl.col("duration_ns") >= values["min_ms"] * 1_000_000,
        pl.col("duration_ns") >= values["min_share"] * pl.col("span_ns"),
    ).sort("duration_ns", descending=True)


def _excused(rule_id: str, frame, values: dict[str, float]) -> tuple[int, str | None]:
    """How many of ``frame``'s rows do not count, and why (gpu_gaps: gaps that CUDA graph
    replays filled for at least ``replay_filled_pct`` of their length; gpu_low_util:
    stretches whose in-use share reaches ``threshold_pct`` once the replays run there
    count)."""
    import polars as pl

    if frame is None or "replay_ns" not in frame.columns:
        return 0, None
    if rule_id == "gpu_low_util":
        return findings_gpu.replay_lifted(frame, values["threshold_pct"])
    if rule_id != "gpu_gaps":
        return 0, None
    share = values.get("replay_filled_pct", 100) / 100
    filled = frame.filter(pl.col("replay_ns") >= share * pl.col("duration_ns")).height
    why = (
        f"{filled:,} filled by CUDA graph replays (replay_ns: the GPU ran a replay there, which "
        "nsys analyze does not count as GPU work): listed, not counted by --fail-on"
    )
    return filled, why if filled else None


def _result(rule, frame, skipped, values, limit) -> RuleResult:
    import polars as pl

    excused, excuse = _excused(rule["id"], frame, values)
    total = 0 if frame is None else frame.height
    if frame is None:
        frame = pl.DataFrame()
    elif limit:
        frame = frame.head(limit)
    return RuleResult(
        rule=rule["id"],
        nsys=rule.get("nsys"),
        title=rule["title"],
        why=rule["why"],
        fix=rule["fix"],
        frame=frame,
        total=total,
        skipped=skipped,
        thresholds=values,
        excused=excused,
        excuse=excuse,
    )
