"""GPU records that end before they start: only a damaged export holds them (a record cut
off with end 0, a wild timestamp). Every figure leaves them out (the SQL macro
``ends_before_start`` of ``queries/_shared.sql``, applied by the filtered work views and
``gpu_operations()``); these methods count them, so that a command can say so."""

from __future__ import annotations

# kind -> (nsys table, view): the GPU work whose records have a start and an end
DAMAGE_KINDS = {
    "kernel": ("CUPTI_ACTIVITY_KIND_KERNEL", "kernels"),
    "memcpy": ("CUPTI_ACTIVITY_KIND_MEMCPY", "memcpys"),
    "memset": ("CUPTI_ACTIVITY_KIND_MEMSET", "memsets"),
}
ALL_KINDS = tuple(DAMAGE_KINDS)


class DamageMethods:
    """The :class:`~tracelens.Trace` methods that count the records left out as damaged."""

    def damaged_work(self, kinds: tuple[str, ...] = ALL_KINDS) -> dict[str, int]:
        """How many records of each of ``kinds`` ('kernel', 'memcpy', 'memset') end before
        they start, over the whole trace (no filter applies to a record whose times are
        wrong). With the export read directly, a table whose rowids run from 1 to the number
        of records a read of the whole trace kept (:meth:`kept_whole`) has no other rows,
        and no second scan is needed (SQLite's count of 5M kernels costs ~0.3 CPU s, a
        census ~1.5)."""
        counts = self._damaged
        for kind in kinds:
            if kind not in counts:
                counts[kind] = self._count_damaged(kind, self._kept.get(kind))
        return {kind: counts[kind] for kind in kinds}

    def kept_whole(self, kept: dict[str, int]) -> None:
        """Record how many records of each kind a read of the whole trace (no filter, no
        selection) kept, for :meth:`damaged_work`: census and lineup sum them from their
        own rows."""
        self._kept.update(kept)

    def damage_note(self, kinds: tuple[str, ...] = ALL_KINDS) -> str | None:
        """One sentence saying how many records of ``kinds`` end before they start and are
        left out of the figures; None when there are none. No prefix (the command line
        prints it as ``note: …``, as :meth:`graph_note`)."""
        counts = self.damaged_work(kinds)
        parts = [(n, kind) for kind, n in counts.items() if n]
        if not parts:
            return None
        one = sum(n for n, _ in parts) == 1
        what = " and ".join(f"{n:,} {kind} record{'' if n == 1 else 's'}" for n, kind in parts)
        verb = "ends before it starts" if one else "end before they start"
        return f"{what} {verb} (damaged export): left out"

    def _count_damaged(self, kind: str, kept: int | None) -> int:
        table, view = DAMAGE_KINDS[kind]
        if table not in self.tables or not {"start", "end"} <= set(self.tables[table]):
            return 0
        lazy = self._lazy
        if lazy is not None and not lazy.off:
            # the cache holds start and end of every cached table: DuckDB reads them there,
            # unless the rows a whole read kept are all of them (Parquet's own row count)
            if (
                kept is not None
                and self.db.execute(f"SELECT count(*) FROM {view}").fetchone()[0] == kept
            ):
                return 0
            sql = f'SELECT count(*) FROM {view} WHERE ends_before_start(start, "end")'
            return int(self.db.execute(sql).fetchone()[0])
        if kept is not None and self._sqlite is not None and self._rowids_are(table, kept):
            return 0
        # ends_before_start, in SQLite's own words: SQLite filters its rows natively
        return int(self._sqlite_rows(f'SELECT count(*) FROM "{table}" WHERE "end" < start')[0][0])

    def _rowids_are(self, table: str, kept: int) -> bool:
        """Whether ``table``'s rowids are exactly 1..kept (then it has ``kept`` rows). Each
        of SQLite's min(rowid) and max(rowid) alone reads one page, not the table."""
        from .parts import rowid_range

        low, high = rowid_range(self, table)
        return low == 1 and high == kept
