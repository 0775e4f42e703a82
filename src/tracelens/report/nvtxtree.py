"""The report's NVTX tree: ranges nested by their full path (``layer 3 / attn / …``), each
with the GPU time it launched (nsys's GPU projection, :func:`tracelens.nvtx.gpu_summary`
grouped by path), its CPU time, instances and GPU operations. The page draws it as nested
``<details>``, the largest first. A page narrowed to a selection draws the selection's
ranges (:func:`selected_summary`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import polars as pl

    from ..filters import EventFilter
    from ..trace import Trace

TREE_NODES = 150  # ranges drawn per trace (by GPU time); the page says how many are left out
SEPARATOR = " / "  # how tracelens.nvtx joins a path's names


@dataclass
class NvtxNode:
    name: str  # the innermost range name
    path: str
    gpu_ns: int | None  # projected GPU time (None: a parent with no row of its own)
    cpu_ns: int | None  # how long the ranges were open
    instances: int | None
    gpu_ops: int | None
    share: float = 0.0  # of the largest top-level range's GPU time (for the bar)
    children: list[NvtxNode] = field(default_factory=list)

    @property
    def shown(self) -> str:
        """The name as the page shows it: quoted when it starts or ends with a space, which
        HTML would collapse (:func:`tracelens.nvtx.shown_name`, as `tracelens nvtx`)."""
        from ..nvtx import shown_name

        return shown_name(self.name)


@dataclass
class NvtxTree:
    roots: list[NvtxNode]
    ranges: int  # paths with GPU work in the trace (in the selection)
    left_out: int  # paths not drawn (beyond TREE_NODES)
    note: str | None = None  # how a window counted the drawn ranges (None: whole ranges)


# A window cuts a range's GPU projection, not its CPU time or the operations it holds.
WINDOW_NOTE = (
    "Narrowed to the ranges whose GPU projection overlaps the selection's window, their GPU "
    "time counted inside it; their CPU time, instances and GPU operations are the whole "
    "ranges'"
)


def nvtx_tree(
    trace: Trace, *, limit: int = TREE_NODES, where: EventFilter | None = None
) -> NvtxTree | None:
    """The tree of ``trace``'s NVTX paths that launched GPU work (``where``: of its
    selection, :func:`selected_summary`); None when the export has no NVTX ranges, no CUDA
    API calls to project them with, or no range (of the selection) launched work."""
    from ..nvtx import NVTX_TABLE, RUNTIME_TABLE, gpu_summary

    if NVTX_TABLE not in trace.tables or RUNTIME_TABLE not in trace.tables:
        return None
    note = None
    if where is None or where.is_whole():
        summary = gpu_summary(trace, group="path")
    else:
        summary, windowed = selected_summary(trace, where)
        note = WINDOW_NOTE if windowed else None
    if summary.height == 0:
        return None
    kept = summary.sort("proj_total_ns", "range", descending=[True, False]).head(limit)
    nodes: dict[str, NvtxNode] = {}
    for r in kept.iter_rows(named=True):
        path = r["range"]
        nodes[path] = NvtxNode(
            path.rsplit(SEPARATOR, 1)[-1],
            path,
            r["proj_total_ns"],
            r["range_total_ns"],
            r["instances"],
            r["gpu_ops"],
        )
    roots = _link(nodes)
    top = max((n.gpu_ns or 0 for n in roots), default=0) or 1
    for node in nodes.values():
        node.share = (node.gpu_ns or 0) / top
    return NvtxTree(roots, summary.height, summary.height - kept.height, note)


def selected_summary(trace: Trace, where: EventFilter) -> tuple[pl.DataFrame, bool]:
    """The columns of :func:`tracelens.nvtx.gpu_summary` by path that the tree draws
    (range, style, proj_total_ns, range_total_ns, instances, gpu_ops) of ``where``'s ranges,
    from each range's projection (:func:`tracelens.nvtx.gpu_projection`): under --pid that
    process's; under --nvtx the ranges it matched and those nested in them; under a window
    (asked, or the span a selection set: :func:`tracelens.filters.window_to_selection`) the
    ranges whose projection overlaps it (:func:`tracelens.filters.in_window`), their GPU
    time cut to it as util cuts it; and whether the window left a range out or cut one
    (with --nvtx alone it is the matched ranges' own span, and cuts nothing). --device
    and --stream are not narrowed (:attr:`.selection.Selection.tree_note` says so)."""
    import polars as pl

    from ..filters import in_window
    from ..nvtx import gpu_projection

    rows = gpu_projection(trace)
    if where.pid is not None:
        rows = rows.filter(pl.col("pid") == where.pid)
    if where.nvtx_label_re is not None:
        matched = trace.query("nvtx_matched_range_ids", label_re=where.nvtx_label_re)
        ids = matched["range_id"].cast(pl.String).to_list()
        # a range's stack holds its own RangeId and those of the ranges above it
        inside = pl.col("stack").str.split(":").list.eval(pl.element().is_in(ids)).list.any()
        rows = rows.filter(inside)
    t0, t1 = where.start_ns, where.end_ns
    start = pl.col("proj_start_ns")
    end = start + pl.col("proj_duration_ns")
    overlapping = rows if t0 is None and t1 is None else rows.filter(in_window(start, end, t0, t1))
    cut_end = end if t1 is None else pl.min_horizontal(end, pl.lit(t1))
    cut_start = start if t0 is None else pl.max_horizontal(start, pl.lit(t0))
    cut = overlapping.with_columns(cut=(cut_end - cut_start).clip(lower_bound=0))
    summary = (
        cut.group_by("path", "style")
        .agg(
            proj_total_ns=pl.col("cut").sum(),
            range_total_ns=pl.col("duration_ns").sum(),
            instances=pl.len(),
            gpu_ops=pl.col("gpu_ops").sum(),
        )
        .rename({"path": "range"})
    )
    # said only where the window left a range out or cut one's projection
    windowed = cut.height < rows.height or cut["cut"].sum() < cut["proj_duration_ns"].sum()
    return summary, windowed


def _link(nodes: dict[str, NvtxNode]) -> list[NvtxNode]:
    """Attach each node to its parent path (made, without numbers, when the parent has no
    row of its own); children and roots by GPU time, largest first."""
    roots: list[NvtxNode] = []
    for path in list(nodes):
        node = nodes[path]
        while SEPARATOR in path:
            parent_path = path.rsplit(SEPARATOR, 1)[0]
            parent = nodes.get(parent_path)
            made = parent is None
            if made:
                name = parent_path.rsplit(SEPARATOR, 1)[-1]
                parent = nodes[parent_path] = NvtxNode(name, parent_path, None, None, None, None)
            parent.children.append(node)
            if not made:
                break
            node, path = parent, parent_path
        else:
            roots.append(node)

    def order(items: list[NvtxNode]) -> list[NvtxNode]:
        items.sort(key=lambda n: (-(n.gpu_ns or 0), n.path))
        for n in items:
            order(n.children)
        return items

    return order(roots)
