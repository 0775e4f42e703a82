"""tracelens.synth writes exports tracelens reads back exactly as inserted.

Expected numbers are computed here, in plain Python, from what the fixtures inserted
(``fixtures.builder``), never from tracelens itself.
"""

from __future__ import annotations

import math
import sqlite3
import statistics

import pytest
from conftest import SHARED
from fixtures.builder import (
    BAD_UTF8_ENV,
    BAD_UTF8_NAME,
    BAD_UTF8_NVTX,
    BUILDERS,
    SCHEMAS,
    TRAIN_PID,
    UNICODE_NAME,
    build,
)

import tracelens
from tracelens import synth
from tracelens.synth import TraceBuilder, global_pid, global_tid, kernel_short_name

KERNEL = "CUPTI_ACTIVITY_KIND_KERNEL"
MEMCPY_LABELS = [
    (0, "Unknown"),
    (1, "Host-to-Device"),
    (2, "Device-to-Host"),
    (3, "Host-to-Array"),
    (4, "Array-to-Host"),
    (5, "Array-to-Array"),
    (6, "Array-to-Device"),
    (7, "Device-to-Array"),
    (8, "Device-to-Device"),
    (9, "Host-to-Host"),
    (10, "Peer-to-Peer"),
    (11, "Unified Host-to-Device"),
    (12, "Unified Device-to-Host"),
    (13, "Unified Device-to-Device"),
]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """Every fixture kind for every schema, built once: {(kind, schema): Fixture}."""
    dest = tmp_path_factory.mktemp("synth")
    return {(k, s): build(k, dest, s) for k in BUILDERS for s in SCHEMAS}


def sqlite_rows(path, sql, params=()):
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    con.text_factory = bytes
    try:
        return con.execute(sql, params).fetchall()
    finally:
        con.close()


def tables_of(path) -> set[str]:
    return {
        r[0].decode()
        for r in sqlite_rows(path, "SELECT name FROM sqlite_master WHERE type='table'")
    }


def round1(x: float) -> float:
    """Round half away from zero to 1 decimal (DuckDB's round, as nsys stats prints)."""
    return math.copysign(math.floor(abs(x) * 10 + 0.5) / 10, x)


def expected_census(durations: dict[str, list[int]]) -> list[tuple]:
    grand = sum(sum(d) for d in durations.values())
    rows = []
    for name, d in durations.items():
        s = sorted(d)
        n = len(s)
        median = s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2
        rows.append(
            (
                round1(sum(d) * 100 / grand),
                sum(d),
                n,
                round1(sum(d) / n),
                round1(median),
                min(d),
                max(d),
                round1(statistics.stdev(d)) if n > 1 else 0.0,
                name,
            )
        )
    return sorted(rows, key=lambda r: (-r[1], r[8]))


def always_written(schema: str) -> set[str]:
    """Tables nsys writes even without events (the schema's own DDL decides which)."""
    base = {"StringIds", "TARGET_INFO_SESSION_START_TIME", "ANALYSIS_DETAILS"}
    if schema in ("2.9.1", "3.0.0"):
        base.add("EXPORT_META_DATA")
    else:
        base |= {"META_DATA_EXPORT", "META_DATA_CAPTURE"}
    return base


# -- opening and info --------------------------------------------------------------------
@pytest.mark.parametrize("schema", SCHEMAS)
@pytest.mark.parametrize("kind", sorted(BUILDERS))
def test_info_reports_schema_and_event_counts(built, kind, schema):
    fx = built[kind, schema]
    with tracelens.open(fx.path) as trace:
        info = trace.info
    assert info.schema_version == schema
    old = schema in ("2.9.1", "3.0.0")
    assert info.metadata_table == ("EXPORT_META_DATA" if old else "META_DATA_EXPORT")
    assert info.nsys_version == synth.PRODUCT_VERSIONS[schema]
    assert {e.kind: e.count for e in info.events} == fx.expected.counts()
    present = {e.kind: e.present for e in info.events}
    assert present == {k: n > 0 for k, n in fx.expected.counts().items()}
    # processes that did GPU work or called CUDA, with their names where the schema has them
    pids = {a.pid for a in fx.expected.runtime}
    assert {p.pid: p.name for p in info.processes} == {p: fx.expected.processes[p] for p in pids}
    if schema == "3.25.0":  # that schema's real DDL has no TARGET_INFO_GPU
        assert info.gpus == ()
    else:
        assert {g.id: g.name for g in info.gpus} == fx.expected.gpus
    starts = [e.start for e in _all_events(fx.expected)]
    ends = [e.end if e.end is not None else e.start for e in _all_events(fx.expected)]
    assert (info.start_ns, info.end_ns) == (min(starts), max(ends))


def _all_events(x):
    return [*x.kernels, *x.memcpys, *x.memsets, *x.runtime, *x.nvtx]


def test_gpu_details_round_trip(built):
    with tracelens.open(built["mixed", "3.0.0"].path) as trace:
        gpu = trace.info.gpus[1]
    assert (gpu.name, gpu.sm_count, gpu.compute_capability, gpu.bus_location) == (
        "NVIDIA A100-SXM4-80GB",
        108,
        "8.0",
        "0000:0f:00.0",
    )
    assert gpu.memory_bytes == 85_097_971_712


# -- census ------------------------------------------------------------------------------
@pytest.mark.parametrize("schema", SCHEMAS)
@pytest.mark.parametrize("kind", ["mixed", "one_kernel", "odd_strings"])
@pytest.mark.parametrize("name", ["demangled", "short", "mangled"])
def test_census_equals_independent_numbers(built, kind, schema, name):
    fx = built[kind, schema]
    with tracelens.open(fx.path) as trace:
        got = [tuple(r) for r in trace.census(name=name).rows()]
    assert got == expected_census(fx.expected.kernel_durations(name))


def test_census_numbers_by_hand(built):
    # odd_strings: the undecodable name ran 5000, 7000, 6000, 9000 ns
    with tracelens.open(built["odd_strings", "3.0.0"].path) as trace:
        df = trace.census()
    row = df.filter(df["name"] == "void bad_\\xff\\xfe_kernel<int>(int *)").row(0, named=True)
    assert row["total_ns"] == 27_000
    assert row["instances"] == 4
    assert row["avg_ns"] == 6_750.0
    assert row["med_ns"] == 6_500.0  # even count: mean of the middle two
    assert row["stddev_ns"] == 1_707.8  # sample stddev (n - 1)
    assert (row["min_ns"], row["max_ns"]) == (5_000, 9_000)


def test_one_kernel_stddev_is_zero(built):
    with tracelens.open(built["one_kernel", "2.9.1"].path) as trace:
        (row,) = trace.census().rows(named=True)
    assert row == {
        "time_pct": 100.0,
        "total_ns": 12_345,
        "instances": 1,
        "avg_ns": 12_345.0,
        "med_ns": 12_345.0,
        "min_ns": 12_345,
        "max_ns": 12_345,
        "stddev_ns": 0.0,
        "name": "vectorAdd",
    }


@pytest.mark.parametrize("schema", SCHEMAS)
def test_invalid_utf8_and_unicode_names(built, schema):
    fx = built["odd_strings", schema]
    with tracelens.open(fx.path) as trace:
        names = trace.census()["name"].to_list()
        short = trace.census(name="short")["name"].to_list()
    assert "void bad_\\xff\\xfe_kernel<int>(int *)" in names
    assert UNICODE_NAME in names
    assert "bad_\\xff\\xfe_kernel" in short and "ядро_🚀" in short
    # stored as TEXT holding the raw bytes, as in real exports (not as a BLOB)
    rows = sqlite_rows(
        fx.path, "SELECT typeof(value), value FROM StringIds WHERE value = ?", (BAD_UTF8_NAME,)
    )
    assert rows == []  # a BLOB parameter never equals TEXT: the value really is TEXT
    rows = sqlite_rows(
        fx.path,
        "SELECT typeof(value), value FROM StringIds WHERE CAST(value AS BLOB) = ?",
        (BAD_UTF8_NAME,),
    )
    assert rows == [(b"text", BAD_UTF8_NAME)]
    nvtx = sqlite_rows(fx.path, "SELECT typeof(text), text FROM NVTX_EVENTS WHERE text IS NOT NULL")
    assert (b"text", BAD_UTF8_NVTX) in nvtx
    env = sqlite_rows(fx.path, "SELECT typeof(value), value FROM TARGET_INFO_SYSTEM_ENV")
    assert env == [(b"text", BAD_UTF8_ENV)]


def test_registered_nvtx_text_goes_to_string_ids(built):
    path = built["odd_strings", "3.25.0"].path
    rows = sqlite_rows(
        path,
        "SELECT n.text, s.value FROM NVTX_EVENTS n JOIN StringIds s ON s.id = n.textId",
    )
    assert rows == [(None, b"registered \xff label")]


@pytest.mark.parametrize("schema", SCHEMAS)
def test_no_kernels_is_missing_data(built, schema):
    fx = built["no_kernels", schema]
    assert KERNEL not in tables_of(fx.path)
    with tracelens.open(fx.path) as trace:
        with pytest.raises(tracelens.MissingDataError) as exc:
            trace.census()
        assert trace.info.count("memcpy") == 2
    # CUDA was traced (the copies are there): the message says what the file holds
    assert str(exc.value).endswith(
        "no CUDA kernel data: CUDA was traced and no kernel ran (it holds 2 memory copies: "
        "see `tracelens memory`)"
    )
    assert exc.value.exit_code == 3


# -- what the file holds -----------------------------------------------------------------
@pytest.mark.parametrize("schema", SCHEMAS)
@pytest.mark.parametrize("kind", sorted(BUILDERS))
def test_tables_without_rows_are_absent(built, kind, schema):
    fx = built[kind, schema]
    tables = tables_of(fx.path)
    enums = {t for t in tables if t.startswith("ENUM_")}
    assert tables - enums == always_written(schema) | fx.expected.filled_tables
    for absent in ("CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", "OSRT_API", "SCHED_EVENTS"):
        assert absent not in tables
    if schema == "2.9.1":
        assert enums == set()
    else:
        assert "ENUM_CUDA_MEMCPY_OPER" in enums


@pytest.mark.parametrize("schema", ["3.0.0", "3.25.0"])
def test_enum_tables(built, schema):
    path = built["mixed", schema].path
    labels = sqlite_rows(path, "SELECT id, label FROM ENUM_CUDA_MEMCPY_OPER ORDER BY id")
    assert [(i, lab.decode()) for i, lab in labels] == MEMCPY_LABELS
    tables = tables_of(path)
    misspelled = "ENUM_CUDA_KRENEL_LAUNCH_TYPE"  # sic, nsys 2022.4
    launch = misspelled if schema == "3.0.0" else "ENUM_CUDA_KERNEL_LAUNCH_TYPE"
    assert launch in tables
    assert ({misspelled, "ENUM_CUDA_KERNEL_LAUNCH_TYPE"} - {launch}).isdisjoint(tables)
    assert sqlite_rows(path, f"SELECT label FROM {launch} WHERE id = 1") == [(b"Regular",)]


def test_columns_follow_the_schema(built):
    def cols(path):
        return {
            r[0].decode()
            for r in sqlite_rows(path, f"SELECT name FROM pragma_table_info('{KERNEL}')")
        }

    old, new = built["mixed", "2.9.1"].path, built["mixed", "3.25.0"].path
    assert "greenContextId" not in cols(old) and "greenContextId" in cols(new)
    assert "mangledName" in cols(old)
    # the CREATE statement is nsys's, verbatim (comments included)
    (sql,) = sqlite_rows(new, "SELECT sql FROM sqlite_master WHERE name = ?", (KERNEL,))[0]
    assert b"-- Green context ID." in sql


@pytest.mark.parametrize("schema", SCHEMAS)
def test_rows_hold_what_was_inserted(built, schema):
    fx = built["mixed", schema]
    x = fx.expected
    kernels = sqlite_rows(
        fx.path,
        f'SELECT k.start, k."end", k.globalPid, k.deviceId, k.streamId, k.correlationId, '
        f"k.gridX, k.gridY, k.gridZ, k.blockX, k.blockY, k.blockZ, m.value "
        f"FROM {KERNEL} k LEFT JOIN StringIds m ON m.id = k.mangledName ORDER BY k.rowid",
    )
    assert [(*r[:12], None if r[12] is None else r[12].decode()) for r in kernels] == [
        (
            k.start,
            k.end,
            (1 << 48) | (k.pid << 24),
            k.device,
            k.stream,
            k.correlation_id,
            *k.grid,
            *k.block,
            k.mangled,
        )
        for k in x.kernels
    ]
    assert sum(k.mangled is None for k in x.kernels) > 0  # NULL mangled names are covered
    copies = sqlite_rows(
        fx.path,
        'SELECT copyKind, bytes, start, "end", correlationId FROM CUPTI_ACTIVITY_KIND_MEMCPY '
        "ORDER BY rowid",
    )
    kinds = {"HtoD": 1, "DtoH": 2, "DtoD": 8, "PtoP": 10}
    assert copies == [(kinds[c.kind], c.bytes, c.start, c.end, c.correlation_id) for c in x.memcpys]
    assert {c.kind for c in x.memcpys} == set(kinds)
    memsets = sqlite_rows(fx.path, "SELECT bytes, correlationId FROM CUPTI_ACTIVITY_KIND_MEMSET")
    assert memsets == [(m.bytes, m.correlation_id) for m in x.memsets]


@pytest.mark.parametrize("schema", SCHEMAS)
def test_every_gpu_op_links_to_one_api_call(built, schema):
    path = built["mixed", schema].path
    for table in (KERNEL, "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET"):
        rows = sqlite_rows(
            path,
            f"SELECT count(r.correlationId), min(r.start < g.start), "
            f"min((r.globalTid >> 24) & 16777215 = (g.globalPid >> 24) & 16777215) "
            f"FROM {table} g LEFT JOIN CUPTI_ACTIVITY_KIND_RUNTIME r "
            f"ON r.correlationId = g.correlationId GROUP BY g.rowid",
        )
        assert rows and set(rows) == {(1, 1, 1)}, table
    names = {
        r[0].decode()
        for r in sqlite_rows(
            path,
            "SELECT s.value FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = r.nameId",
        )
    }
    assert {"cudaLaunchKernel_v7000", "cudaMemcpyAsync_v3020", "cudaMemsetAsync_v3020"} <= names


def test_nvtx_ranges(built):
    fx = built["mixed", "3.0.0"]
    rows = sqlite_rows(
        fx.path,
        'SELECT eventType, start, "end", text, textId IS NOT NULL, globalTid '
        "FROM NVTX_EVENTS ORDER BY rowid",
    )
    gtid = global_tid(TRAIN_PID, TRAIN_PID)
    assert rows == [
        (
            n.event_type,
            n.start,
            n.end,
            None if n.registered else n.text.encode(),
            int(n.registered),
            gtid,
        )
        for n in fx.expected.nvtx
    ]
    assert [r[0] for r in rows] == [59, 59, 59, 34]


# -- the builder itself ------------------------------------------------------------------
def test_output_is_deterministic(tmp_path):
    for kind in BUILDERS:
        (tmp_path / "a").mkdir(exist_ok=True)
        (tmp_path / "b").mkdir(exist_ok=True)
        a = build(kind, tmp_path / "a", "3.25.0")
        b = build(kind, tmp_path / "b", "3.25.0")
        assert a.path.read_bytes() == b.path.read_bytes(), kind


@pytest.mark.parametrize("schema", SCHEMAS)
def test_fixtures_are_small(tmp_path, schema):
    # Small files are what keeps the suite fast; their build time is not asserted (a
    # wall-clock bound fails on a loaded machine, and speed lives in bench/).
    for kind in BUILDERS:
        fx = build(kind, tmp_path, schema)
        assert fx.path.stat().st_size < 200_000, kind


@pytest.mark.parametrize("schema", synth.SCHEMAS)
def test_every_vendored_schema_round_trips(tmp_path, schema):
    b = TraceBuilder(schema)
    b.process(77, "app")
    b.gpu(0)
    for i, dur in enumerate((100, 300, 200)):
        cid = b.runtime("cudaLaunchKernel_v7000", start=i * 1_000, end=i * 1_000 + 50)
        b.kernel(
            "void k<int>(int)",
            start=i * 1_000 + 60,
            end=i * 1_000 + 60 + dur,
            mangled_name="_Z1kIiEvi",
            correlation_id=cid,
        )
    b.memset(64, start=5_000, end=5_010)
    b.nvtx_range("r", start=0, end=6_000)
    path = b.write(tmp_path / "t.sqlite")
    with tracelens.open(path) as trace:
        info = trace.info
        assert [tuple(r) for r in trace.census().rows()] == [
            (100.0, 600, 3, 200.0, 200.0, 100, 300, 100.0, "void k<int>(int)")
        ]
    assert info.schema_version == (None if schema.startswith("none") else schema)
    assert [info.count(k) for k in ("kernel", "memset", "runtime", "nvtx")] == [3, 1, 3, 1]


def test_borrowed_tables_are_recorded():
    b = TraceBuilder("2.9.1")
    b.process(1, "p")
    b.memset(8, start=0, end=1)
    b.nvtx_range("x", start=0, end=1)
    assert b.borrowed == {
        "CUPTI_ACTIVITY_KIND_MEMSET": "nsys_export_schema_none-2020.5.sql",
        "NVTX_EVENTS": "nsys_export_schema_3.0.0_full.sql",
    }
    assert TraceBuilder("3.25.0").has_table("TARGET_INFO_GPU") is False
    assert TraceBuilder("3.25.0").gpu(0) is False


def test_builder_rejects_mistakes():
    with pytest.raises(ValueError, match="unknown nsys export schema"):
        TraceBuilder("9.9.9")
    b = TraceBuilder("3.0.0")
    with pytest.raises(ValueError, match="register a process"):
        b.kernel("k", start=0, end=1)
    b.process(5, "p")
    with pytest.raises(ValueError, match="ends before it starts"):
        b.kernel("k", start=10, end=1)
    with pytest.raises(ValueError, match="no column gridQ"):
        b.kernel("k", start=0, end=1, gridQ=3)
    with pytest.raises(ValueError, match="has no table"):
        b.add_row("NO_SUCH_TABLE", x=1)
    # a field this schema lacks (but another has) is dropped silently
    b.kernel("k", start=0, end=1, greenContextId=0)


def test_strings_are_interned_from_zero():
    b = TraceBuilder()
    assert [b.string("a"), b.string("b"), b.string("a"), b.string(b"a"), b.string(b"\xff")] == [
        0,
        1,
        0,
        0,
        2,
    ]


def test_ids():
    assert global_pid(4242, vm_id=0) == 4242 << 24
    g = global_tid(4242, 4300)
    assert ((g >> 24) & 0xFFFFFF, g & 0xFFFFFF, g >> 48) == (4242, 4300, 1)
    with pytest.raises(ValueError):
        global_pid(1 << 24)


@pytest.mark.parametrize(
    ("demangled", "short"),
    [
        ("nvjet_tst_64x8_64x16_2x1_v_bz_TNT", "nvjet_tst_64x8_64x16_2x1_v_bz_TNT"),
        ("void flash::flash_fwd_kernel<T, (bool)0>(flash::Flash_fwd_params)", "flash_fwd_kernel"),
        (
            "void at::native::(anonymous namespace)::cunn_SoftMaxForward<8, float>(float*, int)",
            "cunn_SoftMaxForward",
        ),
        (
            "std::enable_if<(((8)>(0)))&&vllm::_typeConvert<c10::BFloat16>::exists, void>::type "
            "vllm::fused_add_rms_norm_kernel<c10::BFloat16, 8>(c10::BFloat16*, long)",
            "fused_add_rms_norm_kernel",
        ),
        (
            "void vllm::act_and_mul_kernel<c10::BFloat16, &(silu(float const&))>",
            "act_and_mul_kernel",
        ),
        (
            "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<(unsigned long)4096>)",
            "ncclDevKernel_SendRecv",
        ),
    ],
)
def test_kernel_short_name(demangled, short):
    assert kernel_short_name(demangled) == short


@pytest.mark.skipif(not (SHARED / "schema" / "ddl").is_dir(), reason="../shared is absent")
def test_vendored_ddl_is_verbatim():
    for path in sorted((SHARED / "schema" / "ddl").glob("*.sql")):
        assert (synth.DDL_DIR / path.name).read_bytes() == path.read_bytes(), path.name
    for schema in ("2.9.1", "3.0.0", "3.25.0"):
        assert synth.ddl_path(schema).is_file()
