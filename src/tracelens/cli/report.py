"""tracelens report: one self-contained HTML page (or a Markdown summary)."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Annotated, Any

import typer

from . import _common as c
from ._app import app
from .ranks import JobsOpt, RankRegexOpt, StrictOpt

ReportA = c.trace_argument("nsys SQLite export (the baseline A when B is given)")
ReportB = c.trace_argument("Second export: compare it with A (the diff view)")
DemoOpt = Annotated[
    bool, typer.Option("--demo", help="Report on the bundled demo pair: A = bs1, B = bs16")
]
TopOpt = Annotated[int, c.top_option("rows per table (kernels, categories, danger zone)")]
NameOpt = Annotated[
    str,
    c.choice(
        "--name", values=("demangled", "short"), help="Group kernels by {values} name",
        metavar="KIND",
    ),
]  # fmt: skip
FormatOpt = Annotated[
    str, c.choice("--format", "-f", values=("html", "markdown"), metavar="FORMAT")
]
RanksOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--ranks",
        help="Per-rank exports of one run instead of A/B (files, globs, directories; "
        "repeatable): the rank x step heat map and the stragglers, as `tracelens ranks`",
        metavar="TRACES",
    ),
]


@app.command()
@c.grouped
def report(
    a: ReportA = None,
    b: ReportB = None,
    demo: DemoOpt = False,
    top: TopOpt = 20,
    name: NameOpt = "demangled",
    fmt: FormatOpt = "html",
    ranks: RanksOpt = None,
    rank_regex: RankRegexOpt = None,
    jobs: JobsOpt = None,
    strict: StrictOpt = False,
    filters: c.Filters = c.FILTERS,
    sides: c.Sides = c.SIDES,
    output: c.OutputOpt = None,
) -> None:
    """One self-contained HTML page (works offline): evidence board, census, lineup, stakeout,
    timeline, danger zone. Two traces: the diff view on top, with the numerical-path
    comparison; a fingerprint .json on either side: the path comparison alone. --ranks:
    many ranks of one run (with --rank-regex, --jobs, --strict as `tracelens ranks`).
    --format markdown: a compact summary for CI job summaries and PR comments.

    --nvtx, --step, --device, --pid, --stream, --start/--end: every section shows only the
    selected GPU work (the header says what was selected); with two traces, the same
    --nvtx, --step or window in each, or per side as `tracelens diff` takes them (--a-nvtx,
    --b-nvtx, --a-start/--a-end, --b-start/--b-end); --device, --pid, --stream: one trace
    only."""
    from ..errors import UsageError
    from ..fingerprint.sources import is_fingerprint_file
    from ..report import build_markdown, build_report, require_gpu_work

    per_side = sides.given()
    filtered = filters != c.Filters() or per_side
    if filtered and (ranks or is_fingerprint_file(a) or is_fingerprint_file(b)):
        raise UsageError(
            "the filters (--nvtx, --step, --device, --pid, --stream, --start, --end) narrow a "
            "trace's page: not --ranks or a fingerprint"
        )
    if ranks:
        if a is not None or b is not None or demo:
            raise UsageError("--ranks takes the rank files itself: no TRACE arguments")
        return _ranks_page(ranks, fmt, output, rank_regex=rank_regex, jobs=jobs, strict=strict)
    if rank_regex is not None or jobs is not None or strict:
        raise UsageError("--rank-regex, --jobs and --strict go with --ranks")
    if a is None and not demo:
        raise UsageError("missing TRACE: pass one or two nsys SQLite exports, or --demo")
    if is_fingerprint_file(a) or is_fingerprint_file(b):
        return _path_page(a, b, fmt, output)
    render = partial(build_report if fmt == "html" else build_markdown, top=top, name=name)
    if demo or b is not None:
        text = _pair_page(a, b, demo, filters, sides, render)
    else:
        if per_side:
            raise UsageError(
                "--a-nvtx, --b-nvtx, --a-start, --a-end, --b-start and --b-end go with two "
                "traces: use --nvtx, --start, --end for one"
            )
        with c.open_trace(a, None) as ta:
            require_gpu_work(ta)  # exit 3, as census, without kernels, copies or memsets
            where, note = _selection(ta, filters)
            text = render(ta, where_a=where, selected=(note, None))
    c.emit(text, output)


def _pair_page(a, b, demo: bool, filters: c.Filters, sides: c.Sides, render) -> str:
    """The page of two traces (or the demo pair), each narrowed by ``filters`` and its own
    ``sides`` options (--a-nvtx, ...), by ``render`` (build_report or build_markdown)."""
    from ..errors import UsageError
    from ..report import require_gpu_work

    with c.open_pair(a, b, demo) as (ta, tb):
        if any(v is not None for v in (filters.device, filters.pid, filters.stream)):
            raise UsageError(
                "--device, --pid and --stream narrow the page of one trace; two traces "
                "are compared whole or by --nvtx, --step or --start/--end"
            )
        # exit 3, as census, for a side without kernels, copies or memsets; a side with
        # copies or memsets alone gets the page that says there is no diff
        require_gpu_work(ta), require_gpu_work(tb)
        (where_a, note_a), (where_b, note_b) = (
            _selection(t, filters, k, sides.of(k)) for t, k in ((ta, "a"), (tb, "b"))
        )
        return render(ta, tb, where_a=where_a, where_b=where_b, selected=(note_a, note_b))


def _selection(trace, filters: c.Filters, side: str | None = None, own=(None, None, None)):
    """The filter of ``filters`` on ``trace`` (--nvtx and --step select its own ranges and
    steps) and the note that says what --nvtx and --step selected (None without them);
    ``own``: the (nvtx, start, end) of ``side`` ('a' or 'b') alone (--a-nvtx, --a-start,
    --a-end), which win over the options of both sides (:func:`.c.side_window`)."""
    nvtx, start, end = own
    where = c.side_window(filters, side, start, end)
    # `is None`: an empty --a-nvtx is a label no range has, not no --a-nvtx
    return c.nvtx_filter(trace, filters.nvtx if nvtx is None else nvtx, where, filters.step)


def _ranks_page(ranks: list[str], fmt: str, output: Path | None, **options: Any) -> None:
    """``options``: analyse_ranks's rank_regex, jobs and strict."""
    from ..ranks import analyse_ranks
    from ..ranks.render import render_ranks
    from ..report import build_ranks_report

    c._INPUTS.extend(Path(r) for r in ranks)
    result = analyse_ranks(ranks, **options)
    text = build_ranks_report(result) if fmt == "html" else render_ranks(result, fmt="markdown")
    c.emit(text, output)


def _path_page(a: Path | None, b: Path | None, fmt: str, output: Path | None) -> None:
    """A fingerprint on either side: the numerical-path comparison alone (the other side
    may be a trace, fingerprinted on the fly)."""
    from ..errors import UsageError
    from ..fingerprint import board, compare
    from ..fingerprint.sources import of
    from ..report import build_path_report

    if a is None or b is None:
        raise UsageError("a fingerprint is compared with another: pass A and B")
    c._INPUTS.extend((a, b))
    doc_a, doc_b = of(a), of(b)
    if fmt == "html":
        text = build_path_report(doc_a, doc_b, label_a=a.name, label_b=b.name)
    else:
        text = board.markdown(compare(doc_a, doc_b), a.name, b.name)
    c.emit(text, output)
