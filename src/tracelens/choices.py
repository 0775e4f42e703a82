"""The values each option accepts, declared once: the library checks arguments against these
tuples and the command line's parser offers (and enforces) the same ones.

Kept free of imports so that ``tracelens --help`` can read it without loading an analysis.
"""

from __future__ import annotations

#: Output formats of the result commands (``info`` and ``diff`` accept a subset).
FORMATS = ("table", "csv", "json", "markdown")
#: Time units of ``--timeunit`` (the factors are ``filters.TIME_UNITS_NS``).
TIME_UNITS = ("ns", "us", "ms", "s")
#: How a kernel is named: ``demangled`` (nsys's default), ``short`` or ``mangled``.
NAME_KINDS = ("demangled", "short", "mangled")
#: ``lineup --by``: repeat the line-up per value of this column.
LINEUP_BY = ("device", "stream", "pid")
#: ``memory --by``: GPU time or bytes per operation.
MEMORY_BY = ("time", "size")
#: ``stakeout --match``: how the kernel pattern matches a name.
MATCHES = ("exact", "contains", "regex")
#: ``stakeout --sort``: launch order.
SORTS = ("start", "duration")
#: Danger levels, most severe first (``danger --fail-on``).
LEVELS = ("high", "medium", "info")
#: ``ranks --engine``: where the per-rank map runs.
RANK_ENGINES = ("local", "ray")
#: ``ranks --view``: one table of the result (``matrix``: the rank x step matrix).
RANK_VIEWS = (
    "ranks", "steps", "matrix", "stragglers", "collectives", "waits", "clock",
    "inconsistencies", "failures", "set_aside",
)  # fmt: skip
#: ``nvtx --style``: push/pop or start/end ranges only.
NVTX_STYLES = ("pushpop", "startend")
#: ``nvtx --group``: range name (nsys), path of names from the top range, PyTorch op.
NVTX_GROUPS = ("name", "path", "torch")
