"""The rules of ``data/findings.toml`` and the checks of what a caller asks of them: rule
ids, thresholds (``findings --threshold RULE.KEY=VALUE`` and the library's
``{(rule, key): value}``) and the row limit. :func:`tracelens.findings.find_issues` checks
every argument here, so ``Trace.findings``, the CLI and a direct call refuse the same
input with the same message (a UsageError), never run with a default in its place."""

from __future__ import annotations

import math
import tomllib
from functools import lru_cache
from typing import Any

from ._resources import data_dir
from .errors import UsageError, check_at_least


@lru_cache(maxsize=1)
def rules() -> tuple[dict[str, Any], ...]:
    """The rule tables of ``data/findings.toml``, in order."""
    with open(data_dir() / "findings.toml", "rb") as fh:
        return tuple(tomllib.load(fh)["rule"])


def rule_ids() -> tuple[str, ...]:
    return tuple(r["id"] for r in rules())


def _known() -> set[tuple[str, str]]:
    return {(r["id"], k) for r in rules() for k in r.get("thresholds", {})}


def parse_threshold(text: str, param: str = "threshold") -> tuple[str, str, float]:
    """``"gpu_gaps.gap_ms=100"`` -> ("gpu_gaps", "gap_ms", 100.0); otherwise a UsageError
    naming ``param`` (the CLI says its flag)."""
    known = _known()
    key, sep, value = text.partition("=")
    rule, dot, name = key.strip().partition(".")
    if not (sep and dot) or (rule, name) not in known:
        names = ", ".join(f"{r}.{k}" for r, k in sorted(known))
        raise UsageError(f"{{param}} {text!r}: use RULE.KEY=VALUE with one of {names}", param=param)
    try:
        number = float(value)
    except ValueError:
        raise UsageError(f"{{param}} {text!r}: {value!r} is not a number", param=param) from None
    if not math.isfinite(number):  # float() takes nan and inf (1e400 too): no rule can use them
        raise UsageError(f"{{param}} {text!r}: {value!r} is not a finite number", param=param)
    if number < 0:
        raise UsageError(f"{{param}} {text!r}: must not be negative", param=param)
    return rule, name, number


def checked_only(only: Any) -> tuple[str, ...]:
    """``only`` as a tuple of rule ids: one id given as a str is that rule (not its
    letters); an id no rule has is a UsageError naming the rules."""
    ids = (only,) if isinstance(only, str) else tuple(only or ())
    for rule in ids:
        if rule not in rule_ids():
            raise UsageError(f"unknown rule {rule!r}; rules: {', '.join(rule_ids())}")
    return ids


def checked_thresholds(thresholds: Any) -> dict[tuple[str, str], float]:
    """``thresholds`` when every key is a (rule id, threshold) pair that some rule has and
    every value a number >= 0 (as ``findings --threshold`` checks), else a UsageError: an
    unknown key would otherwise be ignored and the rule run with its default."""
    known = _known()
    for key, value in (thresholds or {}).items():
        if key not in known:
            names = ", ".join(f"({r!r}, {k!r})" for r, k in sorted(known))
            raise UsageError(f"unknown threshold {key!r}; use one of: {names}")
        if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
            raise UsageError(f"threshold {key!r} takes a number >= 0, not {value!r}")
        if not math.isfinite(value):
            raise UsageError(f"threshold {key!r} takes a finite number, not {value!r}")
    return dict(thresholds or {})


def check_thresholds_run(overrides: dict[tuple[str, str], float], only: tuple[str, ...]) -> None:
    """A UsageError when ``overrides`` sets a threshold of a rule that ``only`` leaves out:
    it would be ignored, and whoever set it believe it applied."""
    for rule, key in overrides:
        if only and rule not in only:
            raise UsageError(
                f"threshold {rule}.{key} is of rule {rule}, which is not run (the rules run: "
                f"{', '.join(only)})"
            )


def checked_limit(limit: Any) -> int | None:
    """``limit`` (rows per rule; None or 0: every row) when an integer >= 0, else a
    UsageError (-1 kept all rows but the last of every rule)."""
    return check_at_least("limit", limit, 0, meaning="every row")
