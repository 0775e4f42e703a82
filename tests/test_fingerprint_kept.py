"""A cached trace's fingerprint document kept in its cache entry (tracelens.fingerprint.kept):
written by the first build through the cache, read back by later ones with the same bytes
and without reading the launches, never at another version, never for a direct read or a
build handed its steps. Each test has its own cache directory (conftest);
TRACELENS_CACHE_MIN_MB=0 caches the small demo trace."""

from __future__ import annotations

import importlib
from pathlib import Path

import tracelens
from tracelens import cache
from tracelens import fingerprint as fp

kept = importlib.import_module("tracelens.fingerprint.kept")
units = importlib.import_module("tracelens.fingerprint.units")


def _kept_file(trace) -> Path | None:
    return cache.derived_path(trace.parquet_dir, kept._name(), kept._version())


def _no_read(*_args, **_kwargs):
    raise AssertionError("the launches were read")


def test_the_document_is_kept_and_read_back_with_the_same_bytes(demo, cache_dir, monkeypatch):
    with tracelens.open(demo, cache=False) as direct:
        expected = fp.dumps(fp(direct))
        assert kept.read(direct) is None  # a direct read keeps nothing
    with tracelens.open(demo) as first:
        assert kept.read(first) is None
        assert fp.dumps(fp(first)) == expected
        assert _kept_file(first) is not None
    monkeypatch.setattr(units, "read_launches", _no_read)
    monkeypatch.setattr(
        importlib.import_module("tracelens.fingerprint.build"), "read_launches", _no_read
    )
    with tracelens.open(demo) as again:
        assert fp.dumps(fp(again)) == expected


def test_another_version_or_handed_steps_build_it_again(demo, cache_dir, monkeypatch):
    build = importlib.import_module("tracelens.fingerprint.build")
    with tracelens.open(demo) as first:
        expected = fp.dumps(fp(first))
    reads = []
    real = build.read_launches
    monkeypatch.setattr(build, "read_launches", lambda *a, **k: reads.append(1) or real(*a, **k))
    with tracelens.open(demo) as again:
        assert fp.dumps(build.build(again, steps=again.steps())) == expected
    assert reads == [1]  # handed its steps: built, not read back
    monkeypatch.setattr(kept, "_version", lambda: "another")
    with tracelens.open(demo) as other:
        assert kept.read(other) is None
        assert fp.dumps(fp(other)) == expected
    assert reads == [1, 1]
