"""Event filters shared by every analysis, and parsing of times with units."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from .errors import MissingDataError, UsageError

if TYPE_CHECKING:
    from .trace import Trace

TIME_UNITS_NS = {"ns": 1, "us": 1_000, "ms": 1_000_000, "s": 1_000_000_000}
_TIME = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*(ns|us|µs|ms|s)?\s*$")


def parse_time_ns(text: str | int | None, *, param: str = "time") -> int | None:
    """``'1.5ms'`` -> 1500000. A bare number is nanoseconds. None stays None. A malformed
    time is a UsageError naming ``param``."""
    if text is None or isinstance(text, int):
        return text
    m = _TIME.match(str(text))
    if not m:
        raise UsageError(
            f"{{param}} {text!r} is not a time; use a number with an optional unit ns, us, ms "
            "or s (e.g. 1.5ms)",
            param=param,
        )
    unit = (m.group(2) or "ns").replace("µs", "us")
    return round(float(m.group(1)) * TIME_UNITS_NS[unit])


#: Longest glob accepted: an NVTX label glob is a few words; the cap keeps the compiled
#: RE2 program (linear in the pattern) far below RE2's memory budget.
MAX_GLOB_CHARS = 4096


def glob_regex(pattern: str) -> str:
    """An RE2 regex, to match in full (``regexp_full_match``), for the glob ``pattern``.

    The glob syntax is SQL's GLOB (as DuckDB and SQLite): ``*`` any text, ``?`` one
    character, ``[abc]``, ``[a-z]`` and ``[!abc]`` one character of (not of) a set, ``\\x``
    a literal ``x``; everything else matches itself, case-sensitively. DuckDB's own GLOB
    backtracks: ``*a*a*a*a*a*a*b`` against a long label takes minutes (100 characters:
    65 s). RE2 runs in time linear in the label whatever the pattern, hence the translation.
    An unclosed ``[`` or a trailing ``\\`` can match nothing (as in GLOB): a UsageError
    saying so; so is a glob over :data:`MAX_GLOB_CHARS` characters.
    """
    if len(pattern) > MAX_GLOB_CHARS:
        raise UsageError(
            f"glob of {len(pattern):,} characters; at most {MAX_GLOB_CHARS:,} are accepted"
        )
    out = ["(?s)"]  # ? and * also match a newline, as in GLOB
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "*":
            while i < n and pattern[i] == "*":
                i += 1  # ** is *: one .* (fewer states, same language)
            out.append(".*")
            continue
        if c == "?":
            out.append(".")
        elif c == "\\":
            if i + 1 == n:
                raise UsageError(f"glob {pattern!r} ends with a lone \\; write \\\\ for a \\")
            i += 1
            out.append(_re2_char(pattern[i]))
        elif c == "[":
            cls, i = _glob_class(pattern, i + 1)
            out.append(cls)
            continue
        else:
            out.append(_re2_char(c))
        i += 1
    return "".join(out)


def _glob_class(pattern: str, i: int) -> tuple[str, int]:
    """The RE2 class for the glob set whose text starts at ``i`` (after ``[``), and the index
    after its ``]``. As GLOB: ``!`` first inverts, ``]`` first is a literal, ``a-z`` a
    range (an inverted one such as ``z-a`` is empty)."""
    n = len(pattern)
    invert = i < n and pattern[i] == "!"
    i += invert
    first, items = i, []
    while i < n and not (pattern[i] == "]" and i > first):
        if i + 2 < n and pattern[i + 1] == "-" and pattern[i + 2] != "]":
            lo, hi = pattern[i], pattern[i + 2]
            if lo <= hi:
                items.append(f"{_re2_char(lo)}-{_re2_char(hi)}")
            i += 3
        else:
            items.append(_re2_char(pattern[i]))
            i += 1
    if i >= n:
        raise UsageError(f"glob {pattern!r} has a [ without its ]; write [[] for a literal [")
    if not items:  # only empty ranges: a class of nothing
        return ("." if invert else r"[^\x00-\x{10FFFF}]"), i + 1
    return ("[^" if invert else "[") + "".join(items) + "]", i + 1


def _re2_char(c: str) -> str:
    """``c`` as an RE2 literal: letters, digits, _ and other printable non-ASCII as they
    are, the rest as a \\x{..} escape (never a metacharacter, in a class or out)."""
    if c == "_" or c.isalnum() or (not c.isascii() and c.isprintable()):
        return c
    return f"\\x{{{ord(c):x}}}"


def in_window(start: Any, end: Any, t0: int | None, t1: int | None) -> Any:
    """Whether the event ``start``..``end`` is in the time window ``[t0, t1)`` (ns; None: no
    bound), by nsys's rule as ``in_window`` in ``queries/_shared.sql`` has it: the event
    ends at or after ``t0`` and starts before ``t1`` (nsysstats' filtered views: it starts
    in the window, ends in it or spans it, the end excluded). An event that starts at
    ``t1`` is out; one that ends at ``t0`` is in. ``start`` and ``end``: numbers (a bool
    back) or polars expressions (an expression back; ``True`` when both bounds are None)."""
    kept = True
    if t0 is not None:
        kept = kept & (end >= t0)
    if t1 is not None:
        kept = kept & (start < t1)
    return kept


def in_window_sql(t0: int, t1: int | None) -> str:
    """:func:`in_window` as an SQL condition on the columns ``start`` and ``"end"``, with
    the bounds inlined (integers), for a filter handed to SQLite (``Trace._kernels_where``)
    where the ``in_window`` macro does not exist."""
    condition = f'"end" >= {int(t0)}'
    return condition if t1 is None else f"{condition} AND start < {int(t1)}"


_INT64_MAX = 2**63 - 1


def id_filter(key: str, value: object) -> int:
    """``value`` as an id filter (device, pid or stream): an integer that fits the export's
    64-bit id columns. Anything else would reach DuckDB as a string, a float or a list and
    come back as a conversion error, or (a float) silently match nothing."""
    from operator import index

    try:
        if isinstance(value, bool):
            raise TypeError
        number = index(value)  # int and numpy integers; not float, str or list
    except TypeError:
        raise UsageError(
            f"{key}={value!r}: {key} takes an integer id, not {type(value).__name__}"
        ) from None
    if not -_INT64_MAX - 1 <= number <= _INT64_MAX:
        raise UsageError(f"{key}={number}: out of range for an id (64-bit integer)")
    return number


@dataclass(frozen=True)
class EventFilter:
    """Which events an analysis looks at. None means "all".

    The time window follows nsys: an event is kept when it ends at or after ``start_ns``
    and starts before ``end_ns`` (:func:`in_window`; ns from session start, the time base
    of the export).
    ``selection`` restricts the GPU work (kernels, memcpys, memsets, graph replays) to a set
    stored in the trace's ``work_selection`` table (see :func:`select_work`): the work
    launched inside some NVTX ranges, or inside some steps. A selection id belongs to the
    Trace that made it.
    """

    device: int | None = None
    pid: int | None = None
    stream: int | None = None
    start_ns: int | None = None
    end_ns: int | None = None
    selection: int | None = None
    #: The window before a selection set it to the selected work's span
    #: (:func:`window_to_selection`): :func:`tracelens.stepwork.select_steps` searches the
    #: steps in it, so that --nvtx does not renumber them. Not a filter of its own.
    asked_window: tuple[int | None, int | None] | None = field(
        default=None, compare=False, repr=False
    )
    #: (utilthread) The --nvtx pattern's regex (:func:`glob_regex`) when the selection was
    #: made by :func:`select_nvtx`: util accounts over the selected ranges' GPU projection
    #: (:mod:`tracelens.util_project`). Not a filter of its own.
    nvtx_label_re: str | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        # the one check of the ids, however the filter was built (Trace.filter, the CLI, a
        # caller's EventFilter(...)); frozen, hence object.__setattr__ for the plain int
        for key in ("device", "pid", "stream"):
            value = getattr(self, key)
            if value is not None:
                object.__setattr__(self, key, id_filter(key, value))
        if self.start_ns is not None and self.end_ns is not None and self.end_ns < self.start_ns:
            raise UsageError(
                f"end ({self.end_ns} ns) is before start ({self.start_ns} ns)", param="window"
            )

    def is_whole(self) -> bool:
        """No filter and no selection: everything passes."""
        return all(v is None for v in self.params().values())

    def params(self) -> dict[str, int | None]:
        return {
            "device": self.device,
            "pid": self.pid,
            "stream": self.stream,
            "start_ns": self.start_ns,
            "end_ns": self.end_ns,
            "selection": self.selection,
        }


def select_work(
    trace: Trace, rows: Any, where: EventFilter | None = None, **params: Any
) -> EventFilter:
    """``where`` with its selection set to the GPU operations in ``rows``, intersected with
    ``where.selection`` when there is one.

    ``rows`` is the name of a query file (``queries/<rows>.sql``, run with ``params``) or a
    relation DuckDB can scan (a polars/pyarrow table, a DuckDB relation) with columns
    ``globalPid`` and ``correlationId``. An empty set selects nothing (not everything).
    """
    from . import _resources

    where = where or EventFilter()
    con = trace.db
    if isinstance(rows, str):
        con.execute(
            "CREATE OR REPLACE TEMP TABLE selected_rows AS " + _resources.query(rows), params
        )
    else:
        con.register("_selected_rows", rows)
        con.execute(
            "CREATE OR REPLACE TEMP TABLE selected_rows AS "
            "SELECT globalPid, correlationId FROM _selected_rows"
        )
        con.unregister("_selected_rows")
    selection_id = con.execute("SELECT nextval('work_selection_ids')").fetchone()[0]
    trace.query_rows("_select_work", selection_id=selection_id, within=where.selection)
    con.execute("DROP TABLE selected_rows")
    return replace(where, selection=int(selection_id))


#: Characters of a label quoted in a message (a label can be megabytes long).
LABEL_SHOWN_CHARS = 80


def closest_labels(pattern: str, labels: list[str]) -> str:
    """The three labels closest to ``pattern`` (else the first three), quoted, each cut to
    :data:`LABEL_SHOWN_CHARS` characters, for a "no such range" message."""
    import difflib

    # difflib is quadratic in the text: compare the labels' starts only
    starts = {label[: 4 * LABEL_SHOWN_CHARS]: label for label in labels}
    close = difflib.get_close_matches(pattern, list(starts), n=3, cutoff=0.4)
    shown = [starts[c] for c in close] or labels[:3]
    return ", ".join(
        repr(x if len(x) <= LABEL_SHOWN_CHARS else x[:LABEL_SHOWN_CHARS] + "…") for x in shown
    )


def select_nvtx(
    trace: Trace, pattern: str, where: EventFilter | None = None
) -> tuple[EventFilter, int]:
    """``where`` narrowed to the GPU work launched inside the NVTX ranges whose name matches
    ``pattern`` (exact, or a glob such as ``decode_step_*``), and how many ranges matched.

    A GPU operation is inside a range when the CUDA API call that launched it lies inside
    the range on the range's thread (nsys's GPU projection); the union over the matching
    ranges, CUDA graph launches included. NVTX ranges are CPU time: the selected work
    usually runs later on the GPU, so the window is not the ranges' but the selected work's
    GPU span, inside ``where``'s own window (:func:`window_to_selection`, as for steps). A
    pattern that matches no range, or ranges that launched no GPU work, is a UsageError
    naming the closest labels.
    """
    label_re = glob_regex(pattern)
    trace.load_nvtx_text()
    ranges, projectable = trace.query_rows("nvtx_matching_ranges", label_re=label_re).data[0]
    if not ranges:
        labels = trace.query("nvtx_labels")["label"].to_list()
        if not labels:
            raise UsageError(f"{trace.path}: no NVTX ranges to match {pattern!r}")
        raise UsageError(
            f"{trace.path}: no NVTX range labelled {pattern!r}; closest: "
            + closest_labels(pattern, labels)
        )
    _require_launch_calls(trace, f"the {ranges} NVTX range(s) labelled {pattern!r}")
    narrowed = select_work(trace, "nvtx_selected_work", where, label_re=label_re)
    if not trace.query_rows("_selection_size", selection=narrowed.selection).data[0][0]:
        if where is not None and where.selection is not None:
            raise UsageError(
                f"{trace.path}: none of the GPU work launched inside the {ranges} NVTX "
                f"range(s) labelled {pattern!r} is in the rest of the selection"
            )
        ended = (
            ""
            if projectable == ranges
            else (
                f" ({ranges - projectable} of them end on another thread, which nsys does not "
                "project either)"
            )
        )
        raise UsageError(
            f"{trace.path}: the {ranges} NVTX range(s) labelled {pattern!r} launched no "
            f"GPU work (no kernel, memcpy or memset whose API call is inside them){ended}"
        )
    narrowed = replace(narrowed, nvtx_label_re=label_re)  # (utilthread: util's projection)
    return window_to_selection(trace, narrowed), int(ranges)


def _require_launch_calls(trace: Trace, ranges: str) -> None:
    """A MissingDataError when the export has no CUDA API calls: GPU work belongs to a range
    through the call that launched it, so without them no work can be placed in any range
    (the ranges did not "launch no GPU work": what they launched cannot be seen)."""
    from .nvtx import RUNTIME_TABLE

    if RUNTIME_TABLE not in trace.tables:
        raise MissingDataError(
            trace.path,
            f"no CUDA API data, so no GPU work can be placed in {ranges}: was it captured "
            "with -t cuda,nvtx?",
        )


def window_to_selection(trace: Trace, where: EventFilter) -> EventFilter:
    """``where`` with its window set to the GPU span of its (non-empty) selection, from the
    first selected operation's start to the last one's end (one past the last start, when
    an operation of no duration starts there: the window keeps every selected operation,
    ``queries/_selection_span.sql``), inside the window ``where`` already had: for a
    selection (--nvtx, --step) the analysis window is where the selected work ran (util's
    span, timeline's stretch, the host calls danger and findings look at), not the whole
    capture. A selection that lies outside that window gets an empty window
    at its start."""
    t0, t1 = trace.query_rows("_selection_span", selection=where.selection).data[0]
    if where.start_ns is not None:
        t0 = max(t0, where.start_ns)
    if where.end_ns is not None:
        t1 = min(t1, where.end_ns)
    asked = where.asked_window or (where.start_ns, where.end_ns)
    return replace(where, start_ns=t0, end_ns=max(t0, t1), asked_window=asked)
