"""The report's header says what `tracelens info` says of the same export: a kind of event
whose table the export does not hold was not captured (info: 'not captured (no table)'),
which the page must not write as 0 events (it reads as 'nothing happened'), and a GPU's
memory is info's figure (9.8 GiB was shown as 10 GiB). Found by advreport."""

from __future__ import annotations

from test_report import SectionRows

import tracelens
from tracelens.info_text import info_fields
from tracelens.report import build_markdown, build_report
from tracelens.synth import TraceBuilder

RTX3080_BYTES = 10_504_634_368  # a GeForce RTX 3080's totalMemory, as nsys records it


def header(html: str) -> dict[str, str]:
    """The files table's rows: label (its <th>) -> value (its <td>)."""
    parsed = SectionRows(html, "files")
    values = [row[0] for row in parsed.rows if row]
    return dict(zip(parsed.heads, values, strict=True))


def kernels_only(path):
    """Kernels and their launches; no memset, memcpy or NVTX table."""
    b = TraceBuilder("3.23.3")  # a schema with TARGET_INFO_GPU
    b.process(77, "./app")
    b.gpu(0, "NVIDIA GeForce RTX 3080", sm_count=68, total_memory=RTX3080_BYTES,
          compute_capability=(8, 6))  # fmt: skip
    for i in range(3):
        cid = b.runtime("cudaLaunchKernel", start=1_000 + i * 10_000, end=2_000 + i * 10_000)
        b.kernel("k", start=3_000 + i * 10_000, end=8_000 + i * 10_000, correlation_id=cid)
    return b.write(path)


def test_header_says_what_was_not_captured(tmp_path):
    path = kernels_only(tmp_path / "k.sqlite")
    with tracelens.open(path) as t:
        html = build_report(t)
        info = dict(info_fields(t.info))
    assert info["memset"] == info["nvtx"] == "not captured (no table)"
    rows = header(html)
    assert rows["GPU events"] == "3 kernels · memcpys not captured · memsets not captured"
    assert rows["CPU events"] == "3 CUDA API calls · NVTX not captured"


def test_markdown_header_says_what_was_not_captured(tmp_path):
    path = kernels_only(tmp_path / "k.sqlite")
    with tracelens.open(path) as t:
        md = build_markdown(t)
    assert "3 kernels, memcpys not captured, memsets not captured, 3 CUDA API calls" in md, (
        md.splitlines()[:4]
    )


def test_header_gpu_memory_is_infos(tmp_path):
    path = kernels_only(tmp_path / "k.sqlite")
    with tracelens.open(path) as t:
        html = build_report(t)
        gpu = dict(info_fields(t.info))["gpu 0"]
    assert "9.8 GiB" in gpu
    assert header(html)["GPUs"] == "GPU 0: NVIDIA GeForce RTX 3080 (68 SMs, 9.8 GiB, sm 8.6)"


def test_header_numbers_a_gpu_as_the_tables_do(tmp_path):
    """nsys numbers GPUs in TARGET_INFO_GPU (``id``) apart from the CUDA ordinal the GPU
    work records (``cuDevice``: what --device, util's table and the timeline's lanes
    say); the header said 'GPU 1' of the GPU every other part of the page calls GPU 0."""
    b = TraceBuilder("3.23.3")
    b.process(11, "./app")
    b.gpu(1, "NVIDIA H100 80GB HBM3", cuda_device=0)
    cid = b.runtime("cudaLaunchKernel", start=1_000, end=2_000, pid=11)
    b.kernel("k", start=3_000, end=8_000, correlation_id=cid, pid=11, device=0)
    with tracelens.open(b.write(tmp_path / "d.sqlite")) as t:
        html = build_report(t)
        assert t.util().frame["device"].to_list() == [0]
    assert header(html)["GPUs"] == "GPU 0: NVIDIA H100 80GB HBM3 (132 SMs, 79.6 GiB, sm 9.0)"


def test_one_of_a_kind_is_singular(tmp_path):
    """'1 kernels' and '1 CUDA API calls' read as a slip; the counts past 999 have commas."""
    b = TraceBuilder("3.23.3")
    b.process(77, "./app")
    b.gpu(0, "NVIDIA GeForce RTX 3080", sm_count=68, total_memory=RTX3080_BYTES,
          compute_capability=(8, 6))  # fmt: skip
    cid = b.runtime("cudaLaunchKernel", start=1_000, end=2_000)
    b.kernel("k", start=3_000, end=8_000, correlation_id=cid)
    with tracelens.open(b.write(tmp_path / "one.sqlite")) as t:
        rows = header(build_report(t))
    assert rows["GPU events"] == "1 kernel · memcpys not captured · memsets not captured"
    assert rows["CPU events"] == "1 CUDA API call · NVTX not captured"


def test_the_timeline_caption_counts_steps_with_commas(tmp_path):
    """'step 1 of 4095' read as a code; 'step 1 of 4,095', and '1 kernel' for one."""
    from tracelens.report.layout import step_window

    b = TraceBuilder("3.23.3")
    b.process(77, "./app")
    for i in range(1_200):
        t = 10_000 + i * 10_000
        b.nvtx_range(f"step {i + 1}", start=t, end=t + 9_000, pid=77, tid=77)
        cid = b.runtime("cudaLaunchKernel", start=t + 100, end=t + 200, pid=77, tid=77)
        b.kernel("k", start=t + 300, end=t + 5_000, correlation_id=cid, pid=77)
    with tracelens.open(b.write(tmp_path / "many.sqlite")) as t:
        _, why = step_window(t.steps())
    assert why.startswith("step 1 of 1,200 (marker steps: ")
    assert why.endswith(", with the 1 kernel it ran")
