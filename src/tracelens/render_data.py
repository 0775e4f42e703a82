"""A result as data: CSV and JSON, with its ``*_ns`` columns converted to the requested unit
(re-exported by :mod:`tracelens.render`, where callers find them).

Times: :func:`convert_rows` divides each value as Python does and keeps
:data:`ROUND_DECIMALS` decimals with Python's ``round``; :func:`convert_times` is the same
conversion for a polars DataFrame, column by column, to the same floats (polars' own
scalar division and ``round`` differ from it in the last digit now and then).

A polars DataFrame is written column by column (polars expressions), never row by row in
Python: ``nvtx --kernels`` writes 4.1M rows, which took ~68 CPU s as Python tuples. The
text is the same, byte for byte, as the per-row writers here (``_csv_field`` and
``json.dumps``), which still write :class:`~tracelens.rows.Rows` (small results, no polars
loaded) and frames holding a type the columnar writer does not know (:func:`columnar` says
which). Every column is first turned into the text of its fields; then polars writes those
strings as they are (``quote_style="never"``) and the lines are joined here. The rules kept:

* a float is Python's ``repr``: polars' shortest digits are the same, but it writes
  ``0.00001`` where Python writes ``1e-05`` (below 1e-4), so those are rewritten; NaN and
  infinities are null; Float32 is widened first (Python sees the double);
* CSV: null is an empty field, the empty string ``""``; text is quoted when it holds a
  comma, a quote or a line break; text a spreadsheet would run as a formula gets a
  leading ``'`` and quotes; booleans ``true``/``false``;
* JSON: as ``json.dumps(records, ensure_ascii=False, separators=(",", ":"))`` escapes.
"""

from __future__ import annotations

import json as json_module
import math
from collections.abc import Iterator
from typing import TYPE_CHECKING

from .filters import TIME_UNITS_NS
from .rows import Rows

if TYPE_CHECKING:
    import polars as pl

    Frame = pl.DataFrame | Rows

#: Rows turned into text at a time: bounds the strings alive at once.
CHUNK_ROWS = 200_000

# Python writes a float below 1e-4 in exponent notation, polars in fixed notation:
# "-0.0000123" -> sign, zeros after the point, first digit, the other digits.
_SMALL_FIXED = r"^(-?)0\.(0{4,})([1-9])(\d*)$"
# A Python float repr: its fractional digits, and the exponent when it is negative.
_REPR_DIGITS = r"^-?\d+(?:\.(?P<fraction>\d+))?(?:e-(?P<exponent>\d+))?$"
_FORMULA = r"^[=+\-@\t\r]"
_CSV_QUOTE = r'[,"\n\r]'
# json.dumps(ensure_ascii=False): a backslash, a quote and every control character below 0x20.
_JSON_SHORT = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_JSON_SHORT |= {"\b": "\\b", "\f": "\\f"}
_JSON_ESCAPES = {chr(i): _JSON_SHORT.get(chr(i), f"\\u{i:04x}") for i in range(0x20)}
_JSON_ESCAPES |= _JSON_SHORT
_JSON_NEEDS_ESCAPE = r'\x00-\x1f"\\'
#: Decimals kept when converting times for data outputs (csv/json): no information lost
#: from the ns values (averages carry 0.1 ns).
ROUND_DECIMALS = {"ns": 1, "us": 6, "ms": 7, "s": 10}


# -- times ------------------------------------------------------------------------------------


def _time_column(name: str, timeunit: str) -> str:
    return name[: -len("_ns")] + "_" + timeunit


def convert_rows(rows: Rows, timeunit: str) -> Rows:
    """Every ``*_ns`` column divided by the unit (``float(v) / ns_per_unit``), rounded to
    :data:`ROUND_DECIMALS` decimals by Python's ``round`` and renamed ``*_<unit>``: the
    definition of a time in another unit, which :func:`convert_times` matches for frames."""
    if timeunit == "ns":
        return rows
    factor = TIME_UNITS_NS[timeunit]
    kept = ROUND_DECIMALS[timeunit]
    idx = [i for i, c in enumerate(rows.columns) if c.endswith("_ns")]
    columns = tuple(_time_column(c, timeunit) if c.endswith("_ns") else c for c in rows.columns)
    kinds = tuple("float" if i in idx else k for i, k in enumerate(rows.kinds))
    data = tuple(
        tuple(
            (None if v is None else round(float(v) / factor, kept)) if i in idx else v
            for i, v in enumerate(row)
        )
        for row in rows.data
    )
    return Rows(columns, kinds, data)


def convert_times(df: pl.DataFrame, timeunit: str) -> pl.DataFrame:
    """:func:`convert_rows` of a polars DataFrame, to the same floats: every ``*_ns`` column
    divided by the unit, rounded as Python's ``round`` rounds (correctly: polars' ``round``
    differs in the last digit now and then), and renamed ``*_<unit>``. Rounding changes only
    values with more decimals than kept (exact ns and 0.1 ns averages have fewer): those few
    go through ``round``."""
    import polars as pl

    if timeunit == "ns":
        return df
    kept = ROUND_DECIMALS[timeunit]
    columns = []
    for name in df.columns:
        if not name.endswith("_ns"):
            columns.append(df[name])
            continue
        # A series, not a scalar: polars multiplies by the reciprocal of a scalar divisor,
        # which differs from Python's division in the last bit for a tenth of the values.
        x = df[name].cast(pl.Float64) / pl.repeat(TIME_UNITS_NS[timeunit], df.height, eager=True)
        parts = _float_text(pl.col(name)).str.extract_groups(_REPR_DIGITS)
        fraction = parts.struct.field("fraction").str.len_chars().fill_null(0)
        digits = fraction + parts.struct.field("exponent").cast(pl.Int64).fill_null(0)
        more = x.to_frame(name).select(digits > kept).to_series()
        if more.any():
            at = more.arg_true()
            x = x.scatter(at, [round(v, kept) for v in x.gather(at).to_list()])
        columns.append(x.alias(_time_column(name, timeunit)))
    return pl.DataFrame(columns)


# -- writers ----------------------------------------------------------------------------------


def csv(df: Frame) -> str:
    """``df`` as CSV: a polars DataFrame column by column, Rows (small results, no polars
    loaded) row by row; the same text either way."""
    return "".join(csv_chunks(df))


def csv_chunks(df: Frame) -> Iterator[str]:
    """:func:`csv` in pieces of a bounded number of rows, to be written as they come."""
    header = ",".join(_csv_field(c) for c in df.columns)
    if not isinstance(df, Rows) and columnar(df):
        yield from _columnar_csv_chunks(df, header)
        return
    rows = _as_rows(df)
    yield "\n".join([header] + [",".join(_csv_field(v) for v in row) for row in rows.data]) + "\n"


def json(df: Frame) -> str:
    """``df`` as a JSON array of records (see :func:`csv` for how)."""
    return "".join(json_chunks(df))


def json_chunks(df: Frame) -> Iterator[str]:
    """:func:`json` in pieces of a bounded number of records."""
    if not isinstance(df, Rows) and columnar(df):
        yield from _columnar_json_chunks(df)
        return
    df = _as_rows(df)
    records = [
        {c: _plain(v) for c, v in zip(df.columns, row, strict=True)} for row in df.iter_rows()
    ]
    yield json_module.dumps(records, ensure_ascii=False, separators=(",", ":")) + "\n"


def _as_rows(df: Frame) -> Rows:
    return df if isinstance(df, Rows) else Rows.from_polars(df)


# -- per row ----------------------------------------------------------------------------------


def _plain(value: object) -> object:
    """A value as polars' CSV/JSON writers show it."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _csv_field(value: object) -> str:
    # As polars writes CSV: null is an empty field, an empty string is "", text is quoted
    # only when it holds a comma, a quote or a line break, booleans are lower case.
    value = _plain(value)
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    text = str(value)
    if isinstance(value, str) and text[:1] in _FORMULA_START:
        # A spreadsheet would run it as a formula (=HYPERLINK(...), @SUM, -2+3): as OWASP
        # advises, a leading ' makes it text, and the field is quoted.
        return "\"'" + text.replace('"', '""') + '"'
    if text == "" or any(ch in text for ch in ',"\n\r'):
        return '"' + text.replace('"', '""') + '"'
    return text


_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


# -- column by column -------------------------------------------------------------------------


def columnar(df: pl.DataFrame) -> bool:
    """Whether this module writes ``df``: every column an integer, float, boolean, text
    (categorical too) or all-null type, and at least one column."""
    import polars as pl

    def known(dtype: pl.DataType) -> bool:
        return (
            dtype.is_integer()
            or dtype in (pl.Float32, pl.Float64, pl.Boolean, pl.String, pl.Null)
            or isinstance(dtype, pl.Categorical | pl.Enum)
        )

    return df.width > 0 and all(known(d) for d in df.dtypes)


def _float_text(col: pl.Expr, small: bool = True) -> pl.Expr:
    """A float column as Python's ``repr`` of each value; NaN and infinities null.
    ``small``: some value is below 1e-4 (else the rewrite of those, 8x the cost of the
    rest, is left out)."""
    import polars as pl

    x = col.cast(pl.Float64)
    text = x.cast(pl.String)
    if not small:
        return pl.when(x.is_finite()).then(text)
    parts = text.str.extract_groups(_SMALL_FIXED)
    zeros = parts.struct.field("2").str.len_chars() + 1
    rest = parts.struct.field("4")
    small = pl.concat_str(
        parts.struct.field("1"),
        parts.struct.field("3"),
        pl.when(rest == "").then(pl.lit("")).otherwise(pl.lit(".") + rest),
        pl.lit("e-"),
        zeros.cast(pl.String).str.zfill(2),
    )
    # and where polars does write an exponent, it has one digit ("5e-6"), Python two.
    short_exponent = text.str.replace(r"e-(\d)$", "e-0${1}")
    return (
        pl.when(~x.is_finite())
        .then(None)
        .when(text.str.contains(_SMALL_FIXED))
        .then(small)
        .otherwise(short_exponent)
    )


def _bool_text(col: pl.Expr) -> pl.Expr:
    import polars as pl

    return (
        pl.when(col.is_null()).then(None).when(col).then(pl.lit("true")).otherwise(pl.lit("false"))
    )


def _rare(chunk: pl.DataFrame, escapes: str = '"') -> dict[str, bool]:
    """Per column of ``chunk``, whether it needs the costlier rewrites: a float below 1e-4
    (see :func:`_float_text`), a text holding one of ``escapes`` (a regex class's
    inside)."""
    import polars as pl

    tests = []
    for col, dtype in zip(chunk.columns, chunk.dtypes, strict=True):
        c = pl.col(col)
        if dtype.is_float():
            tests.append(((c.abs() < 1e-4) & (c != 0)).any().alias(col))
        elif dtype == pl.String or isinstance(dtype, pl.Categorical | pl.Enum):
            tests.append(c.cast(pl.String).str.contains(f"[{escapes}]").any().alias(col))
    return chunk.select(tests).row(0, named=True) if tests else {}


def _csv_text(col: pl.Expr, dtype: pl.DataType, rare: bool = True) -> pl.Expr:
    """The CSV field of each value (null: null, written as the empty field); ``rare``: see
    :func:`_rare`."""
    import polars as pl

    if dtype.is_float():
        return _float_text(col, rare)
    if dtype == pl.Boolean:
        return _bool_text(col)
    if dtype == pl.Null:
        return col.cast(pl.String)
    if dtype.is_integer():
        return col.cast(pl.String)
    text = col.cast(pl.String)
    doubled = text.str.replace_all('"', '""', literal=True) if rare else text
    return (
        pl.when(text.str.contains(_FORMULA))
        .then(pl.concat_str(pl.lit("\"'"), doubled, pl.lit('"')))
        .when((text == "") | text.str.contains(_CSV_QUOTE))
        .then(pl.concat_str(pl.lit('"'), doubled, pl.lit('"')))
        .otherwise(text)
    )


def _json_text(col: pl.Expr, dtype: pl.DataType, rare: bool = True) -> pl.Expr:
    """The JSON value of each value, ``null`` included; ``rare``: see :func:`_rare`."""
    import polars as pl

    if dtype.is_float():
        value = _float_text(col, rare)
    elif dtype == pl.Boolean:
        value = _bool_text(col)
    elif dtype.is_integer() or dtype == pl.Null:
        value = col.cast(pl.String)
    else:
        text = col.cast(pl.String)
        escaped = text
        if rare:
            escaped = text.str.replace_many(list(_JSON_ESCAPES), list(_JSON_ESCAPES.values()))
        value = pl.concat_str(pl.lit('"'), escaped, pl.lit('"'))
    return value.fill_null(pl.lit("null"))


def _columnar_csv_chunks(df: pl.DataFrame, header: str) -> Iterator[str]:
    """``df`` as CSV lines, ``header`` (the header line, without its line break) first, a
    chunk of :data:`CHUNK_ROWS` rows at a time."""
    import polars as pl

    yield header + "\n"
    for start in range(0, df.height, CHUNK_ROWS):
        chunk = df.slice(start, CHUNK_ROWS)
        rare = _rare(chunk)
        columns = zip(chunk.columns, chunk.dtypes, strict=True)
        fields = chunk.select(
            _csv_text(pl.col(c), d, rare.get(c, True)).alias(c) for c, d in columns
        )
        yield fields.write_csv(
            include_header=False, quote_style="never", null_value="", line_terminator="\n"
        )


def _columnar_json_chunks(df: pl.DataFrame) -> Iterator[str]:
    """``df`` as one JSON array of records, a chunk of :data:`CHUNK_ROWS` records at a time."""
    import polars as pl

    if df.height == 0:
        yield "[]\n"
        return
    keys = [json_module.dumps(c, ensure_ascii=False) + ":" for c in df.columns]
    for start in range(0, df.height, CHUNK_ROWS):
        chunk = df.slice(start, CHUNK_ROWS)
        rare = _rare(chunk, _JSON_NEEDS_ESCAPE)
        parts: list[pl.Expr] = []
        for i, (col, dtype) in enumerate(zip(df.columns, df.dtypes, strict=True)):
            value = _json_text(pl.col(col), dtype, rare.get(col, True))
            parts += [pl.lit(("{" if i == 0 else ",") + keys[i]), value]
        record = pl.concat_str([*parts, pl.lit("}")]).str.join(",").alias("record")
        yield ("[" if start == 0 else ",") + chunk.select(record)["record"][0]
    yield "]\n"
