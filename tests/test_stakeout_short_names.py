"""stakeout --name short (review): kernels that share a short name (PyTorch's
vectorized_elementwise_kernel of add, pow, fill...) are different kernels; the title said
"2,316 launches of vectorized_elementwise_kernel" for 9 of them on the shared A100 export."""

from __future__ import annotations

from conftest import run_cli

import tracelens
from tracelens.synth import TraceBuilder

ADD = (
    "void at::native::vectorized_elementwise_kernel<(int)4, at::native::CUDAFunctor_add<float>, "
    "std::array<char *, (unsigned long)3>>(int, T2, T3)"
)
FILL = (
    "void at::native::vectorized_elementwise_kernel<(int)4, at::native::FillFunctor<float>, "
    "std::array<char *, (unsigned long)1>>(int, T2, T3)"
)


def _build(path) -> None:
    b = TraceBuilder("3.25.0")
    b.process(100, "python")
    t = 1_000
    for name, n, dur in ((ADD, 3, 2_000), (FILL, 2, 500)):
        for _ in range(n):
            cid = b.runtime("cudaLaunchKernel_v7000", start=t, end=t + 10, pid=100)
            b.kernel(name, start=t + 20, end=t + 20 + dur, pid=100, correlation_id=cid)
            t += 10_000
    b.write(path)


def test_kernels_sharing_a_short_name_are_told_apart(tmp_path, cache_dir):
    path = tmp_path / "t.sqlite"
    _build(path)
    for cache in (False, True):
        with tracelens.open(path, cache=cache) as trace:
            r = trace.stakeout("vectorized_elementwise_kernel", name="short")
        assert r.kernels.select("launches", "total_ns", "name", "kernel").rows() == [
            (3, 6_000, "vectorized_elementwise_kernel", ADD),
            (2, 1_000, "vectorized_elementwise_kernel", FILL),
        ]
        assert "kernel_id" not in r.launches.columns
    # the demangled names (the default) were right already; they keep their columns
    with tracelens.open(path) as trace:
        r = trace.stakeout("vectorized_elementwise_kernel")
    assert r.kernels.columns == ["launches", "total_ns", "avg_ns", "name"]
    assert r.kernels["name"].to_list() == [ADD, FILL]


def test_the_title_counts_kernels_not_short_names(tmp_path, capsys):
    path = tmp_path / "t.sqlite"
    _build(path)
    code, out, _ = run_cli(
        ["--no-cache", "stakeout", path, "vectorized_elementwise_kernel", "--name", "short"],
        capsys,
    )
    assert code == 0
    assert out.splitlines()[0] == (
        "stakeout of t.sqlite: 'vectorized_elementwise_kernel' (contains), 5 launches of 2 kernels"
    )
    assert "CUDAFunctor_add" in out and "FillFunctor" in out  # the kernels table names them
