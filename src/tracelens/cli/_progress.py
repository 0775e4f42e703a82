"""Cache builds and exports on stderr: their first line always (what is written where), a
progress bar only when stderr is a terminal, and the library's notices as one line each."""

from __future__ import annotations

import sys
from typing import TextIO

BAR_WIDTH = 30


class StderrProgress:
    """The ``progress(message, fraction)`` callback the library reports to."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        self._drawn = False

    def __call__(self, message: str | None, fraction: float | None) -> None:
        if message is not None:
            self._end_bar()
            from ..render import escape_controls

            print(f"tracelens: {escape_controls(message)}", file=self.stream, flush=True)
        if fraction is None or not self.tty:
            return
        filled = round(max(0.0, min(1.0, fraction)) * BAR_WIDTH)
        bar = "█" * filled + "░" * (BAR_WIDTH - filled)
        self.stream.write(f"\r  {bar} {fraction:4.0%}")
        self.stream.flush()
        self._drawn = True
        if fraction >= 1.0:
            self._end_bar()

    def _end_bar(self) -> None:
        if self._drawn:
            self.stream.write("\n")
            self.stream.flush()
            self._drawn = False
