"""Leases on cache entries: what a run reads is never evicted, nor cleared when it has no
other copy (a ``.nsys-rep``'s SQLite export).

Why: one trace's cache build evicted, past the cap, the entry another run (of another
trace) was reading, whose later reads of the deleted files then failed; and ``cache clear``
removed the SQLite export of a ``.nsys-rep`` that a run was reading, which it reads by its
path for as long as it runs (a Parquet entry's run then reads its trace instead; an
export's run has nothing else to read). A reader holds a shared lock on the entry's
:data:`READERS` file while it reads the entry; eviction, and clear of an export, take the
exclusive lock without waiting and pass over an entry they cannot get. The kernel drops the
lock when the reader closes the file or dies, so a killed run pins nothing.
"""

from __future__ import annotations

import shutil
from pathlib import Path

READERS = ".readers"
MANIFEST = "manifest.json"  # cache.MANIFEST: an entry is listed once it has one


def lock_shared(entry: Path):
    """``entry``'s readers file, open and share-locked (waits only while an eviction removes
    the entry). Raises OSError when it cannot be opened."""
    import fcntl

    try:
        held = (entry / READERS).open("a")
    except PermissionError:  # a read-only cache: a lock needs no write access
        held = (entry / READERS).open("r")
    try:
        fcntl.flock(held, fcntl.LOCK_SH)
    except OSError:
        held.close()
        raise
    return held


def hold(entry: Path):
    """A lease on ``entry`` for as long as the returned file stays open (close it, or let
    it be collected, to release): eviction never removes an entry with a lease. None when
    the entry is gone (evicted meanwhile: the caller reads without it) or its readers file
    cannot be made (a read-only cache nobody here can evict from)."""
    try:
        held = lock_shared(entry)
    except OSError:
        return None
    if not (entry / MANIFEST).is_file():  # removed before the lock was granted
        held.close()
        return None
    return held


def remove_unless_held(entry: Path) -> bool:
    """Remove ``entry`` unless a run holds a lease on it; whether it was removed."""
    import fcntl

    try:
        readers = (entry / READERS).open("a")
    except OSError:
        return False
    with readers:
        try:
            fcntl.flock(readers, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # a run reads it (or writes it: writing() holds a lease too)
            return False
        shutil.rmtree(entry, ignore_errors=True)  # under the lock: no lease is granted meanwhile
    return True


def is_held(entry: Path) -> bool:
    """Whether a run holds a lease on ``entry`` now (for ``cache info``; creates nothing)."""
    import fcntl

    try:
        readers = (entry / READERS).open("r")
    except OSError:  # no readers file: nobody ever took a lease
        return False
    with readers:
        try:
            fcntl.flock(readers, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return True
    return False  # closing the file released the probe's lock
