"""The cache as a whole: every entry with its size and last use, the cap that eviction keeps
the cache under (the least recently used entries first, never one a run holds), and what
``tracelens cache info`` shows and ``tracelens cache clear`` removes.

:mod:`tracelens.cache` makes and reads one entry (its key, its manifest, its files); this
module only lists the entries by their directories and manifests, and removes them whole
(under the leases of :mod:`tracelens.cache_leases`). :func:`.cache.writing` calls
:func:`evict` once it has added to an entry.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import NamedTuple

from .cache import (
    CACHE_FORMAT,
    MANIFEST,
    PARTIAL,
    REPORT_EXPORT,
    REPORT_PREFIX,
    Settings,
    _read_manifest,
    traces_dir,
)
from .cache_leases import is_held, remove_unless_held


@dataclass(frozen=True)
class Entry:
    """One cached trace: its directory, the trace it copies, bytes, last use (epoch s);
    ``stale``: written by a version with another cache format (never read again, and
    evicted first since nothing touches it)."""

    path: Path
    source: str
    size_bytes: int
    last_used: float
    built_s: float | None
    stale: bool = False
    export: bool = False  # a .nsys-rep's SQLite export (``source`` names the report)
    held: bool = False  # a running command holds a lease on it (set by cache_info only)


@dataclass(frozen=True)
class CacheInfo:
    """What ``tracelens cache info`` shows."""

    root: Path
    enabled: bool
    min_bytes: int
    max_bytes: int
    entries: tuple[Entry, ...]  # most recently used first
    building: int  # tables being written (or left by a killed run)
    # why nothing new can be cached there (see :func:`unwritable`); None: it can
    unwritable: str | None = None

    @property
    def size_bytes(self) -> int:
        return sum(e.size_bytes for e in self.entries)


def _dir_bytes(path: Path) -> int:
    total = 0
    for f in path.rglob("*"):
        with contextlib.suppress(OSError):
            if f.is_file():
                total += f.stat().st_size
    return total


def entries(root: Path) -> list[Entry]:
    """Every entry, most recently used first: those with a manifest, of this format and of
    an older one (they count against ``max_bytes`` until evicted or cleared), and the
    ``.nsys-rep`` exports an older version left without one."""
    found = []
    base = traces_dir(root)
    if not base.is_dir():
        return []
    for entry in base.iterdir():
        export = entry.name.startswith(REPORT_PREFIX)
        manifest = _read_manifest(entry, any_format=True)
        if manifest is None and export:
            manifest = {"format": CACHE_FORMAT, "source": "(a .nsys-rep: its report unknown)"}
            marker = entry / REPORT_EXPORT
        else:
            marker = entry / MANIFEST
        if manifest is None:  # not an entry, or one whose writer has not listed it yet
            continue
        try:
            used = marker.stat().st_mtime
        except OSError:
            continue
        source, built = str(manifest.get("source")), manifest.get("built_s")
        stale = manifest.get("format") != CACHE_FORMAT
        found.append(Entry(entry, source, _dir_bytes(entry), used, built, stale, export))
    return sorted(found, key=lambda e: e.last_used, reverse=True)


class Eviction(NamedTuple):
    """What :func:`evict` did: the entries it removed, and those it would have removed but
    a running command holds (:func:`hold`), least recently used first."""

    removed: list[Entry]
    held: list[Entry]


def evict(settings: Settings, keep: set[str] = frozenset()) -> Eviction:
    """Remove entries of an older cache format, then the least recently used, until the
    cache fits ``max_bytes`` (never those named in ``keep``, nor those a run holds:
    :func:`hold`, which are passed over and listed)."""
    current = entries(settings.root)
    total = sum(e.size_bytes for e in current)
    removed, held = [], []
    # stale first (this version never reads them), then least recently used first
    for entry in sorted(current, key=lambda e: (not e.stale, e.last_used)):
        if total <= settings.max_bytes:
            break
        if entry.path.name in keep:
            continue
        if not remove_unless_held(entry.path):
            held.append(entry)
            continue
        total -= entry.size_bytes
        removed.append(entry)
    return Eviction(removed, held)


def held_note(held: list[Entry], max_bytes: int) -> str:
    """What a command says of the entries eviction passed over (:attr:`Eviction.held`)."""
    n, size = len(held), sum(e.size_bytes for e in held)
    return (
        f"the cache stays over its {max_bytes / 1e6:,.0f} MB cap: {n} cached "
        f"trace{'' if n == 1 else 's'} ({size / 1e6:,.1f} MB) that running commands read "
        "were kept (a later build evicts them once no command reads them)"
    )


def cache_info(settings: Settings | None = None) -> CacheInfo:
    settings = settings or Settings.from_env()
    base = traces_dir(settings.root)
    building = len(list(base.glob(f"*/*{PARTIAL}"))) if base.is_dir() else 0
    return CacheInfo(
        root=settings.root,
        enabled=settings.enabled,
        min_bytes=settings.min_bytes,
        max_bytes=settings.max_bytes,
        entries=tuple(replace(e, held=is_held(e.path)) for e in entries(settings.root)),
        building=building,
        unwritable=unwritable(settings.root),
    )


def unwritable(root: Path) -> str | None:
    """Why no trace can be cached in ``root`` (commands then read directly, saying so once),
    or None when it can: ``root`` (or the directory it would be created in) is not a
    directory or not writable, or its ``traces`` is not a directory. A read-only ``root``
    still serves the entries it holds."""
    existing = root
    while not os.path.lexists(existing):  # the directory root would be created in
        if existing.parent == existing:
            return None
        existing = existing.parent
    place = str(root) if existing == root else f"{root} cannot be created: {existing}"
    if not existing.is_dir():
        return f"{place} is not a directory"
    if not os.access(existing, os.W_OK | os.X_OK):
        return f"{place} is not writable"
    traces = traces_dir(root)
    if os.path.lexists(traces) and not traces.is_dir():
        return f"{traces} is not a directory"
    if traces.is_dir() and not os.access(traces, os.W_OK | os.X_OK):
        return f"{traces} is not writable"
    return None


class Cleared(NamedTuple):
    """What :func:`clear` did: the entries it removed and their bytes (leftover builds are
    removed uncounted), and the entries or builds it kept, and their bytes."""

    removed: int
    size_bytes: int
    kept: int
    kept_bytes: int


def clear(settings: Settings | None = None) -> Cleared:
    """Remove every entry and leftover build, except those a running command holds a lease
    on (:mod:`.cache_leases`: it reads or writes them; a ``.nsys-rep``'s export is the only
    copy its run reads), which are kept and counted."""
    settings = settings or Settings.from_env()
    base = traces_dir(settings.root)
    listed = {e.path: e for e in entries(settings.root)}
    removed = size = kept = kept_bytes = 0
    for child in base.iterdir() if base.is_dir() else ():
        if not child.is_dir():
            child.unlink(missing_ok=True)
            continue
        entry = listed.get(child)
        child_bytes = entry.size_bytes if entry is not None else _dir_bytes(child)
        if not remove_unless_held(child):
            kept, kept_bytes = kept + 1, kept_bytes + child_bytes
        elif entry is not None:
            removed, size = removed + 1, size + child_bytes
    return Cleared(removed, size, kept, kept_bytes)
