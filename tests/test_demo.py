"""The shipped demo traces: present, small, telling the BS=1 / BS=16 story, and exactly what
``tracelens.demo`` generates (so they cannot drift from the generator)."""

from __future__ import annotations

import sqlite3

import pytest
from conftest import SHARED

import tracelens
from tracelens.demo import DEMO_NAMES, build_demo, demo_path, regenerate

KERNEL_NAMES_TSV = SHARED / "kernel_names" / "real_kernel_names.tsv"
# spelled from the vLLM / FlashAttention-2 sources: not in the list of names seen in traces
CONSTRUCTED = ("merge_attn_states_kernel", "flash_fwd_splitkv_combine_kernel")


def rows(path, sql, params=()):
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return con.execute(sql, params).fetchall()
    finally:
        con.close()


def contents(path) -> dict[str, list[tuple]]:
    """Every table's rows in rowid order, plus the schema itself."""
    out = {
        "sqlite_master": rows(
            path, "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY name"
        )
    }
    for (table,) in rows(path, "SELECT name FROM sqlite_master WHERE type = 'table'"):
        out[table] = rows(path, f'SELECT * FROM "{table}" ORDER BY rowid')
    return out


@pytest.fixture(scope="module")
def census():
    out = {}
    for name in DEMO_NAMES:
        with tracelens.open(demo_path(name)) as trace:
            out[name] = {r["name"]: r for r in trace.census(name="short").rows(named=True)}
    return out


def test_demo_files_ship_small_and_open():
    assert DEMO_NAMES == ("bs1", "bs16")
    for name in DEMO_NAMES:
        path = demo_path(name)
        assert path.is_file() and path.name == f"{name}.sqlite"
        assert path.stat().st_size < 600_000
        with tracelens.open(path) as trace:
            info = trace.info
        assert info.schema_version == "3.23.3"
        assert [(g.name, g.sm_count) for g in info.gpus] == [("NVIDIA H100 80GB HBM3", 132)]
        (proc,) = info.processes
        assert proc.name.startswith("python -m vllm")


def test_unknown_demo_is_a_usage_error():
    with pytest.raises(tracelens.UsageError) as exc:
        demo_path("bs2")
    assert str(exc.value) == "unknown demo 'bs2'; choose one of: bs1, bs16"
    with pytest.raises(tracelens.UsageError):
        build_demo("../bs1", "/dev/null")


def test_same_graph_size_different_path(census):
    counts = {}
    for name in DEMO_NAMES:
        with tracelens.open(demo_path(name)) as trace:
            counts[name] = trace.info.count("kernel")
    assert counts["bs1"] == counts["bs16"]
    assert 1_000 <= counts["bs1"] <= 3_000
    assert sum(r["instances"] for r in census["bs1"].values()) == counts["bs1"]


def test_reshape_and_cache_is_five_times_longer_per_call(census):
    one = census["bs1"]["reshape_and_cache_flash_kernel"]
    sixteen = census["bs16"]["reshape_and_cache_flash_kernel"]
    assert one["instances"] == sixteen["instances"] > 0
    ratio = (sixteen["total_ns"] / sixteen["instances"]) / (one["total_ns"] / one["instances"])
    assert 5.0 < ratio < 5.3


def test_cascade_attention_only_at_batch_16(census):
    assert "merge_attn_states_kernel" not in census["bs1"]
    assert census["bs16"]["merge_attn_states_kernel"]["instances"] > 0
    assert "flash_fwd_kernel" in census["bs16"] and "flash_fwd_kernel" not in census["bs1"]


def test_gemm_variants_differ(census):
    def nvjet(name):
        return {k: r["total_ns"] for k, r in census[name].items() if k.startswith("nvjet_")}

    one, sixteen = nvjet("bs1"), nvjet("bs16")
    only_1, only_16 = set(one) - set(sixteen), set(sixteen) - set(one)
    assert len(only_1) == len(only_16) == 7
    assert sum(sixteen[k] for k in only_16) > 3 * sum(one[k] for k in only_1)


def test_copies_and_memsets():
    got = {}
    for name in DEMO_NAMES:
        path = demo_path(name)
        got[name] = (
            rows(
                path,
                "SELECT count(*), sum(bytes) FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE copyKind = 8",
            )[0],
            rows(path, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMSET")[0][0],
        )
    assert got == {"bs1": ((29, 81_000_000), 345), "bs16": ((53, 163_000_000), 429)}


@pytest.mark.parametrize("name", DEMO_NAMES)
def test_every_gpu_op_has_its_api_call(name):
    path = demo_path(name)
    for table in ("KERNEL", "MEMCPY", "MEMSET"):
        linked = rows(
            path,
            f"SELECT count(*), count(r.correlationId), sum(r.start < g.start) "
            f"FROM CUPTI_ACTIVITY_KIND_{table} g "
            f"LEFT JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId = g.correlationId",
        )[0]
        assert linked[0] == linked[1] == linked[2] > 0, table
    (dupes,) = rows(
        path,
        "SELECT count(*) FROM (SELECT correlationId FROM CUPTI_ACTIVITY_KIND_RUNTIME "
        "GROUP BY correlationId HAVING count(*) > 1)",
    )[0]
    assert dupes == 0


@pytest.mark.parametrize("name", DEMO_NAMES)
def test_nvtx_steps_and_launch_configs(name):
    path = demo_path(name)
    steps = [
        r[0]
        for r in rows(path, "SELECT text FROM NVTX_EVENTS WHERE text IS NOT NULL ORDER BY start")
    ]
    assert steps == ["prefill", "decode_step_1", "decode_step_2", "decode_step_3", "decode_step_4"]
    (layers,) = rows(path, "SELECT count(*) FROM NVTX_EVENTS WHERE textId IS NOT NULL")[0]
    assert layers == 5 * 28
    (bad,) = rows(
        path,
        "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE gridX < 1 OR blockX < 1 "
        "OR blockX * blockY * blockZ > 1024 OR registersPerThread NOT BETWEEN 1 AND 255 "
        "OR staticSharedMemory + dynamicSharedMemory > 232448",
    )[0]
    assert bad == 0


@pytest.mark.skipif(not KERNEL_NAMES_TSV.is_file(), reason="../shared is absent")
def test_kernel_names_are_real():
    real = {line.split("\t", 1)[1] for line in KERNEL_NAMES_TSV.read_text().splitlines()[1:]}
    for name in DEMO_NAMES:
        names = [
            r[0]
            for r in rows(
                demo_path(name),
                "SELECT DISTINCT s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.demangledName",
            )
        ]
        invented = sorted(n for n in names if n not in real)
        assert all(any(c in n for c in CONSTRUCTED) for n in invented), invented


@pytest.mark.parametrize("name", DEMO_NAMES)
def test_shipped_file_matches_the_generator(tmp_path, name):
    fresh = build_demo(name, tmp_path / f"{name}.sqlite")
    shipped = contents(demo_path(name))
    regenerated = contents(fresh)
    assert shipped.keys() == regenerated.keys()
    for table in shipped:
        assert shipped[table] == regenerated[table], (
            f"{table} differs: run tracelens.demo.regenerate() to regenerate the shipped demos"
        )


def test_generation_is_deterministic_and_regenerate_writes_both(tmp_path):
    assert regenerate(tmp_path / "a") == [tmp_path / "a" / f"{n}.sqlite" for n in DEMO_NAMES]
    regenerate(tmp_path / "b")
    for name in DEMO_NAMES:
        a, b = tmp_path / "a" / f"{name}.sqlite", tmp_path / "b" / f"{name}.sqlite"
        assert a.read_bytes() == b.read_bytes()
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == ["bs1.sqlite", "bs16.sqlite"]
