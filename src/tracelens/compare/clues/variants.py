"""Clues about the kernels only one run launches: variants (kernels of a category only one
side runs, :func:`variant_swaps`), and what the path clue leaves to them
(:func:`explained_by_variants`, :func:`danger_only_kernels`)."""

from __future__ import annotations

from typing import Any

from ...units import fmt_ns
from ..model import Clue
from .context import Context, count, outside
from .spec import make, prose, threshold


def _renamed(x: Context, category: str) -> str | None:
    """When one kernel of ``category`` only A runs and one only B runs, called as often,
    with the same launch grid and the same cost per call (within ``uniform_ratio`` of the
    typical change's half-way: 1.05×): what they share, in words (the swap reads as the
    same kernel under another name as well as another kernel as fast); else None."""
    import polars as pl

    only = x.kernels.filter(pl.col("category") == category)
    a, b = only.filter(pl.col("status") == "only_a"), only.filter(pl.col("status") == "only_b")
    if a.height != 1 or b.height != 1:
        return None
    ra, rb = a.row(0, named=True), b.row(0, named=True)
    calls, per_a, per_b = ra["a_instances"], ra["a_avg_ns"], rb["b_avg_ns"]
    grid_a, grid_b = x.sa.blocks.get(ra["name"]), x.sb.blocks.get(rb["name"])
    if calls != rb["b_instances"] or not per_a or grid_a != grid_b:
        return None
    cost = per_b / per_a / x.overall
    if outside(cost, _RENAMED_COST):
        return None
    return f"{count(calls)} calls, {fmt_ns(per_a)} → {fmt_ns(per_b)} per call, the same grid"


# A swapped kernel's cost per call within this factor of its predecessor's (after the
# typical change) is "the same cost" (the kernel may be the same, renamed)
_RENAMED_COST = 1.05


def _variant_rows(x: Context) -> list[tuple[dict[str, Any], float]]:
    """The categories whose kernels only one side runs, with enough time to be a clue:
    (row of the variants table, share of both runs' kernel time)."""
    rows = []
    for r in x.swaps.iter_rows(named=True):
        if r["only_b_kernels"] == 0 and r["only_a_kernels"] == 0:
            continue
        share = (r["only_a_ns"] + r["only_b_ns"]) / ((x.time_a + x.time_b) or 1)
        if share >= threshold("variant_share"):
            rows.append((r, share))
    return rows


def explained_by_variants(x: Context) -> set[str]:
    """Kernels whose time a variant clue (variant_swap, new_kernels, vanished_kernels)
    already counts: those only one side runs, in the categories that have such a clue."""
    import polars as pl

    cats = [r["category"] for r, _share in _variant_rows(x)]
    only = x.kernels.filter((pl.col("status") != "both") & pl.col("category").is_in(cats))
    return set(only["name"].to_list())


def danger_only_kernels(x: Context):
    """The rows of ``x.kernels`` only one run launches whose time a danger clue counts
    (new or vanished danger-zone kernels: :func:`.danger.danger_changes`). The danger
    table goes by demangled name; short names by the demangled name each stands for
    (``Side.demangled_of``)."""
    import polars as pl

    from .danger import risky_rows

    risky = risky_rows(x).filter(pl.col("status").is_in(["new", "vanished"]))
    names = risky["name"].unique().to_list()
    of = {**x.sa.demangled_of, **x.sb.demangled_of}
    demangled = pl.col("name").replace(of) if of else pl.col("name")
    return x.kernels.filter(pl.col("status") != "both", demangled.is_in(names))


def _danger_counted(x: Context) -> dict[str, dict[str, Any]]:
    """Per category, :func:`danger_only_kernels` as :func:`..model.variants_table` counts
    them."""
    from ..model import variants_table

    only = danger_only_kernels(x)
    if only.is_empty():
        return {}
    return {r["category"]: r for r in variants_table(only).iter_rows(named=True)}


def _danger_words(counted: dict[str, Any], rest: bool) -> str:
    """What the evidence says of the kernels a danger clue counts instead (``rest``: this
    line counts the others')."""
    which = " and ".join(
        f"{count(n)} in {side} ({fmt_ns(counted[f'only_{s}_ns'])})"
        for side, s in (("B", "b"), ("A", "a"))
        if (n := counted[f"only_{s}_kernels"])
    )
    key = "danger_counted" if rest else "danger_counted_all"
    return prose("new_kernels", key, which=which)


def variant_swaps(x: Context) -> list[Clue]:
    """Kernels of one category that only one side runs: swapped, new or vanished. The
    time of those a danger clue names (a determinism risk: :func:`_danger_counted`) counts
    there, not here, and the evidence says so: a category whose kernels a danger clue
    names all keeps its line (what ran instead, the GEMM verdict) without a time impact."""
    clues = []
    claimed = _danger_counted(x)
    for r, share in _variant_rows(x):
        cat = r["category"]
        c = claimed.get(cat, dict.fromkeys(r, 0))
        rest_a, rest_b = (r[f"only_{s}_kernels"] - c[f"only_{s}_kernels"] for s in "ab")
        parts = []
        if r["only_b_kernels"]:
            n = r["only_b_kernels"]
            parts.append(
                f"{n} {cat} kernel{'s' if n != 1 else ''} in B "
                f"({fmt_ns(r['only_b_ns'])}, {count(r['only_b_calls'])} calls) that A does not run"
            )
        if r["only_a_kernels"]:
            n = r["only_a_kernels"]
            parts.append(
                f"A ran {n} other{'s' if n != 1 else ''} "
                f"({fmt_ns(r['only_a_ns'])}, {count(r['only_a_calls'])} calls)"
            )
        # the kernels no danger clue counts; none: all of them, and no time of its own
        rest = rest_a or rest_b
        if c["only_a_kernels"] or c["only_b_kernels"]:
            parts.append(_danger_words(c, bool(rest)))
        if not rest:
            rest_a, rest_b = r["only_a_kernels"], r["only_b_kernels"]
        swapped = bool(rest_a and rest_b)
        evidence = "; ".join(parts)
        mine = (r["only_b_ns"] - c["only_b_ns"]) - (r["only_a_ns"] - c["only_a_ns"])
        impact = x.per_unit(mine) if rest else None
        if swapped:
            strong = share >= threshold("variant_strong_share")
            verdict = prose("variant_swap", "verdict_gemm") if cat == "gemm" else None
            renamed = _renamed(x, cat)
            if renamed:
                strong, verdict = False, prose("variant_swap", "verdict_renamed", alike=renamed)
            clues.append(
                make(
                    "variant_swap",
                    evidence,
                    strength="strong" if strong else None,
                    impact_ns=impact,
                    rows=(cat,),
                    category=cat,
                    verdict=verdict,
                )
            )
        else:
            clue_id = "new_kernels" if rest_b else "vanished_kernels"
            # the GEMM library's pick only where GEMMs went one way and others came the
            # other (those a danger clue counts among them): not GEMM work one run dropped
            picked = cat == "gemm" and r["only_a_kernels"] and r["only_b_kernels"]
            verdict = prose("variant_swap", "verdict_gemm") if picked else None
            clues.append(
                make(
                    clue_id, evidence, impact_ns=impact, rows=(cat,), category=cat, verdict=verdict
                )
            )
    return clues
