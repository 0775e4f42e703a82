"""The parameter types of the command line, declared once: each choice option's values come
from :mod:`tracelens.choices` (the tuples the library checks against), and the parser rejects
other values with the list before a command runs; times, whole numbers with a minimum, step
specs and trace paths are parsed here too, each failing in one tracelens line. The option
factories (:func:`choice`, :func:`at_least`, :func:`top_option`, ...) build typer Options on
these types; :mod:`._options` declares the options the commands share.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import typer

from .. import choices
from ..errors import UsageError

try:  # recent typer vendors (a trimmed) click; older releases depend on it
    from typer._click.types import ParamType
except ImportError:  # pragma: no cover - depends on the installed typer
    from click.types import ParamType

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


def top_option(what: str = "rows") -> Any:
    """``--top N``/``-n N`` of every command that ranks rows (or a diff's and a report's
    lists): only the first N ``what``, 0 for every one (a negative N is refused:
    ``--top must be 0 (every row) or more (got -2)``)."""
    return at_least(
        "--top", "-n", minimum=0, meaning="every row", help=f"Only the first N {what}; 0: all"
    )


def every(top: int) -> int:
    """A ``--top`` as a row count for renderers that take a number: 0 (every row) is
    :data:`sys.maxsize`, which no table reaches."""
    return top or sys.maxsize


def check_choice(option: str, value: str, values: tuple[str, ...]) -> str:
    """For options still declared as plain strings: :func:`choice` checks in the parser."""
    from ..errors import check_choice as check

    try:
        return check(option, value, values)
    except UsageError as exc:
        raise UsageError(exc.naming(option)) from None
