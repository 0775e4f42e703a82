"""CUDA API summaries with ``nsys stats`` semantics: time per API function (cuda_api_sum)
and, per kernel, API time vs queue time vs kernel time (cuda_kern_exec_sum), the signal that
tells a launch-bound program from a GPU-bound one; and time per OS runtime function
(osrt_sum): the poll, pthread_cond_wait, sem_timedwait or ioctl a launch-bound or
data-loader-bound job's threads sit in while the GPU idles."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .errors import MissingDataError, UsageError

if TYPE_CHECKING:
    import polars as pl

    from .nvtx import NvtxReport
    from .trace import Trace

RUNTIME_TABLE = "CUPTI_ACTIVITY_KIND_RUNTIME"
OSRT_TABLE = "OSRT_API"
# One message for both spellings: the library's keywords, the command line's flags.
EXEC_OR_OSRT = "give {exec} or {osrt}, not both (CUDA API time per kernel, or OS runtime time)"
# The columns a terminal table shows of --exec (csv/json keep avg/med/min/max/stddev of all).
EXEC_TABLE_COLUMNS = ("pid", "tid", "device", "count", "queued", "api_avg_ns", "queue_avg_ns",
                      "kernel_avg_ns", "total_avg_ns", "api", "name")  # fmt: skip


def require_api(trace: Trace) -> None:
    if RUNTIME_TABLE not in trace.tables:
        raise MissingDataError(trace.path, "no CUDA API data: was it captured with -t cuda?")


def require_osrt(trace: Trace) -> None:
    if OSRT_TABLE not in trace.tables:
        raise MissingDataError(
            trace.path,
            "no OS runtime API data (OSRT_API): capture it with nsys profile -t osrt "
            "(e.g. -t cuda,nvtx,osrt)",
        )


def api_summary(trace: Trace, *, pid: int | None = None) -> pl.DataFrame:
    """One row per CUDA API function, by total time (``nsys stats`` cuda_api_sum).

    Columns, times in ns of CPU time (how long the calling thread was in the call):
    time_pct, total_ns, calls, avg_ns, med_ns, min_ns, max_ns, stddev_ns, name (without
    the version suffix, as nsys prints it).
    """
    require_api(trace)
    return trace.query("cuda_api_summary", pid=pid)


def kernel_exec_summary(
    trace: Trace, *, name: str = "demangled", pid: int | None = None
) -> pl.DataFrame:
    """Per launching thread, device, API function and kernel: API time, queue time, kernel
    time and total time (avg/med/min/max/stddev each), ``nsys stats`` cuda_kern_exec_sum.
    Queue time counts only launches whose kernel started after the call returned
    (``queued`` of ``count``)."""
    from .census import check_name_kind

    check_name_kind(name)
    require_api(trace)
    trace.require_kernels()
    return trace.query("kernel_exec_summary", name_kind=name, pid=pid)


def osrt_summary(trace: Trace, *, pid: int | None = None) -> pl.DataFrame:
    """One row per OS runtime function the threads called (poll, pthread_cond_wait, ioctl,
    read...), by total time (``nsys stats`` osrt_sum).

    Columns, times in ns of CPU time (how long the calling thread was in the call, blocked
    or not): time_pct, total_ns, calls, avg_ns, med_ns, min_ns, max_ns, stddev_ns, name.
    nsys records only the calls longer than its --osrt-threshold (1000 ns by default).
    """
    require_osrt(trace)
    return trace.query("osrt_summary", pid=pid)


def why_no_api(trace: Trace, pid: int | None) -> str | None:
    """Why :func:`api_summary` of process ``pid`` is empty, when ``pid`` explains it: the
    processes that did call CUDA API functions. None without a ``pid``, or when ``pid`` is
    one of them."""
    return _why_no_calls(trace, pid, "api_processes", "CUDA API calls")


def why_no_osrt(trace: Trace, pid: int | None) -> str | None:
    """Why :func:`osrt_summary` of process ``pid`` is empty, when ``pid`` explains it: the
    processes that did call OS runtime functions. None without a ``pid``, or when
    ``pid`` is one of them."""
    return _why_no_calls(trace, pid, "osrt_processes", "OS runtime calls")


def _why_no_calls(trace: Trace, pid: int | None, query: str, calls: str) -> str | None:
    if pid is None:
        return None
    pids = [row[0] for row in trace.query_rows(query).data]
    if pid in pids:
        return None
    listed = ", ".join(str(p) for p in pids) or "none"
    return f"no {calls} of pid {pid}; processes with {calls}: {listed}"


def api_report(
    trace: Trace,
    *,
    exec: bool = False,
    osrt: bool = False,
    name: str = "demangled",
    pid: int | None = None,
) -> NvtxReport:
    """What ``tracelens api`` shows: time per API function, with ``exec`` API, queue and
    kernel time per kernel, or with ``osrt`` time per OS runtime function (rendered by
    :func:`tracelens.nvtx.render`)."""
    from .nvtx import NvtxReport

    if exec and osrt:
        raise UsageError(EXEC_OR_OSRT.format(exec="exec", osrt="osrt"))
    if osrt:
        frame = osrt_summary(trace, pid=pid)
        return NvtxReport(frame, "CPU time by OS runtime function", None, "api")
    if exec:
        frame = kernel_exec_summary(trace, name=name, pid=pid)
        return NvtxReport(frame, "API, queue and kernel time", EXEC_TABLE_COLUMNS, "api")
    return NvtxReport(api_summary(trace, pid=pid), "CPU time by CUDA API function", None, "api")
