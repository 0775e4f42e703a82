"""decode of a mangled name the demangler rejects (truncated, as in the shared list's
cutlass_cudnn_train kernel) reads the identifiers best-effort: numbers that are not
source-name lengths (a literal's value ``Li64E``, a substitution ``S4_``, an enum literal's
value) were read as lengths and made identifiers of the text after them ('ELi3EEENS0_4',
'_4K', 'EE', 'EN', 'Cach'), and hid real ones ('arch') (found by advcmds)."""

from __future__ import annotations

import json

import pytest
from conftest import SHARED, run_cli

# cut before its end: the demangler rejects it
TRUNCATED = (
    "_ZN2ns6KernelINS_9GemmShapeILi12ELi3EEENS0_4arch14CacheOperation4KindELNS3_4KindE0EEEvT"
)


def _identifiers(name: str, capsys) -> str:
    rc, out, err = run_cli(["decode", name, "--format", "json"], capsys)
    assert (rc, err) == (0, "")
    (doc,) = json.loads(out)
    assert doc["demangling"] == "failed"
    (field,) = [f for f in doc["fields"] if f["field"] == "identifiers"]
    return field["value"]


def test_literals_and_substitutions_are_not_lengths(capsys):
    assert _identifiers(TRUNCATED, capsys) == "ns,Kernel,GemmShape,arch,CacheOperation,Kind"


def test_the_shared_lists_truncated_cutlass_name(capsys):
    tsv = SHARED / "kernel_names" / "real_kernel_names.tsv"
    if not tsv.is_file():
        pytest.skip(f"{tsv} not found (../shared is absent)")
    lines = tsv.read_text(encoding="utf-8").splitlines()
    (name,) = [n.split("\t", 1)[1] for n in lines if "\t_ZN19cutlass_cudnn_train" in n]
    assert _identifiers(name, capsys) == (
        "cutlass_cudnn_train,Kernel,conv,kernel,ImplicitGemmConvolution,threadblock,"
        "ImplicitGemmMultistage,gemm,GemmShape,Conv2dWgradOutputGradientTileAccessIteratorOptimized,"
        "MatrixShape,tfloat32_t,transform,PitchLinearWarpRakedThreadMap,PitchLinearShape,"
        "AlignedArray,RegularTileAccessIterator,layout,ColumnMajorTensorOpMultiplicandCongruous,"
        "arch,CacheOperation,Kind,Conv2dWgradActivationTileAccessIteratorOptimized,"
        "RowMajorTensorOpMultiplicandCongruous"
    )
