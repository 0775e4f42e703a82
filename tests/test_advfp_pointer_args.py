"""Pointer template arguments printed in hex (``(float*)0x7f3a2c000000``) or of a template
type (``(Foo<int>*)140737488355328``): their address, different in every process, is
``0x…`` in the fingerprint, as a decimal one's is; the hex one was kept as
``(float*)0x…x7f3a2c000000`` (the decimal pattern took the "0" of "0x") and two runs of
the same program fingerprinted differently (found by advfp)."""

from __future__ import annotations

import pytest

import tracelens
from tracelens.fingerprint.names import normalized_name
from tracelens.synth import TraceBuilder


@pytest.mark.parametrize(
    ("name", "normal"),
    [
        ("void k<(float*)0x7f3a2c000000>(float*)", "k<(float*)0x…>"),
        ("void k<(float *)0X7F3A2C000000>(float*)", "k<(float*)0x…>"),
        ("void k<(float*)0x0>(float*)", "k<(float*)0x…>"),
        ("void k<(Foo<int>*)140737488355328>(int)", "k<(Foo<int>*)0x…>"),
        ("void k<(float*)140737488355328>(float*)", "k<(float*)0x…>"),  # as before
    ],
)
def test_pointer_template_arguments_lose_their_address(name, normal):
    assert normalized_name(name) == normal


def _run(path, address: int):
    b = TraceBuilder("3.23.3")
    b.process(4242, "python serve.py")
    b.gpu(0)
    t = 1_000_000
    for _ in range(3):
        cid = b.runtime("cudaLaunchKernel_v7000", start=t, end=t + 3_000)
        name = f"void scale_kernel<(float*){address:#x}>(float *, int)"
        b.kernel(name, start=t + 5_000, end=t + 15_000, correlation_id=cid)
        t += 50_000
    return b.write(path)


def _text(path) -> str:
    with tracelens.open(path) as trace:
        return tracelens.fingerprint.dumps(tracelens.fingerprint(trace))


def test_hex_pointer_arguments_do_not_change_the_fingerprint(tmp_path):
    a = _text(_run(tmp_path / "a.sqlite", 0x7F3A2C000000))
    b = _text(_run(tmp_path / "b.sqlite", 0x7FFF12340000))
    assert a == b
    assert '"name": "scale_kernel<(float*)0x…>"' in a
