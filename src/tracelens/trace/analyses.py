"""The analyses a :class:`~tracelens.Trace` offers as methods: each a thin call into its
module (census, memory, stakeout, timeline, lineup, danger, steps, findings, util, nvtx,
api) with the keyword filters of :class:`Filters` turned into an ``EventFilter``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypedDict, Unpack

if TYPE_CHECKING:
    import polars as pl

    from ..filters import EventFilter
    from ..findings import Findings
    from ..stakeout import Stakeout
    from ..steps import Steps
    from ..timeline import Timeline
    from ..util import Util


class Filters(TypedDict, total=False):
    """The keyword filters every analysis method takes (see :meth:`Trace.filter`)."""

    device: int  # CUDA device ordinal (``tracelens info`` shows each GPU's)
    pid: int  # process id
    stream: int  # CUDA stream id
    start: int | str  # window start: ns from session start, or "1.5s", "200ms"
    end: int | str  # window end
    nvtx: str  # GPU work launched inside NVTX ranges with this label (glob allowed)
    step: int | str | tuple[int, int]  # GPU work of step N or steps "A:B" (see Trace.steps)
    steps: int | str | tuple[int, int]  # the same as step (the CLI's --steps A:B)


class AnalysisMethods:
    """The analysis methods of :class:`~tracelens.Trace`."""

    # Each takes its own options and the keyword filters of :class:`Filters` (device=, pid=,
    # stream=, start=, end=, nvtx=, step=), or an EventFilter as ``where``; all times in ns.
    def filter(self, where: EventFilter | None = None, **filters: Unpack[Filters]) -> EventFilter:
        """``where`` (default: everything) narrowed by the keyword filters: ``device``,
        ``pid``, ``stream`` (ids), ``start``/``end`` (ns from session start, or text such as
        ``"1.5s"``), ``nvtx`` (GPU work launched in the NVTX ranges with this label or glob),
        ``step`` or ``steps`` (N, ``"N"``, ``"A:B"`` or (A, B): the GPU work launched inside
        those steps, see :meth:`steps` and :func:`tracelens.steps.select_steps`)."""
        from dataclasses import replace

        from ..errors import UsageError
        from ..filters import EventFilter, parse_time_ns, select_nvtx

        unknown = set(filters) - set(Filters.__annotations__)
        if unknown:
            raise UsageError(
                f"unknown filter {sorted(unknown)[0]!r}; use: {', '.join(Filters.__annotations__)}"
            )
        if where is not None and not isinstance(where, EventFilter):
            raise UsageError(
                f"where takes an EventFilter (from Trace.filter or select_nvtx), "
                f"not {type(where).__name__}; or give the keyword filters: "
                f"{', '.join(Filters.__annotations__)}"
            )
        where = where or EventFilter()
        # EventFilter checks the ids (and the window) when replace() builds the new one
        ids = {
            key: filters[key] for key in ("device", "pid", "stream") if filters.get(key) is not None
        }
        for key in ("start", "end"):
            if filters.get(key) is not None:
                ids[f"{key}_ns"] = parse_time_ns(filters[key], param=key)
        where = replace(where, **ids) if ids else where
        if filters.get("nvtx") is not None:
            where, _ranges = select_nvtx(self, filters["nvtx"], where)
        if filters.get("step") is not None and filters.get("steps") is not None:
            raise UsageError("give step= or steps=, not both")
        spec = filters.get("step") if filters.get("step") is not None else filters.get("steps")
        if spec is not None:
            from ..stepwork import select_steps

            where = select_steps(self, spec, where).where
        return where

    def census(
        self,
        *,
        name: str = "demangled",
        by_launch_config: bool = False,
        top: int | None = None,
        per_step: bool = False,
        where: EventFilter | None = None,
        **filters: Unpack[Filters],
    ) -> pl.DataFrame:
        """Top kernels by GPU time, as ``nsys stats --report cuda_gpu_kern_sum``.

        ``name``: demangled, short or mangled; ``by_launch_config``: also group by grid and
        block; ``top``: the first rows only. Columns (times in ns): time_pct (share of all
        kernel time that passes the filters), total_ns, instances, avg_ns, med_ns, min_ns,
        max_ns, stddev_ns, [grid_x, grid_y, grid_z, block_x, block_y, block_z,] name.
        ``per_step``: per_step_ns and calls_per_step instead of total_ns and instances, over
        the steady-state steps (or ``step``/``steps``; see
        :func:`tracelens.census.kernel_summary_per_step_rows`). Filters: see :meth:`filter`."""
        from ..census import kernel_summary, kernel_summary_per_step_rows
        from ..errors import UsageError

        if per_step:
            spec, other = filters.pop("step", None), filters.pop("steps", None)
            if spec is not None and other is not None:
                raise UsageError("give step= or steps=, not both")
            spec = other if spec is None else spec
            rows, _chosen = kernel_summary_per_step_rows(
                self, name=name, by_launch_config=by_launch_config, top=top,
                where=self.filter(where, **filters), steps=spec,
            )  # fmt: skip
            return rows.to_polars()
        where = self.filter(where, **filters)
        return kernel_summary(
            self, name=name, by_launch_config=by_launch_config, top=top, where=where
        )

    def memory_time(
        self, *, where: EventFilter | None = None, **filters: Unpack[Filters]
    ) -> pl.DataFrame:
        """GPU time per memory operation (``[CUDA memcpy HtoD]``, ..., ``[CUDA memset]``), as
        ``cuda_gpu_mem_time_sum``: time_pct, total_ns, count, avg_ns, med_ns, min_ns,
        max_ns, stddev_ns, operation. Filters: see :meth:`filter`."""
        from ..memory import memory_summary

        return memory_summary(self, by="time", where=self.filter(where, **filters))

    def memory_size(
        self, *, where: EventFilter | None = None, **filters: Unpack[Filters]
    ) -> pl.DataFrame:
        """Bytes per memory operation, as ``cuda_gpu_mem_size_sum``: total_mb, count,
        avg_mb, med_mb, min_mb, max_mb, stddev_mb (MB = 10^6 bytes), total_bytes,
        operation. Filters: see :meth:`filter`."""
        from ..memory import memory_summary

        return memory_summary(self, by="size", where=self.filter(where, **filters))

    def stakeout(
        self,
        kernel: str,
        *,
        match: str = "contains",
        name: str = "demangled",
        sort: str = "start",
        limit: int | None = None,
        ignore_case: bool = False,
        where: EventFilter | None = None,
        **filters: Unpack[Filters],
    ) -> Stakeout:
        """Every launch of the kernels whose demangled or short name matches ``kernel``
        (``match``: exact, contains or regex; ``ignore_case``): a :class:`Stakeout` with
        stats, configurations, histogram and one row per launch (start_ns from session
        start, duration_ns, queue_ns, grid, block, registers, API call, NVTX range).
        ``sort``: start or duration; ``limit``: launches kept (stats cover all). Filters:
        see :meth:`filter`."""
        from ..stakeout import stakeout

        return stakeout(
            self, kernel, match=match, name=name, sort=sort, limit=limit,
            ignore_case=ignore_case, where=self.filter(where, **filters),
        )  # fmt: skip

    def timeline(
        self,
        *,
        api: bool = False,
        gap_ns: int = 100_000,
        name: str = "demangled",
        limit: int | None = None,
        offset: int = 0,
        where: EventFilter | None = None,
        **filters: Unpack[Filters],
    ) -> Timeline:
        """Kernels, memcpys, memsets and NVTX ranges (CUDA API calls with ``api``) in time
        order, with idle gaps longer than ``gap_ns`` per device: a :class:`Timeline` whose
        ``events`` has start_ns (from session start), duration_ns, kind, device, stream,
        pid, tid, correlation_id, bytes, throughput_gbps, name. ``limit``/``offset`` page.
        Filters: see :meth:`filter` (device and stream select GPU rows only)."""
        from ..timeline import timeline

        return timeline(
            self, api=api, gap_ns=gap_ns, name=name, limit=limit, offset=offset,
            where=self.filter(where, **filters),
        )  # fmt: skip

    def lineup(
        self,
        *,
        by: str | None = None,
        rules: Any = None,
        subfamily: Any = None,
        name: str = "short",
        top: int | None = None,
        where: EventFilter | None = None,
        **filters: Unpack[Filters],
    ) -> pl.DataFrame:
        """GPU time by kernel category (memcpys and memsets in ``memory``), one row per
        category then its subfamily rows: [by,] category, subfamily, time_pct, total_ns,
        calls, avg_ns, top_kernel_ns, top_kernel (by stream: device, pid, stream, since a
        stream id is one device's and process's). ``by``: device, stream or pid; ``rules``:
        extra category rules (TOML path or Rules); ``name``: how top_kernel is shown (and so
        which kernels it sums: short by default, as ``tracelens lineup``; categories are
        decided on the demangled name); ``top``: largest categories. Filters: see
        :meth:`filter`."""
        from ..lineup import category_summary

        return category_summary(
            self, by=by, rules=rules, subfamily=subfamily, name=name, top=top,
            where=self.filter(where, **filters),
        )  # fmt: skip

    def danger(
        self,
        *,
        rules: Any = None,
        top: int | None = None,
        where: EventFilter | None = None,
        **filters: Unpack[Filters],
    ) -> pl.DataFrame:
        """Kernels that are determinism or batch-invariance risks, one row per (kernel,
        rule): rule_id, level (high, medium, info), name, instances, total_ns, time_pct,
        why, fix, source. ``rules``: extra danger rules. Filters: see :meth:`filter`."""
        from ..danger import danger_kernels

        return danger_kernels(self, rules=rules, top=top, where=self.filter(where, **filters))

    def decoded_kernels(
        self,
        *,
        top: int | None = None,
        where: EventFilter | None = None,
        **filters: Unpack[Filters],
    ) -> pl.DataFrame:
        """Every distinct kernel decoded, by GPU time: time_pct, total_ns, instances, family,
        category, subfamily, name, fields_summary, fields. Filters: see :meth:`filter`."""
        from ..lineup import decoded_kernels

        return decoded_kernels(self, top=top, where=self.filter(where, **filters))

    # -- steps and time accounting (steps.py, util.py, findings.py) ------------------------
    def steps(
        self,
        range: str | None = None,  # noqa: A002 - the CLI's --range
        where: EventFilter | None = None,
        top_kernels: int = 0,
        **filters: Unpack[Filters],
    ) -> Steps:
        """The iterations of the program: the NVTX ranges labelled ``range`` (a glob) when
        given, else ProfilerStep markers, a repeated top-level NVTX range, or the period of
        the kernel launches (see :func:`tracelens.steps.find_steps`). ``Steps.frame``: one
        row per step and device (start_ns, end_ns, duration_ns, busy_ns, kernels, warmup,
        outlier, ...; ns from session start). With ``top_kernels``, ``.top_kernels`` lists
        that many kernels per step and device (see :func:`tracelens.stepwork.step_report`).
        Filters: see :meth:`filter`."""
        from ..errors import UsageError, check_at_least
        from ..steps import find_steps

        if range is not None and not isinstance(range, str):
            raise UsageError(f"range takes an NVTX label or glob, not {type(range).__name__}")
        check_at_least("top_kernels", top_kernels, 0)  # -1 was taken as "none"
        where = self.filter(where, **filters)
        if top_kernels:
            from ..stepwork import step_report

            return step_report(self, range=range, where=where, top_kernels=top_kernels)
        return find_steps(self, range=range, where=where)

    def findings(
        self,
        where: EventFilter | None = None,
        *,
        only: str | tuple[str, ...] = (),
        thresholds: dict[tuple[str, str], float] | None = None,
        limit: int | None = 50,  # findings.DEFAULT_LIMIT (tests/test_api.py checks)
        **filters: Unpack[Filters],
    ) -> Findings:
        """nsys analyze's rules and tracelens's (``only``: these rule ids, or this one, when
        given); ``thresholds`` overrides a rule's default by (rule id, key); ``limit``: rows
        kept per rule (None or 0: all). ``Findings.frame``: one row per rule (rule, fired, rows,
        title, why, fix); each rule's rows in ``Findings.result(rule).frame``. Filters: see
        :meth:`filter` (``nvtx``, ``step``: the rules look at that work only). See
        :func:`tracelens.findings.find_issues`."""
        from ..findings import find_issues

        # find_issues checks only, thresholds and limit (tracelens.findings_args)
        return find_issues(
            self, only=only, thresholds=thresholds, limit=limit, where=self.filter(where, **filters)
        )

    def util(self, where: EventFilter | None = None, **filters: Unpack[Filters]) -> Util:
        """Per-device GPU time accounting: span, busy (compute, exposed communication, exposed
        copies) and idle split by cause, all in ns; ``Util.frame`` one row per device,
        ``idle_causes`` and ``communication`` per cause and collective kind. Filters: see
        :meth:`filter` (``step``: over those steps' GPU span and work). See
        :func:`tracelens.util.gpu_time_accounting`."""
        from ..util import gpu_time_accounting

        return gpu_time_accounting(self, self.filter(where, **filters))

    # -- NVTX and CUDA API summaries (nvtx.py, api.py) ---------------------------------------
    def nvtx(
        self,
        style: str | None = None,
        gpu: bool = False,
        kernels: bool = False,
        group: str = "name",
        each: bool = False,
    ) -> pl.DataFrame:
        """NVTX ranges: CPU time per range name (nsys nvtx_sum; ``style`` 'pushpop' or
        'startend'), GPU time per range group (``gpu``; one row per range with ``each``) or
        kernels per range group (``kernels``); ``group`` 'name', 'path' or 'torch'.
        See :mod:`tracelens.nvtx`."""
        from ..nvtx import nvtx_report

        return nvtx_report(
            self, style=style, gpu=gpu, each=each, kernels=kernels, group=group
        ).frame

    def nvtx_paths(self) -> pl.DataFrame:
        """Every GPU operation with the NVTX range path of its launch; see
        :func:`tracelens.nvtx.op_paths`."""
        from ..nvtx import op_paths

        return op_paths(self)

    def api(
        self,
        exec: bool = False,  # noqa: A002 - the CLI's --exec
        *,
        osrt: bool = False,
        name: str = "demangled",
        pid: int | None = None,
    ) -> pl.DataFrame:
        """CUDA API time per function (nsys cuda_api_sum), with ``exec`` API, queue and
        kernel time per kernel (cuda_kern_exec_sum; kernels named by ``name``: demangled,
        short or mangled), or with ``osrt`` time per OS runtime function (osrt_sum: poll,
        pthread_cond_wait, ioctl...); ``pid``: one process only. Times in ns. See
        :mod:`tracelens.api`."""
        from ..api import api_report
        from ..filters import id_filter

        pid = None if pid is None else id_filter("pid", pid)
        return api_report(self, exec=exec, osrt=osrt, name=name, pid=pid).frame
