"""A small result table (column names, kinds, rows) that needs neither polars nor pyarrow.

Most results are a few hundred rows (one per kernel, category, operation). For those the
command line renders straight from DuckDB's cursor: importing polars and pyarrow would cost
more than the query on a small trace (see bench/README.md). The library's public functions
still return polars DataFrames (``Rows.to_polars()``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import polars as pl

# DuckDB type names (cursor.description) -> the kind a renderer needs to know.
_INT = ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT",
        "UINTEGER", "UBIGINT", "UHUGEINT")  # fmt: skip
_FLOAT = ("FLOAT", "DOUBLE", "REAL", "DECIMAL")


def _kind_of_duckdb(type_name: str) -> str:
    t = str(type_name).upper()
    if t.startswith(_INT):
        return "int"
    if t.startswith(_FLOAT):
        return "float"
    if t.startswith("BOOL"):
        return "bool"
    return "str"


@dataclass(frozen=True)
class Rows:
    columns: tuple[str, ...]
    kinds: tuple[str, ...]  # int | float | bool | str, one per column
    data: tuple[tuple[Any, ...], ...]

    @property
    def height(self) -> int:
        return len(self.data)

    def is_numeric(self, column: str) -> bool:
        return self.kinds[self.columns.index(column)] in ("int", "float")

    def iter_rows(self):
        return iter(self.data)

    def head(self, n: int | None) -> Rows:
        return self if n is None else Rows(self.columns, self.kinds, self.data[:n])

    def drop(self, *names: str) -> Rows:
        keep = [i for i, c in enumerate(self.columns) if c not in names]
        return Rows(
            tuple(self.columns[i] for i in keep),
            tuple(self.kinds[i] for i in keep),
            tuple(tuple(r[i] for i in keep) for r in self.data),
        )

    @classmethod
    def from_cursor(cls, cursor) -> Rows:
        desc = cursor.description or []
        return cls(
            tuple(d[0] for d in desc),
            tuple(_kind_of_duckdb(d[1]) for d in desc),
            tuple(cursor.fetchall()),
        )

    @classmethod
    def from_polars(cls, df: pl.DataFrame) -> Rows:
        kinds = []
        for dtype in df.dtypes:
            if dtype.is_integer():
                kinds.append("int")
            elif dtype.is_float() or dtype.is_decimal():
                kinds.append("float")
            elif str(dtype) == "Boolean":
                kinds.append("bool")
            else:
                kinds.append("str")
        return cls(tuple(df.columns), tuple(kinds), tuple(df.rows()))

    def to_polars(self) -> pl.DataFrame:
        import polars as pl

        dtypes = {"int": pl.Int64, "float": pl.Float64, "bool": pl.Boolean, "str": pl.String}
        schema = {c: dtypes[k] for c, k in zip(self.columns, self.kinds, strict=True)}
        return pl.DataFrame(list(self.data), schema=schema, orient="row")
