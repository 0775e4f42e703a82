"""Which processes launched each kernel of one side, and what they are called: what tells the
``other_work`` clue whether a run's extra kernels are another process's work on the GPU (a
data loader, a second job) or a new part of the program, launched by its own process.

The launches per kernel name and process are counted from the kernels the diff has already
read (:func:`kernel_launchers`: ~0.04 CPU s on 5M launches, no read of the export); the
names come from the export's small PROCESSES table (:func:`process_names`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import polars as pl

    from ..trace import Trace


def kernel_launchers(launches: pl.DataFrame, kernels: pl.DataFrame, name_kind: str) -> pl.DataFrame:
    """Launches per device, kernel name and process (device, name, pid, launches; pid null
    where the export has none), from ``launches`` (the kernels read: device, name_id,
    short_id for short names, pid) named as ``kernels`` (diff_kernels' rows: name_id, name)
    names them."""
    import polars as pl

    column = "short_id" if name_kind == "short" else "name_id"
    ids = launches.select(pl.col("device", column, "pid").cast(pl.Int64))
    counts = _counts(ids.rename({column: "id"}))
    names = kernels.select(pl.col("name_id").cast(pl.Int64).alias("id"), "name")
    # two name ids of one name (if any) are one kernel to the diff, as its census has them
    return (
        counts.join(names, on="id", how="left")
        .group_by("device", "name", "pid")
        .agg(pl.col("launches").sum())
        .sort("device", "name", "pid", nulls_last=True)
    )


# Bits of the key (device, pid + 1, name id) that _counts packs into one integer
_NAME_BITS, _PID_BITS, _DEVICE_BITS = 32, 25, 6


def _counts(ids: pl.DataFrame) -> pl.DataFrame:
    """Rows of ``ids`` (device, id, pid) per distinct (device, id, pid): device, id, pid,
    launches. The three packed into one integer and counted: ~0.05 CPU s on 5M launches
    where a group-by of the three columns takes ~0.17 (3% of a diff of that trace with
    itself); the group-by when they do not fit (an id of 32 bits or more, say)."""
    import polars as pl

    device, name, pid = pl.col("device"), pl.col("id"), pl.col("pid")
    bounds = ids.select(
        lo=pl.min_horizontal(device.min(), name.min(), pid.min()),
        device=device.max(),
        id=name.max(),
        pid=pid.max(),
        nulls=device.null_count() + name.null_count(),
    ).row(0)
    lo, highs, nulls = bounds[0], bounds[1:4], bounds[4]
    limits = (1 << _DEVICE_BITS, 1 << _NAME_BITS, (1 << _PID_BITS) - 1)
    fits = all(h is None or h < limit for h, limit in zip(highs, limits, strict=True))
    if lo is None or lo < 0 or nulls or not fits:
        counts = ids.group_by("device", "id", "pid").len("launches")
        return counts.with_columns(pl.col("launches").cast(pl.Int64))
    pid_at, device_at = 1 << _NAME_BITS, 1 << (_NAME_BITS + _PID_BITS)
    key = device * device_at + (pid.fill_null(-1) + 1) * pid_at + name
    counts = ids.select(key.alias("key").value_counts(name="launches")).unnest("key")
    pid_bits = pl.col("key") // pid_at % (1 << _PID_BITS)
    return counts.select(
        device=pl.col("key") // device_at,
        id=pl.col("key") % pid_at,
        pid=pl.when(pid_bits > 0).then(pid_bits - 1),
        launches=pl.col("launches").cast(pl.Int64),
    )


def process_names(trace: Trace, pids) -> dict[int, str | None]:
    """The name the export gives each of ``pids`` (``queries/diff_processes.sql``; None for
    a pid it does not list, or every pid when it has no PROCESSES table with pids)."""
    from .._resources import query
    from .._sqlite import decode_text

    names: dict[int, str | None] = {}
    if "pid" in trace.tables.get("PROCESSES", ()):
        for pid, name in trace._sqlite_rows(query("diff_processes")):
            names.setdefault(pid, decode_text(name) or None)
    return {pid: names.get(pid) for pid in pids if pid is not None}


@dataclass(frozen=True)
class Launchers:
    """Who launched a run's extra kernels: ``own``, processes that also launch the kernels
    both runs share (the program's own), else processes that launch none of them (other
    work on the GPU); ``processes``: (pid, name, launches of the extra kernels), most
    launches first, then by pid."""

    own: bool
    processes: tuple[tuple[int, str | None, int], ...]


def extra_launchers(
    launchers: pl.DataFrame | None, names: dict[int, str | None], extra, shared, device
) -> Launchers | None:
    """Who launched the kernels ``extra`` (names) on ``device`` of a run whose launches per
    device, kernel and process are ``launchers`` (:func:`kernel_launchers`; ``names``:
    :func:`process_names`), beside the kernels ``shared`` (names both runs launch, on any
    device: a rank's process is the program's wherever it runs). None when the data cannot
    tell: no launchers read, a launch without a process id, no shared kernel, or some extra
    kernels launched by the program's processes and some by others (both kinds of work)."""
    import polars as pl

    if launchers is None or not shared:
        return None
    mine = launchers.filter(pl.col("name").is_in(list(extra)) & (pl.col("device") == device))
    theirs = launchers.filter(pl.col("name").is_in(list(shared)))["pid"]
    if mine.is_empty() or mine["pid"].null_count() or theirs.null_count():
        return None
    per_pid = (
        mine.group_by("pid")
        .agg(pl.col("launches").sum())
        .sort("launches", "pid", descending=[True, False])
    )
    pids = set(per_pid["pid"].to_list())
    own = pids & set(theirs.to_list())
    if own and own != pids:
        return None
    return Launchers(bool(own), tuple((pid, names.get(pid), n) for pid, n in per_pid.iter_rows()))


# Processes named in a sentence, and the characters of each name shown
SHOWN_PROCESSES = 2
NAME_WIDTH = 40


def process_list(processes: tuple[tuple[int, str | None, int], ...]) -> str:
    """``processes`` (:attr:`Launchers.processes`) for a sentence: the first
    :data:`SHOWN_PROCESSES` as "name (pid N)" ("pid N" without a name), then "and K more"."""
    shown = [_process(pid, name) for pid, name, _n in processes[:SHOWN_PROCESSES]]
    left = len(processes) - SHOWN_PROCESSES
    if left > 0:
        return f"{', '.join(shown)} and {left} more"
    return " and ".join(shown)


def _process(pid: int, name: str | None) -> str:
    if not name:
        return f"pid {pid}"
    if len(name) > NAME_WIDTH:
        name = name[: NAME_WIDTH - 1] + "…"
    return f"{name} (pid {pid})"
