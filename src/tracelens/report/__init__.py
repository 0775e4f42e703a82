"""``tracelens report``: one self-contained HTML page (an evidence board, tables, charts and a
timeline) or a compact Markdown summary, for one trace or for two.

    with tracelens.open("bs1.sqlite") as a, tracelens.open("bs16.sqlite") as b:
        html = tracelens.report.build_report(a, b)        # str, one offline HTML file
        md = tracelens.report.build_markdown(a, b)        # str, for CI summaries / PRs

The report composes the library's public analyses; it computes nothing of its own:

- ``collect.py``: one trace's sections put together, each built in its own module:
  ``header.py`` (the export, its GPUs and processes), ``kernelview.py`` (census and lineup
  rows and charts), ``stakeoutview.py`` (duration histograms, launch configurations: the
  top kernels' in one query), ``dangerview.py`` (danger-zone kernels), ``timekeeping.py``
  (the GPU busy time, steps and utilization, from one read of the GPU work:
  :func:`tracelens.util.work_in_order`, :func:`tracelens.steps.find_steps`,
  :func:`tracelens.util.accounting_and_calls`; for two traces, what the diff read);
  ``sharedread.py``: that read, which the census table, the line-up's kernels and the
  timeline's categories and bins share; ``infoshare.py``: the header's GPU event counts,
  spans and processes from that read, its CUDA API calls' from util's read of them;
  ``omitted.py``: what the page leaves out;
- ``diffview.py``: the diff view of two traces (:func:`tracelens.diff`);
- ``layout.py``: the timeline's lanes, time bins and NVTX lanes (:mod:`tracelens.activity`)
  and its default window (the first steady step); ``bins.py``: the time bins of the shared
  read, in polars;
- ``page.py``: the Jinja2 page (autoescaped: kernel names and NVTX text come from the
  profiled program and always render as text); ``svg/``: its charts;
- ``nvtxtree.py``: each trace's NVTX ranges nested by path with their GPU time;
- ``pathview.py``: the numerical-path comparison (:mod:`tracelens.fingerprint`), for two
  traces or fingerprints (:func:`build_path_report`);
- ``ranksview.py``: many ranks of one run (:func:`build_ranks_report`): the rank x step
  heat map and the stragglers;
- ``markdown.py``: the Markdown summary; ``text.py``: how numbers and names are written.

Big traces stay small: the timeline is aggregated into bins per lane, individual
events are drawn only for a bounded window, tables are capped, and the page lists what it
left out. Nothing here prints.
"""

from __future__ import annotations

from .collect import require_gpu_work
from .markdown import build_markdown
from .page import CSP, DEFAULT_TOP, build_path_report, build_ranks_report, build_report

__all__ = [
    "CSP",
    "DEFAULT_TOP",
    "build_markdown",
    "build_path_report",
    "build_ranks_report",
    "build_report",
    "require_gpu_work",
]
