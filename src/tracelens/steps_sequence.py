"""Each device's launches in launch order, as the period step search reads them
(:mod:`tracelens.steps_period`): from the export (``queries/steps_launch_rows.sql``) or from
launches already read (the diff's work), with each launch's process where several may share
a device."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .steps_order import (
    PROCESS_COLUMNS,
    host_order,
    launch_order,
    launch_tokens,
    one_process_devices,
)

if TYPE_CHECKING:
    import polars as pl

    from .trace import Trace

__all__ = ["LaunchSequence"]


class LaunchSequence:
    """Each device's launches in launch order (device, then the host's order: the
    launching process, by its first launch on the device, then its correlation id, then
    start, stream, end, kernels before replays and replays by graph, as
    ``queries/steps_launches.sql`` orders them: :func:`tracelens.steps_order.launch_order`).

    ``rows``: device, start_ns, end_ns and token (:func:`tracelens.steps_order.launch_tokens`) of every launch;
    ``order``: their row numbers in launch order (None: ``rows`` are in it). Columns are
    gathered in that order only when asked: the tokens of every launch, the times of a
    device that has a period (on the bench trace, gathering all four columns of the 5M
    launches cost 0.3 CPU s; most devices of most traces have no period)."""

    def __init__(self, rows: pl.DataFrame, order: pl.Series | None = None) -> None:
        self.rows, self.order = rows, order
        self._tokens = rows["token"] if order is None else rows["token"].gather(order)

    @classmethod
    def read(cls, trace: Trace, params: dict[str, Any], pids: bool = False) -> LaunchSequence:
        """The launches of ``params`` (``queries/steps_launch_rows.sql``), ordered. Read
        without their streams, which order only launches that tie on device, process,
        correlation id and start; read again with them when some do
        (:func:`tracelens.steps_order.launch_order`). Without their processes too when the
        filter names one, or when the export's context table lists one process on each
        device read (:func:`tracelens.steps_order.one_process_devices`; a device it does not
        list: read again with them). ``pids``: read them in any case."""
        single = None if params["pid"] is not None or pids else one_process_devices(trace)
        pids = pids or (params["pid"] is None and single is None)
        rows = trace.query("steps_launch_rows", any_order=True, **params, streams=False, pids=pids)
        if single is not None and not rows["device"].unique().is_in(list(single)).all():
            pids = True
            rows = trace.query(
                "steps_launch_rows", any_order=True, **params, streams=False, pids=pids
            )
        if all(value is None for value in params.values()):
            # every kept kernel (tokens >= -1; replays below): the count of damaged records
            # then needs no scan of its own (Trace.kept_whole)
            trace.kept_whole({"kernel": int((rows["token"] >= -1).sum())})
        order = launch_order(rows, streams=False)
        if order is None:
            del rows
            rows = trace.query(
                "steps_launch_rows", any_order=True, **params, streams=True, pids=pids
            )
            order = launch_order(rows)
        # the process orders them, and parts a device's launches by program (blocks)
        return cls(rows if pids else rows.drop("pid"), order)

    def column(self, name: str, offset: int, count: int) -> pl.Series:
        """Column ``name`` of launches [offset, offset + count), in order."""
        column = self.rows[name]
        if self.order is None:
            return column.slice(offset, count)
        return column.gather(self.order.slice(offset, count))

    def reordered(self, offset: int, count: int, positions: pl.Series) -> LaunchSequence:
        """This sequence with launches [offset, offset + count) replaced by those at
        ``positions`` (from 0 there), in that order: a device's launches in another order,
        or some of them (then the devices after it are no longer at their offsets)."""
        import polars as pl

        n = self.rows.height
        order = pl.int_range(n, dtype=pl.UInt32, eager=True) if self.order is None else self.order
        chosen = order.slice(offset, count).gather(positions)
        order = pl.concat([order.head(offset), chosen, order.slice(offset + count)])
        return LaunchSequence(self.rows, order)

    @classmethod
    def given(cls, launches: pl.DataFrame) -> LaunchSequence:
        """``launches`` as ``queries/steps_launches.sql`` lists them (or without graph_id:
        kernels only). With a correlation_id column (and the launching process's, pid or
        global_pid, when several processes may share a device), the rows are in GPU order
        (``util.ORDER``, as the diff reads its work) and are put in launch order
        (:func:`tracelens.steps_order.host_order`); without, they are taken as ordered, by device first (a
        stable sort keeps each device's order otherwise)."""
        import polars as pl

        kept = [c for c in ("device", "start_ns", "end_ns", "correlation_id") if c in launches]
        process = [pl.col(c).alias("pid") for c in PROCESS_COLUMNS if c in launches.columns]
        rows = launches.select(*kept, *process[:1], token=launch_tokens(launches))
        if "correlation_id" in launches.columns:
            keys = ("device", "start_ns", "correlation_id", *PROCESS_COLUMNS)
            return cls(rows, host_order(launches.select(c for c in keys if c in launches.columns)))
        if not rows["device"].is_sorted():
            rows = rows.sort("device", maintain_order=True)
        return cls(rows)

    def devices(self) -> list[tuple[int, int, int]]:
        """(device, offset, count) of each device's launches, in device order."""
        counts = self.rows.group_by("device").len().sort("device").rows()
        offsets = [0]
        for _, count in counts:
            offsets.append(offsets[-1] + count)
        return [(d, o, c) for (d, c), o in zip(counts, offsets, strict=False)]

    def tokens(self, offset: int, count: int) -> pl.Series:
        return self._tokens.slice(offset, count)

    def blocks(self, offset: int, count: int) -> list[tuple[int, int]]:
        """(offset, count) of each process's launches among [offset, offset + count) (one
        device's), in launch order, where the launches' processes were read (several
        processes may share a device): launch order takes each process's launches one
        after another (:func:`tracelens.steps_order.process_ranks`). Else the whole."""

        if "pid" not in self.rows.columns or count == 0:
            return [(offset, count)]
        pids = self.rows["pid"]
        pids = (
            pids.slice(offset, count)
            if self.order is None
            else pids.gather(self.order.slice(offset, count))
        )
        pids = pids.fill_null(-1)
        if pids.n_unique() == 1:
            return [(offset, count)]
        firsts = (pids != pids.shift(1)).fill_null(True).arg_true().to_list()
        ends = [*firsts[1:], count]
        return [(offset + a, b - a) for a, b in zip(firsts, ends, strict=True)]

    def pids(self, offset: int, count: int) -> list[int]:
        """The processes that launched [offset, offset + count) (read: :meth:`blocks`)."""
        pids = self.rows["pid"]
        if self.order is not None:
            return pids.gather(self.order.slice(offset, count)).unique().to_list()
        return pids.slice(offset, count).unique().to_list()

    def times(self, offset: int, count: int) -> pl.DataFrame:
        """start_ns, end_ns, token (and correlation_id when read: the host's launch call,
        :meth:`tracelens.steps_phase.HostGaps.calls`) of launches [offset, offset + count), in
        order."""
        keep = [c for c in ("start_ns", "end_ns", "token", "correlation_id") if c in self.rows]
        times = self.rows.select(keep)
        if self.order is None:
            return times.slice(offset, count)
        return times[self.order.slice(offset, count)]
