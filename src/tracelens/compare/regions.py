"""NVTX region deltas: how the GPU time of each NVTX region (the range path that launched
the work, ``layer 3 / attn``) changed from A to B, per step when both runs have steps. A
region's time is that of the work its innermost range launched: 'layer 3' does not count
again what 'layer 3 / attn' launched, so the regions add up to the work inside ranges.

One side's region time comes from :meth:`Trace.nvtx_paths` (every GPU operation with the
path of the ranges holding its launch) and :meth:`Trace.steps` (each operation counted in
the step of its device it starts in); the diff joins the two sides by path."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import polars as pl

    from ..filters import EventFilter
    from ..steps import Steps
    from ..trace import Trace

# Regions listed per step in ``steps_table`` (the ones that moved most): a trace with
# thousands of ranges and steps would otherwise give millions of rows.
STEP_REGIONS = 20


def region_times(trace: Trace, where: EventFilter, steps: Steps | None) -> pl.DataFrame | None:
    """GPU time per NVTX path and step of one trace: path, step (null: outside every step,
    or no steps), ops, gpu_ns (sum of the operations' durations). None when no range holds
    any of the (filtered) GPU work."""
    import polars as pl

    from ..filters import in_window
    from ..nvtx import NVTX_TABLE, RUNTIME_TABLE

    if NVTX_TABLE not in trace.tables or RUNTIME_TABLE not in trace.tables:
        return None
    ops = trace.nvtx_paths().filter(pl.col("path").is_not_null())
    # The event filter's rule (nsys's): operations that end at or after the window's start
    # and start before its end.
    if where.start_ns is not None or where.end_ns is not None:
        start, end = pl.col("start"), pl.col("end")
        ops = ops.filter(in_window(start, end, where.start_ns, where.end_ns))
    if where.selection is not None:
        kept = trace.query("work_selection_ops", selection=where.selection)
        ops = ops.join(kept, on=["globalPid", "correlationId"], how="semi")
    if ops.height == 0:
        return None
    ops = _steps_by_name(_with_steps(ops.sort("start"), steps))
    return (
        ops.group_by("path", "step")
        .agg(ops=pl.len(), gpu_ns=(pl.col("end") - pl.col("start")).sum())
        .sort("path", "step", nulls_last=True)
    )


def _with_steps(ops: pl.DataFrame, steps: Steps | None) -> pl.DataFrame:
    """``ops`` (sorted by start) with the step of its device each one starts in (none for
    another program's work on a device the loop shares: :attr:`Steps.processes`)."""
    import polars as pl

    if steps is None or not steps.count:
        return ops.with_columns(step=pl.lit(None, dtype=pl.Int64))
    bounds = steps.frame.select("device", "step", "start_ns", "end_ns").sort("start_ns")
    joined = ops.join_asof(
        bounds, left_on="start", right_on="start_ns", by="device", check_sortedness=False
    )
    inside = pl.col("start") < pl.col("end_ns")
    if steps.processes:
        # a device another program used too: the loop's processes' work alone is in its
        # steps (the steps say the other's launches are in no step)
        from ..util_calls import pid_of

        loop = steps.loop_pids()
        inside = inside & (loop.is_null() | loop.list.contains(pid_of(pl.col("globalPid"))))
    return joined.with_columns(step=pl.when(inside).then(pl.col("step"))).drop("start_ns", "end_ns")


# Path separator (Trace.nvtx_paths), and what stands for the number of a range that is a
# step itself ('step 7' and 'step 8' are the one region 'step *', as a steps source says).
_SEP = " / "
STEP_NUMBER = "*"


def _steps_by_name(ops: pl.DataFrame) -> pl.DataFrame:
    """``ops`` with the top-level ranges that are the steps themselves named as one region:
    each step's range has its own name ('step 7', PyTorch's 'ProfilerStep#7'), so per path
    each would hold one step's work and no region would repeat from step to step. A family
    of top-level labels equal up to digits is taken for the steps when it has two labels or
    more, each label's work lies in one step and no two labels share one; its digits
    become ``*`` ('step *', 'ProfilerStep#* / forward')."""
    import polars as pl

    if ops.height == 0 or ops["step"].null_count() == ops.height:
        return ops
    top = pl.col("path").str.split(_SEP).list.first()
    labels = (
        ops.select(top=top, family=top.str.replace_all(r"\d+", STEP_NUMBER), step="step")
        .group_by("top", "family")
        .agg(steps=pl.col("step").drop_nulls().n_unique(), step=pl.col("step").drop_nulls().first())
    )
    families = (
        labels.filter(pl.col("family") != pl.col("top"))
        .group_by("family")
        .agg(
            labels=pl.len(),
            one_step=(pl.col("steps") == 1).all(),
            distinct=pl.col("step").n_unique(),
        )
        .filter(
            (pl.col("labels") >= 2) & pl.col("one_step") & (pl.col("distinct") == pl.col("labels"))
        )
    )
    if families.height == 0:
        return ops
    rename = labels.join(families.select("family"), on="family", how="semi")
    mapping = dict(zip(rename["top"], rename["family"], strict=True))
    rest = pl.col("path").str.slice(top.str.len_chars())
    named = top.replace_strict(mapping, default=top, return_dtype=pl.String)
    return ops.with_columns(path=pl.concat_str(named, rest))


def step_regions(times: pl.DataFrame | None) -> list[str]:
    """The regions of ``times`` (:func:`region_times`) named for the steps by
    :func:`_steps_by_name` ('step *'), top level only."""

    if times is None:
        return []
    top = times["path"].str.split(_SEP).list.first().unique()
    return sorted(top.filter(top.str.contains(STEP_NUMBER, literal=True)).to_list())


def _per_step(times: pl.DataFrame, steps: Steps | None) -> pl.DataFrame:
    """Per path: the median GPU time per steady step (steps without the region count 0),
    the mean per steady step, and whether the region is held in some but under half of the
    steady steps (``sparse``: its median is then 0, whatever its time; held in none, both
    are 0). Null figures (and not sparse) without steady steps."""
    import polars as pl

    steady = steps.steady["step"].unique().sort() if steps is not None else None
    if steady is None or steady.len() == 0:
        none = pl.lit(None, pl.Float64)
        paths = times.select("path").unique()
        return paths.with_columns(median=none, mean=none, sparse=pl.lit(False))
    grid = times.select("path").unique().join(steady.to_frame("step"), how="cross")
    filled = grid.join(times.select("path", "step", "gpu_ns"), on=["path", "step"], how="left")
    step_ns = pl.col("gpu_ns").fill_null(0)
    return filled.group_by("path").agg(
        median=step_ns.median(),
        mean=step_ns.mean(),
        sparse=pl.col("gpu_ns").is_not_null().sum().is_between(1, (pl.len() - 1) // 2),
    )


def _per_step_figures(
    ta: pl.DataFrame, tb: pl.DataFrame, steps_a: Steps | None, steps_b: Steps | None
) -> pl.DataFrame:
    """Per path of either run: a_step_ns, b_step_ns (0 in a run without the region) and
    sparse. Each is the median over the run's steady steps (0 for a step without the
    region), robust to a slow step; for a region held in under half of the steady steps of
    either run (``sparse``: an optimizer step every 4th step, a checkpoint), whose median
    is 0 however long it runs, both are the mean per steady step instead (its time over
    the steady steps), so that its change shows."""
    import polars as pl

    a, b = _per_step(ta, steps_a), _per_step(tb, steps_b)
    joined = a.join(b, on="path", how="full", coalesce=True, suffix="_b")
    sparse = pl.col("sparse").fill_null(False) | pl.col("sparse_b").fill_null(False)
    return joined.select(
        "path",
        a_step_ns=pl.when(sparse).then(pl.col("mean")).otherwise(pl.col("median")).fill_null(0.0),
        b_step_ns=pl.when(sparse)
        .then(pl.col("mean_b"))
        .otherwise(pl.col("median_b"))
        .fill_null(0.0),
        sparse=sparse,
    )


def sparse_regions(
    ta: pl.DataFrame, tb: pl.DataFrame, steps_a: Steps | None, steps_b: Steps | None
) -> list[str]:
    """The regions :func:`region_table` compares by their mean per steady step, not the
    median (held in under half of the steady steps of either run), in natural order; none
    unless both runs have steps."""
    if not (steps_a and steps_a.count and steps_b and steps_b.count):
        return []
    figures = _per_step_figures(ta, tb, steps_a, steps_b)
    return sorted(figures.filter("sparse")["path"].to_list(), key=_natural_key)


def region_table(
    ta: pl.DataFrame, tb: pl.DataFrame, steps_a: Steps | None, steps_b: Steps | None
) -> pl.DataFrame:
    """One row per region of either run: path, a_ops, b_ops, a_total_ns, b_total_ns,
    a_step_ns, b_step_ns (per steady step, :func:`_per_step_figures`: the median, or the
    mean for a region in under half of the steps; null unless both runs have steps),
    delta_ns (per step when both have steps, else of the totals), ratio (B / A of the
    same); the largest change first."""
    import polars as pl

    def side(times: pl.DataFrame, key: str) -> pl.DataFrame:
        totals = times.group_by("path").agg(
            ops=pl.col("ops").sum(), total_ns=pl.col("gpu_ns").sum()
        )
        return totals.rename({c: f"{key}_{c}" for c in ("ops", "total_ns")})

    per_step = bool(steps_a and steps_a.count and steps_b and steps_b.count)
    joined = side(ta, "a").join(side(tb, "b"), on="path", how="full", coalesce=True)
    joined = joined.with_columns(pl.col("a_ops", "b_ops", "a_total_ns", "b_total_ns").fill_null(0))
    if per_step:
        figures = _per_step_figures(ta, tb, steps_a, steps_b).drop("sparse")
        joined = joined.join(figures, on="path", how="left")
        a, b = "a_step_ns", "b_step_ns"
    else:
        none = pl.lit(None, pl.Float64)
        joined = joined.with_columns(a_step_ns=none, b_step_ns=none)
        a, b = "a_total_ns", "b_total_ns"
    return (
        _with_natural_order(joined)
        .with_columns(
            delta_ns=(pl.col(b) - pl.col(a)).cast(pl.Float64),
            ratio=pl.when(pl.col(a) > 0).then(pl.col(b) / pl.col(a)),
        )
        .sort(pl.col("delta_ns").abs(), "order", descending=[True, False])
        .select(
            "path", "a_ops", "b_ops", "a_total_ns", "b_total_ns", "a_step_ns", "b_step_ns",
            "delta_ns", "ratio",
        )
    )  # fmt: skip


def steps_table(ta: pl.DataFrame, tb: pl.DataFrame, regions: pl.DataFrame) -> pl.DataFrame:
    """Step k of A against step k of B, for the STEP_REGIONS regions that moved most and
    the steps both runs have (where either run has GPU time in the region): path, step,
    a_ns, b_ns, delta_ns."""
    import polars as pl

    top = regions.head(STEP_REGIONS).select("path")
    cols = ["path", "step", "gpu_ns"]
    a = ta.filter(pl.col("step").is_not_null()).select(cols).rename({"gpu_ns": "a_ns"})
    b = tb.filter(pl.col("step").is_not_null()).select(cols).rename({"gpu_ns": "b_ns"})
    steps = a.select("step").unique().join(b.select("step").unique(), on="step")
    grid = top.join(steps, how="cross")
    return (
        grid.join(a, on=["path", "step"], how="left")
        .join(b, on=["path", "step"], how="left")
        .with_columns(pl.col("a_ns", "b_ns").fill_null(0))
        .filter((pl.col("a_ns") > 0) | (pl.col("b_ns") > 0))
        .with_columns(delta_ns=pl.col("b_ns") - pl.col("a_ns"))
        .pipe(_with_natural_order)
        .sort("order", "step")
        .drop("order")
    )


def _natural_key(text: str) -> tuple:
    """Numbers in ``text`` compared as numbers ('layer 2' before 'layer 10'), then the text."""
    import re

    parts = re.split(r"(\d+)", text)
    return (*((int(p), "") if p.isdigit() else (-1, p) for p in parts), text)


def _with_natural_order(frame: pl.DataFrame) -> pl.DataFrame:
    """``frame`` with ``order``: the rank of its path in natural order (:func:`_natural_key`)."""
    import polars as pl

    paths = sorted(set(frame["path"].to_list()), key=_natural_key)
    rank = {path: i for i, path in enumerate(paths)}
    return frame.with_columns(order=pl.col("path").replace_strict(rank, return_dtype=pl.Int64))
