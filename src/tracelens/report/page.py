"""The HTML page: the Jinja2 templates (``reports/templates/``, autoescaped) rendered with what
collect.py and diffview.py gathered. CSS, JavaScript and the SVG charts are inline and a
Content-Security-Policy forbids every network request."""

from __future__ import annotations

import sys
from copy import copy
from functools import cache
from typing import TYPE_CHECKING, Any

from markupsafe import Markup

from ..errors import check_at_least
from ..units import fmt_bytes, fmt_ns, fmt_ratio
from . import svg
from .collect import Side, collect_side
from .omitted import Omitted
from .stakeoutview import PER_OCTAVE
from .text import count, pct, ratio_class, short, signed_ns

if TYPE_CHECKING:
    from ..filters import EventFilter
    from ..ranks import RanksResult
    from ..trace import Trace

# Per side (A, B): the filter its sections are read with (None: the whole trace) and the
# sentence that says what it selects (None: said generically, report/selection.py).
Wheres = tuple["EventFilter | None", "EventFilter | None"]
Selected = tuple[str | None, str | None]

DEFAULT_TOP = 20  # rows of the kernel tables

CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; "
    "img-src data:; base-uri 'none'; form-action 'none'"
)


@cache
def _environment():
    from jinja2 import Environment, FileSystemLoader, StrictUndefined

    from .._resources import templates_dir

    env = Environment(
        loader=FileSystemLoader(str(templates_dir())),
        autoescape=True,  # every {{ }} is escaped: names come from the profiled program
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(
        ns=fmt_ns,
        bytes=fmt_bytes,
        ratio=fmt_ratio,
        pct=pct,
        count=count,
        signed_ns=signed_ns,
        ratio_class=ratio_class,
        short=short,
    )
    env.globals["asset"] = _asset
    return env


def _asset(name: str) -> Markup:
    """A static file of the templates folder (CSS, JS), inlined verbatim: it is ours."""
    from .._resources import templates_dir

    return Markup((templates_dir() / name).read_text(encoding="utf-8"))


def check_top(top: int | None) -> int:
    """``top`` checked, as the row count the page's tables take: None or 0 (every row, as
    census) is :data:`sys.maxsize`, which no table reaches."""
    return check_at_least("top", top, 0, meaning="every row") or sys.maxsize


def build_report(
    trace_a: Trace,
    trace_b: Trace | None = None,
    *,
    top: int = DEFAULT_TOP,
    name: str = "demangled",
    title: str | None = None,
    where_a: EventFilter | None = None,
    where_b: EventFilter | None = None,
    selected: Selected = (None, None),
) -> str:
    """The HTML page: one trace (census, lineup, stakeout, timeline, danger, memory) or two
    (the diff's evidence board and tables on top, each trace's detail below). Through the
    cache, a page an earlier run built with the same traces and options is read back
    (:mod:`.kept`). ``where_a``, ``where_b``: the GPU work each trace's sections and the
    diff show (:meth:`Trace.filter`; None: all of it), ``selected``: what each selects, in
    words, said in its header and on the board."""
    from . import kept

    top = check_top(top)
    traces = [trace_a] if trace_b is None else [trace_a, trace_b]
    wheres = (where_a, where_b)
    whole = all(w is None or w.is_whole() for w in wheres)
    options = {"top": top, "name": name, "title": title}
    page = kept.read(traces, options) if whole else None
    if page is None:
        page = _build(trace_a, trace_b, top, name, title, wheres, selected)
        if whole:  # a selection is the trace's own (its NVTX ranges, its steps): not kept
            kept.write(traces, options, page)
    return page


def _build(
    trace_a: Trace,
    trace_b: Trace | None,
    top: int,
    name: str,
    title: str | None,
    wheres: Wheres = (None, None),
    selected: Selected = (None, None),
) -> str:
    """:func:`build_report`'s page, built."""
    palette = svg.Palette()
    omitted: list[Omitted] = []
    context = _base_context(top=top)
    side_args = {"top": top, "name_kind": name, "palette": palette, "omitted": omitted}
    if trace_b is None:
        side = collect_side(trace_a, key="t", label=trace_a.path.name, **side_args,
                            where=wheres[0], selected=selected[0])  # fmt: skip
        context.update(
            mode="single",
            title=title or f"tracelens report: {side.label}",
            sides=[side],
            diff=None,
        )
    else:
        context.update(_pair(trace_a, trace_b, name, title, side_args, wheres, selected))
    for side in context["sides"]:
        if side.timeline:
            for n in side.timeline.notes:
                omitted.append(Omitted(f"{side.label}: timeline", n))
    context["omitted"] = omitted
    context["legend"] = _page_legend(context["sides"])
    context["files"] = file_rows(context["sides"])
    return _render(context)


def _pair(
    trace_a: Trace,
    trace_b: Trace,
    name: str,
    title: str | None,
    side_args: dict[str, Any],
    wheres: Wheres = (None, None),
    selected: Selected = (None, None),
) -> dict[str, Any]:
    """What the page of two traces shows: the diff (:func:`tracelens.diff`, whose read of
    each trace's GPU work its side's sections share) and each trace's sections; when either
    has no kernels, only copies or memsets, no diff (it compares kernels): :mod:`.nodiff`."""
    from ..compare import diff as compute
    from .diffview import diff_view, stakeout_picks
    from .nodiff import pair_context, without_kernels
    from .selection import Selection, said

    chosen = [Selection.of(w, n) for w, n in zip(wheres, selected, strict=True)]
    if notes := without_kernels(trace_a, trace_b):
        per_side = [{"where": c.where, "selected": c.note} for c in chosen]
        return pair_context(trace_a, trace_b, notes, title, side_args, per_side)
    d = compute(
        trace_a, trace_b, name=name, keep_work=True, where_a=chosen[0].where,
        where_b=chosen[1].where, selected=said(chosen),
    )  # fmt: skip
    read_a, read_b = d.sides
    same = read_b is read_a  # a trace with itself, read once: each side takes that read
    read_b = copy(read_a) if same else read_b
    # the diff's stakeout profiles are read while each side holds its GPU work
    names, launches = stakeout_picks(d)
    args = {**side_args, "stakeout": False}
    sa = collect_side(trace_a, key="a", label=d.label_a, read=read_a,
                      profile=(names, launches[0]), where=chosen[0].where,
                      selected=chosen[0].note, **args)  # fmt: skip
    profile_b = None if same else (names, launches[1])
    sb = collect_side(trace_b, key="b", label=d.label_b, read=read_b, profile=profile_b,
                      where=chosen[1].where, selected=chosen[1].note, **args)  # fmt: skip
    view = diff_view(
        d, trace_a, trace_b, top=side_args["top"], name_kind=name,
        palette=side_args["palette"], omitted=side_args["omitted"],
        profiles=[sa.profiles, sa.profiles if same else sb.profiles],
    )  # fmt: skip
    return {
        "mode": "diff",
        "title": title or f"tracelens report: {d.label_a} → {d.label_b}",
        "sides": [sa, sb],
        "diff": view,
        "path": _path(trace_a, trace_b, d.label_a, d.label_b, side_args["omitted"], sa, sb, same)
        if all(c.whole for c in chosen)
        else _path_left_out(side_args["omitted"]),
    }


def _path_left_out(omitted: list[Omitted]) -> None:
    """The numerical path of a page narrowed by filters: not drawn (it fingerprints whole
    captures), and ``omitted`` says so."""
    omitted.append(
        Omitted(
            "numerical path",
            "left out with filters: it compares whole captures (`tracelens diff A B "
            "--fail-if path_changed`)",
        )
    )


def _base_context(**extra: Any) -> dict[str, Any]:
    """What every page's template reads, whatever it shows."""
    from .. import __version__

    return {"version": __version__, "csp": CSP, "per_octave": PER_OCTAVE, "path": None} | extra


def _render(context: dict[str, Any]) -> str:
    from ..escape import escape_controls

    # Names from the profiled program may hold control characters: raw, each is an HTML
    # parse error and shows as nothing; as \xNN they read as the text outputs show them.
    # The page's own markup, CSS and script hold none (JSON data escapes its own).
    return escape_controls(_environment().get_template("report.html.j2").render(**context))


def _path(
    trace_a: Trace,
    trace_b: Trace,
    label_a: str,
    label_b: str,
    omitted: list[Omitted],
    side_a: Side,
    side_b: Side,
    same: bool,
):
    """The numerical-path comparison of two traces (each fingerprinted, with the steps the
    diff found; a trace with itself once), unless either has more than
    threshold.path_max_launches kernel launches (data/clues.toml: its cost)."""
    from ..compare.clues import threshold
    from ..fingerprint import build, compare
    from .pathview import path_view

    limit = int(threshold("path_max_launches"))
    if max(trace_a.info.count("kernel"), trace_b.info.count("kernel")) > limit:
        omitted.append(
            Omitted(
                "numerical path",
                f"left out above {limit:,} kernel launches per trace: run "
                "`tracelens diff A B --fail-if path_changed` (or fingerprint each trace)",
            )
        )
        return None
    doc_a = build(trace_a, steps=side_a.steps)
    doc_b = doc_a if same else build(trace_b, steps=side_b.steps)
    return path_view(compare(doc_a, doc_b), label_a, label_b)


def build_path_report(
    doc_a: dict[str, Any],
    doc_b: dict[str, Any],
    *,
    label_a: str = "A",
    label_b: str = "B",
    title: str | None = None,
) -> str:
    """The HTML page of a numerical-path comparison alone: two fingerprint documents
    (:func:`tracelens.fingerprint.build`, or read from a ``.json`` baseline)."""
    from ..fingerprint import compare
    from .pathview import path_view

    files = [
        ("file", [label_a, label_b]),
        ("regions", [str(doc_a.get("regions", "—")), str(doc_b.get("regions", "—"))]),
        ("launches", [f"{doc_a.get('launches', 0):,}", f"{doc_b.get('launches', 0):,}"]),
        ("generator", [str(doc_a.get("generator", "—")), str(doc_b.get("generator", "—"))]),
    ]
    context = _base_context(
        mode="path",
        title=title or f"tracelens numerical path: {label_a} → {label_b}",
        sides=[],
        diff=None,
        path=path_view(compare(doc_a, doc_b), label_a, label_b),
        files=files,
        omitted=[],
        legend=[],
    )
    return _render(context)


def build_ranks_report(result: RanksResult, *, title: str | None = None) -> str:
    """The HTML page of many ranks of one run (:func:`tracelens.ranks.analyse_ranks`): the
    findings, the rank x step heat map, the stragglers per step, the per-rank overview,
    the clock corrections, and the ranks that differ or could not be read."""
    from .ranksview import ranks_view

    view = ranks_view(result)
    n = len(view.ranks)
    files = [
        (
            "ranks",
            f"{n:,} analysed" + (f", {len(view.failures):,} could not be" if view.failures else ""),
        ),
        ("steps", f"{view.steps_total:,} (rank x step matrix)"),
    ]
    if view.missing:
        from ..ranks.findings import rank_list

        # past 20, as ranges and a count, as the command says them (not every number)
        files.append(("missing ranks", rank_list(view.missing)))
    context = _base_context(
        mode="ranks",
        title=title or f"tracelens ranks: {n} rank{'s' if n != 1 else ''}",
        sides=[],
        diff=None,
        ranks=view,
        files=[(label, [value]) for label, value in files],
        omitted=[],
        legend=[],
    )
    return _render(context)


def file_rows(sides: list[Side]) -> list[tuple[str, list[str]]]:
    """The header table: each label any side has (a side may have a row the other lacks,
    e.g. CUDA graphs traced at graph level), with each side's value or a dash."""
    labels = list(dict.fromkeys(label for s in sides for label, _value in s.header))
    values = [dict(s.header) for s in sides]
    return [(label, [v.get(label, "—") for v in values]) for label in labels]


def _page_legend(sides: list[Side]) -> list[tuple[str, str]]:
    seen: dict[str, str] = {}
    for s in sides:
        for c in s.categories:
            seen.setdefault(c.category, c.color)
        if s.timeline:
            for c, color in s.timeline.legend:
                seen.setdefault(c, color)
    return list(seen.items())
