"""Stakeout: every launch of one kernel, with its launch configuration, the CUDA API call
that launched it and the NVTX range that call was made in. Its text output is
:mod:`tracelens.stakeout_text`."""

from __future__ import annotations

import difflib
import math
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from .census import check_name_kind
from .choices import MATCHES, SORTS
from .errors import UsageError, check_at_least, check_choice
from .escape import encodable, printable
from .filters import EventFilter
from .hints import Hint
from .render import LAUNCH_DIMS
from .results import Result
from .stakeout_calls import with_calls
from .trace import list_param

if TYPE_CHECKING:
    import polars as pl

    from .trace import Trace

HISTOGRAM_BINS = 10
CONFIG_COLUMNS = (*LAUNCH_DIMS, "registers", "static_smem_bytes", "dynamic_smem_bytes")
_PROBE_COLUMNS = ("api_global_tid", "api_start", "api_end")
_ORIGIN_NS = 0  # start times count from session start: the Start column reads as --start/--end


@dataclass(frozen=True)
class LaunchStats:
    """Durations of the launches that passed the filters, ns (mean, median and sample
    standard deviation rounded to 0.1, half away from zero, as census)."""

    launches: int
    total_ns: int
    avg_ns: float
    med_ns: float
    min_ns: int
    max_ns: int
    stddev_ns: float


@dataclass(frozen=True)
class Stakeout(Result):
    """What :func:`stakeout` found.

    ``kernels``: one row per matched kernel with launches: launches, total_ns, avg_ns,
    name (of the requested kind), and with short names ``kernel``, the demangled name
    (several kernels can share a short name); most launched first. ``stats``: None when no launch passed the filters. ``configs``: one row
    per launch configuration (launches, total_ns, avg_ns, grid_x/y/z, block_x/y/z, registers,
    static_smem_bytes, dynamic_smem_bytes) numbered from 1 (``config``), most launches
    first. ``histogram``: lo_ns and
    hi_ns (inclusive) and launches of equal-width duration bins. ``launches``: one row per
    launch, sorted and limited as asked (columns: ``queries/stakeout_launches.sql``'s but
    kernel_id, plus
    those of the launching API call, :data:`tracelens.stakeout_calls.LAUNCH_COLUMNS`, less its
    span, and ``nvtx``, the innermost NVTX range around it).
    """

    pattern: str
    match: str
    name_kind: str
    sort: str
    kernels: pl.DataFrame
    stats: LaunchStats | None
    configs: pl.DataFrame
    histogram: pl.DataFrame
    launches: pl.DataFrame
    #: Why nothing matched, when ignoring case would have (``str()`` it): a valid but empty
    #: result, not an error.
    hint: Hint | None = None

    @property
    def total_launches(self) -> int:
        return self.stats.launches if self.stats else 0

    def tables(self) -> dict[str, pl.DataFrame]:
        """launches (the main table), kernels, summary, configs, histogram."""
        return {
            "launches": self.launches,
            "kernels": self.kernels,
            "summary": summary_frame(self),
            "configs": self.configs,
            "histogram": self.histogram,
        }

    def _summary(self) -> str:
        said = f"{quoted(self.pattern)} ({self.match}): {self.total_launches:,} launches"
        return f"{said}; {self.hint}" if self.hint else said


def quoted(text: str) -> str:
    """``text`` (a pattern or kernel name) in single quotes as the user typed or sees it:
    not as a Python repr, which doubles backslashes (``'zz\\\\xff'`` for ``zz\\xff``) and
    switches quotes; control characters shown as ``\\xNN``."""
    return f"'{printable(text)}'"


def check_match(match: str) -> str:
    return check_choice("match", match, MATCHES)


def check_sort(sort: str) -> str:
    return check_choice("sort", sort, SORTS)


def check_limit(limit: int | None) -> int | None:
    return check_at_least("limit", limit, 0, meaning="every launch")


def stakeout(
    trace: Trace,
    kernel: str,
    *,
    match: str = "contains",
    name: str = "demangled",
    sort: str = "start",
    limit: int | None = None,
    where: EventFilter | None = None,
    ignore_case: bool = False,
) -> Stakeout:
    """Every launch of the kernels whose demangled or short name matches ``kernel``.

    ``match``: exact, contains (a substring; case-sensitive) or regex (RE2 syntax, DuckDB's
    regexp_matches: matches anywhere unless anchored with ^ and $). ``name``: the name
    shown (demangled, short or mangled). ``sort``: start (ascending) or duration (longest
    first). ``ignore_case``: match without regard to case (any ``match``). ``limit``: keep
    that many rows in ``launches`` (None or 0: every one); the
    stats, configurations and histogram always cover every launch that passes ``where``.
    Start times count from session start, as ``where`` and every analysis.

    Raises UsageError when no kernel name matches (naming the closest ones) or the regex is
    invalid; returns an empty Stakeout when names match but no launch passes ``where``,
    and one with ``hint`` set when names match only ignoring case.
    """
    import polars as pl

    kernel = _checked_kernel(trace, kernel, match=match, name=name, sort=sort, limit=limit)
    where = where or EventFilter()
    pattern = {"pattern": kernel, "regex": kernel if match == "regex" else None, "match": match}
    if ignore_case:
        pattern = _case_blind(kernel, match)
    df = _matching_launches(trace, kernel, match, pattern, name=name, where=where)
    hint = _explain_empty(trace, kernel, pattern, match, ignore_case) if df.is_empty() else None

    # kernels, stats, configurations and histogram cover every launch, before --limit
    kernels = _kernels(trace, df, name)
    df = df.drop("kernel_id")
    configs = _launches_by(df, CONFIG_COLUMNS).with_row_index("config", offset=1)
    durations = df["duration_ns"].to_list()
    if sort == "duration":
        df = df.sort(["duration_ns", "start_ns"], descending=[True, False], maintain_order=True)
    if limit:
        df = df.head(limit)
    return Stakeout(
        pattern=kernel,
        match=match,
        name_kind=name,
        sort=sort,
        kernels=kernels,
        stats=launch_stats(durations),
        configs=configs.with_columns(pl.col("config").cast(pl.Int64)),
        histogram=histogram(durations),
        launches=_with_nvtx(trace, with_calls(trace, df, _ORIGIN_NS)),
        hint=hint,
    )


def _checked_kernel(
    trace: Trace, kernel: str, *, match: str, name: str, sort: str, limit: int | None
) -> str:
    """:func:`stakeout`'s arguments checked, and ``kernel`` as it is matched: bytes that are
    not UTF-8 (a shell argument's surrogate escapes) as \\xNN, the form the names are shown
    in and matched by (DuckDB cannot bind the surrogates: internal error)."""
    check_match(match)
    check_name_kind(name)
    check_sort(sort)
    check_limit(limit)
    if not kernel:
        raise UsageError("{param} is empty; give a kernel name or part of one", param="kernel")
    trace.require_kernels()
    return encodable(kernel)


def _matching_launches(
    trace: Trace, kernel: str, match: str, pattern: dict[str, Any], *, name: str, where: EventFilter
) -> pl.DataFrame:
    """Every launch (passing ``where``) of the kernels whose names match ``pattern`` (the
    query's pattern, regex and match: ``kernel`` as ``match`` says), with its kernel_id; an
    invalid ``--match regex`` is a UsageError that quotes it."""
    import duckdb

    try:
        name_ids = [row[0] for row in trace.query_rows("stakeout_name_ids", **pattern).iter_rows()]
        with trace._kernels_named(name_ids):
            return trace.query(
                "stakeout_launches",
                name_kind=name,
                origin_ns=_ORIGIN_NS,
                **pattern,
                **where.params(),
            )
    except duckdb.InvalidInputException as exc:
        if match != "regex":
            raise
        reason = str(exc).strip().splitlines()[0].split("Error: ", 1)[-1]
        raise UsageError(
            f"{{param}} regex: {quoted(kernel)} is not a valid regular expression: {reason}",
            param="match",
        ) from None


def _kernels(trace: Trace, df: pl.DataFrame, name: str) -> pl.DataFrame:
    """The launches per kernel (:func:`_launches_by` its ``name``). Kernels are told apart by
    their demangled names: where the short names shown (``name="short"``) are shared by
    several of them (vectorized_elementwise_kernel of add, pow, fill...), each is a row of
    its own, with its demangled name in ``kernel``."""
    import polars as pl

    if name != "short":
        return _launches_by(df, ("name",))
    kernels = _launches_by(df, ("name", "kernel_id"))
    ids = kernels["kernel_id"].to_list()
    names = trace.query("stakeout_kernel_names", ids=ids) if ids else None
    if names is None:
        return kernels.drop("kernel_id").with_columns(kernel=pl.lit(None, pl.String))
    return kernels.join(names, on="kernel_id", how="left", maintain_order="left").drop("kernel_id")


def _launches_by(df: pl.DataFrame, keys: tuple[str, ...]) -> pl.DataFrame:
    """launches, total_ns, avg_ns (0.1), *keys: one row per distinct ``keys``, most
    launches first (then most time, then keys)."""
    import polars as pl

    return (
        df.group_by(keys)
        .agg(
            pl.len().cast(pl.Int64).alias("launches"),
            pl.col("duration_ns").sum().alias("total_ns"),
            pl.col("duration_ns").mean().round(1, mode="half_away_from_zero").alias("avg_ns"),
        )
        .sort(["launches", "total_ns", *keys], descending=[True, True] + [False] * len(keys))
        .select("launches", "total_ns", "avg_ns", *keys)
    )


def _round1(x: float) -> float:
    """Round half away from zero to 0.1 (SQL's ROUND, as census and nsys round)."""
    return math.copysign(math.floor(abs(x) * 10 + 0.5) / 10, x)


def launch_stats(durations: list[int]) -> LaunchStats | None:
    """count, total, mean, median (mean of the middle two for an even count), min, max and
    sample standard deviation (0 for one launch) of ``durations`` (ns); None if empty."""
    n = len(durations)
    if n == 0:
        return None
    values = sorted(durations)
    total = sum(values)
    mean = total / n
    mid = n // 2
    median = values[mid] if n % 2 else (values[mid - 1] + values[mid]) / 2
    var = sum((v - mean) ** 2 for v in values) / (n - 1) if n > 1 else 0.0
    return LaunchStats(
        launches=n,
        total_ns=total,
        avg_ns=_round1(mean),
        med_ns=_round1(float(median)),
        min_ns=values[0],
        max_ns=values[-1],
        stddev_ns=_round1(math.sqrt(var)),
    )


def histogram(durations: list[int], bins: int = HISTOGRAM_BINS) -> pl.DataFrame:
    """Equal-width bins of integer ns from the shortest to the longest duration: lo_ns and
    hi_ns (both inclusive) and launches. At most ``bins`` bins (one when every duration is
    the same; fewer when the span has fewer ns than bins); empty bins are kept."""
    import polars as pl

    schema = {"lo_ns": pl.Int64, "hi_ns": pl.Int64, "launches": pl.Int64}
    if not durations:
        return pl.DataFrame(schema=schema)
    lo, hi = min(durations), max(durations)
    width = -(-(hi - lo + 1) // bins)  # ceil: every ns of [lo, hi] in exactly one bin
    count = -(-(hi - lo + 1) // width)
    counts = [0] * count
    for d in durations:
        counts[(d - lo) // width] += 1
    return pl.DataFrame(
        {
            "lo_ns": [lo + i * width for i in range(count)],
            "hi_ns": [min(lo + (i + 1) * width - 1, hi) for i in range(count)],
            "launches": counts,
        },
        schema=schema,
    )


def _with_nvtx(trace: Trace, df: pl.DataFrame) -> pl.DataFrame:
    """``df`` with ``nvtx`` (the innermost NVTX range around each launching API call)
    instead of the call's thread and span, which only served to find it."""
    import polars as pl

    labels = None
    if trace.has_table("NVTX_EVENTS") and df.height:
        probes = (
            df.with_row_index("probe")
            .filter(pl.col("api_global_tid").is_not_null())
            .select(
                pl.col("probe").cast(pl.Int64),
                pl.col("api_global_tid").alias("global_tid"),
                pl.col("api_start").alias("start"),
                pl.col("api_end").alias("end"),
            )
        )
        if probes.height:
            labels = innermost_nvtx(trace, probes)
    df = df.drop(_PROBE_COLUMNS)
    if labels is None:
        return df.with_columns(pl.lit(None, pl.String).alias("nvtx"))
    return (
        df.with_row_index("probe")
        .with_columns(pl.col("probe").cast(pl.Int64))
        .join(labels, on="probe", how="left", maintain_order="left")
        .drop("probe")
    )


def innermost_nvtx(trace: Trace, probes: pl.DataFrame) -> pl.DataFrame:
    """For ``probes`` (probe, global_tid, start, end: spans on threads, ns from session
    start), the label of the innermost NVTX range enclosing each: probe, nvtx. Probes with
    no enclosing range are absent. See ``queries/_nvtx_innermost.sql``."""
    trace.load_nvtx_text()
    con = trace.db
    # A table, not a registered Arrow view: the planner needs its row count (a view counts
    # as 1 row and gets a nested loop join); and see the SQL for merge_join_threshold.
    con.register("_nvtx_probes", probes.to_arrow())
    con.execute("CREATE OR REPLACE TEMP TABLE nvtx_probes AS SELECT * FROM _nvtx_probes")
    con.unregister("_nvtx_probes")
    con.execute("SET merge_join_threshold = 0")
    try:
        return trace.query("_nvtx_innermost")
    finally:
        con.execute("RESET merge_join_threshold")
        con.execute("DROP TABLE nvtx_probes")


_RE2_SPECIAL = set("\\.+*?()|[]{}^$")


def _re2_literal(text: str) -> str:
    """``text`` as an RE2 pattern that matches it literally."""
    return "".join("\\" + ch if ch in _RE2_SPECIAL else ch for ch in text)


def _case_blind(kernel: str, match: str) -> dict[str, Any]:
    """The ``stakeout_names``/``stakeout_launches`` pattern parameters that match ``kernel``
    as ``match`` does, ignoring case (an RE2 regex with the (?i) flag)."""
    literal = _re2_literal(kernel)
    regex = {"exact": f"^{literal}$", "contains": literal, "regex": kernel}[match]
    return {"pattern": kernel, "regex": f"(?i){regex}", "match": "regex"}


def _explain_empty(
    trace: Trace, kernel: str, pattern: dict[str, Any], match: str, ignore_case: bool
) -> Hint | None:
    """Nothing passed. If some name matches, the filters hid every launch: None. If some
    match but for case: the Hint offering ``ignore_case`` (an empty result, exit 0). If
    none matches at all: a UsageError naming the closest names."""
    names = trace.query("stakeout_names", **pattern)
    if names["matched"].any():
        return None
    how = {"exact": "is named", "contains": "has a name containing", "regex": "has a name matching"}
    message = f"no kernel in {trace.path.name} {how[match]} {quoted(kernel)}"
    if not ignore_case:
        loose = trace.query("stakeout_names", **_case_blind(kernel, match))
        hits = list(dict.fromkeys(loose.filter(loose["matched"])["name"].to_list()))
        if hits:
            return Hint(
                f"{message}; {len(hits):,} {'name matches' if len(hits) == 1 else 'names match'} "
                f"ignoring case ({quoted(hits[0])}{', ...' if len(hits) > 1 else ''}): add {{param}}",
                param="ignore_case",
            )
    all_names = names["name"].to_list()
    suggestions = [n for n in all_names if kernel.lower() in n.lower()][:3]
    for close in difflib.get_close_matches(kernel, all_names, n=3, cutoff=0.5):
        if close not in suggestions and len(suggestions) < 3:
            suggestions.append(close)
    param = None
    if suggestions:
        message += "; closest: " + ", ".join(quoted(s) for s in suggestions)
        if match == "regex" and _in_a_name(kernel, all_names, ignore_case):
            # a name pasted as a regex: its . * + [ ] ( ) are operators, and the closest
            # name would read as the pattern itself, with nothing on why it missed
            message += (
                "; as a regex it matches none, but the text is in a name as written: "
                "{param} contains reads it literally"
            )
            param = "match"
    elif all_names:
        message += (
            f"; it has {len(all_names)} kernel names (demangled and short), "
            "see `tracelens census --name short`"
        )
    if replays := trace.graph_replays()[0]:
        from .trace import graph_level_reason

        message += f"; but {graph_level_reason(replays)}"
    raise UsageError(message, param=param)


def _in_a_name(text: str, names: list[str], ignore_case: bool) -> bool:
    """Whether ``text`` is in one of ``names`` as written (without regard to case when
    ``ignore_case``)."""
    if ignore_case:
        text, names = text.lower(), [n.lower() for n in names]
    return any(text in n for n in names)


def summary_frame(result: Stakeout) -> pl.DataFrame:
    """``result.stats`` as a one-row DataFrame (no row when there is no launch)."""
    import polars as pl

    if result.stats is None:
        floats = ("avg_ns", "med_ns", "stddev_ns")
        return pl.DataFrame(
            schema={f: pl.Float64 if f in floats else pl.Int64 for f in LaunchStats.__annotations__}
        )
    return pl.DataFrame([asdict(result.stats)])


# -- several kernels at once (the report's stakeout) ------------------------------------
@dataclass(frozen=True)
class KernelProfiles(Result):
    """The stakeout of several kernels at once, aggregated in DuckDB, one entry per name.

    ``spread``: name, launches, total_ns, min/p10/p50/p90/p99/max_ns, cv, devices, streams
    (``queries/stakeout_spread.sql``). ``histogram``: name, bin, launches in logarithmic bins
    shared by every kernel and trace, ``per_octave`` bins per doubling of duration
    (``queries/stakeout_log_histogram.sql``), so two traces' histograms line up.
    ``configs``: name, grid, block, registers, shared_bytes, launches, total_ns, avg_ns, most
    launches first (``queries/stakeout_configs.sql``).
    """

    names: tuple[str, ...]
    per_octave: int
    spread: pl.DataFrame
    histogram: pl.DataFrame
    configs: pl.DataFrame

    def tables(self) -> dict[str, pl.DataFrame]:
        """spread (the main table), histogram, configs."""
        return {"spread": self.spread, "histogram": self.histogram, "configs": self.configs}


def kernel_profiles(
    trace: Trace,
    names: list[str],
    *,
    name: str = "demangled",
    per_octave: int = 4,
    where: EventFilter | None = None,
) -> KernelProfiles:
    """Duration spread, log-binned durations and launch configurations of every launch of
    each kernel in ``names`` (exact names of kind ``name``: demangled or short) that passes
    ``where`` (default: every launch)."""
    check_name_kind(name)
    trace.require_kernels()
    where = where or EventFilter()
    args = {"names": list_param(names), "name_kind": name, **where.params()}
    return KernelProfiles(
        names=tuple(names),
        per_octave=per_octave,
        spread=trace.query("stakeout_spread", **args),
        histogram=trace.query("stakeout_log_histogram", per_octave=per_octave, **args),
        configs=trace.query("stakeout_configs", **args),
    )
