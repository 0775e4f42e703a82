"""What a page narrowed by filters (``report --nvtx``, ``--step``, ``--device``, a window)
shows of a trace: the :class:`~tracelens.filters.EventFilter` every section is read with,
and the sentence the header says it with."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from ..errors import MissingDataError

if TYPE_CHECKING:
    from collections.abc import Sequence

    import polars as pl

    from ..filters import EventFilter
    from ..trace import Trace

# What the header says of a selection made without a sentence of its own (a library
# caller's EventFilter): it is still said, never shown as the whole trace.
SELECTED = "only the GPU work the filters select"


@dataclass(frozen=True)
class Selection:
    """``where``: the work the page's sections show (None: the whole trace); ``note``: what
    it selects, in words (None for the whole trace)."""

    where: EventFilter | None
    note: str | None

    # The NVTX tree of a selection that names no ranges, process or window (a library
    # caller's selected work) is of every range: said, so that its times are not read as
    # the selection's.
    TREE_NOTE: ClassVar[str] = (
        "drawn for the whole capture, not only the selected work (the GPU projection of "
        "every range, as `tracelens nvtx --gpu --group path`)"
    )
    # A range's GPU projection spans the work it launched on every device and stream.
    TREE_KINDS_NOTE: ClassVar[str] = (
        "not narrowed to {kinds}: a range's GPU projection spans the work it launched on "
        "every GPU and stream (as `tracelens nvtx --gpu --group path`)"
    )

    TIMELINE_NOTE: ClassVar[str] = (
        "left out with steps and utilization: run `tracelens timeline` with the same filters"
    )

    @classmethod
    def of(cls, where: EventFilter | None, note: str | None) -> Selection:
        """``where``'s selection; ``note``: what its NVTX ranges or steps select (the CLI's
        :func:`nvtx_filter` note), completed with its device, process, stream and window."""
        if where is None or where.is_whole():
            return cls(None, None)
        if note is None and where.selection is not None:
            note = SELECTED  # NVTX ranges or steps selected the work, not said in words
        narrowed = describe(where)
        if narrowed is None:
            return cls(where, note or SELECTED)
        return cls(where, f"{note}, {narrowed}" if note else f"only the GPU work {narrowed}")

    @property
    def whole(self) -> bool:
        return self.where is None

    @property
    def tree_where(self) -> EventFilter | None:
        """The filter the NVTX tree is drawn with (:func:`.nvtxtree.selected_summary`):
        None (every range) for work selected without --nvtx or a window (a library caller's
        selection), whose ranges cannot be told."""
        where = self.where
        if where is None or where.selection is None or where.nvtx_label_re is not None:
            return where
        return None if where.start_ns is None and where.end_ns is None else where

    @property
    def tree_note(self) -> str | None:
        """What the NVTX tree is not narrowed to: all of the selection (:attr:`tree_where`
        None), else its GPU and stream (None: the tree shows the selection's ranges)."""
        if self.where is None:
            return None
        if self.tree_where is None:
            return self.TREE_NOTE
        kinds = [f"{words} {value}" for words, value in (("GPU", self.where.device),
                 ("stream", self.where.stream)) if value is not None]  # fmt: skip
        return self.TREE_KINDS_NOTE.format(kinds=" and ".join(kinds)) if kinds else None

    def require_work(self, trace: Trace, operations: int) -> None:
        """Raise MissingDataError when the selection holds no GPU operation (``operations``
        of it were read): a page of empty sections would say nothing; why, when the filters
        explain it (:func:`tracelens.hints.why_empty`)."""
        if self.whole or operations:
            return
        from ..hints import why_empty

        why = why_empty(trace, self.where)
        raise MissingDataError(
            trace.path, f"nothing to report: the filters select no GPU work ({why or self.note})"
        )


def said(chosen: Sequence[Selection]) -> tuple[str, ...]:
    """What the board says of the selections of A and B (``chosen``, in that order), one
    sentence per narrowed side ('A: only the GPU work launched inside the 2 NVTX ranges
    matching 'decode*', in the window 0 ns → 5,000 ns'): the report's page of the pair and
    `tracelens diff` say it in these words."""
    return tuple(f"{k}: {c.note}" for k, c in zip("AB", chosen, strict=True) if c.note)


def describe(where: EventFilter) -> str | None:
    """``where``'s device, process, stream and window in words, to follow 'only the GPU
    work' ('on GPU 0 on stream 7 ending at or after 1,000 ns'; times from session start, as
    asked: an NVTX or step selection narrows the window to its work's span itself); None
    without any."""
    parts = [
        f"{words} {value}"
        for words, value in (
            ("on GPU", where.device),
            ("of process", where.pid),
            ("on stream", where.stream),
        )
        if value is not None
    ]
    start, end = where.asked_window or (where.start_ns, where.end_ns)
    if start is not None and end is not None:
        parts.append(f"in the window {start:,} ns → {end:,} ns")
    elif start is not None:
        parts.append(f"ending at or after {start:,} ns")
    elif end is not None:
        parts.append(f"starting before {end:,} ns")
    return " ".join(parts) or None


def nvtx_of_process(ranges: pl.DataFrame, where: EventFilter | None) -> pl.DataFrame:
    """The NVTX ranges (``tid``: their globalTid) a page narrowed to ``where``'s process
    draws: that process's, as `tracelens timeline --pid` lists them; every range without
    --pid (--device and --stream select GPU work, and the ranges stay, as there)."""
    if where is None or where.pid is None:
        return ranges
    import polars as pl

    return ranges.filter((pl.col("tid") // (1 << 24)) % (1 << 24) == where.pid)
