"""Rules over a column of kernel names: each distinct name's views are made once, and every
rule is one vectorized test over all of them (polars), so matching N names costs
O(N × rules) in native code rather than a Python loop per (name, rule).

The result is the same as :meth:`tracelens.rules.Matcher.matches` on each name's
:class:`~tracelens.rules.Subject` (tests/test_rulecolumn.py checks it on every real name
and on generated text):

* the views (``name``, ``qualname``, ``base``): :func:`tracelens.names._name_parts`, in
  Python for names that need parsing; a plain identifier (most vendor kernels:
  ``nvjet_...``, ``sm90_xmma_...``) is its own three views and skips Python;
* words: the text a token looks for, built by the same splits as ``rules._words_text``
  (identifiers apart, ``_``, lower-to-upper, an acronym before a capitalised word,
  letters/digits) as regex replacements, so a token's ``" w1 w2 "`` is a literal search;
* ``regex``: the pattern run by polars (Rust's regex, linear time) when that engine takes
  it and means the same; a pattern it refuses (look-around, back-references) runs with
  Python's ``re`` over the distinct names of that view.

Rules that need more than the matcher (a danger rule's decoded ``fields``) get the
matcher's mask here and check the rest only where it holds (``confirm``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from .names import MAX_PARSE_CHARS, _name_parts

if TYPE_CHECKING:  # pragma: no cover
    import polars as pl

    from .rules import Matcher

VIEWS = ("name", "qualname", "base")
# A name that is its own three views: an identifier that is not mangled (``_Z``).
_PLAIN = r"^(?:[A-Za-z][A-Za-z0-9_]*|_[A-Za-z0-9_]*)$"
_MANGLED = "_Z"

# rules._words_text as replacements (applied in this order; see the module docstring).
_WORD_SPLITS = (
    (r"[^A-Za-z0-9_]+", " | "),  # between identifiers
    (r"_+", " "),
    (r"([a-z])([A-Z])", "$1 $2"),
    (r"([A-Z])([A-Z][a-z])", "$1 $2"),
    (r"([A-Za-z])([0-9])", "$1 $2"),
    (r"([0-9])([A-Za-z])", "$1 $2"),
)

#: Counts of the work done, for tests that check it grows linearly (no wall clock):
#: ``parsed`` names parsed in Python, ``python_regex`` names a Python regex looked at.
COUNTERS = {"parsed": 0, "python_regex": 0}


def views_frame(names: Sequence[str] | pl.Series) -> pl.DataFrame:
    """One row per distinct name (first-seen order): ``raw`` and its three views."""
    import polars as pl

    raw = pl.Series("raw", names, dtype=pl.String).drop_nulls().unique(maintain_order=True)
    plain = raw.str.contains(_PLAIN) & ~raw.str.starts_with(_MANGLED)
    plain &= raw.str.len_chars() <= MAX_PARSE_CHARS
    frame = pl.DataFrame({"raw": raw, "plain": plain})
    parse = frame.filter(~pl.col("plain"))["raw"].to_list()
    COUNTERS["parsed"] += len(parse)
    parts = [_name_parts(n) for n in parse]
    parsed = pl.DataFrame(
        {
            "raw": parse,
            "name": [p[0] for p in parts],
            "qualname": [p[1] for p in parts],
            "base": [p[2] for p in parts],
        },
        schema={"raw": pl.String, **{v: pl.String for v in VIEWS}},
    )
    simple = frame.filter(pl.col("plain")).select("raw", *(pl.col("raw").alias(v) for v in VIEWS))
    both = pl.concat([simple, parsed])
    return frame.select("raw").join(both, on="raw", how="left", maintain_order="left")


def _words(texts: pl.Series) -> pl.Series:
    """The word text of each of ``texts``: words of one identifier one space apart (spaces
    may double only where an identifier ends), identifiers apart by ``|``."""
    import polars as pl

    e = pl.col("text")
    for pattern, repl in _WORD_SPLITS:
        e = e.str.replace_all(pattern, repl)
    e = pl.concat_str(pl.lit("| "), e.str.to_lowercase(), pl.lit(" |"))
    return texts.to_frame("text").select(e.alias("words"))["words"]


def _words_frame(views: pl.DataFrame, needed: list[str]) -> pl.DataFrame:
    """``words_<view>`` for each needed view, each distinct text split once (a plain name
    is its own three views, and many names share a qualified or base name)."""
    import polars as pl

    texts = pl.concat([views[v] for v in needed]).unique().rename("text")
    table = pl.DataFrame({"text": texts, "words": _words(texts)})
    out = {}
    for v in needed:
        joined = views.select(pl.col(v).alias("text")).join(
            table, on="text", how="left", maintain_order="left"
        )
        out[f"words_{v}"] = joined["words"]
    return pl.DataFrame(out)


_RUST_OK: dict[str, bool] = {}


def _rust_takes(pattern: str) -> bool:
    """Whether polars' engine compiles ``pattern``; then it matches as Python's ``re`` on
    a view (views never end in a newline, where ``$`` differs)."""
    ok = _RUST_OK.get(pattern)
    if ok is None:
        import polars as pl

        try:
            pl.Series(["x"]).str.contains(pattern)
            ok = True
        except Exception:  # polars' ComputeError: syntax Rust's regex does not have
            ok = False
        _RUST_OK[pattern] = ok
    return ok


def _regex_mask(frame: pl.DataFrame, view: str, regex: re.Pattern[str]) -> pl.Series:
    import polars as pl

    if _rust_takes(regex.pattern) and not regex.flags & ~(re.UNICODE):
        return frame.select(pl.col(view).str.contains(regex.pattern))[view]
    texts = frame[view].to_list()
    COUNTERS["python_regex"] += len(texts)
    return pl.Series(view, [regex.search(t) is not None for t in texts], dtype=pl.Boolean)


def _token_rows(words: pl.Series, tokens: list[str]) -> pl.DataFrame:
    """(row, token) for each token a row's word text has: one Aho-Corasick pass over the
    column for all the tokens (overlapping, so adjacent words are each found)."""
    import polars as pl

    found = words.str.extract_many(tokens, overlapping=True)
    return (
        pl.DataFrame({"row": pl.int_range(words.len(), eager=True), "token": found})
        .explode("token")
        .drop_nulls()
    )


def matcher_masks(matchers: Sequence[Matcher], views: pl.DataFrame) -> list[pl.Series]:
    """For each matcher, a Boolean Series over the rows of ``views``: where it matches."""
    import polars as pl

    n = views.height
    by_view: dict[str, set[str]] = {}
    for m in matchers:
        by_view.setdefault(m.on, set()).update(m.tokens, m.all_tokens, m.not_tokens)
    needed = sorted(v for v, toks in by_view.items() if toks)
    words = _words_frame(views, needed) if needed else views
    rows = {v: _token_rows(words[f"words_{v}"], sorted(by_view[v])) for v in needed}
    cache: dict[tuple, pl.Series] = {}

    def tokens_in(view: str, tokens: tuple[str, ...]) -> pl.Series:
        key = (view, tokens)
        if key not in cache:
            at = rows[view].filter(pl.col("token").is_in(tokens))["row"]
            cache[key] = pl.repeat(False, n, dtype=pl.Boolean, eager=True).scatter(at, True)
        return cache[key]

    out = []
    for m in matchers:
        mask = pl.repeat(True, n, dtype=pl.Boolean, eager=True)
        if m.tokens:
            mask &= tokens_in(m.on, m.tokens)
        for t in m.all_tokens:
            mask &= tokens_in(m.on, (t,))
        if m.not_tokens:
            mask &= ~tokens_in(m.on, m.not_tokens)
        if m.regex is not None:
            key = (m.on, "regex", m.regex.pattern, m.regex.flags)
            if key not in cache:
                cache[key] = _regex_mask(views, m.on, m.regex)
            mask &= cache[key]
        out.append(mask)
    return out


def rule_masks(
    matchers: Sequence[Matcher],
    views: pl.DataFrame,
    confirm: Sequence[Callable[[str], bool] | None] = (),
) -> list[pl.Series]:
    """:func:`matcher_masks`, each narrowed by ``confirm[i]`` (a test of the raw name, run
    only where the matcher holds) when given."""
    import polars as pl

    masks = matcher_masks(matchers, views)
    for i, check in enumerate(confirm):
        if check is None or not masks[i].any():
            continue
        hits = views.filter(masks[i])["raw"].to_list()
        ok = {n for n in hits if check(n)}
        masks[i] = masks[i] & views["raw"].is_in(list(ok)) if ok else masks[i] & False
        masks[i] = masks[i].cast(pl.Boolean)
    return masks
