"""Reading and writing fingerprint documents: byte-stable JSON, and a check of a file a user
hands in (format, version and shape) before anything compares it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..errors import UsageError
from .build import FORMAT, VERSION

SCHEMA_PATH = Path(__file__).resolve().parent / "fingerprint.schema.json"

_TOP = ("format", "version", "regions", "steps", "devices", "launches", "variants", "paths")


def dumps(doc: dict[str, Any]) -> str:
    """The document as JSON text: one variant and one path entry per line, keys in the
    document's order, so the same document always gives the same bytes and a baseline's
    diff in a pull request reads line by line."""

    # One encoder for every line: json.dumps with options builds a new one per call (209k
    # path entries of the NVTX bench trace: 1.25 -> 0.5 CPU s).
    one = json.JSONEncoder(ensure_ascii=False, separators=(", ", ": ")).encode

    lines = ["{"]
    keys = list(doc)
    for i, key in enumerate(keys):
        comma = "," if i < len(keys) - 1 else ""
        value = doc[key]
        if key in ("variants", "paths"):
            if not value:
                lines.append(f"  {one(key)}: []{comma}")
                continue
            lines.append(f"  {one(key)}: [")
            lines.extend(
                f"    {one(item)}{',' if j < len(value) - 1 else ''}"
                for j, item in enumerate(value)
            )
            lines.append(f"  ]{comma}")
        else:
            lines.append(f"  {one(key)}: {one(value)}{comma}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def validate(doc: Any, where: str = "fingerprint") -> dict[str, Any]:
    """``doc`` if it is a fingerprint document this version reads; UsageError otherwise
    (the checks a comparison relies on; the full shape is in fingerprint.schema.json)."""
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise UsageError(f'{where}: not a tracelens fingerprint (no "format": "{FORMAT}")')
    if doc.get("version") != VERSION:
        # Version 1 kept PyTorch's per-call seq/op_id in NVTX labels: its regions do not
        # match version 2's, so comparing would report every such region as changed.
        raise UsageError(
            f"{where}: fingerprint format version {doc.get('version')!r}, this tracelens "
            f"reads version {VERSION}; regenerate the baseline with `tracelens fingerprint`"
        )
    missing = [k for k in _TOP if k not in doc]
    if missing:
        raise UsageError(f"{where}: fingerprint lacks {', '.join(missing)}")
    ids = {v.get("id") for v in doc["variants"] if isinstance(v, dict)}
    for entry in doc["paths"]:
        seq = entry.get("sequence") if isinstance(entry, dict) else None
        if not isinstance(seq, list) or not set(seq) <= ids:
            raise UsageError(f"{where}: a path entry refers to a variant the file does not list")
    return doc


def loads(text: str, where: str = "fingerprint") -> dict[str, Any]:
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"{where}: not valid JSON ({exc.msg}, line {exc.lineno})") from None
    return validate(doc, where)


def load(path: str | Path) -> dict[str, Any]:
    """Read and check a fingerprint file; UsageError with the file's name when it is not."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: cannot read ({getattr(exc, 'strerror', None) or exc})") from None
    return loads(text, str(path))
