"""Opening an input read-only: a SQLite export (its path given to DuckDB as UTF-8, a
private copy when files beside it would be written), a ``.nsys-rep`` report (exported into
the cache first) or a parquetdir directory."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from .. import _schema
from .._sqlite import check_file, connect_readonly, sidecars, table_columns
from ..errors import TraceError


def _utf8(text: str) -> bool:
    """Whether ``text`` is valid Unicode (a path with bytes that are not UTF-8 holds
    surrogate escapes, which DuckDB cannot take)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


class InputMethods:
    """The :class:`~tracelens.Trace` methods that open its input (called by ``__init__``)."""

    def _open_sqlite_input(self) -> None:
        from .. import inputs

        read = self.path
        if inputs.is_report(self.path):
            read = inputs.export_report(self.path, self._cache_settings(), self._progress)
        check_file(read)
        # DuckDB's scanner opens with O_NOFOLLOW: give it the real file.
        self._real_path = self._source_file = read.resolve()
        self._sqlite = connect_readonly(self._real_path, self.path)
        self.tables: dict[str, tuple[str, ...]] = table_columns(self._sqlite, self.path)
        if beside := sidecars(self._real_path, self.path):
            self._real_path = self._private_copy(beside)
        elif not _utf8(str(self._real_path)):
            self._real_path = self._private_copy([], why="its path is not UTF-8")

    def _private_copy(self, beside: list[Path], why: str | None = None) -> Path:
        """DuckDB's scanner opens the file read-write, so with a -wal or -journal beside it
        SQLite would create or rewrite files there; and it takes its path as UTF-8 text.
        Give the scanner a copy of the file alone (in the cache directory, removed on close);
        Python's sqlite3 keeps reading the original immutably, which ignores those files
        too. ``why``: the reason when it is not files ``beside`` the trace."""
        import tempfile

        names = ", ".join(p.name for p in beside)
        why = why or f"{names} beside it, which DuckDB's reader would write to"
        root = self._cache_settings().root
        try:
            root.mkdir(parents=True, exist_ok=True)
            fd, name = tempfile.mkstemp(prefix=".copy-", suffix=".sqlite", dir=root)
            with os.fdopen(fd, "wb") as out, self._source_file.open("rb") as src:
                shutil.copyfileobj(src, out, 1 << 20)
        except OSError as exc:
            # mkdir of a path that is a file says "File exists": say what is wrong with it
            reason = "Not a directory" if isinstance(exc, FileExistsError) else exc.strerror
            raise TraceError(
                self.path,
                f"cannot be read in place ({why}) and no private copy can be made in {root} "
                f"({reason}); copy the .sqlite file alone to another directory and pass "
                "the copy",
            ) from None
        self._copy_path = Path(name)
        if beside:
            notice = f"{names} beside {self.path.name} left alone; reading a private copy in {root}"
        else:
            notice = f"{self.path.name}: {why}; reading a private copy in {root}"
        self.notices.append(notice)
        if self._progress:
            self._progress(notice, None)
        return self._copy_path

    def _open_parquet_input(self) -> None:
        """A directory from ``nsys export --type parquetdir``: its tables are read in place
        (the views from Parquet, the small tables through a connection of their own)."""
        from .. import _engine, inputs

        self._real_path = self.path.resolve()
        if not _utf8(str(self._real_path)):
            self._real_path = self._utf8_link(self._real_path)
        self.parquet_dir = self._real_path
        self._raw = _engine.connect(sqlite=False)
        self.tables = inputs.parquet_tables(self._raw, self._real_path)
        self._raw.execute("SET VARIABLE parquet_dir = $d", {"d": str(self._real_path)})
        for table in self.tables:
            self._raw.execute(
                f"CREATE VIEW {_schema._quote(table)} AS "
                f"SELECT * FROM {_schema.source_sql(table, 'parquet')}"
            )

    def _utf8_link(self, directory: Path) -> Path:
        """DuckDB takes a path as UTF-8 text: a parquetdir whose path is not (it was an
        internal error, "Unable to cast Python instance of type str") is read through a
        symbolic link to it in the cache directory, removed on close."""
        import uuid

        root = self._cache_settings().root
        link = root / f".link-{os.getpid()}-{uuid.uuid4().hex}"
        try:
            root.mkdir(parents=True, exist_ok=True)
            os.symlink(directory, link, target_is_directory=True)
        except OSError as exc:
            reason = "Not a directory" if isinstance(exc, FileExistsError) else exc.strerror
            raise TraceError(
                self.path,
                f"its path is not UTF-8, which DuckDB cannot read, and no link to it can be "
                f"made in {root} ({reason}); rename the directory",
            ) from None
        self._copy_path = link  # removed by close(), as a private copy is
        return link

    def _cache_settings(self):
        from .. import cache

        return cache.Settings.from_env(self._cache_wanted)
