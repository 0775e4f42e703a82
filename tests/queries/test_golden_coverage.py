"""Every query file has a golden: ``queries/<stem>.sql`` needs at least one
``golden/<stem>__<case>.csv`` (a helper file's golden is a probe's result, see golden.py),
and every probe has its golden."""

from __future__ import annotations

from queries.golden import GOLDEN, PROBES
from tracelens._resources import queries_dir

# Queries another engineer owns right now, whose goldens come with their work (the
# fingerprint queries: tests/queries/test_fingerprint_queries.py). Remove a name once its
# golden has landed.
OWNED_ELSEWHERE: set[str] = set()


def _golden_stems() -> set[str]:
    return {path.name.split("__", 1)[0] for path in GOLDEN.glob("*__*.csv")}


def test_every_query_file_has_a_golden():
    stems = {path.stem for path in queries_dir().glob("*.sql")}
    missing = sorted(stems - _golden_stems() - OWNED_ELSEWHERE)
    assert not missing, f"query files without a golden CSV in {GOLDEN}: {missing}"


def test_the_exemptions_are_query_files():
    stems = {path.stem for path in queries_dir().glob("*.sql")}
    assert OWNED_ELSEWHERE <= stems, f"no such query files: {sorted(OWNED_ELSEWHERE - stems)}"


def test_every_probe_has_its_golden():
    # a probe's cases are named after it: <query>__<probe>.csv, <query>__<probe>_<more>.csv
    probes = {path.stem for path in PROBES.glob("*.sql")}
    cases = {path.stem for path in GOLDEN.glob("*__*.csv")}
    missing = sorted(p for p in probes if not any(c == p or c.startswith(f"{p}_") for c in cases))
    assert not missing, f"probes without a golden CSV: {missing}"
