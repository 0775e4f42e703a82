"""What a page leaves out, said in the page: each section that caps its rows or skips an
analysis on a big trace adds an :class:`Omitted` naming what and how to see it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Omitted:
    """Something the page leaves out, said in the page."""

    where: str
    what: str
