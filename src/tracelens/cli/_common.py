"""What the commands share, in one place: ``from . import _common as c``, then ``c.TopOpt``,
``c.FILTERS``, ``c.open_filtered``, ``c.show``, ...

It opens the traces a command reads (:func:`open_trace`, :func:`open_pair`,
:func:`open_filtered`) and gathers the rest from where each concept lives:
:mod:`._params` (parameter types and option factories), :mod:`._options` (the shared
options), :mod:`._groups` (the filter and output groups), :mod:`._selection` (filters as
the library takes them), :mod:`._gates` (``--fail-if``) and :mod:`._output` (rendering and
writing a result).
"""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import UsageError

# The commands' one module of shared things: names below are re-exported for c.NAME.
from ._gates import check_gates, fail_if_tripped  # noqa: F401
from ._groups import (  # noqa: F401
    FILTERS,
    OUTPUT,
    SIDES,
    WINDOW_FILTERS,
    Filters,
    Output,
    Sides,
    filter_options,
    grouped,
    output_options,
)
from ._options import (  # noqa: F401
    AEndOpt,
    ANvtxOpt,
    AStartOpt,
    BEndOpt,
    BNvtxOpt,
    BStartOpt,
    DemoOpt,
    DeviceOpt,
    EndOpt,
    FailIfOpt,
    FormatOpt,
    NameOpt,
    NvtxOpt,
    OutputOpt,
    PidOpt,
    StartOpt,
    StepOpt,
    StreamOpt,
    TimeUnitOpt,
    TopOpt,
    TraceArg,
    trace_argument,
)
from ._output import (  # noqa: F401
    _INPUTS,
    check_output,
    emit,
    empty_hint,
    hint_text,
    show,
    terminal,
)
from ._params import (  # noqa: F401
    BOARD_FORMATS,
    FORMATS,
    TIME_UNITS,
    AtLeast,
    Choice,
    StepSpec,
    Time,
    TracePath,
    at_least,
    check_choice,
    choice,
    every,
    format_option,
    time_option,
    top_option,
)
from ._selection import event_filter, nvtx_filter, nvtx_selection, side_window  # noqa: F401

if TYPE_CHECKING:
    from ..trace import Trace

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


@contextmanager
def open_filtered(trace: Path | None, demo: str | None, filters: Filters, *, step: bool = True):
    """The trace (see :func:`open_trace`), the event filter of ``filters`` narrowed by
    ``--nvtx`` and (unless ``step`` is False) ``--step``, and the note saying so. The
    window is checked before the trace is opened."""
    where = filters.event_filter()
    with open_trace(trace, demo) as tr:
        where, note = nvtx_filter(tr, filters.nvtx, where, filters.step if step else None)
        yield tr, where, note
