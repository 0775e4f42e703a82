"""The ``tracelens`` command. Each command parses its options, calls one library function
and renders the result; library errors are translated to one line on stderr here, once.

Heavy modules (duckdb, polars, pyarrow, jinja2) are imported inside commands only, so that
``tracelens --help`` stays fast; and a run imports only the module of its own command
(:func:`load_commands`): every command module compiled and turned into click parameters cost
census ~0.1 s of its start-up.
"""

from __future__ import annotations

import os
import sys

from ..errors import TracelensError, UsageError
from . import _common


def _is(exc: BaseException, class_name: str) -> bool:
    # Typer has shipped click both as a dependency and vendored (typer._click); match the
    # exception classes by name so either works.
    return any(cls.__name__ == class_name for cls in type(exc).__mro__)


class Interrupted(BaseException):  # noqa: N818 - what happened, not an error
    """Ctrl-C. Raised by our SIGINT handler instead of KeyboardInterrupt, which click turns
    into a blank line on stderr plus Abort."""


_SIGINT_SEEN = False  # set by our handler: what fails after it failed because of it


def _on_sigint(signum, frame) -> None:
    global _SIGINT_SEEN
    _SIGINT_SEEN = True
    raise Interrupted


# Library parameters whose command-line spelling is not ``--`` + the name with dashes.
_FLAGS = {"gap_ns": "--gap", "kernel": "KERNEL", "gate": "--fail-if"}


def _flag(param: str) -> str:
    return _FLAGS.get(param, "--" + param.replace("_", "-"))


def main(argv: list[str] | None = None) -> None:
    """Entry point: run the app, turning every expected failure into one stderr line."""
    import signal

    _common._INPUTS.clear()  # the traces this run opens (see _common.check_output)
    _stand_in_for_closed_streams()
    global _SIGINT_SEEN
    _SIGINT_SEEN = False
    previous = signal.getsignal(signal.SIGINT)
    if previous is signal.default_int_handler:
        signal.signal(signal.SIGINT, _on_sigint)
    try:
        _run(argv)
    finally:
        if previous is signal.default_int_handler:
            signal.signal(signal.SIGINT, previous)


class _ClosedStdout:
    """Stands in for a closed stdout: results written to it fail as on any stdout that
    cannot be written (one line, exit 1), and it is no terminal."""

    def write(self, text: str) -> int:
        import errno

        raise OSError(errno.EBADF, "stdout is closed")

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False


def _stand_in_for_closed_streams() -> None:
    """Run with stdout or stderr closed (``>&-``, a daemon's descriptors), Python leaves
    ``sys.stdout``/``sys.stderr`` None: the first ``isatty()`` was an internal error (exit
    70) and the error line went to stdout. Now a closed stderr drops tracelens's lines (the
    exit code still says what happened) and a closed stdout is an output error."""
    if sys.stderr is None:
        sys.stderr = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 - the run's stderr
    if sys.stdout is None:
        sys.stdout = _ClosedStdout()


def _run(argv: list[str] | None) -> None:
    argv, _common.NO_CACHE = _take_no_cache(sys.argv[1:] if argv is None else list(argv))
    app = load_commands(_command_name(argv))
    try:
        # Without standalone mode, click returns the code of a typer.Exit instead of exiting.
        code = app(args=argv, prog_name="tracelens", standalone_mode=False)
    except UsageError as exc:
        # The library names its parameter (``top``); say the flag (``--top``).
        message = exc.naming(_flag(exc.param)) if exc.param else str(exc)
        _fail(_one_line(message), exc.exit_code)
    except TracelensError as exc:
        _fail(_one_line(str(exc)), exc.exit_code)
    except BrokenPipeError:
        # `tracelens census big.sqlite | head`: stop quietly.
        sys.stderr.close()
        sys.exit(0)
    except (Interrupted, KeyboardInterrupt):
        _fail("interrupted", 130)
    except Exception as exc:
        if _is(exc, "NoArgsIsHelpError"):
            # `tracelens CMD` with no arguments: that command's help, as click would show it.
            print(exc.ctx.get_help(), file=sys.stderr)
            sys.exit(2)
        if _is(exc, "UsageError"):
            ctx = getattr(exc, "ctx", None)
            where = f" (see `{ctx.command_path} --help`)" if ctx is not None else ""
            _fail(f"{exc.format_message()}{where}", getattr(exc, "exit_code", 2))
        if _is(exc, "Exit"):
            sys.exit(exc.exit_code)
        if _is(exc, "Abort") or _is(exc, "InterruptException") or _SIGINT_SEEN:
            # click's Abort (Ctrl-C where our handler was not installed) or DuckDB
            # interrupted by the signal mid-query: it raises InterruptException, or, when our
            # handler's exception lands inside its scan (a cache build's COPY), a plain
            # RuntimeError("Query interrupted").
            _fail("interrupted", 130)
        if isinstance(exc, OSError) and isinstance(sys.stdout, _ClosedStdout):
            _fail("cannot write output (stdout is closed)", 1)  # click's own help, say
        if os.environ.get("TRACELENS_DEBUG"):
            raise
        # A bug: say so in one line; the traceback on request.
        _fail(
            f"internal error: {type(exc).__name__}: {exc} "
            "(set TRACELENS_DEBUG=1 for the traceback, and please report it)",
            70,
        )
    if code == 130:  # typer turns a KeyboardInterrupt it catches into a silent Exit(130)
        _fail("interrupted", 130)
    sys.exit(code if isinstance(code, int) else 0)


def _take_no_cache(argv: list[str]) -> tuple[list[str], bool]:
    """``--no-cache`` is global: every command accepts it, anywhere before a ``--``.
    ``TRACELENS_NO_CACHE=1`` does the same for a whole session."""
    end = argv.index("--") if "--" in argv else len(argv)
    head = [a for a in argv[:end] if a != "--no-cache"]
    return head + argv[end:], len(head) < end


def _one_line(message: str) -> str:
    """A library error's message (one line by contract: errors.py) with the line breaks of
    what it quotes (a file name, a kernel name) shown as \\x0a: a raw one split the line."""
    from ..escape import printable

    return printable(message)


def _fail(message: str, code: int) -> None:
    from ..render import escape_controls

    print(f"tracelens: {escape_controls(message)}", file=sys.stderr)
    sys.exit(code)


def _command_name(argv: list[str]) -> str | None:
    """The command ``argv`` runs: its first word that is not a root option (the root options
    take no value), or None, also when the root's help comes first (``tracelens -h census``
    shows the root help, which lists every command)."""
    for arg in argv:
        if arg in ("-h", "--help"):
            return None
        if not arg.startswith("-"):
            return arg
    return None


def _command_modules() -> list[str]:
    # Discovered rather than listed so that adding a command is adding a file (each module
    # only imports light things at import time; click lists the commands sorted).
    import pkgutil

    return [m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_")]


def load_commands(command: str | None = None):
    """The app with ``command``'s module imported (each module is named after its command),
    or every command module when ``command`` is None or names no module (the root help, and
    click's "No such command" with its suggestions, list them all)."""
    import importlib

    from ._app import app

    modules = _command_modules()
    wanted = [command] if command in modules else modules
    for name in wanted:
        importlib.import_module(f"{__name__}.{name}")
    return app


def __getattr__(name: str):
    # ``from tracelens.cli import app``: the app with every command, as before the lazy load.
    if name == "app":
        return load_commands()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
