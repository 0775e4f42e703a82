"""Rules over a column of names (tracelens.rulecolumn): the same answer as the per-name
matcher on every real name and on generated text, and work that grows linearly with the
names, counted (never timed): no per-name Python matching on the column paths."""

from __future__ import annotations

import collections

import polars as pl
import pytest
from conftest import SHARED
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tracelens import rulecolumn, rules
from tracelens.categories import _builtin_rules, classify_column, load_rules
from tracelens.danger import _builtin as _builtin_danger
from tracelens.danger import danger_table

TSV = SHARED / "kernel_names" / "real_kernel_names.tsv"


def _real_names() -> list[str]:
    if not TSV.is_file():
        pytest.skip(f"{TSV} not found (../shared is absent)")
    return [
        line.split("\t", 1)[1]
        for line in TSV.read_text(encoding="utf-8").splitlines()
        if "\t" in line and not line.startswith("#")
    ]


def _agree(ruleset, names: list[str]) -> None:
    first = dict(ruleset.first_frame(names).iter_rows())
    every = collections.defaultdict(list)
    for name, i in ruleset.every_frame(names).iter_rows():
        every[name].append(i)
    index = {id(r): i for i, r in enumerate(ruleset.rules)}
    for n in dict.fromkeys(names):
        one = ruleset.first(n)
        assert first[n] == (None if one is None else index[id(one)]), n
        assert every.get(n, []) == [index[id(r)] for r in ruleset.every(n)], n


def test_vectorized_rules_agree_with_the_matcher_on_every_real_name():
    names = _real_names()
    _agree(_builtin_rules(), names)
    _agree(_builtin_danger(), names)


# Text made of the pieces rules look for: their tokens in several spellings, separators,
# template and argument syntax, digits, case changes and non-ASCII.
_PIECES = sorted(
    {
        w
        for r in [*_builtin_rules().rules, *_builtin_danger().rules]
        for t in (*r.matcher.tokens, *r.matcher.all_tokens, *r.matcher.not_tokens)
        for w in t.split()
    }
)
_piece = st.one_of(
    st.sampled_from(_PIECES),
    st.sampled_from(_PIECES).map(str.upper),
    st.sampled_from(_PIECES).map(str.title),
    st.sampled_from(["_", "__", "::", "<", ">", "(", ")", ", ", " ", "*", "&", "void "]),
    st.sampled_from(["0", "1", "8", "90", "128x256", "sm90", "f16", "E4M3", "ABc", "aB"]),
    st.text(alphabet="aZ9_é<>: (", max_size=4),
)
_name = st.lists(_piece, min_size=1, max_size=12).map("".join)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_name, min_size=1, max_size=40))
def test_vectorized_rules_agree_with_the_matcher_on_generated_names(names):
    _agree(_builtin_rules(), names)
    _agree(_builtin_danger(), names)


def test_a_user_rule_with_syntax_polars_lacks_falls_back_to_python(tmp_path):
    path = tmp_path / "mine.toml"
    path.write_text(
        'version = 1\n[[rule]]\nid = "ahead"\ncategory = "gemm"\nwhy = "w"\n'
        "regex = '^my_(?=gemm)'\n"
        '[[rule]]\nid = "both"\ncategory = "moe"\nwhy = "w"\n'
        'all_tokens = ["expert", "gemm"]\nnot_tokens = ["bias"]\n',
        encoding="utf-8",
    )
    ruleset = load_rules(path)
    names = ["my_gemm_kernel", "my_gemv", "expert_gemm", "expert_gemm_bias", "ExpertGemm"]
    before = rulecolumn.COUNTERS["python_regex"]
    out = classify_column(pl.Series(names), ruleset)
    # my_gemv: not the look-ahead, a built-in rule; expert_gemm_bias: the built-in GEMM one
    assert out["rule_id"].to_list()[:3] == ["ahead", "gemv", "both"]
    assert out["rule_id"][4] == "both"
    assert out["rule_id"][3] != "both"
    assert rulecolumn.COUNTERS["python_regex"] > before  # look-ahead: Python's re
    _agree(ruleset, names)


def _names(n: int) -> list[str]:
    """n distinct names of the shapes traces have: templates, vendor GEMMs, Triton."""
    out = []
    for i in range(n):
        kind = i % 3
        if kind == 0:
            out.append(f"void at::native::reduce_kernel<{i}, float>(at::native::ReduceOp<{i}>)")
        elif kind == 1:
            out.append(f"nvjet_tst_{i}x8_64x16_2x1_v_bz_splitK_TNT")
        else:
            out.append(f"triton_poi_fused_add_mul_{i}")
    return out


@pytest.fixture
def counted(monkeypatch):
    """Counts of per-name Python matching (Matcher.matches) and of names parsed."""
    calls = collections.Counter()
    real = rules.Matcher.matches

    def matches(self, subject):
        calls["matches"] += 1
        return real(self, subject)

    monkeypatch.setattr(rules.Matcher, "matches", matches)
    return calls


@pytest.mark.parametrize("n", [2_000, 8_000])
def test_column_paths_match_no_name_in_python_and_parse_each_once(counted, n):
    names = _names(n)
    parsed = rulecolumn.COUNTERS["parsed"]
    cats = classify_column(pl.Series(names * 2))  # each distinct name once
    kernels = pl.DataFrame(
        {"name": names, "instances": [1] * n, "total_ns": list(range(n)), "time_pct": [0.1] * n}
    )
    hits = danger_table(kernels)
    assert cats.height == 2 * n and hits.height > 0
    assert counted["matches"] == 0  # nothing per (name, rule) in Python
    # a parse per distinct non-identifier name, in each of the two calls: 2 x 2n/3
    assert rulecolumn.COUNTERS["parsed"] - parsed == 2 * len([x for x in names if "<" in x])


def test_report_and_diff_match_a_bounded_number_of_names_in_python(counted, tmp_path, monkeypatch):
    """The page and the diff match only the rows they show one by one (the top kernels):
    4x the names, about the same count of per-name matcher calls (which names are on top
    changes how many rules each tries; a loop over every name would make it 4x). (The two-trace page's
    numerical path, tracelens.fingerprint, is left out: it decodes each name.)"""
    import tracelens
    from tracelens.report import build_report, page
    from tracelens.synth import TraceBuilder

    monkeypatch.setattr(page, "_path", lambda *args: None)

    seen = []
    for n in (300, 1_200):
        b = TraceBuilder("3.25.0")
        b.process(1, "app")
        for i, name in enumerate(_names(n)):
            b.kernel(name, start=i * 100, end=i * 100 + 10 + i % 7, pid=1)
        path = b.write(tmp_path / f"t{n}.sqlite")
        counted.clear()
        with tracelens.open(path) as t:
            tracelens.diff(t, t)
            t.lineup()
            build_report(t, top=10)
            build_report(t, t, top=10)
        seen.append(counted["matches"])
    assert 0 < seen[1] < 1.5 * seen[0], seen
