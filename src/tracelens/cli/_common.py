"""Options and output shared by the commands.

The option types are declared once here: each choice option's values come from
:mod:`tracelens.choices` (the tuples the library checks against), and the parser rejects
other values with the list before a command runs; times are parsed by the parser too.
:func:`show` is the one way a command renders its result and writes it.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from .. import choices
from ..errors import UsageError
from ._output import (  # noqa: F401 - the commands' one module of shared things: c.show, ...
    _INPUTS,
    check_output,
    emit,
    empty_hint,
    hint_text,
    show,
    terminal,
)

try:  # recent typer vendors (a trimmed) click; older releases depend on it
    from typer._click.types import ParamType
except ImportError:  # pragma: no cover - depends on the installed typer
    from click.types import ParamType

if TYPE_CHECKING:
    from ..filters import EventFilter
    from ..trace import Trace

FORMATS = choices.FORMATS
TIME_UNITS = choices.TIME_UNITS
BOARD_FORMATS = ("table", "json", "markdown")  # diff and fingerprint --check boards


def _or(values: tuple[str, ...]) -> str:
    return ", ".join(values[:-1]) + " or " + values[-1] if len(values) > 1 else values[0]


class Choice(ParamType):
    """One of ``choices``, or fail in tracelens's words: ``unknown --format 'xml'; use one
    of: table, csv, json, markdown`` (one line, as every usage error)."""

    name = "choice"

    def __init__(self, choices: tuple[str, ...]) -> None:
        self.choices = choices

    def convert(self, value: Any, param: Any, ctx: Any) -> Any:
        if value in self.choices:
            return value
        if value == "md" and "markdown" in self.choices:  # what people type for Markdown
            return "markdown"
        flag = max(param.opts, key=len) if param is not None else "value"
        raise UsageError(f"unknown {flag} {value!r}; use one of: {', '.join(self.choices)}")


class Time(ParamType):
    """A time with an optional unit (``1.5s``, ``200ms``, ``12345`` = ns), as int ns."""

    name = "time"

    def convert(self, value: Any, param: Any, ctx: Any) -> Any:
        from ..filters import parse_time_ns

        flag = max(param.opts, key=len) if param is not None else "time"
        try:
            return parse_time_ns(value)
        except UsageError as exc:
            raise UsageError(exc.naming(flag)) from None


class AtLeast(ParamType):
    """An integer of at least ``minimum`` (``meaning`` says what the minimum stands for)."""

    name = "integer"

    def __init__(self, minimum: int, meaning: str = "") -> None:
        self.minimum, self.meaning = minimum, meaning

    def convert(self, value: Any, param: Any, ctx: Any) -> Any:
        from ..errors import check_at_least

        flag = max(param.opts, key=len) if param is not None else "value"
        try:
            number = int(value)
        except (TypeError, ValueError):
            raise UsageError(f"{flag} {value!r} is not a whole number") from None
        try:
            return check_at_least("n", number, self.minimum, meaning=self.meaning)
        except UsageError as exc:
            raise UsageError(exc.naming(flag)) from None


class StepSpec(ParamType):
    """``N`` or ``A:B`` (1-based, inclusive), as (first, last)."""

    name = "steps"

    def convert(self, value: Any, param: Any, ctx: Any) -> Any:
        from ..stepwork import parse_step_spec

        if isinstance(value, tuple):
            return value
        try:
            return parse_step_spec(value)
        except UsageError as exc:
            # The library names step or steps; click keeps no record of which of the
            # option's flags was typed, so name both as alternatives ("--step/--steps '0'"
            # read as one flag, and "--steps" was wrong after --step 3:1).
            flags = " or ".join(param.opts) if param is not None else ""
            noun = exc.param or "step"
            raise UsageError(exc.naming(f"{noun} ({flags})" if flags else noun)) from None


def choice(
    *flags: str, values: tuple[str, ...], help: str | None = None, metavar: str | None = None
) -> Any:
    """A typer Option accepting only ``values`` (its help lists them unless ``help`` is
    given; ``{values}`` in ``help`` is replaced by the list)."""
    listed = _or(values)
    text = (help or "{values}").replace("{values}", listed)
    return typer.Option(
        *flags, help=text, metavar=metavar or "|".join(values), click_type=Choice(values)
    )


def format_option(formats: tuple[str, ...] = FORMATS) -> Any:
    return choice("--format", "-f", values=formats, metavar="FORMAT")


def time_option(flag: str, help: str) -> Any:
    return typer.Option(flag, help=help, metavar="TIME", click_type=Time())


def at_least(*flags: str, minimum: int, help: str, meaning: str = "") -> Any:
    return typer.Option(*flags, help=help, click_type=AtLeast(minimum, meaning))


class TracePath(ParamType):
    """A trace path, as a Path; an empty one is refused: Path("") is ".", which read the
    working directory (`tracelens census "$TRACE"` with TRACE unset: ".: is a directory";
    `tracelens ranks "$RUNS"`: every export under it)."""

    name = "trace"

    def convert(self, value: Any, param: Any, ctx: Any) -> Any:
        if isinstance(value, str) and not value:
            raise UsageError("the trace path is empty (an unset variable?); pass the export")
        return value if isinstance(value, Path) else Path(value)


# Path arguments are not checked by click (readable=False): check_file says what is wrong
# with a trace, in tracelens's words.
TraceArg = Annotated[
    Path | None,
    typer.Argument(
        help="nsys SQLite export (nsys export --type sqlite); omit with --demo",
        show_default=False,
        click_type=TracePath(),
    ),
]
DemoOpt = Annotated[
    str | None,
    typer.Option("--demo", help="Use a bundled demo trace instead: bs1 or bs16", metavar="NAME"),
]
FormatOpt = Annotated[str, format_option()]
OutputOpt = Annotated[
    Path | None,
    typer.Option(
        "--output",
        "-o",
        help="Write to FILE instead of stdout (- is stdout)",
        metavar="FILE",
        readable=False,
    ),
]
TimeUnitOpt = Annotated[
    str,
    choice(
        "--timeunit", values=TIME_UNITS, help="Unit of the time columns: {values}", metavar="UNIT"
    ),
]
NameOpt = Annotated[
    str,
    choice(
        "--name", values=choices.NAME_KINDS, help="Kernel name to show: {values}", metavar="KIND"
    ),
]
DeviceOpt = Annotated[int | None, typer.Option("--device", help="Only this CUDA device ordinal")]
PidOpt = Annotated[int | None, typer.Option("--pid", help="Only this process id")]
StreamOpt = Annotated[int | None, typer.Option("--stream", help="Only this CUDA stream id")]
StartOpt = Annotated[
    int | None,
    time_option(
        "--start",
        "Window start, from session start (e.g. 1.5s, 200ms, 12345 = ns); "
        "an event is in the window when it ends at or after --start and starts before "
        "--end, as nsys's filters",
    ),
]
EndOpt = Annotated[int | None, time_option("--end", "Window end (see --start)")]
TopOpt = Annotated[int | None, at_least("--top", "-n", minimum=1, help="Only the first N rows")]
NvtxOpt = Annotated[
    str | None,
    typer.Option(
        "--nvtx",
        help="Only the GPU work launched inside the NVTX ranges with this name (glob "
        "allowed: 'decode_step_*'; the union over the ranges; CUDA graph launches count)",
        metavar="GLOB",
    ),
]

# Declared as text for typer (a tuple type would make it take two values); the parser
# gives (first, last).
StepOpt = Annotated[
    str | None,
    typer.Option(
        "--step",
        "--steps",
        help="Only the GPU work launched inside step N or steps A:B (1-based, inclusive: the "
        "trace's steps, as `tracelens steps` numbers them, also with --device, --pid, "
        "--stream, --nvtx or a window, which then narrow the step's work)",
        metavar="N|A:B",
        click_type=StepSpec(),
    ),
]

FailIfOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--fail-if",
        help="CI gate, repeatable: FIGURE OP NUMBER, e.g. 'util<0.8' or "
        "'exposed_communication_ms>5'; exit 1, after printing, when any is true. Figures of "
        "steps: steps, step_median_ms, step_p90_ms, step_std_ms, outlier_steps, "
        "warmup_steps, level_shift, level_shift_ratio; of util: those and util, util_min, busy_ms, idle_ms, "
        "exposed_communication_ms, exposed_memory_ms, idle_<cause>_ms",
        metavar="EXPR",
    ),
]


# Set by `--no-cache` (accepted anywhere on the command line, see cli.main): read every
# trace directly, neither using nor building the columnar cache.
NO_CACHE = False


def open_trace(trace: Path | None, demo: str | None) -> Trace:
    """The Trace for a positional TRACE argument or ``--demo NAME`` (exactly one of them)."""
    from ..trace import open as open_

    if demo is not None:
        if trace is not None:
            raise UsageError("give either a TRACE file or --demo NAME, not both")
        from ..demo import demo_path

        trace = demo_path(demo)
    if trace is None:
        raise UsageError("missing TRACE: pass an nsys SQLite export, or --demo bs1|bs16")
    from ._progress import StderrProgress

    opened = open_(trace, cache=False if NO_CACHE else None, progress=StderrProgress())
    _INPUTS.append(opened.path)
    return opened


@contextmanager
def open_pair(a: Path | None, b: Path | None, demo: bool):
    """Traces A and B, or the demo pair (bs1, bs16) with ``--demo``."""
    if demo:
        check_pair_demo(a, b)
        a, b = _demo("bs1"), _demo("bs16")
    elif a is None or b is None:
        raise UsageError("diff needs two traces: A (baseline) and B, or --demo")
    with open_trace(a, None) as ta, open_trace(b, None) as tb:
        yield ta, tb


def check_pair_demo(a: Path | None, b: Path | None) -> None:
    """With a pair command's bare ``--demo`` (the pair bs1, bs16): no trace may be given; a
    demo name given after it (``--demo bs16``, as one-trace commands take it) is told so."""
    if a is None and b is None:
        return
    from ..demo import DEMO_NAMES

    named = [str(p) for p in (a, b) if p is not None and not p.exists()]
    if named and all(n in DEMO_NAMES for n in named):
        raise UsageError(
            f"--demo takes no name here: it means the demo pair, bs1 (A) and bs16 (B); "
            f"drop {' '.join(named)!s}"
        )
    raise UsageError("give either two traces A B or --demo, not both")


def _demo(name: str) -> Path:
    from ..demo import demo_path

    return demo_path(name)


def check_choice(option: str, value: str, values: tuple[str, ...]) -> str:
    """For options still declared as plain strings: :func:`choice` checks in the parser."""
    from ..errors import check_choice as check

    try:
        return check(option, value, values)
    except UsageError as exc:
        raise UsageError(exc.naming(option)) from None


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


def nvtx_filter(
    trace: Trace, pattern: str | None, where: EventFilter, step: tuple[int, int] | None = None
):
    """``where`` narrowed by ``--nvtx`` then ``--step``, and the note that says how many
    ranges matched and which steps were kept (None without either)."""
    from ._notes import join_notes

    note = None
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
    return where, note


def check_gates(figures: Any, expressions: list[str] | None):
    """The ``--fail-if`` gates over ``figures`` (a mapping, or a TraceDiff), evaluated now
    so that a bad expression fails before any output; see :func:`fail_if_tripped`."""
    from ..compare.gates import check_gates as evaluate

    return evaluate(figures, expressions or [])


def fail_if_tripped(gates) -> None:
    """After the output: one stderr line per tripped gate, and exit 1 when there is one."""
    tripped = [g for g in gates if g.tripped]
    for g in tripped:
        print(
            f"tracelens: gate tripped: {g.expression} ({g.figure} = {g.value:.4g})", file=sys.stderr
        )
    if tripped:
        raise typer.Exit(1)


# -- option groups ------------------------------------------------------------------------
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


FILTERS = filter_options()
WINDOW_FILTERS = filter_options(nvtx=False, step=False)  # device, pid, stream, start, end
OUTPUT = output_options()


def grouped(command: Callable[..., Any]) -> Callable[..., Any]:
    """``command`` with each parameter whose default is an option group replaced, on the
    command line, by the group's options in its place; the command gets the group's
    object (:class:`Filters`, :class:`Output`) under that parameter's name."""
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


@contextmanager
def open_filtered(trace: Path | None, demo: str | None, filters: Filters, *, step: bool = True):
    """The trace (see :func:`open_trace`), the event filter of ``filters`` narrowed by
    ``--nvtx`` and (unless ``step`` is False) ``--step``, and the note saying so. The
    window is checked before the trace is opened."""
    where = filters.event_filter()
    with open_trace(trace, demo) as tr:
        where, note = nvtx_filter(tr, filters.nvtx, where, filters.step if step else None)
        yield tr, where, note
