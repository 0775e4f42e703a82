"""A cached trace's NVTX projection kept in its cache entry (tracelens.nvtx_kept): written by
the first nvtx --gpu through the cache, read back by later ones (every --group, --each)
with the same rows and without the sweep, never at another version, never for a direct
read. Each test has its own cache directory (conftest); TRACELENS_CACHE_MIN_MB=0 caches
the small demo trace."""

from __future__ import annotations

from pathlib import Path

import tracelens
from tracelens import cache, nvtx, nvtx_kept
from tracelens.choices import NVTX_GROUPS


def _kept_file(trace) -> Path | None:
    return cache.derived_path(trace.parquet_dir, nvtx_kept._name(), nvtx_kept._version())


def _no_sweep(*_args, **_kwargs):
    raise AssertionError("the ranges were swept")


def _reports(trace) -> list[str]:
    frames = [nvtx.gpu_summary(trace, group=group) for group in NVTX_GROUPS]
    return [frame.write_csv() for frame in [*frames, nvtx.gpu_projection(trace)]]


def test_the_projection_is_kept_and_read_back_with_the_same_rows(demo, cache_dir, monkeypatch):
    with tracelens.open(demo, cache=False) as direct:
        expected = _reports(direct)
        assert not nvtx_kept.read(direct)  # a direct read keeps nothing
    assert len(expected[0].splitlines()) > 10  # the demo's ranges hold GPU work
    with tracelens.open(demo) as first:
        assert not nvtx_kept.read(first)
        assert nvtx.gpu_summary(first).write_csv() == expected[0]
        assert _kept_file(first) is not None
    monkeypatch.setattr(nvtx, "build_sweep", _no_sweep)
    with tracelens.open(demo) as again:
        assert _reports(again) == expected


def test_another_version_makes_it_again(demo, cache_dir, monkeypatch):
    with tracelens.open(demo) as first:
        expected = nvtx.gpu_summary(first).write_csv()
    monkeypatch.setattr(nvtx_kept, "_version", lambda: "another")
    with tracelens.open(demo) as other:
        assert not nvtx_kept.read(other)
        assert nvtx.gpu_summary(other).write_csv() == expected
        assert _kept_file(other) is not None  # kept again, at that version
