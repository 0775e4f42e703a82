"""Options and output shared by the commands."""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ..errors import OutputError, UsageError

if TYPE_CHECKING:
    import polars as pl

    from ..filters import EventFilter
    from ..trace import Trace

FORMATS = ("table", "csv", "json", "markdown")
TIME_UNITS = ("ns", "us", "ms", "s")

# Path arguments are not checked by click (readable=False): check_file says what is wrong
# with a trace, in tracelens's words.
TraceArg = Annotated[
    Path | None,
    typer.Argument(
        help="nsys SQLite export (nsys export --type sqlite); omit with --demo",
        show_default=False,
        readable=False,
    ),
]
DemoOpt = Annotated[
    str | None,
    typer.Option("--demo", help="Use a bundled demo trace instead: bs1 or bs16", metavar="NAME"),
]
FormatOpt = Annotated[
    str, typer.Option("--format", "-f", help="table, csv, json or markdown", metavar="FORMAT")
]
OutputOpt = Annotated[
    Path | None,
    typer.Option(
        "--output", "-o", help="Write to FILE instead of stdout", metavar="FILE", readable=False
    ),
]
TimeUnitOpt = Annotated[
    str,
    typer.Option("--timeunit", help="Unit of the time columns: ns, us, ms or s", metavar="UNIT"),
]
DeviceOpt = Annotated[int | None, typer.Option("--device", help="Only this CUDA device ordinal")]
PidOpt = Annotated[int | None, typer.Option("--pid", help="Only this process id")]
StreamOpt = Annotated[int | None, typer.Option("--stream", help="Only this CUDA stream id")]
StartOpt = Annotated[
    str | None,
    typer.Option(
        "--start",
        help="Window start, from session start (e.g. 1.5s, 200ms, 12345 = ns); "
        "events that start in, end in or span the window are kept",
        metavar="TIME",
    ),
]
EndOpt = Annotated[
    str | None, typer.Option("--end", help="Window end (see --start)", metavar="TIME")
]
TopOpt = Annotated[int | None, typer.Option("--top", "-n", help="Only the first N rows")]


def check_choice(option: str, value: str, choices: tuple[str, ...]) -> str:
    if value not in choices:
        raise UsageError(f"unknown {option} {value!r}; use one of: {', '.join(choices)}")
    return value


# Every trace this command opened, so that ``emit`` never writes -o onto one of them.
# main() clears it before each command.
_INPUTS: list[Path] = []


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
    opened = open_(trace)
    _INPUTS.append(opened.path)
    return opened


@contextmanager
def open_pair(a: Path | None, b: Path | None, demo: bool):
    """Traces A and B, or the demo pair (bs1, bs16) with ``--demo``."""
    if demo:
        if a is not None or b is not None:
            raise UsageError("give either two traces A B or --demo, not both")
        a, b = _demo("bs1"), _demo("bs16")
    elif a is None or b is None:
        raise UsageError("diff needs two traces: A (baseline) and B, or --demo")
    with open_trace(a, None) as ta, open_trace(b, None) as tb:
        yield ta, tb


def _demo(name: str) -> Path:
    from ..demo import demo_path

    return demo_path(name)


def event_filter(
    device: int | None, pid: int | None, stream: int | None, start: str | None, end: str | None
) -> EventFilter:
    from ..filters import EventFilter, parse_time_ns

    return EventFilter(
        device=device,
        pid=pid,
        stream=stream,
        start_ns=parse_time_ns(start, option="--start"),
        end_ns=parse_time_ns(end, option="--end"),
    )


def check_output(output: Path | None) -> None:
    """Refuse ``-o FILE`` when FILE is one of the traces this command read."""
    if output is None or not output.exists():
        return
    for path in _INPUTS:
        try:
            same = os.path.samefile(output, path)
        except OSError:
            continue
        if same:
            raise UsageError(f"-o {output} is one of the input traces; choose another file")


def emit(text: str, output: Path | None) -> None:
    """Results go to stdout (or FILE); never to stderr."""
    if output is None:
        try:
            sys.stdout.write(text)
            sys.stdout.flush()
        except BrokenPipeError:
            raise  # `tracelens ... | head`: main() stops quietly
        except OSError as exc:
            raise OutputError(f"cannot write output ({exc.strerror or exc})") from None
    else:
        check_output(output)
        try:
            output.write_text(text, encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"{output}: cannot write ({exc.strerror or exc})") from None


def render_frame(
    df: pl.DataFrame, fmt: str, timeunit: str, title: str | None = None, **kw: Any
) -> str:
    from .. import render

    return render.frame(df, fmt=fmt, timeunit=timeunit, title=title, **kw)
