"""Are two fingerprints runs of one program? The share of their launches that are of kernels
both run (by normalized name, every step counted), against ``limits.same_program_share`` in
fingerprint.toml. Below it the comparison sets no launches aside as a capture difference
(a capture of one program cut short reads so only when both are that program), and the
board opens with the caveat (:attr:`tracelens.fingerprint.PathDiff.unrelated`), as
``tracelens diff`` opens its board with one when two traces do not look like one program."""

from __future__ import annotations

import tomllib
from collections import Counter
from functools import cache
from pathlib import Path
from typing import Any

_LIMITS = Path(__file__).with_name("fingerprint.toml")


@cache
def same_program_share() -> float:
    """The share of launches in common below which two documents may be different
    programs (fingerprint.toml, limits.same_program_share)."""
    limits = tomllib.loads(_LIMITS.read_text(encoding="utf-8"))["limits"]
    return float(limits["same_program_share"])


def launches_by_name(doc: dict[str, Any]) -> Counter[str]:
    """The document's launches per normalized kernel name: each entry's launches (its
    variant counts past ``block_launches``, else its sequence) once per step it covers."""
    names = {v["id"]: v["name"] for v in doc["variants"]}
    out: Counter[str] = Counter()
    for entry in doc["paths"]:
        times = max(1, len(entry["steps"]))
        if "counts" in entry:
            pairs = entry["counts"]
        else:
            pairs = Counter(entry["sequence"]).items()
        for vid, n in pairs:
            out[names[vid]] += n * times
    return out


def shared_launches(a: dict[str, Any], b: dict[str, Any]) -> float | None:
    """The share (0..1) of both documents' launches that are of kernel names both run, as
    ``tracelens diff``'s comparability factor ``shared_launches`` counts it over traces;
    None when neither holds a launch."""
    na, nb = launches_by_name(a), launches_by_name(b)
    total = sum(na.values()) + sum(nb.values())
    if not total:
        return None
    both = na.keys() & nb.keys()
    return sum(na[n] + nb[n] for n in both) / total


def unrelated(a: dict[str, Any], b: dict[str, Any]) -> str | None:
    """Why A and B may be different programs (their launches share too few kernels), or
    None. Not said when a side's work is in CUDA graph replays traced at graph level: its
    kernels are in no table, so few in common says nothing of the program (the board says
    the path is not measured there)."""
    if a.get("graph_replays") or b.get("graph_replays"):
        return None
    share = shared_launches(a, b)
    bar = same_program_share()
    if share is None or share >= bar:
        return None
    return (
        f"A and B may be different programs: only {share:.0%} of their launches are of "
        f"kernels both run (runs of one program share {bar:.0%} or more); every launch is "
        "compared, none set aside as a capture that started later or ended earlier"
    )
