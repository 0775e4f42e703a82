"""The values nsys writes that the builder needs: product versions per schema, copy and
memory kinds, and the rows of the ``ENUM_*`` tables."""

from __future__ import annotations

from .. import _resources

# nsys version written as EXPORT_PRODUCT_VERSION. Those marked "seen" are copied from the
# real exports in shared/traces; the others are plausible builds of the right release.
PRODUCT_VERSIONS: dict[str, str] = {
    "2.9.1": "2022.2.1.31",  # seen
    "3.0.0": "2022.4.2.1",  # seen
    "3.4.0": "2023.3.3.42",  # seen
    "3.13.2": "2024.5.1.113",
    "3.23.3": "2025.5.1.121",  # seen
    "3.24.18": "2026.1.1.204",  # seen (with schema 3.24.14)
    "3.25.0": "2026.2.1.210",
}

# copyKind (ENUM_CUDA_MEMCPY_OPER): short names accepted by TraceBuilder.memcpy, from the
# one copy-kind vocabulary ('[CUDA memcpy HtoD]' -> "HtoD", '[CUDA Unified Memory memcpy
# HtoD]' -> "UVM_HtoD").
COPY_KINDS: dict[str, int] = {
    label.removeprefix("[CUDA ")
    .removesuffix("]")
    .replace("Unified Memory memcpy ", "UVM_")
    .removeprefix("memcpy "): kind
    for kind, label in _resources.copy_kind_labels().items()
}

# memory kind (ENUM_CUDA_MEM_KIND)
MEM_KINDS: dict[str, int] = {
    "pageable": 0,
    "pinned": 1,
    "device": 2,
    "array": 3,
    "managed": 4,
    "device_static": 5,
    "managed_static": 6,
    "unknown": 7,
}

# (src, dst) memory kinds nsys reports for a plain cudaMemcpy of each copy kind.
DEFAULT_MEM_KINDS = {1: (0, 2), 2: (2, 0), 8: (2, 2), 9: (0, 0), 10: (2, 2)}

# ENUM_* contents, copied from real exports (nsys 2022.4 and 2026.1 agree on these rows).
ENUMS: dict[str, tuple[tuple[int, str, str], ...]] = {
    "ENUM_CUDA_MEMCPY_OPER": (
        (0, "CUDA_MEMCPY_KIND_UNKNOWN", "Unknown"),
        (1, "CUDA_MEMCPY_KIND_HTOD", "Host-to-Device"),
        (2, "CUDA_MEMCPY_KIND_DTOH", "Device-to-Host"),
        (3, "CUDA_MEMCPY_KIND_HTOA", "Host-to-Array"),
        (4, "CUDA_MEMCPY_KIND_ATOH", "Array-to-Host"),
        (5, "CUDA_MEMCPY_KIND_ATOA", "Array-to-Array"),
        (6, "CUDA_MEMCPY_KIND_ATOD", "Array-to-Device"),
        (7, "CUDA_MEMCPY_KIND_DTOA", "Device-to-Array"),
        (8, "CUDA_MEMCPY_KIND_DTOD", "Device-to-Device"),
        (9, "CUDA_MEMCPY_KIND_HTOH", "Host-to-Host"),
        (10, "CUDA_MEMCPY_KIND_PTOP", "Peer-to-Peer"),
        (11, "CUDA_MEMCPY_KIND_UVM_HTOD", "Unified Host-to-Device"),
        (12, "CUDA_MEMCPY_KIND_UVM_DTOH", "Unified Device-to-Host"),
        (13, "CUDA_MEMCPY_KIND_UVM_DTOD", "Unified Device-to-Device"),
    ),
    "ENUM_CUDA_MEM_KIND": (
        (0, "CUDA_MEMOPR_MEMORY_KIND_PAGEABLE", "Pageable"),
        (1, "CUDA_MEMOPR_MEMORY_KIND_PINNED", "Pinned"),
        (2, "CUDA_MEMOPR_MEMORY_KIND_DEVICE", "Device"),
        (3, "CUDA_MEMOPR_MEMORY_KIND_ARRAY", "Array"),
        (4, "CUDA_MEMOPR_MEMORY_KIND_MANAGED", "Managed"),
        (5, "CUDA_MEMOPR_MEMORY_KIND_DEVICE_STATIC", "Device Static"),
        (6, "CUDA_MEMOPR_MEMORY_KIND_MANAGED_STATIC", "Managed Static"),
        (7, "CUDA_MEMOPR_MEMORY_KIND_UNKNOWN", "Unknown"),
    ),
    # 3.0.0 spells this table ENUM_CUDA_KRENEL_LAUNCH_TYPE; the rows go to whichever exists.
    "ENUM_CUDA_KERNEL_LAUNCH_TYPE": (
        (0, "CUDA_KERNEL_LAUNCH_TYPE_UNKNOWN", "Unknown"),
        (1, "CUDA_KERNEL_LAUNCH_TYPE_REGULAR", "Regular"),
        (2, "CUDA_KERNEL_LAUNCH_TYPE_COOPERATIVE_SINGLE_DEVICE", "Coop Single Device"),
        (3, "CUDA_KERNEL_LAUNCH_TYPE_COOPERATIVE_MULTI_DEVICE", "Coop Multi Device"),
    ),
    "ENUM_CUDA_FUNC_CACHE_CONFIG": (
        (0, "CU_FUNC_CACHE_PREFER_NONE", "None"),
        (1, "CU_FUNC_CACHE_PREFER_SHARED", "Shared"),
        (2, "CU_FUNC_CACHE_PREFER_L1", "L1"),
        (3, "CU_FUNC_CACHE_PREFER_EQUAL", "Equal"),
    ),
    "ENUM_CUDA_SHARED_MEM_LIMIT_CONFIG": (
        (0, "CUDA_SHARED_MEM_LIMIT_DEFAULT", "Default"),
        (1, "CUDA_SHARED_MEM_LIMIT_OPTIN", "Opt in"),
    ),
    "ENUM_CUPTI_SYNC_TYPE": (
        (0, "CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_UNKNOWN", "Unknown"),
        (1, "CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE", "Event sync"),
        (2, "CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT", "Stream wait sync"),
        (3, "CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE", "Stream sync"),
        (4, "CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE", "Context sync"),
    ),
    # Only the first rows of the real table (ids 0-13 are identical 2022.4 -> 2026.1).
    "ENUM_NSYS_EVENT_CLASS": (
        (0, "TRACE_PROCESS_EVENT_CUDA_RUNTIME", "CUDA runtime"),
        (1, "TRACE_PROCESS_EVENT_CUDA_DRIVER", "CUDA driver"),
        (2, "TRACE_PROCESS_EVENT_GL", "GL"),
        (3, "TRACE_PROCESS_EVENT_TSP_OVERHEAD", "TSP overhead"),
        (4, "TRACE_PROCESS_EVENT_GL_DEBUG", "GL debug"),
        (5, "TRACE_PROCESS_EVENT_GL_WORKLOAD", "GL workload"),
        (6, "TRACE_PROCESS_EVENT_NVTX_START", "NVTX start"),
        (7, "TRACE_PROCESS_EVENT_NVTX_FINISH", "NVTX finish"),
        (8, "TRACE_PROCESS_EVENT_GL_START", "GL start"),
        (9, "TRACE_PROCESS_EVENT_GL_FINISH", "GL finish"),
        (10, "TRACE_PROCESS_EVENT_CUDA_START", "CUDA start"),
        (11, "TRACE_PROCESS_EVENT_CUDA_FINISH", "CUDA finish"),
        (12, "TRACE_PROCESS_EVENT_CUDA_INIT_ERROR", "CUDA init error"),
        (13, "TRACE_PROCESS_EVENT_CUDA_EGL_DRIVER", "CUDA EGL driver"),
    ),
    # Only the NVTX rows of the real table (134 rows in 2022.4).
    "ENUM_NSYS_EVENT_TYPE": (
        (34, "NvtxMark", "NvtxMark"),
        (59, "NvtxPushPopRange", "NvtxPushPopRange"),
        (60, "NvtxStartEndRange", "NvtxStartEndRange"),
        (70, "NvtxtPushPopRange", "NvtxtPushPopRange"),
        (71, "NvtxtStartEndRange", "NvtxtStartEndRange"),
        (75, "NvtxDomainCreate", "NvtxDomainCreate"),
    ),
}
ENUM_ALIASES = {"ENUM_CUDA_KERNEL_LAUNCH_TYPE": ("ENUM_CUDA_KRENEL_LAUNCH_TYPE",)}


def mem_kind(kind: str | int) -> int:
    """A :data:`MEM_KINDS` name (``"device"``) or number, as its number."""
    return MEM_KINDS[kind] if isinstance(kind, str) else int(kind)
