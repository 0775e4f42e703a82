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


def test_default_window_is_a_step_and_says_so(demo_pair_page):
    _, _, html = demo_pair_page
    text = Page(html).text
    assert "step 1 of 4 (marker steps: 4 steps from 4 top-level NVTX ranges like" in text
    assert "a repeated range: one step" not in text


def steps_trace(path, durations_us):
    """Top-level 'train_step_N' ranges, each launching three kernels that last as long as
    the step asks; a warm-up-free run in which one step can be made slow."""
    b = TraceBuilder("3.25.0")
    b.process(10, "train")
    b.gpu(0)
    t = 1_000_000
    for i, us in enumerate(durations_us, start=1):
        b.nvtx_range(f"train_step_{i}", start=t, end=t + 50_000, pid=10, tid=1)
        g = t + 10_000
        for k, name in enumerate(
            ("void gemm<float>(int)", "void relu<float>(int)", "void norm(int)")
        ):
            c = b.runtime(
                "cudaLaunchKernel_v7000",
                start=t + 100 + k * 100,
                end=t + 150 + k * 100,
                pid=10,
                tid=1,
            )
            b.kernel(name, start=g, end=g + us * 1000 // 3, pid=10, correlation_id=c)
            g += us * 1000 // 3 + 1_000
        t += 60_000 + us * 1000
    return b.write(path)


def test_steps_and_utilization_section(tmp_path):
    path = steps_trace(tmp_path / "steps.sqlite", [30, 30, 30, 30, 90, 30, 30, 30])
    with tracelens.open(path) as t:
        steps = t.steps()
        util = t.util()
        page = Page(build_report(t))
    assert "steps" in page.ids
    outliers = steps.summary()["outlier_steps"]
    assert outliers == [5], steps.frame
    assert f"outliers: step {', '.join(map(str, outliers))}" in page.text
    assert [d for tag, d in page.tags if tag == "tr" and d.get("class") == "outlier"]
    # One utilization strip per device, the shares of util's accounting.
    strips = [d for tag, d in page.tags if tag == "div" and d.get("class") == "strip"]
    assert len(strips) == util.frame.height == 1
    compute = [d for tag, d in page.tags if tag == "span" and d.get("class") == "s-compute"][0]
    share = util.frame["compute_ns"][0] / util.frame["span_ns"][0]
    assert compute["style"] == f"width: {share * 100:.2f}%"
    assert f"step 1 of {steps.count}" in page.text


def test_no_steps_says_so(tmp_path):
    b = TraceBuilder("3.25.0")
    b.process(7, "t")
    b.gpu(0)
    b.kernel("void lonely(int)", start=1_000, end=9_000)
    path = b.write(tmp_path / "one.sqlite")
    with tracelens.open(path) as t:
        detail = t.steps().detail
        page = Page(build_report(t))
    assert detail in page.text
    # without steps the window falls back to the busiest stretch, or, with so few
    # operations, to the whole GPU span
    assert "the whole GPU span (few enough operations to draw them all)" in page.text
