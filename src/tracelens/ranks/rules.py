"""The data `tracelens ranks` works from (``data/ranks.toml``): when a late rank is noise.
Each entry carries its reason in the file."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cache

from .._resources import data_dir


@dataclass(frozen=True)
class RanksRules:
    on_time_ns: int  # a collective whose start times spread less than this is on time


@cache
def ranks_rules() -> RanksRules:
    with (data_dir() / "ranks.toml").open("rb") as fh:
        doc = tomllib.load(fh)
    return RanksRules(int(doc["stragglers"]["on_time_ns"]))
