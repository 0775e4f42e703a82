"""A cached trace's NVTX ranges projected onto the GPU, kept in its cache entry.

The projection (one row per range that launched GPU work, ``queries/_nvtx_projection.sql``)
depends on the trace and on tracelens alone, and making it reads every CUDA API call and GPU
operation and sweeps them over the ranges: on the 5M-kernel nest trace read from the cache,
~3.3 of nvtx --gpu's ~3.9 CPU s. The first run that makes it through a cache entry keeps its
rows beside the cached tables (a derived file of :mod:`tracelens.cache`, read by
:func:`tracelens.util_workfile.read_kept`), and later runs (``nvtx --gpu``, with ``--each``
or any ``--group``, the report's NVTX tree) read them back instead. DuckDB writes the file
from the view, so the rows are never all held in Python (the 10M-range fixture has 2M).
Its version is a digest of every source, query and data file of tracelens and of the
DuckDB and polars versions, so a tracelens whose rows could differ never reads another's; a
direct read (no cache entry) makes the projection as before.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .trace import Trace

# nvtx_projection's columns, in order (queries/_nvtx_projection.sql)
COLUMNS = (
    "name", "proj_start_ns", "proj_duration_ns", "start_ns", "duration_ns", "style", "pid",
    "tid", "gpu_ops", "level", "children", "range_id", "parent_id", "stack", "path",
)  # fmt: skip


def _version() -> str:
    from ._resources import code_digest

    return code_digest()


def _name() -> str:
    """The file's name carries its version: tracelens versions sharing one cache directory
    each keep their own."""
    return f"tracelens_nvtx_projection-{_version()}.parquet"


def read(trace: Trace) -> bool:
    """Create the view nvtx_projection over the rows an earlier run kept for ``trace``;
    False when there are none (none kept, another version, a direct read, or a file
    removed or damaged meanwhile)."""
    from . import _resources
    from .nvtx_sweep import register
    from .util_workfile import keeps, read_kept

    if not keeps(trace):
        return False
    frame = read_kept(trace, _name(), _version())
    if frame is None or tuple(frame.columns) != COLUMNS:
        return False
    # the NVTX macros the summary queries use (torch_label), which the sweep installs
    trace.db.execute(_resources.query("_nvtx_ranges"))
    register(trace.db, "nvtx_kept_projection", frame)
    trace.db.execute(
        "CREATE OR REPLACE TEMP VIEW nvtx_projection AS SELECT * FROM nvtx_kept_projection"
    )
    return True


def write(trace: Trace) -> None:
    """Keep the rows of the view nvtx_projection in ``trace``'s cache entry, when it reads
    one; nothing when the cache cannot be written (this run has its rows either way)."""
    import duckdb

    from .cache import add_derived
    from .util_workfile import keeps

    if not keeps(trace):
        return
    con = trace.db

    def write_rows(path) -> None:
        con.execute("SET VARIABLE nvtx_kept_file = $f", {"f": str(path)})
        con.execute(
            "COPY (SELECT * FROM nvtx_projection) TO (getvariable('nvtx_kept_file')) "
            "(FORMAT parquet, COMPRESSION snappy)"
        )

    lazy = trace._lazy
    with contextlib.suppress(OSError, duckdb.Error):
        add_derived(lazy.settings, lazy.ident, trace._source_file, _name(), _version(), write_rows)
