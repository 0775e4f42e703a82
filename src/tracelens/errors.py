"""Exceptions raised by the library.

Every message is one line that names the file (where there is one) and says what to do.
The CLI prints ``str(exc)`` on stderr and exits with ``exc.exit_code``; the library itself
never prints or exits.
"""

from __future__ import annotations


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
    """A bad option value (unknown --name, --format, malformed time, ...)."""

    exit_code = 2


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
