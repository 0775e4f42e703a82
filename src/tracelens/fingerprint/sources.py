"""Fingerprints from what a user names on the command line: a fingerprint ``.json`` or a
trace (fingerprinted on the fly), and the comparison of two such sources."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from .build import build
from .compare import PathDiff, compare
from .document import load

#: ``--fail-if`` names that gate on the path; a bare name means ``NAME>0``.
PATH_GATES = (
    "path_changed",
    "variant_changed",
    "danger_added",
    "order_changed",
    "launches_moved",
)
_FIGURE = re.compile(r"\s*([A-Za-z_]\w*)")


def is_fingerprint_file(path: str | Path | None) -> bool:
    return path is not None and Path(path).suffix.lower() == ".json"


def of(source: str | Path) -> dict[str, Any]:
    """The fingerprint of ``source``: read from a ``.json`` file (checked), or built from
    the trace."""
    if is_fingerprint_file(source):
        return load(source)
    from ..trace import open as open_trace

    with open_trace(source) as trace:
        return build(trace)


def path_diff(a: str | Path, b: str | Path) -> PathDiff:
    """Compare the numerical paths of two sources (each a fingerprint or a trace)."""
    return compare(of(a), of(b))


def wants_path(a: str | Path | None, b: str | Path | None, gates: list[str] | None) -> bool:
    """Whether ``diff A B`` is a path comparison: a fingerprint on either side, or a
    ``--fail-if`` that names a path figure."""
    named = {m.group(1) for g in gates or () if (m := _FIGURE.match(g))}
    return is_fingerprint_file(a) or is_fingerprint_file(b) or bool(named & set(PATH_GATES))


def gate_expressions(gates: list[str] | None) -> list[str]:
    """``--fail-if`` expressions with the bare path names written out (``path_changed`` ->
    ``path_changed>0``), for the diff's gate checker."""
    return [f"{g.strip()}>0" if g.strip() in PATH_GATES else g for g in gates or ()]
