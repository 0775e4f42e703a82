"""The NVTX paths of the fingerprint's launches: each CUDA API call's path (the NVTX ranges
that hold it) as the temp tables fp_paths (each call's path id) and
fp_path_lists (each path's ranges), which ``fingerprint_launches`` joins and the regions are
made of. Threads whose ranges nest take the sweep of :mod:`tracelens.nvtx`; threads whose
ranges overlap pair their calls with the ranges directly (``fingerprint_nvtx_overlaps``), and
calls after the last NVTX event inside ranges left open get those ranges
(``fingerprint_open_range_paths``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..trace import Trace


def create_paths(trace: Trace) -> bool:
    """fp_paths (each call's path id) and fp_path_lists (each path's ranges): the sweep of
    tracelens.nvtx on threads whose ranges nest, a direct pairing of calls and ranges on the
    others (usually none). False when the trace has no NVTX ranges (both tables empty)."""
    from .. import nvtx
    from .._resources import query

    con = trace.db
    if not has_nvtx_ranges(trace):
        con.execute(
            "CREATE OR REPLACE TEMP TABLE fp_paths "
            "(global_pid BIGINT, correlation_id BIGINT, path_id BIGINT)"
        )
        con.execute(
            "CREATE OR REPLACE TEMP TABLE fp_path_lists (path_id BIGINT, "
            'ranges STRUCT(label VARCHAR, start BIGINT, "end" BIGINT)[])'
        )
        return False
    nvtx.build_attribution(trace)
    con.execute(
        "CREATE OR REPLACE TEMP TABLE fp_overlap_threads AS " + query("fingerprint_overlap_threads")
    )
    create_overlap_paths(trace)
    create_open_paths(trace)
    con.execute("CREATE OR REPLACE TEMP TABLE fp_path_lists AS " + query("fingerprint_range_paths"))
    # a view: the launches' one read joins it, so the calls are not copied first
    con.execute("CREATE OR REPLACE TEMP VIEW fp_paths AS " + query("fingerprint_nvtx_paths"))
    return True


def create_overlap_paths(trace: Trace) -> None:
    """fp_overlap_paths: the calls on threads whose ranges do not nest, with their ranges."""
    from .._resources import query

    con = trace.db
    if not con.execute("SELECT count(*) FROM fp_overlap_threads").fetchone()[0]:
        con.execute(
            "CREATE OR REPLACE TEMP TABLE fp_overlap_paths (path_id BIGINT, global_pid BIGINT, "
            'correlation_id BIGINT, ranges STRUCT(label VARCHAR, start BIGINT, "end" BIGINT)[])'
        )
        return
    con.execute("SET merge_join_threshold = 0")  # see fingerprint_nvtx_overlaps.sql
    try:
        con.execute(
            "CREATE OR REPLACE TEMP TABLE fp_overlap_paths AS "
            + query("fingerprint_nvtx_overlaps"),
            {"band_ns": band_ns(con)},
        )
    finally:
        con.execute("RESET merge_join_threshold")


def create_open_paths(trace: Trace) -> None:
    """fp_open_paths: the calls made after the last NVTX event inside ranges left open at
    the end of the capture, each with the open ranges that hold it as its path
    (fingerprint_open_range_paths; push/pop and start/end, on every thread). The sweep
    ends an open range at the last NVTX event, as nsys does for the nvtx command's
    tables; a capture cut inside a long range (mid-``generate``) then had its last
    launches in no range, where the full capture holds them in it, and ``--check`` read
    the cut as a changed path. Empty, and no call read, without open ranges."""
    from .._resources import query

    con = trace.db
    sql = 'SELECT count(*) FROM nvtx_text WHERE "end" IS NULL AND is_nvtx_range_type(eventType)'
    if con.execute(sql).fetchone()[0]:
        body = query("fingerprint_open_range_paths")
        con.execute("CREATE OR REPLACE TEMP TABLE fp_open_paths AS " + body)
    else:
        con.execute(
            "CREATE OR REPLACE TEMP TABLE fp_open_paths (path_id BIGINT, global_pid BIGINT, "
            'correlation_id BIGINT, ranges STRUCT(label VARCHAR, start BIGINT, "end" BIGINT)[])'
        )


def band_ns(con) -> int:
    """One thread's band in fingerprint_nvtx_overlaps: past every range and call end (an
    open range ends at the last NVTX timestamp, which may be a start or a mark)."""
    sql = (
        'SELECT greatest((SELECT greatest(max(start), max("end")) FROM nvtx_text), '
        '(SELECT max("end") FROM runtime_calls), 0) + 1'
    )
    return int(con.execute(sql).fetchone()[0])


def has_nvtx_ranges(trace: Trace) -> bool:
    """Any push/pop or start/end range, open ones too (they last to the last NVTX event,
    as in nvtx_ranges(): a trace whose only range was left open has that region)."""
    sql = "SELECT count(*) FROM nvtx_events WHERE is_nvtx_range_type(eventType)"
    return bool(trace.db.execute(sql).fetchone()[0])
