"""Locating the data files that ship with the package.

In a wheel, ``queries/`` and ``reports/templates/`` are installed inside the package as
``tracelens/queries`` and ``tracelens/templates``. In a source checkout (editable install,
or tests run from the tree) they live at the repository root; we look there second.
"""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parent
_REPO_ROOT = _PACKAGE_DIR.parent.parent


def _find(packaged: str, in_repo: str) -> Path:
    for candidate in (_PACKAGE_DIR / packaged, _REPO_ROOT / in_repo):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(
        f"tracelens data directory {packaged!r} is missing from the installation "
        f"(looked in {_PACKAGE_DIR / packaged} and {_REPO_ROOT / in_repo}); reinstall nsys-tracelens"
    )


def queries_dir() -> Path:
    return _find("queries", "queries")


def templates_dir() -> Path:
    return _find("templates", "reports/templates")


def data_dir() -> Path:
    """Package data that lives inside ``src/tracelens/data`` (rules, demo traces)."""
    return _PACKAGE_DIR / "data"


@cache
def query(name: str) -> str:
    """The text of ``queries/<name>.sql``."""
    return (queries_dir() / f"{name}.sql").read_text(encoding="utf-8")


@cache
def copy_kind_labels() -> dict[int, str]:
    """copyKind -> its label (``'[CUDA memcpy DtoD]'``): the one copy-kind vocabulary,
    the table ``queries/_memcpy_labels.sql`` creates in SQL, read here for Python."""
    import re

    rows = re.findall(r"\((\d+),\s*'([^']*)'\)", query("_memcpy_labels"))
    return {int(kind): label for kind, label in rows}


# What code_digest reads: sources, queries, rules and schemas, templates and their assets.
_CODE_SUFFIXES = frozenset((".py", ".sql", ".toml", ".json", ".j2", ".css", ".js", ".html", ".svg"))


@cache
def code_digest() -> str:
    """A digest of everything in this tracelens that computes what a cache entry keeps
    beside its tables (util's work and accounting, the steps, the diff's work, a
    fingerprint document, a report page): every source, query, rule and template file, and
    the versions of tracelens and of the libraries whose arithmetic and sorts results go
    through. One digest for every kept file: a partial one (only the queries a file
    "depends on") goes stale silently when a helper it never named changes; a whole one
    only costs a rebuild of kept files after an upgrade. ~10 ms (no library is imported)."""
    import hashlib
    from importlib.metadata import PackageNotFoundError, version

    digest = hashlib.sha256(b"tracelens kept files")
    for lib in ("nsys-tracelens", "duckdb", "polars", "jinja2"):
        try:
            digest.update(f"{lib} {version(lib)}\n".encode())
        except PackageNotFoundError:  # a source tree run without installing
            digest.update(f"{lib} ?\n".encode())
    roots = (_PACKAGE_DIR, queries_dir().resolve(), templates_dir().resolve())
    for root in dict.fromkeys(roots):
        for relative in _code_files(str(root)):
            digest.update(relative.encode() + b"\0")
            with open(os.path.join(root, relative), "rb") as file:
                digest.update(file.read())
    return digest.hexdigest()[:16]


def _code_files(root: str) -> list[str]:
    """The files under ``root`` with a suffix of ``_CODE_SUFFIXES``, as paths relative to it
    ("/"-separated), in the order of their parts (as sorted pathlib paths). os.walk and
    strings, not pathlib: ~0.06 s less for the ~430 files, which each kept-file read pays
    (a cached census's whole run is ~0.3 s)."""
    found = []
    for folder, _dirs, names in os.walk(root):
        prefix = os.path.relpath(folder, root).replace(os.sep, "/")
        for name in names:
            relative = name if prefix == "." else f"{prefix}/{name}"
            # files only, as pathlib's is_file(): a broken link is left out, not read
            if os.path.splitext(name)[1] in _CODE_SUFFIXES and not name.startswith("."):
                if os.path.isfile(os.path.join(root, relative)):
                    found.append(relative)
    return sorted(found, key=lambda relative: relative.split("/"))
