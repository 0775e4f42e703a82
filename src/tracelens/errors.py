"""Exceptions raised by the library.

Every message is one line that names the file (where there is one) and says what to do.
The CLI prints ``str(exc)`` on stderr and exits with ``exc.exit_code``; the library itself
never prints or exits.
"""

from __future__ import annotations

from numbers import Integral


class TracelensError(Exception):
    """Base class: a problem the user can fix, described in one line."""

    exit_code = 1


class TraceError(TracelensError):
    """The input file cannot be read as an nsys SQLite export."""

    exit_code = 2

    def __init__(self, path: object, problem: str) -> None:
        self.path = str(path)
        self.problem = problem
        super().__init__(f"{self.path}: {problem}")


class MissingDataError(TraceError):
    """The export is valid but lacks the tables an analysis needs (e.g. no kernels)."""

    exit_code = 3


class UsageError(TracelensError):
    """A bad argument value (an unknown name kind, a malformed time, ...).

    The message names the library's parameter (``top must be at least 1 (got 0)``);
    ``param`` is that parameter's name and ``template`` the message with ``{param}`` where
    the name goes, so that the command line can say its own flag instead
    (``--top must be at least 1 (got 0)``), see :meth:`naming`."""

    exit_code = 2

    def __init__(self, message: str, *, param: str | None = None) -> None:
        self.param = param
        self.template = message
        super().__init__(message.replace("{param}", param) if param else message)

    def naming(self, name: str) -> str:
        """The message with ``name`` (e.g. a command-line flag) for the parameter."""
        return self.template.replace("{param}", name) if self.param else str(self)


class ExtensionError(TracelensError):
    """DuckDB's sqlite extension could not be loaded."""

    exit_code = 4


class QueryError(TracelensError):
    """SQL given to ``Trace.sql`` failed (unknown table or column, syntax, a missing
    parameter...): the first line of DuckDB's message, after the file's name."""

    exit_code = 2

    def __init__(self, path: object, detail: str) -> None:
        self.path = str(path)
        self.detail = detail
        super().__init__(f"{self.path}: query failed: {detail}")


class OutputError(TracelensError):
    """The command line could not write its results (stdout full, closed...)."""

    exit_code = 1


def check_choice(param: str, value: str, choices: tuple[str, ...]) -> str:
    """``value`` if it is one of ``choices``, else a UsageError naming ``param``."""
    if value not in choices:
        raise UsageError(
            f"unknown {{param}} {value!r}; use one of: {', '.join(choices)}", param=param
        )
    return value


def check_at_least(
    param: str, value: int | None, minimum: int, *, meaning: str = "", unit: str = ""
) -> int | None:
    """``value`` if it is None or at least ``minimum``, else a UsageError naming ``param``
    (``meaning`` says what ``minimum`` stands for, e.g. ``every row`` for 0; ``unit``
    follows the value in the message). A value that is not an integer (``"3"``, ``2.5``)
    is a UsageError too, not a TypeError from the comparison; an amount with a ``unit`` may
    be a whole float (``gap_ns=1e5``)."""
    whole = unit and isinstance(value, float) and value.is_integer()
    if (
        value is not None
        and not whole
        and (isinstance(value, bool) or not isinstance(value, Integral))
    ):
        raise UsageError(
            f"{{param}} takes an integer, not {type(value).__name__} ({value!r})", param=param
        )
    if value is not None and value < minimum:
        if meaning:
            what = f"{minimum} ({meaning}) or more"
        else:
            what = "0 or more" if minimum == 0 else f"at least {minimum}"
        got = f"{value} {unit}" if unit else str(value)
        raise UsageError(f"{{param}} must be {what} (got {got})", param=param)
    return value
