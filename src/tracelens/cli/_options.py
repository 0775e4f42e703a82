"""The options the commands share, declared once (their types and factories:
:mod:`._params`): the trace argument and ``--demo``, output (format, file, time unit, name
kind), the filters (device, pid, stream, window, ``--nvtx``, ``--step``), ``--top`` and
``--fail-if``. Commands reach them as ``c.TraceArg``, ``c.TopOpt``, ... (:mod:`._common`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from .. import choices
from ._params import TIME_UNITS, StepSpec, TracePath, choice, format_option, time_option, top_option


def trace_argument(help: str):  # noqa: A002 - typer's name
    """A trace path argument (None when omitted). Path arguments are not checked by click
    (readable=False): check_file says what is wrong with a trace, in tracelens's words."""
    return Annotated[
        Path | None, typer.Argument(help=help, show_default=False, click_type=TracePath())
    ]


TraceArg = trace_argument("nsys SQLite export (nsys export --type sqlite); omit with --demo")
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
TopOpt = Annotated[int | None, top_option()]  # every command ranking rows, 0: every row
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


# Per side of a pair (diff, report A B): a window and an NVTX selection of A or B alone.
def _side_time(flag: str, help: str):  # noqa: A002
    return Annotated[str | None, typer.Option(flag, help=help, metavar="TIME")]


def _side_nvtx(flag: str, help: str):  # noqa: A002
    return Annotated[str | None, typer.Option(flag, help=help, metavar="LABEL")]


AStartOpt = _side_time("--a-start", "Window start in A (see census --start)")
AEndOpt = _side_time("--a-end", "Window end in A")
BStartOpt = _side_time("--b-start", "Window start in B")
BEndOpt = _side_time("--b-end", "Window end in B")
ANvtxOpt = _side_nvtx("--a-nvtx", "As --nvtx, in A only")
BNvtxOpt = _side_nvtx("--b-nvtx", "As --nvtx, in B only")
