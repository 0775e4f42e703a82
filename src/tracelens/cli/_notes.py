"""Notes about what a command's numbers leave out (``Trace.graph_note()``), placed so that
people see them and machine-readable output stays clean.

table and markdown: the note is the last line of the output, ``note: …`` (right under a
table's caption; a paragraph of its own after a Markdown table). csv and json: stdout holds
only the data, and the note is one ``tracelens: note: …`` line on stderr.
"""

from __future__ import annotations

import sys

MACHINE_FORMATS = ("csv", "json")


def join_notes(*notes: str | None) -> str | None:
    """The notes that are there, as one sentence (None when there are none)."""
    return "; ".join(n for n in notes if n) or None


def with_note(text: str, note: str | None, fmt: str) -> str:
    """``text`` (the rendered output in ``fmt``) with ``note`` added where ``fmt`` carries
    it; for csv/json the note is printed on stderr now and ``text`` comes back unchanged."""
    if not note:
        return text
    if fmt in MACHINE_FORMATS:
        from ..render import escape_controls

        print(f"tracelens: note: {escape_controls(note)}", file=sys.stderr)
        return text
    blank = "\n" if fmt == "markdown" else ""
    return f"{text}{blank}note: {note}\n"
