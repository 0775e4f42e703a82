"""Which files are the ranks of a run, and which rank each is."""

from __future__ import annotations

import glob
import os
import re
from pathlib import Path

from ..errors import UsageError

#: The default --rank-regex: the last integer in the file name (rank_%q{RANK}.sqlite,
#: report.node3.7.sqlite -> 7).
LAST_INTEGER = r"(\d+)(?!.*\d)"
TRACE_SUFFIXES = (".sqlite", ".db")


def find_traces(args: list[str | os.PathLike[str]]) -> list[Path]:
    """The files named by ``args``: paths, globs (``'runs/rank_*.sqlite'``, expanded here
    so a quoted glob works) and directories (their ``*.sqlite`` files). Sorted, without
    repeats; a glob or directory that names no file is a UsageError."""
    found: list[Path] = []
    for arg in args:
        text = str(arg)
        path = Path(text)
        if path.is_dir():
            inside = sorted(p for p in path.iterdir() if p.suffix in TRACE_SUFFIXES)
            if not inside:
                raise UsageError(f"{path}: directory holds no .sqlite export")
            found += inside
        elif not path.exists() and glob.has_magic(text):
            matched = sorted(Path(p) for p in glob.glob(text))
            if not matched:
                raise UsageError(f"{text}: the pattern matches no file")
            found += matched
        else:
            found.append(path)  # a missing file is reported by its rank's summary
    # one file named twice (runs/ and /abs/runs/rank_0.sqlite, or a link to it) is one
    # rank, not two ranks that ran alike (or "rank 0 is both ..."): the first name is kept
    named: dict[str, Path] = {}
    for path in found:
        named.setdefault(os.path.realpath(path), path)
    unique = list(named.values())
    if not unique:
        raise UsageError("no traces given: pass rank exports, a glob or a directory")
    return unique


def compile_rank_regex(pattern: str | None) -> re.Pattern[str]:
    try:
        rx = re.compile(pattern or LAST_INTEGER)
    except re.error as exc:
        raise UsageError(
            f"{{param}} {pattern!r} is not a regular expression ({exc})", param="rank_regex"
        ) from None
    if rx.groups < 1 and pattern is not None:
        raise UsageError(
            f"{{param}} {pattern!r} needs a group around the rank number: (\\d+)",
            param="rank_regex",
        )
    return rx


def one_name_pattern(paths: list[Path], rx: re.Pattern[str]) -> bool:
    """Whether the file names that hold a rank number (``rx``'s first group) are one name
    with that number changed (rank0.sqlite, rank2.sqlite; not a_7gpu and b_2gpu)."""
    patterns = set()
    for path in paths:
        m = rx.search(path.name)
        if m is not None and m.group(1) is not None:
            patterns.add(path.name[: m.start(1)] + "#" + path.name[m.end(1) :])
    return len(patterns) <= 1


def unsure_numbers(numbers: list[int]) -> str | None:
    """Why the numbers file names give (the last integers, analysed and failed files' alike)
    are not taken to say which ranks are missing, or None when they look like ranks: a
    job's ranks count from 0, and a set of some of them (a node's) leaves few numbers
    between them unused. Numbers that do neither are as likely process ids (nsys -o
    report_%p: 12345, 12391) or time stamps, whose gaps are no ranks."""
    seen = sorted(set(numbers))
    if not seen:
        return None
    lo, hi = seen[0], seen[-1]
    span = hi - lo + 1
    if lo == 0 or 2 * len(seen) >= span:
        return None
    unused = span - len(seen)
    return (
        f"rank numbers taken from the last integers of the file names ({lo} to {hi}): they "
        f"do not count from 0 and leave {unused:,} of the {span:,} numbers from the lowest to "
        "the highest unused, as process ids or time stamps would (nsys -o report_%p), so "
        f"those {unused:,} are not called missing ranks; pass --rank-regex to take them as ranks"
    )


def pid_numbers(named: list[tuple[int, tuple[int, ...]]]) -> str | None:
    """Why the numbers file names give are not taken to say which ranks are missing when
    they are process ids, or None: ``named`` holds each analysed file's number with the
    processes its export holds, and every number is one of its own file's processes (nsys
    -o report_%p names a file by the profiled process's id). Processes started together
    have near numbers (12345, 12346, 12348), which look like ranks by their numbers alone
    (:func:`unsure_numbers`); a rank number is the id of its file's own process only by
    chance, and not for every file."""
    if not named or not all(number in pids for number, pids in named):
        return None
    numbers = sorted({number for number, _ in named})
    if len(numbers) < 2:  # one number leaves no gap to call missing ranks or not
        return None
    return (
        f"rank numbers taken from the last integers of the file names ({numbers[0]} to "
        f"{numbers[-1]}) are the ids of processes in their own exports, as nsys -o "
        "report_%p names them, not ranks: no number between them is called a missing rank; "
        "pass --rank-regex to take them as ranks"
    )


def rank_from_name(path: Path, rx: re.Pattern[str]) -> int | None:
    """The rank in ``path``'s file name (the regex's first group), or None."""
    m = rx.search(path.name)
    if m is None:
        return None
    try:
        rank = int(m.group(1))
    except (TypeError, ValueError):
        raise UsageError(
            f"{path}: {{param}} matched {m.group(0)!r}, whose first group is not a number",
            param="rank_regex",
        ) from None
    if rank > _LARGEST_RANK:  # the ranks are 64-bit columns: a 20-digit stamp is no rank
        raise UsageError(
            f"{path}: the number {m.group(1)} its name gives is too large for a rank; pass "
            "{param} to say where the rank is in the file names",
            param="rank_regex",
        )
    return rank


_LARGEST_RANK = 2**63 - 1
