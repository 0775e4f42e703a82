"""Reading and writing fingerprint documents: byte-stable JSON, and a check of a file a user
hands in (format, version and shape) before anything compares it."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from ..errors import UsageError
from .build import FORMAT, VERSION

#: The versions this tracelens reads: version 10 lacks only the entries' places (``at``,
#: fingerprint.places), so its first divergence is found region by region, as before;
#: version 11 lists every step of an entry (12 writes runs of them, :func:`step_runs`).
READS = (10, 11, VERSION)

#: Steps a document's runs may stand for, in all: ``[1, 1e12]`` in a file edited by hand
#: would otherwise be listed step by step, and a comparison costs ~1.7 kB and 40 us per
#: listed step (a 1 kB file of three [1, 3000000] runs took a diff past 11 GB). A million
#: covers 100,000 steps of 10 regions (the 5M-kernel bench trace has 513 steps).
MAX_RUN_STEPS = 1_000_000
#: The first version that writes steps as runs.
RUNS_VERSION = 12

SCHEMA_PATH = Path(__file__).resolve().parent / "fingerprint.schema.json"

_TOP = ("format", "version", "regions", "steps", "devices", "launches", "variants", "paths")


class _Invalid(Exception):
    """What is wrong with a document's shape (validate names the file)."""


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
            if key == "paths" and doc.get("version", RUNS_VERSION) >= RUNS_VERSION:
                value = [_with_runs(entry) for entry in value]
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


def step_runs(steps: list[int]) -> list[int | list[int]]:
    """``steps`` as version 12 writes them: each stretch of three or more consecutive steps
    as ``[first, last]``, the others as they are (``[1, 3, 4, 5, 9]`` -> ``[1, [3, 5], 9]``)."""
    out: list[int | list[int]] = []
    i, n = 0, len(steps)
    while i < n:
        j = i
        while j + 1 < n and steps[j + 1] == steps[j] + 1:
            j += 1
        if j - i >= 2:
            out.append([steps[i], steps[j]])
        else:
            out.extend(steps[i : j + 1])
        i = j + 1
    return out


def _with_runs(entry: dict[str, Any]) -> dict[str, Any]:
    """A path entry as written: its steps as runs (the same keys, in order)."""
    steps = entry.get("steps")
    if not isinstance(steps, list) or len(steps) < 3:
        return entry
    return {**entry, "steps": step_runs(steps)}


def _expand_runs(doc: Any) -> None:
    """List again every step a version 12 document writes as a run (in place); a run that
    is not two integers ``1 <= first <= last``, or runs standing for more than
    MAX_RUN_STEPS steps, are _Invalid. Anything else that is wrong is validate's to say."""
    if not isinstance(doc, dict) or doc.get("version") != RUNS_VERSION:
        return
    paths = doc.get("paths")
    if not isinstance(paths, list):
        return
    total = 0
    for i, entry in enumerate(paths):
        steps = entry.get("steps") if isinstance(entry, dict) else None
        if not isinstance(steps, list) or all(type(s) is int for s in steps):
            continue
        listed: list[Any] = []
        for j, step in enumerate(steps):
            if type(step) is not list:
                listed.append(step)
                continue
            if (
                len(step) != 2
                or not all(type(s) is int for s in step)
                or not 1 <= step[0] <= step[1]
            ):
                raise _Invalid(
                    f"paths[{i}].steps[{j}] is {_shown(step)}, not a step or a run "
                    "[first, last] of steps"
                )
            total += step[1] - step[0] + 1
            if total > MAX_RUN_STEPS:
                raise _Invalid(f"its step runs stand for more than {MAX_RUN_STEPS:,} steps")
            listed.extend(range(step[0], step[1] + 1))
        entry["steps"] = listed


def validate(doc: Any, where: str = "fingerprint") -> dict[str, Any]:
    """``doc`` if it is a fingerprint document this version reads; UsageError otherwise:
    format and version first, then the shape fingerprint.schema.json states (checked by
    hand: every key, type and minimum, and each path's variant ids), so a file edited by
    hand is one line naming what is wrong, not an internal error or a silent pass. Version
    12's step runs are listed step by step again, in ``doc`` itself."""
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise UsageError(f'{where}: not a tracelens fingerprint (no "format": "{FORMAT}")')
    if doc.get("version") not in READS:
        # Version 1 kept PyTorch's per-call seq/op_id in NVTX labels (its regions do not
        # match later ones); version 2 put a launch in the step whose GPU window held its
        # start (where windows overlap, its steps hold other launches): comparing either
        # with this version would report changes that are not; version 3 dropped NVTX
        # ranges left open at the end of the capture, put work in start/end ranges that
        # ended on another thread and left out the domain of a named domain's range;
        # version 4 numbered NVTX steps across processes (a multi-process job's step keys
        # changed with the ranks' start order); version 5 merged the launches outside the
        # steps into a step's entry with the same sequence (they vanished from its units);
        # version 6 put the calls made after the last NVTX event inside a range left open
        # at the end of the capture outside every range; version 7 interleaved a process's
        # threads by correlation id (fingerprint.threads); version 8 gave a call after the
        # last NVTX event a closed range enclosing an open one; version 9 did not say which
        # launches outside the steps are before the first step or after the last.
        raise UsageError(
            f"{where}: fingerprint format version {doc.get('version')!r}, this tracelens "
            f"reads versions {', '.join(map(str, READS[:-1]))} and {READS[-1]}: the baseline "
            "must be regenerated "
            "(`tracelens fingerprint` "
            "on its trace)"
        )
    missing = [k for k in _TOP if k not in doc]
    if missing:
        raise UsageError(f"{where}: fingerprint lacks {', '.join(missing)}")
    try:
        _expand_runs(doc)
        _check_shape(doc)
    except _Invalid as exc:
        raise UsageError(f"{where}: not a valid fingerprint ({exc})") from None
    ids = {v["id"] for v in doc["variants"]}
    for entry in doc["paths"]:
        if not set(entry["sequence"]) <= ids:
            raise UsageError(f"{where}: a path entry refers to a variant the file does not list")
    return doc


def loads(text: str, where: str = "fingerprint") -> dict[str, Any]:
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"{where}: not valid JSON ({exc.msg}, line {exc.lineno})") from None
    except RecursionError:  # arrays or objects nested thousands deep: no document is
        raise UsageError(f"{where}: not valid JSON (nested too deeply)") from None
    return validate(doc, where)


def load(path: str | Path) -> dict[str, Any]:
    """Read and check a fingerprint file; UsageError with the file's name when it is not."""
    path = Path(path)
    try:
        # utf-8-sig: a byte order mark (an editor's, PowerShell's) is not the JSON's text
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise UsageError(f"{path}: no such file") from None
    except UnicodeDecodeError:
        raise UsageError(_not_text(path)) from None
    except OSError as exc:
        raise UsageError(f"{path}: cannot read ({exc.strerror or exc})") from None
    return loads(text, str(path))


def _not_text(path: Path) -> str:
    """What a baseline that is not UTF-8 text is, in one line: a trace given where its
    fingerprint belongs (``--check run.sqlite``) said "cannot read ('utf-8' codec can't
    decode byte 0xf1 ...)", which names neither the mistake nor the fix."""
    from .._sqlite import SQLITE_MAGIC

    with path.open("rb") as f:
        head = f.read(len(SQLITE_MAGIC))
    if head == SQLITE_MAGIC:
        return (
            f"{path}: an SQLite file (an nsys export?), not a fingerprint: make the baseline "
            f"with `tracelens fingerprint {path} -o BASELINE.json`, or compare the two "
            "traces with `tracelens diff`"
        )
    return f"{path}: not a fingerprint (not UTF-8 text; `tracelens fingerprint TRACE -o FILE` writes one)"


# The shape of fingerprint.schema.json, key by key (required keys, then optional ones).
_TOP_KEYS = (
    "format",
    "version",
    "generator",
    "regions",
    "steps",
    "block_launches",
    "devices",
    "launches",
    "variants",
    "paths",
)
_VARIANT_KEYS = ("id", "name", "grid", "block", "family", "fields", "danger")
_PATH_KEYS = ("device", "region", "steps", "launches", "sequence")
_PATH_KEYSET = frozenset(_PATH_KEYS)


def _check_shape(doc: dict[str, Any]) -> None:
    _object(doc, "the document", _TOP_KEYS, ("notes", "graph_replays"))
    _string(doc["generator"], '"generator"')
    _choice(doc["regions"], '"regions"', ("nvtx", "step"))
    _object(doc["steps"], '"steps"', ("method", "count"))
    _choice(doc["steps"]["method"], '"steps.method"', ("range", "marker", "period", "none"))
    _integer(doc["steps"]["count"], '"steps.count"', 0)
    _integer(doc["block_launches"], '"block_launches"', 1)
    _integers(doc["devices"], '"devices"')
    _integer(doc["launches"], '"launches"', 0)
    if "notes" in doc:
        _strings(doc["notes"], '"notes"')
    if "graph_replays" in doc:
        _integer(doc["graph_replays"], '"graph_replays"', 1)
    first: dict[int, int] = {}  # variant id -> its index: an id listed twice is ambiguous
    for i, variant in enumerate(_list(doc["variants"], '"variants"')):
        _check_variant(variant, f"variants[{i}]")
        other = first.setdefault(variant["id"], i)
        if other != i:
            raise _Invalid(f"variants[{i}].id is {variant['id']}, as variants[{other}].id is")
    for i, entry in enumerate(_list(doc["paths"], '"paths"')):
        if not _plain_path(entry):  # a baseline has up to ~10^5 of them: the quick test first
            _check_path(entry, f"paths[{i}]")
    _check_steps_once(doc["paths"])


def _check_steps_once(paths: list[dict[str, Any]]) -> None:
    """Each step of a device's region in one entry at most: a file edited by hand that lists
    one twice was compared as if the run had the step twice ("A's capture ends earlier (it
    holds 3 steps, B 3)")."""
    entries: dict[tuple[int, tuple[str, ...]], list[int]] = {}
    for i, entry in enumerate(paths):
        if len(set(entry["steps"])) != len(entry["steps"]):
            twice = next(s for s in entry["steps"] if entry["steps"].count(s) > 1)
            raise _Invalid(f"paths[{i}].steps lists step {twice} twice")
        entries.setdefault((entry["device"], tuple(entry["region"])), []).append(i)
    for indices in entries.values():
        if len(indices) == 1:  # most regions: one entry, checked above
            continue
        seen: dict[int, int] = {}
        for i in indices:
            for step in paths[i]["steps"]:
                other = seen.setdefault(step, i)
                if other != i:
                    raise _Invalid(
                        f"paths[{i}] has step {step} of its device and region, as "
                        f"paths[{other}] has"
                    )


def _plain_path(entry: Any) -> bool:
    """``entry`` is a path entry without blocks and counts, every value of the right type
    (_check_path says what is wrong otherwise, and checks entries with blocks)."""
    return (
        type(entry) is dict
        and entry.keys() == _PATH_KEYSET
        and type(entry["device"]) is int
        and type(entry["launches"]) is int
        and entry["launches"] >= 1
        and type(entry["region"]) is list
        and all(type(label) is str for label in entry["region"])
        and type(entry["steps"]) is list
        and all(type(step) is int and step >= 1 for step in entry["steps"])
        and type(entry["sequence"]) is list
        and all(type(id_) is int and id_ >= 0 for id_ in entry["sequence"])
    )


def _check_variant(variant: Any, what: str) -> None:
    _object(variant, what, _VARIANT_KEYS)
    _integer(variant["id"], f"{what}.id", 0)
    _string(variant["name"], f"{what}.name")
    for key in ("grid", "block"):
        dims = _list(variant[key], f"{what}.{key}")
        if len(dims) != 3 or not all(d is None or type(d) is int for d in dims):
            raise _Invalid(f"{what}.{key} is {_shown(dims)}, not 3 integers or nulls")
    _string(variant["family"], f"{what}.family")
    fields = _object(variant["fields"], f"{what}.fields", ())
    for key, value in fields.items():
        _string(value, f"{what}.fields.{key}")
    _strings(variant["danger"], f"{what}.danger")


def _check_path(entry: Any, what: str) -> None:
    _object(entry, what, _PATH_KEYS, ("blocks", "counts", "at", "before", "after"))
    _integer(entry["device"], f"{what}.device")
    _strings(entry["region"], f"{what}.region")
    _integers(entry["steps"], f"{what}.steps", 1)
    _integer(entry["launches"], f"{what}.launches", 1)
    _integers(entry["sequence"], f"{what}.sequence", 0)
    if "blocks" in entry:
        for i, block in enumerate(_list(entry["blocks"], f"{what}.blocks")):
            if not isinstance(block, str) or not _BLOCK.fullmatch(block):
                raise _Invalid(f"{what}.blocks[{i}] is {_shown(block)}, not hex.hex")
    if "counts" in entry:
        for i, pair in enumerate(_list(entry["counts"], f"{what}.counts")):
            _integers(pair, f"{what}.counts[{i}]")
            if len(pair) != 2:
                raise _Invalid(f"{what}.counts[{i}] is {_shown(pair)}, not [variant, launches]")
    if "at" in entry:
        _integers(entry["at"], f"{what}.at", 0)
        # [] too, as the schema (minItems 2): an entry has a launch, so its places a pair
        # at least; tracelens leaves ``at`` out where it has none to say
        if len(entry["at"]) % 2 or entry["at"][:1] != [0]:
            raise _Invalid(f"{what}.at is not offset, place pairs from offset 0")
    _check_ends(entry, what)


def _check_ends(entry: dict[str, Any], what: str) -> None:
    """``before`` and ``after`` (fingerprint.ends): on an entry outside the steps only, and
    at most its launches between them."""
    for key in ("before", "after"):
        if key in entry:
            _integer(entry[key], f"{what}.{key}", 1)
            if entry["steps"]:
                raise _Invalid(f'{what} has "{key}" and steps (only launches outside them do)')
    if entry.get("before", 0) + entry.get("after", 0) > entry["launches"]:
        raise _Invalid(f"{what}.before + after is more than its launches")


_BLOCK = re.compile(r"[0-9a-f]+\.[0-9a-f]+")


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 40 else text[:37] + "..."


def _object(
    value: Any, what: str, required: tuple[str, ...], optional: tuple[str, ...] = ()
) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _Invalid(f"{what} is {_shown(value)}, not an object")
    for key in required:
        if key not in value:
            raise _Invalid(f'{what} has no "{key}"')
    if required or optional:  # fields (no keys listed) takes any key
        unknown = [key for key in value if key not in required and key not in optional]
        if unknown:
            raise _Invalid(f'{what} has an unknown key "{unknown[0]}"')
    return value


def _list(value: Any, what: str) -> list[Any]:
    if not isinstance(value, list):
        raise _Invalid(f"{what} is {_shown(value)}, not a list")
    return value


def _string(value: Any, what: str) -> None:
    if not isinstance(value, str):
        raise _Invalid(f"{what} is {_shown(value)}, not a string")


def _strings(value: Any, what: str) -> None:
    for i, item in enumerate(_list(value, what)):
        _string(item, f"{what}[{i}]")


def _choice(value: Any, what: str, choices: tuple[str, ...]) -> None:
    if not isinstance(value, str) or value not in choices:
        raise _Invalid(f"{what} is {_shown(value)}, not one of {', '.join(choices)}")


def _integer(value: Any, what: str, minimum: int | None = None) -> None:
    if type(value) is not int:  # JSON true/false load as bool, an int subclass: not ids
        raise _Invalid(f"{what} is {_shown(value)}, not an integer")
    if minimum is not None and value < minimum:
        raise _Invalid(f"{what} is {value}, less than {minimum}")


def _integers(value: Any, what: str, minimum: int | None = None) -> None:
    items = _list(value, what)
    # Fast path first: a baseline's sequences hold up to block_launches ids per path entry.
    if all(type(item) is int for item in items) and (
        minimum is None or not items or min(items) >= minimum
    ):
        return
    for i, item in enumerate(items):
        _integer(item, f"{what}[{i}]", minimum)
