"""The rules of the evidence board as data (``data/clues.toml``): thresholds with their
reasons, comparability weights, each clue id's headline, verdict, strength, anchor table
and place on the board; :func:`make` turns a clue function's numbers into a :class:`Clue`."""

from __future__ import annotations

from functools import cache
from typing import Any

from ..model import Clue

_RULES_FILE = "clues.toml"


@cache
def _rules() -> dict[str, Any]:
    import tomllib

    from ..._resources import data_dir

    with open(data_dir() / _RULES_FILE, "rb") as f:
        return tomllib.load(f)


def threshold(name: str) -> float:
    """A named threshold of ``data/clues.toml`` (each has its reason there)."""
    return _rules()["threshold"][name]["value"]


def _spec(clue_id: str) -> dict[str, Any]:
    return _rules()["clue"][clue_id]


def make(
    clue_id: str,
    evidence: str,
    *,
    strength: str | None = None,
    impact_ns: float | None = None,
    rows: tuple[str, ...] | list[str] = (),
    **fields,
) -> Clue:
    """A Clue with the headline, verdict, strength and anchor of ``clue_id``'s entry;
    ``fields`` fill their ``{placeholders}``; ``verdict=`` overrides the verdict text;
    ``rows``: the keys of the anchor table's rows that back it."""
    spec = _spec(clue_id)
    verdict = fields.pop("verdict", None) or spec["verdict"].format(**fields)
    return Clue(
        clue_id,
        spec["clue"].format(**fields),
        evidence,
        verdict,
        strength or spec["strength"],
        spec["anchor"],
        None if impact_ns is None else float(impact_ns),
        tuple(str(r) for r in rows),
    )


def comparability_weights() -> dict[str, float]:
    return dict(_rules()["comparability"])


def prose(clue_id: str, key: str, **fields) -> str:
    """Another text of ``clue_id``'s entry (a verdict variant), filled with ``fields``."""
    return _spec(clue_id)[key].format(**fields)


def board_order(clues: list[Clue]) -> list[Clue]:
    """Caveats first (``order`` below 2 in the data), then by impact, largest first, then
    clues without a time impact (they explain results, not time) in their data order."""

    def key(c: Clue) -> tuple:
        order = _spec(c.id)["order"]
        if order < 2:
            return (0, order, 0.0)
        if c.impact_ns is None:
            return (2, order, 0.0)
        return (1, -abs(c.impact_ns), order)

    return sorted(clues, key=key)
