"""tracelens ranks: many ranks of one run at once (stragglers, waits, clocks, consistency)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from ..choices import RANK_ENGINES, RANK_VIEWS
from . import _common as c
from ._app import app

# The options `report --ranks` shares with this command.
RankRegexOpt = Annotated[
    str | None,
    typer.Option(
        "--rank-regex",
        help="Regex whose first group is the rank in a file name (default: the last "
        "integer; the MPI rank an export records wins unless this is given)",
        metavar="REGEX",
    ),
]
JobsOpt = Annotated[
    int | None,
    c.at_least("--jobs", "-j", minimum=1, help="Local worker processes (default: CPU count)"),
]
StrictOpt = Annotated[
    bool, typer.Option("--strict", help="Fail when any rank file cannot be analysed")
]


@app.command()
def ranks(
    traces: Annotated[
        list[Path],
        typer.Argument(
            help="Per-rank exports: files, globs ('runs/rank_*.sqlite') or directories; "
            "one export holding every rank's process is one rank per process",
            show_default=False,
            click_type=c.TracePath(),
        ),
    ],
    rank_regex: RankRegexOpt = None,
    engine: Annotated[
        str,
        c.choice(
            "--engine",
            values=RANK_ENGINES,
            help="local: a process pool; ray: Ray tasks on the cluster RAY_ADDRESS names "
            "(else a local Ray instance)",
        ),
    ] = "local",
    jobs: JobsOpt = None,
    worker_threads: Annotated[
        int | None,
        c.at_least(
            "--worker-threads",
            minimum=1,
            help="DuckDB threads per worker (default: cores / --jobs locally, 1 on Ray, "
            "where each task asks for that many CPUs)",
        ),
    ] = None,
    worker_memory: Annotated[
        str | None,
        typer.Option(
            "--worker-memory",
            metavar="SIZE",
            help="DuckDB memory limit per worker, e.g. 4GB (default: 80% of RAM / --jobs "
            "locally, DuckDB's own on Ray)",
        ),
    ] = None,
    strict: StrictOpt = False,
    view: Annotated[
        str | None,
        c.choice("--view", values=RANK_VIEWS, help="Only one table: {values}", metavar="TABLE"),
    ] = None,
    timeunit: c.TimeUnitOpt = "ns",
    fmt: c.FormatOpt = "table",
    output: c.OutputOpt = None,
) -> None:
    """Which rank is the straggler, how long the others wait for it in each collective,
    how far the clocks were apart, and which ranks run different kernels.

    One export of a whole single-node job (nsys profile torchrun --nproc-per-node N) is
    one rank per process that ran collectives (a process that ran kernels but is not a
    rank, such as a data-loader worker, is set aside and named), numbered by GPU. A failing
    rank file is reported (path and reason) and the others are analysed; the result names
    the missing ranks. With --engine ray the workers must read the trace paths under the
    same names (a shared file system) and have tracelens installed.
    """
    from ..ranks import analyse_ranks
    from ..ranks.render import render_ranks

    c._INPUTS.extend(traces)
    result = analyse_ranks(
        [str(t) for t in traces], rank_regex=rank_regex, engine=engine, jobs=jobs,
        worker_threads=worker_threads, worker_memory=worker_memory, strict=strict, progress=_progress_bar() if sys.stderr.isatty() else None,
    )  # fmt: skip
    c.show(render_ranks, result, fmt=fmt, output=output, timeunit=timeunit, table=view)


def _progress_bar():
    """A one-line progress bar on stderr (only when stderr is a terminal)."""

    def draw(done: int, total: int, path: str) -> None:
        width = 30
        filled = width * done // total
        end = "\n" if done == total else ""
        bar = "█" * filled + "·" * (width - filled)
        sys.stderr.write(f"\r  ranks {bar} {done}/{total} {Path(path).name[:40]:40}{end}")
        sys.stderr.flush()

    return draw
