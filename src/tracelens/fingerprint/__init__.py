"""The numerical path of a run: a small JSON document (a CI baseline) that says which kernel
variants ran where, not how long they took, and the comparison of two of them.

    import tracelens
    with tracelens.open("run.sqlite") as trace:
        doc = tracelens.fingerprint(trace)            # dict, JSON-able
    text = tracelens.fingerprint.dumps(doc)           # byte-stable JSON
    diff = tracelens.fingerprint.compare(baseline, doc)   # PathDiff
    diff.first                                        # first divergence, or None

``tracelens.fingerprint`` is this module and is callable (``fingerprint(trace)`` builds the
document): the agreed interface names both the function and ``fingerprint.compare``, and a
package cannot be shadowed by a function of the same name once it is imported.
"""

from __future__ import annotations

import os
import sys
import types
from typing import TYPE_CHECKING, Any

from . import board
from .build import FORMAT, VERSION, build
from .compare import Divergence, KernelChange, PathDiff, RegionChange, compare
from .document import SCHEMA_PATH, dumps, load, loads, validate
from .names import normalized_name

if TYPE_CHECKING:
    from ..trace import Trace

__all__ = [
    "FORMAT",
    "board",
    "SCHEMA_PATH",
    "VERSION",
    "Divergence",
    "KernelChange",
    "PathDiff",
    "RegionChange",
    "build",
    "compare",
    "dumps",
    "fingerprint",
    "load",
    "loads",
    "normalized_name",
    "validate",
]


class _CallableModule(types.ModuleType):
    def __call__(self, trace: Trace | str | os.PathLike[str]) -> dict[str, Any]:
        """The fingerprint document of ``trace``, an open trace or a path (opened with
        :func:`tracelens.open` and closed again before this returns, as
        :func:`tracelens.diff` takes one); see :func:`tracelens.fingerprint.build.build`."""
        if isinstance(trace, str | os.PathLike):
            from ..trace import open as open_trace

            with open_trace(trace) as opened:
                return build(opened)
        from ..trace import Trace

        if not isinstance(trace, Trace):
            from ..errors import UsageError

            raise UsageError(
                f"fingerprint takes an open trace or a path to one (got {type(trace).__name__})"
            )
        return build(trace)


sys.modules[__name__].__class__ = _CallableModule
# ``tracelens.fingerprint`` resolves lazily to this attribute (see tracelens/__init__.py):
# the module itself, so the function and the namespace are one object.
fingerprint = sys.modules[__name__]
