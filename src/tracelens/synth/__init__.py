"""Write SQLite files shaped like ``nsys export --type sqlite`` output, for tests and demos.

The tables are created from the real nsys DDL vendored in ``tracelens/ddl/`` (one file per
export schema version, the ``CREATE`` statements exactly as found in real exports). As nsys
does, a table is created only when it receives rows, except for the tables nsys always
writes (``StringIds``, the metadata tables, the session start time and the ``ENUM_*``
tables of schema 3.0.0 and newer). Rows are given by column *name*; a field the chosen
schema does not have (``mangledName`` before 2.9.1, ``greenContextId`` before 3.13, ...)
is silently left out, while a name that no vendored schema knows is an error (a typo).

    from tracelens.synth import TraceBuilder

    b = TraceBuilder("3.0.0")
    b.process(4242, "python train.py")
    b.gpu(0, "NVIDIA H100 80GB HBM3", sm_count=132)
    cid = b.runtime("cudaLaunchKernel_v7000", start=1_000, end=6_000)
    b.kernel("void add<float>(float *, int)", start=9_000, end=12_500, correlation_id=cid)
    b.write("tiny.sqlite")

Output is deterministic: the same calls give a byte-identical file with the same SQLite
library (rows are written in call order, in one transaction, and nothing reads the clock).

Where a schema's vendored DDL lacks an event table (the 2.9.1 and 3.0.0 files were captured
without memsets or NVTX), the definition is borrowed from the nearest vendored schema that
has it: the same version's ``_full`` DDL first, then the nearest older version, then the
nearest newer one. ``TraceBuilder.borrowed`` records which tables were borrowed from where.
Metadata tables (``TARGET_INFO_GPU``, ``PROCESSES``, ...) are never borrowed: a schema whose
DDL lacks them simply gets none, which real files show too.

The package, by concept: :mod:`.ddl` (the vendored DDL and which table a schema uses),
:mod:`.vocab` (what nsys writes: product versions, copy and memory kinds, ``ENUM_*``
rows), :mod:`.ids` (globalPid/globalTid), :mod:`.kernel_names` (``shortName``),
:mod:`.builder` (:class:`TraceBuilder`: rows, strings, processes), :mod:`.events`
(kernels, copies, memsets, API calls, NVTX, OS runtime calls), :mod:`.hardware` (GPUs,
system environment) and :mod:`.writer` (the implicit tables and the SQLite file).
"""

from __future__ import annotations

from .builder import DEFAULT_SESSION_START_UTC_NS, TraceBuilder
from .ddl import DDL_DIR, DEFAULT_SCHEMA, SCHEMAS, TableDef, ddl_path, table_defs
from .ids import global_pid, global_tid
from .kernel_names import kernel_short_name
from .vocab import COPY_KINDS, MEM_KINDS, PRODUCT_VERSIONS
from .writer import SYNTHETIC_MARKER

__all__ = [
    "COPY_KINDS",
    "DDL_DIR",
    "DEFAULT_SCHEMA",
    "DEFAULT_SESSION_START_UTC_NS",
    "MEM_KINDS",
    "PRODUCT_VERSIONS",
    "SCHEMAS",
    "SYNTHETIC_MARKER",
    "TableDef",
    "TraceBuilder",
    "ddl_path",
    "global_pid",
    "global_tid",
    "kernel_short_name",
    "table_defs",
]
