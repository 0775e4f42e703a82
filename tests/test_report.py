"""tracelens report: the HTML evidence board and the Markdown summary.

The page is parsed with the standard library's html.parser and checked for its sections,
its numbers, its escaping of hostile names, and its size on a big trace; then loaded in a
real headless Chromium (no console errors, no network request, a screenshot for people).
"""

from __future__ import annotations

import os
import sqlite3
from html import escape
from html.parser import HTMLParser
from pathlib import Path

import pytest
from conftest import REPO, run_cli

import tracelens
from tracelens.compare import fmt_ns
from tracelens.demo import demo_path
from tracelens.report import CSP, build_markdown, build_report
from tracelens.synth import TraceBuilder

ARTIFACTS = REPO / "test-artifacts"
HOSTILE_KERNEL = "<script>alert(1)</script>"
HOSTILE_NVTX = '"><img src=x onerror=alert(1)>'


class Page(HTMLParser):
    """What a browser would build from the page: elements, ids, attributes, text."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.ids: set[str] = set()
        self.text_parts: list[str] = []
        self._stack: list[str] = []
        self._raw: list[str] = []
        self.scripts: list[str] = []
        self.feed(html)
        self.close()
        self.text = " ".join(self.text_parts)

    def handle_starttag(self, tag, attrs):
        d = dict(attrs)
        self.tags.append((tag, d))
        if d.get("id"):
            self.ids.add(d["id"])
        self._stack.append(tag)

    def handle_endtag(self, tag):
        if tag in ("script", "style") and self._stack and self._stack[-1] == tag:
            if tag == "script":
                self.scripts.append("".join(self._raw))
            self._raw = []
        while self._stack and self._stack.pop() != tag:
            pass

    def handle_data(self, data):
        if self._stack and self._stack[-1] in ("script", "style"):
            self._raw.append(data)
            return
        self.text_parts.append(data)

    def find(self, tag: str, **attrs: str) -> list[dict[str, str | None]]:
        out = []
        for t, d in self.tags:
            if t == tag and all(
                (d.get(k.rstrip("_")) or "").split().count(v) if k == "class_" else d.get(k) == v
                for k, v in attrs.items()
            ):
                out.append(d)
        return out

    def attr_values(self) -> list[str]:
        return [v for _t, d in self.tags for v in d.values() if v]


def check_self_contained(html: str, page: Page) -> None:
    metas = [d for t, d in page.tags if t == "meta" and d.get("http-equiv")]
    assert any(d["http-equiv"] == "Content-Security-Policy" and d["content"] == CSP for d in metas)
    assert "default-src 'none'" in CSP
    for tag, d in page.tags:
        assert tag not in ("link", "iframe", "object", "embed", "img", "base"), tag
        if tag == "script":
            assert "src" not in d, "external script"
        for k, v in d.items():
            assert not k.startswith("on"), f"inline handler {k} on <{tag}>"
            if k in ("src", "href") and v:
                assert v.startswith("#"), f"<{tag} {k}={v!r}> leaves the page"
    assert len(page.scripts) == 1
    script = page.scripts[0].replace("http://www.w3.org/2000/svg", "")
    assert "http://" not in script and "https://" not in script
    # The SVG namespace URI is an identifier, not a request; nothing else names a host.
    rest = html.replace("http://www.w3.org/2000/svg", "")
    assert "http://" not in rest and "https://" not in rest
    assert "url(" not in rest.replace("url(#", "")


def check_row_links(d, page: Page) -> None:
    """Each clue that names rows links to the first of them; every row it names is marked
    as backing it and links back to the clue."""
    links = [a["href"] for a in page.find("a", class_="evidence-link")]
    rows = {r["id"]: r for r in page.find("tr") if r.get("id")}
    backs: dict[str, set[str]] = {}  # row id -> clue ids it links back to
    row_id = None
    for tag, attrs in page.tags:
        if tag == "tr" and attrs.get("id"):  # (a kernel name's field table has plain rows)
            row_id = attrs["id"]
        elif tag == "a" and "back-link" in (attrs.get("class") or "").split() and row_id:
            backs.setdefault(row_id, set()).add(attrs["href"].lstrip("#"))
    named = 0
    for number, (c, href) in enumerate(zip(d.clues, links, strict=True), 1):
        target = href.lstrip("#")
        if not c.rows:
            assert target == c.anchor, (c.id, href)
            continue
        named += 1
        assert target.startswith(c.anchor + "-r"), (c.id, href)
        assert "backs" in (rows[target].get("class") or ""), (c.id, href)
        assert f"clue-{number}" in backs[target], (c.id, href)
    assert named, "no clue names its rows"
    marked = {i for i, r in rows.items() if "backs" in (r.get("class") or "").split()}
    assert marked == set(backs)


# -- the demo pair: the diff view ------------------------------------------------------------
@pytest.fixture(scope="module")
def demo_pair():
    from tracelens.compare import diff
    from tracelens.demo import demo_path

    with tracelens.open(demo_path("bs1")) as a, tracelens.open(demo_path("bs16")) as b:
        d = diff(a, b)
        html = build_report(a, b)
        md = build_markdown(a, b)
    return d, html, md


def test_demo_diff_sections_and_evidence_links(demo_pair):
    d, html, _ = demo_pair
    page = Page(html)
    check_self_contained(html, page)
    for section in (
        "files",
        "board",
        "totals",
        "categories",
        "kernels",
        "stakeout",
        "timeline",
        "variants",
        "copies",
        "alignment",
        "danger",
        "a-census",
        "b-census",
    ):
        assert section in page.ids, section
    # One evidence-board row per clue, each linking to a section of the page.
    assert d.clues
    links = page.find("a", class_="evidence-link")
    assert len(links) == len(d.clues)
    for link in links:
        assert link["href"].lstrip("#") in page.ids, link["href"]
    for c in d.clues:
        assert c.clue in page.text
    check_row_links(d, page)
    # The story of the demo: same launch count, 5x slower cache writes, cascade merge kernel.
    assert "reshape_and_cache_flash_kernel" in page.text
    assert "1,949 → 1,949" in page.text
    assert "merge_attn_states_kernel" in page.text
    # The page keeps the diff's board order (caveats, then by impact), decided once.
    strengths = [c.strength for c in d.clues]
    board = [d_["class"] for t, d_ in page.tags if t == "tr" and d_.get("class") in strengths]
    assert board == strengths
    n = len(d.clues)
    assert (
        f"{n} clues: caveats first, then by the GPU time they account for; each links to its "
        "evidence below"
    ) in page.text


def test_demo_timeline_picks_the_first_step(demo_pair):
    _, html, _ = demo_pair
    page = Page(html)
    for key in ("a", "b"):
        assert f"{key}-dt" in page.ids and f"{key}-ov" in page.ids
        detail = page.find("svg", id=f"{key}-dt")[0]
        assert float(detail["data-t1"]) > float(detail["data-t0"])
    assert "step 1 of 4 (marker steps: 4 steps from 4 top-level NVTX ranges" in page.text
    # Kernels, NVTX ranges and memory operations have hover text.
    tips = [d_["data-tip"] for _t, d_ in page.tags if d_.get("data-tip")]
    assert any(t.startswith("NVTX: decode_step_1") for t in tips)
    assert any("reshape_and_cache_flash_kernel" in t for t in tips)
    assert any(t.startswith("memset") for t in tips)


def test_demo_decoded_fields_and_danger(demo_pair):
    _, html, _ = demo_pair
    page = Page(html)
    # nvjet names are decoded in the kernel detail rows (field, value, meaning, confidence).
    assert "cuBLASLt GEMM/GEMV kernel family" in page.text
    assert "inferred" in page.text
    assert "disable_cascade_attn" in page.text


def test_demo_markdown_is_the_diff_markdown(demo_pair):
    d, _, md = demo_pair
    from tracelens.compare.render import markdown

    assert md == markdown(d, top=10)
    assert "### Evidence board" in md


def test_report_is_deterministic():
    from tracelens.demo import demo_path

    with tracelens.open(demo_path("bs16")) as t:
        assert build_report(t) == build_report(t)


# -- the lineup: the same numbers as `tracelens lineup` ------------------------------------------
class SectionRows(HTMLParser):
    """The text of each cell of each table row inside ``<section id=...>``."""

    def __init__(self, html: str, section: str) -> None:
        super().__init__(convert_charrefs=True)
        self.section = section
        self.rows: list[list[str]] = []
        self.heads: list[str] = []
        self._depth = 0  # open <section> elements, counting from the wanted one
        self._cell: list[str] | None = None
        self._th = False
        self.feed(html)
        self.close()

    def handle_starttag(self, tag, attrs):
        if tag == "section":
            if self._depth or dict(attrs).get("id") == self.section:
                self._depth += 1
        if not self._depth:
            return
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self._cell, self._th = [], tag == "th"

    def handle_endtag(self, tag):
        if tag == "section" and self._depth:
            self._depth -= 1
        if self._depth and tag in ("td", "th") and self._cell is not None:
            text = " ".join("".join(self._cell).split())
            (self.heads if self._th else self.rows[-1]).append(text)
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def lineup_rows(html: str, section: str) -> list[tuple[str, str, str, str, str]]:
    """(category, subfamily, share, time, calls) of the Lineup table of ``section``."""
    parsed = SectionRows(html, section)
    heads = parsed.heads
    assert heads[:5] == ["Category", "Subfamily", "Share", "Time", "Calls"], heads
    return [tuple(r[:5]) for r in parsed.rows if r]


def expected_lineup(trace) -> list[tuple[str, str, str, str, str]]:
    from tracelens.lineup import category_summary

    return [
        (
            "" if r["subfamily"] else r["category"],
            r["subfamily"] or "",
            f"{r['time_pct']:.1f}%",
            fmt_ns(r["total_ns"]),
            f"{r['calls']:,}",
        )
        for r in category_summary(trace).iter_rows(named=True)
    ]


def test_lineup_section_is_tracelens_lineup(demo_pair):
    from tracelens.demo import demo_path

    with tracelens.open(demo_path("bs1")) as t:
        html = build_report(t)
        want = expected_lineup(t)
    got = lineup_rows(html, "lineup")
    assert got == want
    # `tracelens lineup --demo bs1`: memcpy and memset time is in memory (and in the shares).
    assert ("gemm", "", "80.6%", fmt_ns(28_649_986), "794") in got
    assert ("memory", "", "2.5%", fmt_ns(895_975), "559") in got
    assert ("", "[CUDA memset]", "1.1%", fmt_ns(383_770), "345") in got
    assert "kernels + memcpy + memset" in Page(html).text
    # Under a diff, each trace's own Lineup is its `tracelens lineup` too ...
    _, pair_html, _ = demo_pair
    assert lineup_rows(pair_html, "a-lineup") == want
    with tracelens.open(demo_path("bs16")) as t:
        assert lineup_rows(pair_html, "b-lineup") == expected_lineup(t)
    # ... while the diff's category table says it counts kernels only.
    categories = SectionRows(pair_html, "categories")
    assert "kernel time only" in " ".join(Page(pair_html).text.split())
    assert categories.rows


def test_single_markdown_lineup_is_tracelens_lineup():
    from tracelens.demo import demo_path
    from tracelens.lineup import category_summary

    with tracelens.open(demo_path("bs1")) as t:
        md = build_markdown(t)
        cats = category_summary(t, subfamily=False)
    section = md.split("### Time by category", 1)[1].split("###", 1)[0]
    assert "kernels + memcpy + memset" in section
    rows = [line for line in section.splitlines() if line.startswith("| ") and "---" not in line]
    assert rows[1:] == [
        f"| {r['category']} | {r['time_pct']:.1f}% | {fmt_ns(r['total_ns'])} | {r['calls']:,} |"
        for r in cats.iter_rows(named=True)
    ]


# -- single traces: the real exports -------------------------------------------------------------
def test_real_traces_single_view(trace_copies):
    for stem, path in trace_copies.items():
        with tracelens.open(path) as t:
            html = build_report(t, top=5)
            info = t.info
            census = t.census() if info.count("kernel") else None
        page = Page(html)
        check_self_contained(html, page)
        assert path.name in page.text, stem
        if info.nsys_version:
            assert info.nsys_version in page.text, stem
        if census is None:
            assert "census" not in page.ids
            assert "no CUDA kernels in this export" in page.text
            continue
        for section in ("census", "lineup", "stakeout", "timeline", "danger"):
            assert section in page.ids, (stem, section)
        total = int(census["total_ns"].sum())
        assert f"{fmt_ns(total)} in {census.height:,} distinct kernels" in page.text, stem
        # Table rows capped at --top, and the page says how many were left out.
        rows = [d for t_, d in page.tags if t_ == "details" and "kname" in (d.get("class") or "")]
        assert len(rows) <= 5
        if census.height > 5:
            assert f"{census.height - 5:,} more kernels" in page.text
        assert len(html) < 2_000_000, stem


def test_timeline_has_a_lane_per_device_and_stream(trace_copies):
    for stem in ("nsys2025.5_balinski_2gpu", "nsys2020.5_openacc_1935k"):
        with tracelens.open(trace_copies[stem]) as t:
            html = build_report(t)
            lanes = t.sql(
                "SELECT DISTINCT deviceId, streamId FROM (SELECT deviceId, streamId FROM kernels "
                "UNION ALL SELECT deviceId, streamId FROM memcpys "
                "UNION ALL SELECT deviceId, streamId FROM memsets)"
            ).rows()
        page = Page(html)
        for device, stream in lanes:
            assert f"GPU {device} · stream {stream}" in page.text, (stem, device, stream)


def test_single_markdown(trace_copies):
    with tracelens.open(trace_copies["nsys2022.4_gaussian_7gpu"]) as t:
        md = build_markdown(t, top=3)
        total = int(t.census()["total_ns"].sum())
    assert md.startswith("## tracelens report: `nsys2022.4_gaussian_7gpu.sqlite`")
    assert "7 × NVIDIA GeForce RTX 3090" in md
    assert "### Time by category" in md and "### Top kernels" in md
    assert f"Kernel time {fmt_ns(total)}" in md
    with tracelens.open(trace_copies["nsys2021.3_cpu_only_no_cuda"]) as t:
        assert "No CUDA kernels" in build_markdown(t)


# -- hostile names ---------------------------------------------------------------------------------
def hostile_trace(path: Path, *, slow: bool = False) -> Path:
    b = TraceBuilder("3.25.0")
    b.process(4242, HOSTILE_NVTX)
    b.gpu(0, HOSTILE_KERNEL)
    t = 1_000_000
    for _ in range(6):
        b.nvtx_range(HOSTILE_NVTX, start=t, end=t + 90_000)
        cid = b.runtime("cudaLaunchKernel", start=t + 1_000, end=t + 4_000)
        dur = 40_000 if slow else 20_000
        b.kernel(HOSTILE_KERNEL, start=t + 10_000, end=t + 10_000 + dur, correlation_id=cid)
        cid = b.runtime("cudaLaunchKernel", start=t + 5_000, end=t + 8_000)
        b.kernel(
            f"void evil<{HOSTILE_NVTX}>(int)",
            start=t + 40_000 + dur,
            end=t + 50_000 + dur,
            correlation_id=cid,
        )
        b.memset(4096, start=t + 60_000 + dur, end=t + 61_000 + dur)
        t += 100_000
    b.write(path)
    return path


def check_hostile(html: str) -> None:
    assert HOSTILE_KERNEL not in html
    assert "<img" not in html  # escaped everywhere: &lt;img
    page = Page(html)
    check_self_contained(html, page)
    # The names are there, as text: in the page's text and in hover attributes.
    assert HOSTILE_KERNEL in page.text
    assert any(HOSTILE_NVTX in v for v in page.attr_values())
    assert not [t for t, _ in page.tags if t == "img"]
    assert len([t for t, _ in page.tags if t == "script"]) == 1


def test_hostile_names_render_as_text(tmp_path):
    path = hostile_trace(tmp_path / "evil.sqlite")
    with tracelens.open(path) as t:
        html = build_report(t)
    check_hostile(html)
    page = Page(html)
    assert HOSTILE_NVTX in page.text  # the process name, in the header
    # The NVTX label is drawn inside the timeline and its tooltip.
    assert any(v.startswith("NVTX: " + HOSTILE_NVTX) for v in page.attr_values())


def test_hostile_names_in_the_diff_view(tmp_path):
    a = hostile_trace(tmp_path / "a.sqlite")
    b = hostile_trace(tmp_path / "b.sqlite", slow=True)
    with tracelens.open(a) as ta, tracelens.open(b) as tb:
        html = build_report(ta, tb)
        md = build_markdown(ta)
    check_hostile(html)
    # Markdown: names only inside code spans (GitHub renders those literally).
    rows = [line for line in md.splitlines() if "alert" in line and line.startswith("| `")]
    assert len(rows) == 2
    for line in rows:
        name_cell = line.split(" | ")[0]
        assert name_cell.startswith("| `") and name_cell.endswith("`")


# -- big traces -----------------------------------------------------------------------------------
def big_trace(path: Path, kernels: int, streams: int = 4) -> Path:
    """An export with ``kernels`` kernels, written in bulk with plain SQL."""
    b = TraceBuilder("3.25.0")
    b.process(7, "big")
    b.gpu(0)
    names = [
        "nvjet_tst_128x256_64x4_2x1_v_bz_coopA_TNN",
        "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
        "std::array<char *, 1>>(int, T2, T3)",
        "void flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 64, 64, 4>>(Flash_fwd_params)",
    ]
    for n in names:
        b.kernel(n, start=0, end=1_000)
    b.write(path)
    con = sqlite3.connect(path)
    ids = [
        con.execute("SELECT id FROM StringIds WHERE value = ?", (n,)).fetchone()[0] for n in names
    ]
    cols = [r[1] for r in con.execute("PRAGMA table_info(CUPTI_ACTIVITY_KIND_KERNEL)")]
    row = dict(
        zip(cols, con.execute("SELECT * FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone(), strict=True)
    )
    fixed = {k: v for k, v in row.items() if k not in ("start", "end", "demangledName")}
    fixed.pop("shortName", None)
    fixed.pop("streamId", None)
    fixed.pop("correlationId", None)
    fixed.pop("gridId", None)
    select = ", ".join(f"{v!r}" if v is not None else "NULL" for v in fixed.values())
    con.execute(
        f"""
        INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL
            (start, "end", demangledName, shortName, streamId, correlationId, gridId,
             {", ".join(fixed)})
        WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {kernels})
        SELECT 2000 + (i / {streams}) * 1500, 2000 + (i / {streams}) * 1500 + 900 + (i % 7) * 50,
               CASE i % 3 WHEN 0 THEN {ids[0]} WHEN 1 THEN {ids[1]} ELSE {ids[2]} END,
               CASE i % 3 WHEN 0 THEN {ids[0]} WHEN 1 THEN {ids[1]} ELSE {ids[2]} END,
               7 + (i % {streams}), 100 + i, 100 + i, {select}
        FROM n
        """
    )
    con.commit()
    con.close()
    return path


def test_big_trace_is_aggregated_and_says_so(tmp_path, monkeypatch):
    from tracelens.report import layout, timekeeping

    n = 300_000
    path = big_trace(tmp_path / "big.sqlite", n)
    # Steps and utilization are left out above threshold.util_max_launches (20M): lowered
    # here so that the omission is tested on a small trace.
    monkeypatch.setattr(timekeeping, "_max_operations", lambda: 250_000)
    with tracelens.open(path) as t:
        assert t.info.count("kernel") == n + 3
        html = build_report(t)
        # A detail window with more operations than may be drawn one by one gets binned too.
        monkeypatch.setattr(layout, "DETAIL_MAX_EVENTS", 2)
        binned = build_report(t)
    page = Page(html)
    rects = sum(1 for tag, _ in page.tags if tag == "rect")
    assert rects < 20_000, rects
    assert len(html) < 3_000_000, len(html)
    assert "omitted" in page.ids
    assert f"{n + 3:,} kernels" in page.text
    assert "GPU operations are not drawn one by one" in page.text
    # Steps and utilization above the limit: left out, and said.
    assert "steps and utilization" in page.text and "steps" not in page.ids
    page = Page(binned)
    assert "the detail window holds more than 2 GPU operations" in page.text
    assert sum(1 for tag, _ in page.tags if tag == "rect") < 20_000


# -- the command -----------------------------------------------------------------------------------
def test_cli_report_demo_html_and_markdown(tmp_path, capsys):
    out = tmp_path / "report.html"
    code, stdout, err = run_cli(["report", "--demo", "-o", out], capsys)
    assert code == 0, err
    assert stdout == "" and err == ""
    html = out.read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>")
    assert "board" in Page(html).ids
    code, stdout, err = run_cli(["report", "--demo", "--format", "markdown", "-n", "5"], capsys)
    assert code == 0, err
    assert stdout.startswith("## tracelens diff: `bs1.sqlite` (A) → `bs16.sqlite` (B)")


def test_cli_report_single_and_errors(tmp_path, capsys):
    path = hostile_trace(tmp_path / "one.sqlite")
    code, stdout, err = run_cli(["report", path, "-f", "markdown"], capsys)
    assert code == 0, err
    assert stdout.startswith("## tracelens report: `one.sqlite`")
    code, _, err = run_cli(["report"], capsys)
    assert code == 2 and "missing TRACE" in err
    code, _, err = run_cli(["report", path, "-f", "pdf"], capsys)
    assert code == 2 and "--format" in err
    code, _, err = run_cli(["report", path, "--top", "-1"], capsys)
    assert code == 2 and "--top" in err
    code, _, err = run_cli(["report", tmp_path / "missing.sqlite"], capsys)
    assert code == 2 and "no such file" in err


# -- a real browser ---------------------------------------------------------------------------------
def _chromium():
    from browser.cdp import find_chromium

    binary = find_chromium()
    if binary is None:
        if os.environ.get("CI") == "true":
            pytest.fail("chromium is required in CI (apt-get install -y chromium)")
        pytest.skip("chromium not installed (apt-get install chromium) - browser test skipped")
    return binary


def test_browser_loads_offline_without_errors(tmp_path, demo_pair):
    from browser.cdp import Chromium

    binary = _chromium()
    _, html, _ = demo_pair
    page_path = tmp_path / "report.html"
    page_path.write_text(html, encoding="utf-8")
    # A control page proves the watcher sees a blocked request (loopback only, never sent).
    control = tmp_path / "control.html"
    control.write_text(
        f'<!DOCTYPE html><meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<img src="http://127.0.0.1:9/x.png"><script>console.error("boom")</script>',
        encoding="utf-8",
    )
    with Chromium(binary) as browser:
        bad = browser.load(control.as_uri(), width=800, height=600)
        assert bad.console_errors, "the watcher missed a console error / CSP violation"
        page = browser.load(page_path.as_uri(), width=1400, height=2000)
        assert page.console_errors == []
        assert page.network_requests == []
        assert page.evaluate("document.documentElement.getAttribute('data-ready')") == "1"
        # Zoom buttons change the detail timeline's transform; hover shows a tooltip.
        before = page.evaluate("document.querySelector('#b-dt .tl-data').getAttribute('transform')")
        page.evaluate("document.querySelector('[data-zoom=in][data-target=b-dt]').click()")
        after = page.evaluate("document.querySelector('#b-dt .tl-data').getAttribute('transform')")
        assert after and after != before and "scale(2,1)" in after
        tip = page.evaluate(
            """(function () {
                var el = document.querySelector('#a-dt rect[data-tip]');
                var r = el.getBoundingClientRect();
                el.dispatchEvent(new MouseEvent('mousemove', {bubbles: true,
                    clientX: r.left + 1, clientY: r.top + 1}));
                var tip = document.getElementById('tip');
                return [tip.hidden, tip.textContent];
            })()"""
        )
        assert tip[0] is False and tip[1]
        page.evaluate("document.querySelector('[data-zoom=reset][data-target=b-dt]').click()")
        shot = page.screenshot(ARTIFACTS / "report-demo.png")
        assert shot.stat().st_size > 50_000
        assert page.console_errors == [] and page.network_requests == []


def test_browser_single_trace_screenshot(tmp_path, trace_copies):
    from browser.cdp import Chromium

    binary = _chromium()
    with tracelens.open(trace_copies["nsys2022.4_gaussian_7gpu"]) as t:
        html = build_report(t)
    page_path = tmp_path / "single.html"
    page_path.write_text(html, encoding="utf-8")
    with Chromium(binary) as browser:
        page = browser.load(page_path.as_uri(), width=1400, height=1200)
        assert page.console_errors == [] and page.network_requests == []
        page.screenshot(ARTIFACTS / "report-gaussian.png")


def test_diff_report_reads_each_trace_once(monkeypatch):
    """The diff view reuses what tracelens.diff read (census, totals, util) instead of
    running them again per trace: one census query per trace (the diff's diff_kernels, or
    kernel_summary)."""
    import tracelens.util
    from tracelens.demo import demo_path
    from tracelens.trace import Trace

    calls: dict[str, list[str]] = {"census": [], "util": []}
    query, query_rows = Trace.query, Trace.query_rows
    util = tracelens.util.accounting_and_calls  # what the diff runs (util with its calls)

    def counted(run):
        def run_counted(trace, name, **params):
            if name in ("kernel_summary", "diff_kernels"):
                calls["census"].append(trace.path.name)
            return run(trace, name, **params)

        return run_counted

    def counted_util(trace, *args, **kwargs):
        calls["util"].append(trace.path.name)
        return util(trace, *args, **kwargs)

    monkeypatch.setattr(Trace, "query", counted(query))
    monkeypatch.setattr(Trace, "query_rows", counted(query_rows))
    monkeypatch.setattr(tracelens.util, "accounting_and_calls", counted_util)
    with tracelens.open(demo_path("bs1")) as a, tracelens.open(demo_path("bs16")) as b:
        build_report(a, b)
    # twice per trace: the diff's read of the whole trace, and of its decode steps' work (the
    # demo's steps hold 19% of bs16's GPU time: the board compares their own work,
    # compare/outside.py); the report runs neither again
    assert sorted(calls["census"]) == ["bs1.sqlite"] * 2 + ["bs16.sqlite"] * 2
    assert sorted(calls["util"]) == ["bs1.sqlite"] * 2 + ["bs16.sqlite"] * 2


def test_diff_header_rows_one_side_lacks(trace_copies):
    """CUDA graphs traced at graph level add a header row to one side only: the other side
    shows a dash there (the page used to fail on such a pair)."""
    with (
        tracelens.open(trace_copies["nsys2024.6_a100_2.7B_cudagraph"]) as a,
        tracelens.open(trace_copies["nsys2024.6_a100_2.7B_nvtx"]) as b,
    ):
        html = build_report(a, b)
    row = html.split("<th>not in this report</th>", 1)[1].split("</tr>", 1)[0]
    cells = row.split("</td>")
    assert "CUDA graph replays" in cells[0] and cells[1].endswith("—")


def test_nvtx_tree_and_region_deltas(tmp_path):
    """Each trace's NVTX tree nests ranges by path with their GPU time; the diff view lists
    the NVTX region deltas per step (the attention region grew 30 µs per step)."""
    from test_diff_pairs import build_nvtx_steps

    a = build_nvtx_steps(tmp_path, "a", 12)
    b = build_nvtx_steps(tmp_path, "b", 12, attn_ns=60_000)
    with tracelens.open(a) as ta, tracelens.open(b) as tb:
        html = build_report(ta, tb)
    page = Page(html)
    check_self_contained(html, page)
    assert {"nvtx-regions", "a-nvtx", "b-nvtx"} <= page.ids
    regions = html.split('id="nvtx-regions"', 1)[1].split("</section>", 1)[0]
    first = regions.split("<tr>")[2]  # the header row, then the largest change
    assert "step / attn" in first and "+30.00 µs" in first and "2.00×" in first
    assert regions.count('class="chart spark"') == 3
    tree = html.split('id="b-nvtx"', 1)[1].split("</section>", 1)[0]
    step = tree.split('<div class="nvtx-children">', 1)
    assert '<code title="step">step</code> <span class="num">1.96 ms GPU</span>' in step[0]
    assert '<code title="step / attn">attn</code> <span class="num">720.0 µs GPU</span>' in step[1]


def test_single_report_nvtx_tree_on_real_traces(trace_copies):
    with tracelens.open(trace_copies["nsys2024.6_a100_2.7B_nvtx"]) as t:
        html = build_report(t)
    tree = html.split('id="nvtx"', 1)[1].split("</section>", 1)[0]
    assert tree.count('class="nvtx-node"') == 12  # every range path that launched GPU work
    assert '<code title="benchmark_loop / scaled dot product attention">' in tree
    with tracelens.open(trace_copies["nsys2022.4_gaussian_7gpu"]) as t:
        assert 'id="nvtx"' not in build_report(t)  # no NVTX ranges: no tree


# -- numerical path and ranks --------------------------------------------------------------
def test_diff_report_shows_the_numerical_path(demo_pair):
    """Two traces: the page has the path comparison (each side fingerprinted) with the
    demo's first divergence and the merge kernel added."""
    from tracelens.fingerprint import board

    _, html, _ = demo_pair
    page = Page(html)
    assert "path" in page.ids
    section = html.split('<section id="path">', 1)[1].split("</section>", 1)[0]
    with tracelens.open(demo_path("bs1")) as a, tracelens.open(demo_path("bs16")) as b:
        diff = tracelens.fingerprint.compare(tracelens.fingerprint(a), tracelens.fingerprint(b))
    assert escape(board.divergence_text(diff.first)) in section
    assert "merge_attn_states_kernel" in section
    assert section.count('<span class="badge b-high">variant</span>') >= 1


def test_cli_report_with_a_fingerprint(tmp_path, capsys):
    """A fingerprint .json on either side: the path page alone (HTML) or the board
    (Markdown); identical paths say so."""
    base = tmp_path / "bs1.json"
    code, _out, err = run_cli(["fingerprint", "--demo", "bs1", "-o", str(base)], capsys)
    assert code == 0, err
    page_path = tmp_path / "path.html"
    code, _out, err = run_cli(
        ["report", str(base), str(demo_path("bs16")), "-o", str(page_path)], capsys
    )
    assert code == 0, err
    html = page_path.read_text(encoding="utf-8")
    page = Page(html)
    check_self_contained(html, page)
    assert "path" in page.ids and "board" not in page.ids
    assert "differs from bs1.json" in page.text
    code, out, err = run_cli(["report", str(base), str(base), "-f", "markdown"], capsys)
    assert code == 0, err
    assert out.startswith("```text\nnumerical path: bs1.json follows bs1.json exactly")
    code, _out, err = run_cli(["report", str(base)], capsys)
    assert code == 2 and "pass A and B" in err


def test_report_for_many_ranks(tmp_path, capsys):
    """--ranks: the rank x step heat map (the slow rank's cells stand out) and the
    straggler table, from the same analysis as `tracelens ranks`."""
    from fixtures.ranks import build_rank_set

    from tracelens.ranks import analyse_ranks

    ranks = build_rank_set(tmp_path / "ranks")
    page_path = tmp_path / "ranks.html"
    code, _out, err = run_cli(["report", "--ranks", str(ranks.dest), "-o", str(page_path)], capsys)
    assert code == 0, err
    html = page_path.read_text(encoding="utf-8")
    page = Page(html)
    check_self_contained(html, page)
    assert {"findings", "heatmap", "stragglers", "ranks", "clock"} <= page.ids
    result = analyse_ranks([ranks.dest], jobs=1)
    assert escape(result.findings[0]) in html
    heat = html.split('id="heatmap"', 1)[1].split("</section>", 1)[0]
    cells = [d for t, d in Page(heat).tags if t == "rect" and d.get("data-tip")]
    assert len(cells) == result.ranks.height * ranks.steps
    slow = [d for d in cells if d["data-tip"].startswith(f"rank {ranks.slow_rank}, ")]
    others = [d for d in cells if d not in slow]
    assert {d["fill"] for d in slow} == {"#dc2626"}  # well above each step's median
    assert {d["fill"] for d in others} == {"#f1f5f9"}  # at it
    straggler_rows = html.split('id="stragglers"', 1)[1].split("</section>", 1)[0]
    assert straggler_rows.count(f"rank {ranks.slow_rank}</td>") == 2 * ranks.steps
    code, out, _err = run_cli(["report", "--ranks", str(ranks.dest), "-f", "markdown"], capsys)
    assert code == 0 and result.findings[0] in out.replace("\\", "")
    code, _out, err = run_cli(["report", "--ranks", str(ranks.dest), str(page_path)], capsys)
    assert code == 2 and "no TRACE arguments" in err
