"""NVTX label globs (--nvtx, diff --nvtx, steps --range): SQL GLOB's syntax, matched by RE2.

DuckDB's GLOB backtracks: ``*a*a*a*a*a*a*b`` against a label of 100 ``a`` took 65 s, so the
globs are translated (filters.glob_regex) and matched with regexp_full_match, linear in the
label whatever the pattern. These tests check that the translation means what GLOB means,
that no query matches a user's glob with GLOB again, and that a pathological pattern on
long labels costs time proportional to the labels (by ratio, not wall clock).
"""

from __future__ import annotations

import re
import time

import duckdb
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tracelens
from tracelens import _resources
from tracelens.errors import MissingDataError, UsageError
from tracelens.filters import MAX_GLOB_CHARS, glob_regex, select_nvtx
from tracelens.synth import TraceBuilder

# the characters that mean something to GLOB, a newline, and RE2's metacharacters
GLOB_TEXT = st.text(alphabet="ab*?[]!-\\\n^.$(|)z", max_size=8)
LABEL_TEXT = st.text(alphabet="ab]z-!\n^.$[\\(|)", max_size=8)


@pytest.fixture(scope="module")
def con():
    return duckdb.connect()


def _glob(con, label: str, pattern: str) -> bool:
    return con.execute("SELECT $l GLOB $p", {"l": label, "p": pattern}).fetchone()[0]


def _ours(con, label: str, pattern: str) -> bool:
    try:
        regex = glob_regex(pattern)
    except UsageError:
        return False  # a glob that can match nothing is refused, with the reason
    return con.execute("SELECT regexp_full_match($l, $r)", {"l": label, "r": regex}).fetchone()[0]


@settings(max_examples=400, deadline=None)
@given(GLOB_TEXT, LABEL_TEXT)
def test_the_translation_matches_what_glob_matches(con, pattern, label):
    assert _ours(con, label, pattern) == _glob(con, label, pattern), (pattern, label)


@pytest.mark.parametrize(
    ("pattern", "label", "expected"),
    [
        ("decode_step_*", "decode_step_12", True),
        ("decode_step_*", "prefill_step_1", False),
        ("Layer?", "Layer7", True),
        ("Layer?", "Layer", False),
        ("step[0-3]", "step2", True),
        ("step[!0-3]", "step2", False),
        ("step[!0-3]", "step9", True),
        ("[]]x", "]x", True),
        ("a\\*b", "a*b", True),
        ("a\\*b", "axb", False),
        ("a.b", "axb", False),  # RE2's metacharacters are literals in a glob
        ("(a|b)", "a", False),
        ("*", "multi\nline", True),
        ("opé*", "opération", True),
        ("Case", "case", False),
    ],
)
def test_glob_examples(con, pattern, label, expected):
    assert _ours(con, label, pattern) is expected
    assert _glob(con, label, pattern) is expected


def test_globs_that_can_match_nothing_are_refused_with_the_reason():
    with pytest.raises(UsageError, match=r"has a \[ without its \]; write \[\[\] for a literal \["):
        glob_regex("step[0-3")
    with pytest.raises(UsageError, match=r"ends with a lone \\"):
        glob_regex("step\\")
    with pytest.raises(UsageError, match=f"at most {MAX_GLOB_CHARS:,} are accepted"):
        glob_regex("a" * (MAX_GLOB_CHARS + 1))


def test_no_query_matches_a_parameter_with_glob():
    # GLOB backtracks; a user's pattern goes through glob_regex and regexp_full_match
    files = sorted(_resources.queries_dir().glob("*.sql"))
    assert len(files) > 20
    offenders = [f.name for f in files if re.search(r"\bGLOB\s+\$", f.read_text(), re.IGNORECASE)]
    assert offenders == []


def test_runs_of_stars_become_one_state():
    assert glob_regex("a" + "*" * 500 + "b") == "(?s)a.*b"
    assert len(glob_regex("*a" * 1000)) < 10 * 2000  # linear in the pattern


def _long_label_trace(path, length: int, labels: int = 200):
    b = TraceBuilder("3.25.0")
    b.process(1, "app")
    for i in range(labels):
        b.nvtx_range("a" * length, start=i * 100, end=i * 100 + 50, pid=1, tid=1)
    b.nvtx_range("a" * 30 + "b", start=labels * 100, end=labels * 100 + 50, pid=1, tid=1)
    return b.write(path)


def _best_match_time(path, pattern: str, reps: int = 3) -> float:
    with tracelens.open(path) as t:
        t.load_nvtx_text()
        label_re = glob_regex(pattern)
        best = float("inf")
        for _ in range(reps):
            t0 = time.process_time()  # CPU time: a loaded machine inflates wall time
            ranges = t.query_rows("nvtx_matching_ranges", label_re=label_re).data[0][0]
            best = min(best, time.process_time() - t0)
        assert ranges == 1  # only a...ab: ends with b
    return best


def test_a_pathological_glob_on_long_labels_is_linear(tmp_path):
    # Many stars against long labels that almost match: GLOB took 0.7 s at 50 characters
    # and 65 s at 100; linear matching reads each label a bounded number of times.
    pattern = "*a" * 12 + "*b"
    short = _best_match_time(_long_label_trace(tmp_path / "short.sqlite", 1_000), pattern)
    long = _best_match_time(_long_label_trace(tmp_path / "long.sqlite", 10_000), pattern)
    assert long <= 12 * max(short, 0.005), (short, long)


def test_select_nvtx_on_a_pathological_glob_finds_the_one_range(tmp_path):
    path = _long_label_trace(tmp_path / "t.sqlite", 20_000, labels=20)
    with tracelens.open(path) as t:
        # matches a...ab, the one range (the trace has no API calls to place work in it)
        with pytest.raises(MissingDataError, match="placed in the 1 NVTX range"):
            select_nvtx(t, "*a" * 20 + "*b")
        with pytest.raises(UsageError, match=r"has a \[ without its \]"):
            select_nvtx(t, "decode[")
        # no match: the closest labels are quoted cut to 80 characters, not 20,000
        with pytest.raises(UsageError) as caught:
            select_nvtx(t, "aaaa?")
    message = str(caught.value)
    closest = repr("a" * 80 + "…") + ", " + repr("a" * 30 + "b")
    assert message.endswith(f"no NVTX range labelled 'aaaa?'; closest: {closest}")
