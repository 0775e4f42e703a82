"""The HTML report's page-level promises (issue 16): the danger zone once per page with each
rule explained once, an A/B key that holds long file names, kernel labels that tell long
templated names apart, and a detail window that says what it is."""

from __future__ import annotations

import shutil

import pytest
from markupsafe import escape
from test_report import Page

import tracelens
from tracelens.report import build_report
from tracelens.report.text import labels
from tracelens.synth import TraceBuilder

# Two FlashAttention instantiations that differ only in the 7th trailing bool, and a third
# that differs early: clipped to 80 characters the first two read the same.
FA = (
    "void flash::flash_fwd_splitkv_kernel<Flash_fwd_kernel_traits<256, 64, 64, 4, false, "
    "false, cutlass::bfloat16_t, Flash_kernel_traits<256, 64, 64, 4, cutlass::bfloat16_t>>, "
    "false, true, false, false, true, true, {x}, false>(Flash_fwd_params)"
)
FA_EARLY = FA.replace("traits<256, 64, 64, 4, false", "traits<128, 64, 64, 4, false")


@pytest.fixture(scope="module")
def demo_pair_page(tmp_path_factory):
    from tracelens.demo import demo_path

    # Long file names, as real runs are named: the A/B key must not clip or overlap them.
    d = tmp_path_factory.mktemp("demo")
    a = d / ("llama-70b-tp8-bs1-prefill-decode-run-2026-11-30-with-cuda-graphs-off" + ".sqlite")
    b = d / ("llama-70b-tp8-bs16-prefill-decode-run-2026-11-30-with-cuda-graphs-off" + ".sqlite")
    shutil.copy(demo_path("bs1"), a)
    shutil.copy(demo_path("bs16"), b)
    with tracelens.open(a) as ta, tracelens.open(b) as tb:
        return a.name, b.name, build_report(ta, tb)


def test_danger_zone_is_shown_once_with_each_rule_explained_once(demo_pair_page):
    _, _, html = demo_pair_page
    page = Page(html)
    sections = [d["id"] for t, d in page.tags if t == "section" and "danger" in (d.get("id") or "")]
    assert sections == ["danger"]
    from tracelens.danger import load_danger_rules

    rules = {r.id: r for r in load_danger_rules()}
    shown = [
        d["id"].removeprefix("rule-")
        for t, d in page.tags
        if (d.get("id") or "").startswith("rule-")
    ]
    assert shown and len(shown) == len(set(shown))
    # Outside the evidence board (whose clues quote a rule as their verdict), each rule's
    # why and fix are written once, wherever its kernels are listed.
    board = html.index('<section id="board">')
    rest = html[:board] + html[html.index("</section>", board) :]
    for rid in shown:
        for text in (rules[rid].why, rules[rid].fix):
            assert rest.count(str(escape(text))) == 1, rid
    # Every row and every kernel badge points at an explanation that is on the page.
    links = [
        d["href"][1:]
        for t, d in page.tags
        if t == "a" and (d.get("href") or "").startswith("#rule-")
    ]
    assert links and set(links) <= page.ids


def test_single_trace_danger_zone(tmp_path):
    b = TraceBuilder("3.25.0")
    b.process(7, "t")
    b.gpu(0)
    for i, x in enumerate(("true", "false")):
        b.kernel(FA.format(x=x), start=1_000 + i * 10_000, end=5_000 + i * 10_000)
    b.kernel("nvjet_tst_64x24_64x16_4x1_v_bz_splitK_TNT", start=30_000, end=31_000)
    path = b.write(tmp_path / "one.sqlite")
    with tracelens.open(path) as t:
        page = Page(build_report(t))
    assert "danger" in page.ids
    assert {"rule-gemm_split_k", "rule-attention_split_kv"} <= page.ids
    # The two FlashAttention rows read differently, and hovering shows the whole name.
    titles = [d["title"] for t, d in page.tags if t == "code" and d.get("title")]
    assert {FA.format(x="true"), FA.format(x="false")} <= set(titles)
    shown = [s for s in page.text_parts if s.startswith("flash::flash_fwd_splitkv_kernel<")]
    assert len(set(shown)) >= 2, shown


def test_ab_key_is_html_holding_the_whole_file_names(demo_pair_page):
    a, b, html = demo_pair_page
    page = Page(html)
    keys = [d for t, d in page.tags if t == "div" and d.get("class") == "legend ab"]
    assert len(keys) == 2  # the category and the kernel chart
    # Whole, as text (it wraps), not clipped inside an SVG of fixed width.
    for section in ("categories", "kernels"):
        body = html.split(f'<section id="{section}">')[1].split("</section>")[0]
        key = body.split('<div class="legend ab">')[1].split("</div>")[0]
        assert a in key and b in key and "<svg" not in key


def test_labels_tell_long_templated_names_apart():
    names = [FA.format(x="true"), FA.format(x="false"), FA_EARLY.format(x="true"), "nvjet_x"]
    got = labels(names)
    assert len(set(got.values())) == 4
    assert all(len(v) <= 80 for v in got.values())
    assert got["nvjet_x"] == "nvjet_x"
    # The two late twins show where they part: "…, true, false>" vs "…, false, false>".
    assert got[names[0]].endswith("true, true, true, false>")
    assert got[names[1]].endswith("true, true, false, false>")
    assert got[names[0]].startswith("flash::flash_fwd_splitkv_kernel<…")
    # Narrow labels (a chart) still differ.
    assert len(set(labels(names, 40).values())) == 4


def test_default_window_says_what_it_is(demo_pair_page):
    _, _, html = demo_pair_page
    text = Page(html).text
    assert "“decode_step_1” NVTX ranges (the longest range whose label repeats" in text
    assert "a repeated range: one step" not in text
