"""Option groups: the filter options (:class:`Filters`), the output options
(:class:`Output`) and the options of one side of a pair (:class:`Sides`), each declared
once and taken by a command as one parameter (:func:`grouped`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from ._options import (
    AEndOpt,
    ANvtxOpt,
    AStartOpt,
    BEndOpt,
    BNvtxOpt,
    BStartOpt,
    DeviceOpt,
    EndOpt,
    FormatOpt,
    NvtxOpt,
    OutputOpt,
    PidOpt,
    StartOpt,
    StepOpt,
    StreamOpt,
    TimeUnitOpt,
)
from ._output import show
from ._params import FORMATS, format_option
from ._selection import event_filter

if TYPE_CHECKING:
    from ..filters import EventFilter
    from ..trace import Trace

# A command declares a group of options as one parameter whose default is the group
# (``filters: c.Filters = c.FILTERS``, ``out: c.Output = c.OUTPUT``); :func:`grouped` puts
# the group's options in its place on the command line and gives the command one object.


@dataclass(frozen=True)
class Filters:
    """The filter options: device, pid, stream, the time window (ns from session start),
    ``--nvtx`` and ``--step`` (None where the command has no such option)."""

    device: int | None = None
    pid: int | None = None
    stream: int | None = None
    start: int | None = None
    end: int | None = None
    nvtx: str | None = None
    step: tuple[int, int] | None = None

    def event_filter(self) -> EventFilter:
        return event_filter(self.device, self.pid, self.stream, self.start, self.end)


@dataclass(frozen=True)
class Sides:
    """The options of one side of a pair (diff, report A B): --a-start/--a-end,
    --b-start/--b-end and --a-nvtx/--b-nvtx, each None when not given."""

    a_start: str | None = None
    a_end: str | None = None
    b_start: str | None = None
    b_end: str | None = None
    a_nvtx: str | None = None
    b_nvtx: str | None = None

    def given(self) -> bool:
        """Whether any of them was given."""
        return any(v is not None for v in vars(self).values())

    def of(self, side: str) -> tuple[str | None, str | None, str | None]:
        """(nvtx, start, end) of ``side``, 'a' or 'b'."""
        return tuple(getattr(self, f"{side}_{o}") for o in ("nvtx", "start", "end"))


@dataclass(frozen=True)
class Output:
    """The output options: time unit, format and file."""

    timeunit: str = "ns"
    fmt: str = "table"
    output: Path | None = None

    def show(
        self,
        view: Callable[..., str],
        result: Any,
        trace: Trace,
        *,
        note: str | None = None,
        hint: str | None = None,
        **options: Any,
    ) -> None:
        """:func:`show` ``result`` of ``trace`` in the chosen unit and format."""
        show(
            view,
            result,
            fmt=self.fmt,
            output=self.output,
            note=note,
            hint=hint,
            timeunit=self.timeunit,
            source=trace.path.name,
            **options,
        )


@dataclass(frozen=True)
class _Group:
    """Options declared once: (name, annotation, default) each, and the class they make."""

    make: type
    options: tuple[tuple[str, Any, Any], ...]


def filter_options(*, nvtx: bool = True, step: bool = True, **replace: Any) -> Any:
    """The filter group (``replace``: another annotation for an option, by name)."""
    options = {
        "device": DeviceOpt,
        "pid": PidOpt,
        "stream": StreamOpt,
        "start": StartOpt,
        "end": EndOpt,
        **({"nvtx": NvtxOpt} if nvtx else {}),
        **({"step": StepOpt} if step else {}),
    }
    options.update(replace)
    return _Group(Filters, tuple((name, kind, None) for name, kind in options.items()))


def output_options(formats: tuple[str, ...] = FORMATS) -> Any:
    fmt = FormatOpt if formats == FORMATS else Annotated[str, format_option(formats)]
    return _Group(
        Output,
        (("timeunit", TimeUnitOpt, "ns"), ("fmt", fmt, "table"), ("output", OutputOpt, None)),
    )


SIDES = _Group(
    Sides,
    tuple(
        (name, kind, None)
        for name, kind in (
            ("a_start", AStartOpt), ("a_end", AEndOpt), ("b_start", BStartOpt),
            ("b_end", BEndOpt), ("a_nvtx", ANvtxOpt), ("b_nvtx", BNvtxOpt),
        )
    ),
)  # fmt: skip
FILTERS = filter_options()
WINDOW_FILTERS = filter_options(nvtx=False, step=False)  # device, pid, stream, start, end
OUTPUT = output_options()


def grouped(command: Callable[..., Any]) -> Callable[..., Any]:
    """``command`` with each parameter whose default is an option group replaced, on the
    command line, by the group's options in its place; the command gets the group's
    object (:class:`Filters`, :class:`Output`, :class:`Sides`) under that parameter's name."""
    import functools
    import inspect

    signature = inspect.signature(command, eval_str=True)
    params, groups = [], {}
    for p in signature.parameters.values():
        if isinstance(p.default, _Group):
            groups[p.name] = p.default
            params += [
                inspect.Parameter(name, p.POSITIONAL_OR_KEYWORD, annotation=kind, default=default)
                for name, kind, default in p.default.options
            ]
        else:
            params.append(p)

    @functools.wraps(command)
    def run(**kwargs: Any) -> Any:
        for name, group in groups.items():
            kwargs[name] = group.make(**{o: kwargs.pop(o) for o, _, _ in group.options})
        return command(**kwargs)

    run.__signature__ = signature.replace(parameters=params)  # type: ignore[attr-defined]
    return run
