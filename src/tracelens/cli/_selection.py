"""The filter options as the library takes them: the common options' :class:`EventFilter`
(:func:`event_filter`, the window checked) and that filter narrowed by ``--nvtx`` and
``--step`` (:func:`nvtx_filter`), with the note that says what was kept."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import UsageError

if TYPE_CHECKING:
    from ..filters import EventFilter
    from ..trace import Trace
    from ._groups import Filters


def event_filter(
    device: int | None,
    pid: int | None,
    stream: int | None,
    start: int | str | None,
    end: int | str | None,
    flags: tuple[str, str] = ("--start", "--end"),
) -> EventFilter:
    """The filter of the common options (``start``/``end``: ns from session start, as the
    parser gives them, or still text); ``flags`` name the window's options in messages."""
    from ..filters import EventFilter, parse_time_ns

    try:
        start, end = parse_time_ns(start, param="start"), parse_time_ns(end, param="end")
    except UsageError as exc:
        raise UsageError(exc.naming(flags[exc.param == "end"])) from None

    if start is not None and end is not None and end < start:
        raise UsageError(f"{flags[1]} ({end} ns) is before {flags[0]} ({start} ns)")
    return EventFilter(device=device, pid=pid, stream=stream, start_ns=start, end_ns=end)


def side_window(
    filters: Filters, side: str | None, start: int | str | None, end: int | str | None
) -> EventFilter:
    """The filter of ``filters`` with the window of one side of a pair: ``start``/``end``
    (--a-start/--a-end or --b-start/--b-end, ``side`` 'a' or 'b'; None: the options of
    both sides) win over ``filters``' own --start/--end; a message names the flag each end
    came from (--a-start with --end: '--end ... is before --a-start')."""
    if start is None and end is None:
        return filters.event_filter()
    return event_filter(
        filters.device, filters.pid, filters.stream,
        filters.start if start is None else start, filters.end if end is None else end,
        flags=(
            "--start" if start is None else f"--{side}-start",
            "--end" if end is None else f"--{side}-end",
        ),
    )  # fmt: skip


def nvtx_filter(
    trace: Trace, pattern: str | None, where: EventFilter, step: tuple[int, int] | None = None
):
    """``where`` narrowed by ``--nvtx`` then ``--step``, and the note that says how many
    ranges matched and which steps were kept (None without either)."""
    where, note, _ranges = nvtx_selection(trace, pattern, where, step)
    return where, note


def nvtx_selection(
    trace: Trace, pattern: str | None, where: EventFilter, step: tuple[int, int] | None = None
):
    """:func:`nvtx_filter`'s filter and note, and how many ranges ``pattern`` matched (None
    without it: the diff's JSON says it per side)."""
    from ._notes import join_notes

    note = ranges = None
    if pattern is not None:
        from ..filters import select_nvtx

        where, ranges = select_nvtx(trace, pattern, where)
        one = ranges == 1
        note = (
            f"only the GPU work launched inside the {ranges:,} NVTX range{'' if one else 's'} "
            f"matching {pattern!r}"
        )
    if step is not None:
        from ..stepwork import select_steps

        chosen = select_steps(trace, step, where)
        where, note = chosen.where, join_notes(note, chosen.note())
    return where, note, ranges
