"""GPU kernel names: normalization, in-process demangling and decoding into fields.

Profilers spell the same kernel differently: nsys ``shortName``
(``vectorized_elementwise_kernel``), nsys ``demangledName``
(``void at::native::vectorized_elementwise_kernel<(int)4, ...>(int, T2, T3)``, ``<unnamed>``),
kineto (``(anonymous namespace)``, ``4`` not ``(int)4``) and mangled ``_Z...`` names.
:func:`normalize` maps them to one form; :func:`decode` says what a name means, field by
field, with a confidence for each field::

    from tracelens.kernelnames import decode
    k = decode("nvjet_sm90_tst_128x256_64x4_2x1_v_bz_coopA_bias_TNN")
    k.family, k.category          # ('nvjet', 'gemm')
    [(f.name, f.value, f.confidence) for f in k.fields]

Confidence follows ``KERNEL_NAMES.md``: ``confirmed`` = read in the generator's source or the
vendor's docs, ``inferred`` = consistent evidence but no vendor statement, ``unknown`` =
nobody has published it. Tokens a parser does not know are reported as ``unknown`` fields,
never dropped.

Every regular expression here is linear-time (no nested or overlapping quantifiers);
normalization reads at most :data:`MAX_NAME_CHARS` characters of a name and parsing and
matching look at most at the first :data:`MAX_PARSE_CHARS` characters of the result.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, overload

from .categories import classify_parts
from .decoders import _family_and_fields
from .decoders._base import CONFIDENCES, CONFIRMED, INFERRED, UNKNOWN, Field, _Ctx, _f
from .names import (
    DEMANGLE_FAILED,
    DEMANGLER_UNAVAILABLE,
    MAX_NAME_CHARS,
    NOT_MANGLED,
    _name_parts,
    _normalize_full,
    base_name,
    demangle,
    demangler_available,
    normalize,
    qualified_name,
)

if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Iterable

    import polars as pl

__all__ = [
    "CONFIDENCES",
    "FAMILIES",
    "Field",
    "KernelName",
    "base_name",
    "decode",
    "decode_column",
    "demangle",
    "demangler_available",
    "normalize",
    "qualified_name",
]


#: Decoder families (snake_case). ``other`` means no decoder recognised the name.
FAMILIES = (
    "nvjet",
    "cublas_xmma",
    "cublas_arch",
    "cublas_helper",
    "cutlass2",
    "cutlass3",
    "cute_device_kernel",
    "flash_attention_2",
    "flash_attention_3",
    "flash_attention_4",
    "flashinfer",
    "vllm",
    "xformers",
    "trtllm",
    "cudnn",
    "nccl",
    "nccl_legacy",
    "nccl_symmetric",
    "custom_allreduce",
    "aten_elementwise",
    "aten_reduce",
    "aten_index",
    "aten_softmax",
    "aten_norm",
    "aten_sort",
    "aten_copy",
    "aten",
    "cub",
    "fbgemm",
    "inductor_triton",
    "xla_fusion",
    "llm_serving",
    "memcpy_memset",
    "other",
)


@dataclass(frozen=True)
class KernelName:
    """A kernel name, normalized and decoded.

    ``category``/``subfamily``/``rule_id`` come from :mod:`tracelens.categories` (the one
    source of truth for categories). ``demangling`` is ``not_mangled``, ``demangled``,
    ``failed`` (the C++ demangler rejected it; identifiers were recovered best-effort) or
    ``unavailable`` (no C++ runtime in this process).
    """

    raw: str
    normalized: str
    base: str
    family: str
    category: str
    subfamily: str | None
    rule_id: str | None
    fields: tuple[Field, ...]
    demangling: str = NOT_MANGLED

    def field(self, name: str) -> Field | None:
        """The first field called ``name``, or None."""
        for f in self.fields:
            if f.name == name:
                return f
        return None

    def get(self, name: str, default: str | None = None) -> str | None:
        f = self.field(name)
        return f.value if f is not None else default

    def to_dict(self) -> dict[str, object]:
        return {
            "raw": self.raw,
            "normalized": self.normalized,
            "base": self.base,
            "family": self.family,
            "category": self.category,
            "subfamily": self.subfamily,
            "rule_id": self.rule_id,
            "demangling": self.demangling,
            "fields": [f.to_dict() for f in self.fields],
        }

    def _repr_html_(self) -> str:
        e = html.escape
        head = (
            f"<p><code>{e(self.normalized)}</code><br>family <b>{e(self.family)}</b>, "
            f"category <b>{e(self.category)}</b>"
            + (f" / {e(self.subfamily)}" if self.subfamily else "")
            + "</p>"
        )
        rows = "".join(
            f"<tr><td>{e(f.name)}</td><td><code>{e(f.value)}</code></td>"
            f"<td>{e(f.meaning)}</td><td>{e(f.confidence)}</td></tr>"
            for f in self.fields
        )
        return (
            head + "<table><thead><tr><th>field</th><th>value</th><th>meaning</th>"
            "<th>confidence</th></tr></thead><tbody>" + rows + "</tbody></table>"
        )


@overload
def decode(names: str) -> KernelName: ...
@overload
def decode(names: pl.Series | Iterable[str | None]) -> pl.DataFrame: ...


def decode(names: str | pl.Series | Iterable[str | None]) -> KernelName | pl.DataFrame:
    """Decode one kernel name, or many.

    A string gives a :class:`KernelName`. A polars Series, a list or any other iterable of
    strings gives a polars DataFrame, one row per name in input order, as
    :func:`decode_column` (``None`` gives a row of nulls). Never raises on any string; a
    TypeError for anything else (naming the position of a non-string in an iterable).
    """
    if isinstance(names, str):
        return _decode_name(names)
    if type(names).__module__.startswith("polars") and hasattr(names, "dtype"):
        return decode_column(names)  # a polars Series
    if isinstance(names, (bytes, bytearray, dict)) or not hasattr(names, "__iter__"):
        raise TypeError(
            f"kernel names must be a str, a polars Series or an iterable of str, "
            f"not {type(names).__name__}"
        )
    import polars as pl

    items = list(names)
    for i, item in enumerate(items):
        if item is not None and not isinstance(item, str):
            raise TypeError(f"kernel name {i} must be str, not {type(item).__name__}")
    return decode_column(pl.Series("name", items, dtype=pl.String))


def _unique_field_names(fields: list[Field]) -> list[Field]:
    """The fields with a name each: a repeated name gets ``_2``, ``_3``... in order (two
    undocumented ``flag`` tokens become ``flag`` and ``flag_2``), so that a name is a key
    (a dict, a polars struct unnested into columns)."""
    seen: set[str] = {f.name for f in fields}
    if len(seen) == len(fields):
        return fields
    used: set[str] = set()
    out: list[Field] = []
    for f in fields:
        name = f.name
        n = 1
        while name in used:
            n += 1
            name = f"{f.name}_{n}"
        used.add(name)
        out.append(f if name == f.name else Field(name, f.value, f.meaning, f.confidence))
    return out


@lru_cache(maxsize=8192)
def _decode_name(name: str) -> KernelName:
    if not isinstance(name, str):
        raise TypeError(f"kernel name must be str, not {type(name).__name__}")
    normalized, base, family, fields, demangling = _decoded_parts(name)
    cat = classify_parts(*_name_parts(name))
    return KernelName(
        raw=name,
        normalized=normalized,
        base=base,
        family=family,
        category=cat.category,
        subfamily=cat.subfamily,
        rule_id=cat.rule_id,
        fields=fields,
        demangling=demangling,
    )


def _decoded_parts(name: str) -> tuple[str, str, str, tuple[Field, ...], str]:
    """(normalized, base, family, fields, demangling) of ``name``: all of a KernelName but
    the category, which a column gets from its rules at once."""
    norm = _normalize_full(name)
    normalized = norm.normalized
    capped, qual, base = _name_parts(name)
    ctx = _Ctx(name, capped, qual, base)
    family, fields = _family_and_fields(ctx)
    if len(name) > MAX_NAME_CHARS:
        fields.insert(
            0,
            _f(
                "truncated",
                str(len(name)),
                f"input of {len(name)} characters; only the first {MAX_NAME_CHARS} were used",
                CONFIRMED,
            ),
        )
    if norm.demangling in (DEMANGLE_FAILED, DEMANGLER_UNAVAILABLE):
        why = (
            "the C++ demangler rejected this name (truncated or invalid)"
            if norm.demangling == DEMANGLE_FAILED
            else "no C++ runtime demangler in this process"
        )
        fields.insert(
            0, _f("demangling", norm.demangling, why + "; name recovered best-effort", UNKNOWN)
        )  # noqa: E501
        if norm.identifiers:
            fields.insert(
                1,
                _f(
                    "identifiers",
                    ",".join(norm.identifiers[:24]),
                    "identifiers read from the mangled name",
                    INFERRED,
                ),
            )  # noqa: E501
    return normalized, base, family, tuple(_unique_field_names(fields)), norm.demangling


#: Distinct names decoded per chunk in decode_column (the Python objects of one chunk
#: are freed before the next).
DECODE_CHUNK = 20_000


def decode_column(series: pl.Series) -> pl.DataFrame:
    """Decode a column of kernel names; each distinct name is decoded once and joined back.

    Returns one row per input row, in input order, with columns ``name`` (the input),
    ``normalized``, ``base``, ``family``, ``category``, ``subfamily`` and ``fields``: a
    ``List(Struct{field, value, meaning, confidence})``, one struct per decoded field, field
    names unique within a row, so ``df.explode("fields").unnest("fields")`` gives one row
    per field. Null names give null in every other column.
    """
    import polars as pl

    s = series.cast(pl.String).rename("name")
    distinct = s.drop_nulls().unique(maintain_order=True)
    chunks = [
        _decoded_chunk(distinct.slice(i, DECODE_CHUNK))
        for i in range(0, distinct.len(), DECODE_CHUNK)
    ]
    lookup = pl.concat(chunks) if chunks else _decoded_chunk(distinct)
    return s.to_frame().join(lookup, on="name", how="left", maintain_order="left")


def _decoded_chunk(names: pl.Series) -> pl.DataFrame:
    """decode_column's lookup rows for distinct ``names``: fields per name in Python (the
    decoders), categories for all of them at once (classify_column)."""
    import polars as pl

    from .categories import classify_column

    decoded = [_decoded_parts(n) for n in names.to_list()]
    cats = classify_column(names)
    return pl.DataFrame(
        {
            "name": names,
            "normalized": [k[0] for k in decoded],
            "base": [k[1] for k in decoded],
            "family": [k[2] for k in decoded],
            "category": cats["category"],
            "subfamily": cats["subfamily"],
            "fields": _fields_column([k[3] for k in decoded]),
        },
        schema={
            "name": pl.String,
            "normalized": pl.String,
            "base": pl.String,
            "family": pl.String,
            "category": pl.String,
            "subfamily": pl.String,
            "fields": fields_dtype(),
        },
    )


def _fields_column(per_name: list[tuple[Field, ...]]) -> pl.Series:
    """The ``fields`` column from each name's fields: built from flat Arrow arrays and
    offsets (a list of dicts per row made polars peak at ~10x the column's size)."""
    import polars as pl
    import pyarrow as pa

    offsets = [0]
    flat: list[Field] = []
    for fields in per_name:
        flat.extend(fields)
        offsets.append(len(flat))
    parts = [
        pa.array([f.name for f in flat], pa.large_string()),
        pa.array([f.value for f in flat], pa.large_string()),
        pa.array([f.meaning for f in flat], pa.large_string()),
        pa.array([f.confidence for f in flat], pa.large_string()),
    ]
    structs = pa.StructArray.from_arrays(parts, names=["field", "value", "meaning", "confidence"])
    lists = pa.LargeListArray.from_arrays(pa.array(offsets, pa.int64()), structs)
    return pl.Series("fields", lists).cast(fields_dtype())


def fields_dtype() -> pl.DataType:
    """The polars type of a ``fields`` column: a list of {field, value, meaning, confidence}."""
    import polars as pl

    return pl.List(pl.Struct({k: pl.String for k in ("field", "value", "meaning", "confidence")}))
