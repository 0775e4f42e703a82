"""The in-order launch sequences of two runs, aligned per device."""

from __future__ import annotations

import difflib
from collections import Counter

from .collect import ALIGN_LIMIT
from .model import SequenceAlignment


def align_sequences(
    device: int, a: list[str], b: list[str], launches_a: int, launches_b: int
) -> SequenceAlignment:
    """Compare two in-order launch sequences (names) of one device."""
    ids: dict[str, int] = {}
    ia = [ids.setdefault(n, len(ids)) for n in a]
    ib = [ids.setdefault(n, len(ids)) for n in b]
    matcher = difflib.SequenceMatcher(None, ia, ib, autojunk=False)
    matched = sum(block.size for block in matcher.get_matching_blocks())
    first = None
    a_at = b_at = None
    replaced: Counter[tuple[str, str]] = Counter()
    only_a: Counter[str] = Counter()
    only_b: Counter[str] = Counter()
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        if first is None:
            first = i1
            a_at = a[i1] if i1 < len(a) else None
            b_at = b[j1] if j1 < len(b) else None
        if tag == "replace":
            for x, y in zip(a[i1:i2], b[j1:j2], strict=False):
                replaced[(x, y)] += 1
            for x in a[i1 + (j2 - j1) : i2]:
                only_a[x] += 1
            for y in b[j1 + (i2 - i1) : j2]:
                only_b[y] += 1
        elif tag == "delete":
            only_a.update(a[i1:i2])
        elif tag == "insert":
            only_b.update(b[j1:j2])
    if first is None and launches_a != launches_b:
        first = min(len(a), len(b))
    return SequenceAlignment(
        device=device,
        launches_a=launches_a,
        launches_b=launches_b,
        aligned=max(len(a), len(b)),
        matched_in_order=matched,
        first_divergence=first,
        a_at_divergence=a_at,
        b_at_divergence=b_at,
        replaced=tuple((x, y, n) for (x, y), n in replaced.most_common(10)),
        only_in_a=tuple(only_a.most_common(10)),
        only_in_b=tuple(only_b.most_common(10)),
        truncated=max(launches_a, launches_b) > ALIGN_LIMIT,
    )


def align_devices(sa, sb) -> tuple[SequenceAlignment, ...]:
    devices = sorted(set(sa.launches_per_device) | set(sb.launches_per_device))
    return tuple(
        align_sequences(
            d,
            sa.sequences.get(d, []),
            sb.sequences.get(d, []),
            sa.launches_per_device.get(d, 0),
            sb.launches_per_device.get(d, 0),
        )
        for d in devices
    )
