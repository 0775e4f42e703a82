"""The ``tracelens`` typer app and its root options. Each public module of this package
defines its commands on ``app`` when imported; :func:`tracelens.cli.load_commands` imports
the one a run needs (or all of them, for ``--help`` and the tests)."""

from __future__ import annotations

from typing import Annotated

import typer

app = typer.Typer(
    name="tracelens",
    help="Where GPU time goes in an Nsight Systems SQLite export, and why two runs differ.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _print_version(value: bool) -> None:
    if value:
        from .. import __version__

        print(f"tracelens {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            help="Print the version and exit",
            is_eager=True,
            callback=_print_version,
        ),
    ] = False,
    no_cache: Annotated[
        bool,
        typer.Option(
            "--no-cache",
            help="Read traces directly: neither use nor build the columnar cache "
            "(also accepted after the command; TRACELENS_NO_CACHE=1 for a session)",
        ),
    ] = False,
) -> None:
    """Where GPU time goes in an Nsight Systems SQLite export, and why two runs differ."""
