"""Text from the profiled program (kernel, process and NVTX names, paths) made safe to show:
in a terminal (control characters as ``\\xNN``, only our own colour styles kept) and in
Markdown (entities and backslash escapes, or a code span). Every text renderer puts such
text through these."""

from __future__ import annotations

import re

# Kernel, process and NVTX names and paths come from the profiled program: a name holding
# ESC sequences would retitle the terminal, clear it or plant a link. Every text output
# shows such characters as \xNN (as bad UTF-8 bytes are shown), C0 and C1 controls and DEL.
# A path's bytes that are not UTF-8 arrive as surrogate escapes (U+DC80..U+DCFF): shown as
# the byte, \xNN, too (they cannot be written as UTF-8 at all).
_CONTROLS = re.compile(r"[\x00-\x1f\x7f-\x9f\udc80-\udcff]")
_CONTROLS_BUT_LINES = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\udc80-\udcff]")
# What a color table writes itself (rich's SGR styles), kept by ``escape_controls``.
_OUR_STYLES = re.compile(r"(\x1b\[[0-9;]*m)")


def _hex(m: re.Match) -> str:
    code = ord(m.group())
    return f"\\x{code - 0xDC00 if code >= 0xDC80 else code:02x}"


_SURROGATES = re.compile(r"[\udc80-\udcff]")


def encodable(text: str) -> str:
    """``text`` writable as UTF-8: the surrogate escapes of bytes that were not UTF-8 (in a
    path, say) shown as ``\\xNN``; everything else as it is."""
    return text if text.isascii() else _SURROGATES.sub(_hex, text)


def printable(text: str) -> str:
    """``text`` with every control character (line breaks too) shown as ``\\xNN``."""
    return _CONTROLS.sub(_hex, text)


def escape_controls(text: str, *, keep_styles: bool = False) -> str:
    """A whole rendered output made safe for a terminal: control characters other than
    line breaks and tabs become ``\\xNN``; ``keep_styles`` keeps SGR color sequences
    (``ESC [ ... m``, what a color table emits); every other escape sequence is shown."""
    if not keep_styles:
        return _CONTROLS_BUT_LINES.sub(_hex, text)
    parts = _OUR_STYLES.split(text)
    return "".join(p if i % 2 else _CONTROLS_BUT_LINES.sub(_hex, p) for i, p in enumerate(parts))


# Kernel names, NVTX text, process and file names come from the profiled program: untrusted.
# Markdown outputs are pasted where GitHub renders them (PR comments, $GITHUB_STEP_SUMMARY),
# and GitHub passes some raw HTML through (<img>, <details>, comments), so every Markdown
# writer puts such text through one of these two helpers.
_MD_TEXT = str.maketrans(
    {
        "&": "&amp;",
        "<": "&lt;",
        ">": "&gt;",
        # Backslash escapes (CommonMark): a pipe would end a table cell, a backtick open a
        # code span, brackets make links and images (![x](//host/beacon.png)), and a
        # backslash would escape what follows it.
        "\\": "\\\\",
        "|": "\\|",
        "`": "\\`",
        "[": "\\[",
        "]": "\\]",
    }
)


def _one_line(text: str) -> str:
    # CommonMark's line endings; a break would end the table row or the heading.
    return text.replace("\r\n", " ").replace("\r", " ").replace("\n", " ")


def md_text(value: object) -> str:
    """``value`` as Markdown text that renders as itself: ``&``, ``<``, ``>`` become
    entities, ``\\ | ` [ ]`` are backslash-escaped, line breaks become spaces. Safe in a
    table cell, a heading or a paragraph."""
    return printable(_one_line(str(value))).translate(_MD_TEXT)


def md_code(value: object, *, table: bool = False) -> str:
    """``value`` as a Markdown code span (GitHub shows its content literally, HTML included).

    The fence is one backtick longer than the longest run of backticks in the text, so
    none closes it early; the text is padded with a space when it starts or ends with a
    backtick (CommonMark strips one space from each side). ``table``: the span sits in a
    table cell, where a pipe must be escaped even inside a code span (GFM removes the
    backslash); elsewhere the backslash would show. An empty text is an empty string."""
    text = printable(_one_line(str(value)))
    if not text:
        return ""
    if table:
        text = text.replace("|", "\\|")
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    if text[0] == "`" or text[-1] == "`" or (text[0] == text[-1] == " " and text.strip(" ")):
        text = f" {text} "
    return f"{fence}{text}{fence}"
