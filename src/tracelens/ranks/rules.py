"""The data `tracelens ranks` works from (``data/ranks.toml``): which collective a
communication kernel runs, how steps are found until ``trace.steps()`` finds them, and when
a late rank is noise. Each entry carries its reason in the file."""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from functools import cache

from .._resources import data_dir


@dataclass(frozen=True)
class CollectiveRule:
    id: str
    regex: re.Pattern[str]
    kind: str | None  # None: the regex's `kind` group names it

    def kind_of(self, name: str) -> str | None:
        m = self.regex.search(name)
        if m is None:
            return None
        return self.kind or m.group("kind")


@dataclass(frozen=True)
class RanksRules:
    collectives: tuple[CollectiveRule, ...]
    step_label_regex: str
    warmup_steps: int
    on_time_ns: int

    def collective_kind(self, name: str) -> str:
        """The collective a communication kernel runs (its name up to '(' when no rule
        names it)."""
        for rule in self.collectives:
            kind = rule.kind_of(name)
            if kind:
                return kind
        return name.split("(", 1)[0].removeprefix("void ").strip()


@cache
def ranks_rules() -> RanksRules:
    with (data_dir() / "ranks.toml").open("rb") as fh:
        doc = tomllib.load(fh)
    rules = tuple(
        CollectiveRule(t["id"], re.compile(t["regex"]), t.get("kind")) for t in doc["collective"]
    )
    steps = doc["steps"]
    return RanksRules(
        rules,
        steps["label_regex"],
        int(steps["warmup_steps"]),
        int(doc["stragglers"]["on_time_ns"]),
    )
