"""What a kernel name is to the fingerprint: its normal form, with what is not numerical
removed (addresses, pids), and a 31-bit code of that form, a function of the name only, so
two traces' block digests compare."""

from __future__ import annotations

import hashlib
import re

# What is not numerical in a kernel name, on top of tracelens's normalization (argument
# list cut, casts and spaces canonical): addresses (a pointer template argument is printed
# as the address, different in every process) and process ids some JIT kernels embed.
# (float*)140737488355328, (float*)0x7f3a2c000000, (Foo<int>*)140737488355328: the hex
# form first (a decimal match took its "0" and kept "x7f3a2c000000"), and a type with
# template arguments too.
_POINTER_ARG = re.compile(r"\(([^()]*\*)\)(?:0[xX][0-9a-fA-F]+|\d+)")
_HEX_ADDRESS = re.compile(r"0x[0-9a-fA-F]{6,}")
_PID = re.compile(r"(?<![A-Za-z0-9])pid[_=]?\d+")


def normalized_name(name: str) -> str:
    """The kernel name with what is not numerical removed: tracelens's normal form
    (``names.normalize``, what ``decode(name).normalized`` is, without the rest of a decode:
    every string of the export passes here), pointer template arguments and addresses as
    ``0x…``, embedded pids as ``pid…``."""
    from ..names import normalize

    text = normalize(name)
    text = _POINTER_ARG.sub(lambda m: f"({m.group(1)})0x…", text)
    text = _HEX_ADDRESS.sub("0x…", text)
    return _PID.sub("pid…", text)


def name_code(name: str) -> int:
    """31-bit code of a normalized name (a function of the name only, so that the block
    digests of two traces can be compared; the launch configuration is added in SQL)."""
    digest = hashlib.md5(name.encode("utf-8"), usedforsecurity=False).digest()
    return int.from_bytes(digest[:4], "big") >> 1
