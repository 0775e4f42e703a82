"""The report's NVTX tree: ranges nested by their full path (``layer 3 / attn / …``), each
with the GPU time it launched (nsys's GPU projection, :func:`tracelens.nvtx.gpu_summary`
grouped by path), its CPU time, instances and GPU operations. The page draws it as nested
``<details>``, the largest first."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
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


@dataclass
class NvtxTree:
    roots: list[NvtxNode]
    ranges: int  # paths with GPU work in the trace
    left_out: int  # paths not drawn (beyond TREE_NODES)


def nvtx_tree(trace: Trace, *, limit: int = TREE_NODES) -> NvtxTree | None:
    """The tree of ``trace``'s NVTX paths that launched GPU work; None when the export has
    no NVTX ranges, no CUDA API calls to project them with, or no range launched work."""
    from ..nvtx import NVTX_TABLE, RUNTIME_TABLE, gpu_summary

    if NVTX_TABLE not in trace.tables or RUNTIME_TABLE not in trace.tables:
        return None
    summary = gpu_summary(trace, group="path")
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
    return NvtxTree(roots, summary.height, summary.height - kept.height)


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
