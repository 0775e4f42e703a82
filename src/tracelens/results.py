"""What every analysis result offers a notebook: its tables as polars DataFrames, as
dicts, and as HTML (Jupyter shows ``_repr_html_``).

A result class lists its tables in :meth:`Result.tables`, the first being its main one::

    r = trace.stakeout("gemm")
    r.to_polars()              # the main table (here: the launches)
    r.to_polars("configs")     # another one, by name
    r.tables().keys()          # every table
    r                          # in Jupyter: a heading and each table, first rows

Tuples of small dataclasses (a diff's clues, its per-device alignment) become DataFrames
through :func:`records`.
"""

from __future__ import annotations

import html
from abc import ABC, abstractmethod
from dataclasses import asdict, is_dataclass
from typing import TYPE_CHECKING, Any

from .errors import UsageError

if TYPE_CHECKING:
    import polars as pl

#: Rows of each table shown by ``_repr_html_``.
HTML_ROWS = 10


def records(items: tuple[Any, ...] | list[Any], columns: tuple[str, ...] = ()) -> pl.DataFrame:
    """A DataFrame with one row per dataclass in ``items`` and one column per field (nested
    tuples as lists). ``columns`` names the columns of an empty result."""
    import polars as pl

    rows = [asdict(item) if is_dataclass(item) else dict(item) for item in items]
    if not rows:
        return pl.DataFrame(schema={c: pl.String for c in columns})
    return pl.DataFrame(rows, strict=False, infer_schema_length=None)


class Result(ABC):
    """Mixin for result dataclasses: :meth:`tables` is all a class defines."""

    @abstractmethod
    def tables(self) -> dict[str, pl.DataFrame]:
        """Every table of the result by name, the main one first."""

    def to_polars(self, table: str | None = None) -> pl.DataFrame:
        """The main table, or the one named ``table`` (see :meth:`tables`)."""
        tables = self.tables()
        if table is None:
            return next(iter(tables.values()))
        if table not in tables:
            raise UsageError(
                f"{type(self).__name__} has no table {table!r}; it has: {', '.join(tables)}",
            )
        return tables[table]

    def to_dicts(self, table: str | None = None) -> list[dict[str, Any]]:
        """:meth:`to_polars` as a list of row dicts."""
        return self.to_polars(table).to_dicts()

    def _summary(self) -> str:
        """One line said above the tables in HTML; subclasses may say more."""
        return ""

    def _repr_html_(self) -> str:
        e = html.escape
        parts = [f"<p><b>{e(type(self).__name__)}</b> {e(self._summary())}</p>"]
        for name, df in self.tables().items():
            rows = f"{df.height:,} row{'' if df.height == 1 else 's'}"
            parts.append(f"<p><code>{e(name)}</code>: {rows}</p>")
            if df.height:
                parts.append(df.head(HTML_ROWS)._repr_html_())
        return "\n".join(parts)
