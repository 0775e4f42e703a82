"""The events of an export: GPU activity (kernels, copies, memsets), CUDA API calls, NVTX
ranges and marks, and OS runtime calls, as :class:`~tracelens.synth.TraceBuilder`
methods."""

from __future__ import annotations

from typing import Any

from . import vocab
from .kernel_names import kernel_short_name


def _check_span(start: int, end: int | None) -> None:
    if end is not None and end < start:
        raise ValueError(f"event ends before it starts (start={start}, end={end})")


def _executed_shared_memory(static_shared: int, dynamic_shared: int) -> int:
    """The shared memory carveout a launch gets: its use rounded up to a power of two
    (0 when it uses none), at most the 228 KiB an H100 SM has."""
    used = static_shared + dynamic_shared
    return 0 if used == 0 else min(1 << max(used - 1, 1).bit_length(), 233472)


class EventMethods:
    """The :class:`~tracelens.synth.TraceBuilder` methods that add events (they use the
    builder's ``string``, ``correlation_id``, process and thread ids and ``add_row``)."""

    _next_grid: int

    def _add_event(self, table: str, row: dict[str, Any], extra: dict[str, Any]) -> None:
        """Add ``row`` to ``table`` with the caller's ``extra`` columns over it."""
        row.update(extra)
        self.add_row(table, **row)

    def _gpu_activity(
        self,
        start: int,
        end: int,
        *,
        pid: int | None,
        device: int,
        context: int,
        stream: int,
        correlation_id: int | None,
    ) -> dict[str, Any]:
        """The columns every GPU activity row starts with (kernel, memcpy, memset); a new
        correlation id unless one is given."""
        cid = self.correlation_id() if correlation_id is None else correlation_id
        return {
            "start": start,
            "end": end,
            "deviceId": device,
            "contextId": context,
            "streamId": stream,
            "correlationId": cid,
            "globalPid": self._gpid(pid),
        }

    def kernel(
        self,
        name: str | bytes,
        *,
        start: int,
        end: int,
        short_name: str | bytes | None = None,
        mangled_name: str | bytes | None = None,
        pid: int | None = None,
        device: int = 0,
        context: int = 1,
        stream: int = 7,
        correlation_id: int | None = None,
        grid: tuple[int, int, int] = (1, 1, 1),
        block: tuple[int, int, int] = (128, 1, 1),
        registers: int = 32,
        static_shared: int = 0,
        dynamic_shared: int = 0,
        local_per_thread: int = 0,
        local_total: int = 0,
        shared_executed: int | None = None,
        launch_type: int = 1,
        cache_config: int = 1,
        graph_node_id: int | None = None,
        graph_id: int | None = None,
        **extra: Any,
    ) -> int:
        """A CUDA kernel (demangled ``name``); returns its correlationId.

        ``short_name`` defaults to :func:`kernel_short_name` of ``name``; ``mangled_name`` None
        stores NULL (nsys does for some kernels). Pass the correlationId of the API call
        that launched it (see :meth:`runtime`), or get a fresh one.
        """
        _check_span(start, end)
        if short_name is None:
            if isinstance(name, str):
                short_name = kernel_short_name(name)
            else:
                text = bytes(name).decode("utf-8", "surrogateescape")
                short_name = kernel_short_name(text).encode("utf-8", "surrogateescape")
        row = self._gpu_activity(
            start, end, pid=pid, device=device, context=context, stream=stream,
            correlation_id=correlation_id,
        )  # fmt: skip
        grid_id = self._next_grid
        self._next_grid += 1
        if shared_executed is None:
            shared_executed = _executed_shared_memory(static_shared, dynamic_shared)
        row |= {
            "demangledName": self.string(name),
            "shortName": self.string(short_name),
            "mangledName": None if mangled_name is None else self.string(mangled_name),
            "launchType": launch_type,
            "cacheConfig": cache_config,
            "registersPerThread": registers,
            "gridX": grid[0],
            "gridY": grid[1],
            "gridZ": grid[2],
            "blockX": block[0],
            "blockY": block[1],
            "blockZ": block[2],
            "staticSharedMemory": static_shared,
            "dynamicSharedMemory": dynamic_shared,
            "localMemoryPerThread": local_per_thread,
            "localMemoryTotal": local_total,
            "gridId": grid_id,
            "sharedMemoryExecuted": shared_executed,
            "graphNodeId": graph_node_id,
            "sharedMemoryLimitConfig": 0,
            "graphId": graph_id,
        }
        self._add_event("CUPTI_ACTIVITY_KIND_KERNEL", row, extra)
        return row["correlationId"]

    def memcpy(
        self,
        kind: str | int,
        bytes: int,  # noqa: A002 - the column's name
        *,
        start: int,
        end: int,
        pid: int | None = None,
        device: int = 0,
        context: int = 1,
        stream: int = 7,
        correlation_id: int | None = None,
        src_kind: str | int | None = None,
        dst_kind: str | int | None = None,
        src_device: int | None = None,
        dst_device: int | None = None,
        **extra: Any,
    ) -> int:
        """A memory copy; ``kind`` is a :data:`COPY_KINDS` name (``"HtoD"``) or number."""
        _check_span(start, end)
        copy_kind = vocab.COPY_KINDS[kind] if isinstance(kind, str) else int(kind)
        dsrc, ddst = vocab.DEFAULT_MEM_KINDS.get(copy_kind, (7, 7))
        src = dsrc if src_kind is None else vocab.mem_kind(src_kind)
        dst = ddst if dst_kind is None else vocab.mem_kind(dst_kind)
        row = self._gpu_activity(
            start, end, pid=pid, device=device, context=context, stream=stream,
            correlation_id=correlation_id,
        )  # fmt: skip
        row |= {
            "bytes": bytes,
            "copyKind": copy_kind,
            "srcKind": src,
            "dstKind": dst,
            "srcDeviceId": src_device if src_device is not None else (device if src == 2 else None),
            "dstDeviceId": dst_device if dst_device is not None else (device if dst == 2 else None),
            "copyCount": 1,
        }
        self._add_event("CUPTI_ACTIVITY_KIND_MEMCPY", row, extra)
        return row["correlationId"]

    def memset(
        self,
        bytes: int,  # noqa: A002 - the column's name
        *,
        start: int,
        end: int,
        value: int = 0,
        mem_kind: str | int = "device",
        pid: int | None = None,
        device: int = 0,
        context: int = 1,
        stream: int = 7,
        correlation_id: int | None = None,
        **extra: Any,
    ) -> int:
        """A cudaMemset on the device; returns its correlationId."""
        _check_span(start, end)
        row = self._gpu_activity(
            start, end, pid=pid, device=device, context=context, stream=stream,
            correlation_id=correlation_id,
        )  # fmt: skip
        row |= {"value": value, "bytes": bytes, "memKind": vocab.mem_kind(mem_kind)}
        self._add_event("CUPTI_ACTIVITY_KIND_MEMSET", row, extra)
        return row["correlationId"]

    def runtime(
        self,
        name: str | bytes,
        *,
        start: int,
        end: int,
        pid: int | None = None,
        tid: int | None = None,
        correlation_id: int | None = None,
        event_class: int = 0,
        return_value: int = 0,
        **extra: Any,
    ) -> int:
        """A CUDA API call (``cudaLaunchKernel_v7000``; ``event_class`` 0 runtime, 1 driver).

        Returns its correlationId: give the same id to the kernel/memcpy/memset it launched.
        """
        _check_span(start, end)
        cid = self.correlation_id() if correlation_id is None else correlation_id
        row = {
            "start": start,
            "end": end,
            "eventClass": event_class,
            "globalTid": self._gtid(pid, tid),
            "correlationId": cid,
            "nameId": self.string(name),
            "returnValue": return_value,
        }
        self._add_event("CUPTI_ACTIVITY_KIND_RUNTIME", row, extra)
        return cid

    def nvtx_range(
        self,
        text: str | bytes,
        *,
        start: int,
        end: int,
        pid: int | None = None,
        tid: int | None = None,
        registered: bool = False,
        event_type: int = 59,
        range_id: int | None = None,
        domain_id: int | None = None,
        category: int | None = None,
        color: int | None = None,
        **extra: Any,
    ) -> None:
        """An NVTX range (59 push/pop; 60 start/end). The label goes in ``text``, or in
        StringIds via ``textId`` when ``registered`` (an nvtxStringRegister'ed string).
        endGlobalTid is NULL, as nsys writes it for a range that ends on the thread that
        opened it (start/end ranges too); pass ``endGlobalTid=`` for one that ends on
        another thread."""
        _check_span(start, end)
        gtid = self._gtid(pid, tid)
        row = {
            "start": start,
            "end": end,
            "eventType": event_type,
            "rangeId": range_id,
            "category": category,
            "color": color,
            "text": None if registered else text,
            "textId": self.string(text) if registered else None,
            "globalTid": gtid,
            "endGlobalTid": None,
            "domainId": domain_id,
        }
        self._add_event("NVTX_EVENTS", row, extra)

    def nvtx_mark(
        self,
        text: str | bytes,
        *,
        at: int,
        pid: int | None = None,
        tid: int | None = None,
        **extra: Any,
    ) -> None:
        """An NVTX mark (eventType 34; ``end`` is NULL)."""
        row = {
            "start": at,
            "end": None,
            "eventType": 34,
            "text": text,
            "globalTid": self._gtid(pid, tid),
        }
        self._add_event("NVTX_EVENTS", row, extra)

    def osrt_call(
        self,
        name: str | bytes,
        *,
        start: int,
        end: int,
        pid: int | None = None,
        tid: int | None = None,
        event_class: int = 27,
        return_value: int = 0,
        **extra: Any,
    ) -> None:
        """An OS runtime library call nsys traced with -t osrt (``poll``, ``ioctl``...) in
        OSRT_API. ``event_class`` 27 is a call; nsys also writes a row of class 31 ('OS
        runtime libraries profiling started') and 32 ('... finished') per process, of no
        duration, which nsys stats' osrt_sum leaves out."""
        _check_span(start, end)
        row = {
            "start": start,
            "end": end,
            "eventClass": event_class,
            "globalTid": self._gtid(pid, tid),
            "nameId": self.string(name),
            "returnValue": return_value,
            "nestingLevel": 0,
            "callchainId": 0,
        }
        self._add_event("OSRT_API", row, extra)
