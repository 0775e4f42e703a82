"""Writing a command's result: rendered in the chosen format (:func:`show`), to stdout or
atomically to ``-o FILE`` (:func:`emit`), never onto an input trace; the terminal's width
and colour (:func:`terminal`); hints on stderr."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from ..errors import OutputError, UsageError
from ._notes import with_note

if TYPE_CHECKING:
    from ..filters import EventFilter
    from ..hints import Hint
    from ..trace import Trace

# Every trace this command opened, so that ``emit`` never writes -o onto one of them.
# main() clears it before each command.
_INPUTS: list[Path] = []


def check_output(output: Path | None) -> None:
    """Refuse ``-o FILE`` when FILE is one of the traces this command read (a table file of
    a parquetdir export too)."""
    from ..inputs import input_files

    if output is None or not output.exists():
        return
    for path in (f for p in _INPUTS for f in input_files(p)):
        try:
            same = os.path.samefile(output, path)
        except OSError:
            continue
        if same:
            raise UsageError(f"-o {output} is one of the input traces; choose another file")


def emit(text: str, output: Path | None) -> None:
    """Results go to stdout (or FILE; ``-o -`` is stdout, as in most tools); never to stderr."""
    from ..render import encodable

    if output is None or str(output) == "-":
        try:
            _write_in_slices(sys.stdout, text)
            sys.stdout.flush()
        except BrokenPipeError:
            raise  # `tracelens ... | head`: main() stops quietly
        except OSError as exc:
            raise OutputError(f"cannot write output ({exc.strerror or exc})") from None
    else:
        check_output(output)
        try:
            _write_atomically(output, encodable(text))
        except OSError as exc:
            raise UsageError(f"{output}: cannot write ({exc.strerror or exc})") from None


#: Characters written to stdout at a time: writing a CSV of 1.4 GB in one call made a second
#: copy of it (the UTF-8 bytes) and a third where it held a byte that was not UTF-8.
SLICE_CHARS = 1 << 24


def _write_in_slices(stream: TextIO, text: str) -> None:
    """``text``, made writable as UTF-8 (``render.encodable``), a slice at a time."""
    from ..render import encodable

    for start in range(0, len(text), SLICE_CHARS):
        stream.write(encodable(text[start : start + SLICE_CHARS]))


def _write_atomically(output: Path, text: str) -> None:
    """Write ``text`` to a temporary file beside ``output`` and rename it over ``output``,
    so that an interrupted run leaves the old file whole (and no truncated one). Something
    that is not a regular file (``/dev/stdout``, a FIFO) is written in place."""
    import stat

    try:
        regular = stat.S_ISREG(output.stat().st_mode)
    except FileNotFoundError:
        regular = True
    if not regular:
        output.write_text(text, encoding="utf-8")
        return
    tmp = output.with_name(f".{output.name}.{os.getpid()}.tracelens-tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, output)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def terminal(output: Path | None) -> dict[str, Any]:
    """``width`` and ``color`` for a table written to ``output`` (None: stdout): the
    terminal's width (``COLUMNS`` wins) and colour only when stdout is a terminal and
    ``NO_COLOR`` is unset; a file or a pipe gets the default width and no colour."""
    from ..render import DEFAULT_WIDTH

    tty = output is None and sys.stdout.isatty()
    if os.environ.get("COLUMNS", "").isdigit():
        width = int(os.environ["COLUMNS"])
    elif tty:
        import shutil

        width = shutil.get_terminal_size((120, 24)).columns
    else:
        width = DEFAULT_WIDTH
    return {"width": width, "color": tty and "NO_COLOR" not in os.environ}


def show(
    view: Callable[..., str],
    result: Any,
    *,
    fmt: str,
    output: Path | None,
    note: str | None = None,
    hint: str | None = None,
    **options: Any,
) -> None:
    """Render ``result`` with ``view`` (a function of :mod:`tracelens.views`, or a result
    module's ``render``) in ``fmt``, add ``note`` where ``fmt`` carries it, and write it
    to stdout or ``output``; ``hint`` (why the result is empty) goes to stderr. ``options``
    go to ``view`` (timeunit, source, top, ...)."""
    from ..render import escape_controls

    tty = terminal(output)
    text = view(result, fmt=fmt, **options, **tty)
    if fmt in ("table", "markdown"):
        # Names from the profiled program must not drive the terminal (see render.printable).
        text = escape_controls(text, keep_styles=tty["color"])
    emit(with_note(text, note, fmt), output)
    if hint:
        from ..render import escape_controls

        print(f"tracelens: {escape_controls(hint)}", file=sys.stderr)


def hint_text(hint: Hint | None) -> str | None:
    """A library :class:`~tracelens.hints.Hint` saying the command line's flag."""
    from . import _flag

    return hint.naming(_flag(hint.param)) if hint else None


def empty_hint(trace: Trace, where: EventFilter, rows: int) -> str | None:
    """Why the result is empty (see :func:`tracelens.hints.why_empty`); None if it is not."""
    from ..hints import why_empty

    return None if rows else why_empty(trace, where)
