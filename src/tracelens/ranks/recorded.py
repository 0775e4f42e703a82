"""The rank an export records about itself, where it records one.

nsys does not write "the rank" as such; three things it does write can carry it, tried in
this order:

1. ``MPI_RANKS`` (``nsys profile --trace mpi``): the MPI rank of each traced thread. The
   MPI runtime's own number, so it wins.
2. NCCL's NVTX ranges (NCCL 2.19+ built with NVTX, ``-t nvtx``, export schema 3.25+):
   ``ncclCommInitRank`` (and ``...Config``, ``...Scalable``, ``ncclCommSplit``,
   ``ncclCommShrink``) carry a payload with the process's ``Rank`` in the new communicator
   and its ``No. of ranks``. A process joins several communicators (tensor, pipeline,
   data parallel...); its rank in the largest one, the world, is the job's rank.
3. The environment nsys recorded for the launched process (``META_DATA_CAPTURE`` rows
   ``PROCESS_n:ENVIRONMENT_VARIABLE`` = ``NAME=VALUE``): ``RANK`` (torchrun),
   ``OMPI_COMM_WORLD_RANK``, ``PMIX_RANK``, ``PMI_RANK``, ``MV2_COMM_WORLD_RANK``,
   ``SLURM_PROCID``, in that order.

A source that names more than one rank (a file holding several processes) names none: the
file is not one rank's, and the file name decides (or ``--rank-regex``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import _resources
from .._sqlite import decode_text

if TYPE_CHECKING:
    from ..trace import Trace

#: What the ranks table's rank_source says for each source.
MPI, NCCL, ENVIRONMENT = "MPI_RANKS", "NCCL ncclCommInitRank", "environment"
FILE_NAME, RANK_REGEX = "file name", "--rank-regex"
#: An export holding several ranks' processes: its processes numbered by their GPU (the
#: lowest of their collectives; with several exports, the exports by their names' ranks
#: first).
GPU_ORDER, FILE_GPU_ORDER = "GPU order", "file, then GPU order"
#: The one export given, which neither records a rank nor has one in its name: rank 0.
ONLY_EXPORT = "the only export"
RANK_VARIABLES = (
    "RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "MV2_COMM_WORLD_RANK",
    "SLURM_PROCID",
)  # fmt: skip
_RANK_ENTRY, _SIZE_ENTRY = "Rank", "No. of ranks"


def recorded_rank(trace: Trace) -> tuple[int | None, str | None]:
    """(rank, source): the first source above that names exactly one rank, else (None,
    None). ``source`` is MPI, NCCL or ``environment RANK`` (with the variable's name)."""
    mpi = _one(_mpi_ranks(trace))
    if mpi is not None:
        return mpi, MPI
    nccl = _one(nccl_world_ranks(trace))
    if nccl is not None:
        return nccl, NCCL
    for name, values in _environment_ranks(trace).items():
        if (rank := _one(values)) is not None:
            return rank, f"{ENVIRONMENT} {name}"
    return None, None


def _one(values: set[int]) -> int | None:
    return next(iter(values)) if len(values) == 1 else None


def _mpi_ranks(trace: Trace) -> set[int]:
    if "rank" not in trace.tables.get("MPI_RANKS", ()):
        return set()
    return {r for (r,) in trace._sqlite_rows(_resources.query("ranks_mpi_ranks"))}


def nccl_world_ranks(trace: Trace) -> set[int]:
    """The ranks the NCCL communicator-creation ranges record for the largest communicator
    they create (one rank for a one-process file; empty without such payloads)."""
    from ..nccl import _message_size as payload_value

    needed = {"NVTX_EVENTS": "binaryData", "NVTX_PAYLOAD_SCHEMA_ENTRIES": "offset"}
    if any(col not in trace.tables.get(t, ()) for t, col in needed.items()):
        return set()
    entries: dict[str, dict[tuple[int, int], tuple[int, int]]] = {_RANK_ENTRY: {}, _SIZE_ENTRY: {}}
    for domain, schema, name, kind, offset in trace._sqlite_rows(
        _resources.query("ranks_nccl_rank_fields")
    ):
        entries[decode_text(name)][(domain, schema)] = (kind, offset or 0)
    if not entries[_RANK_ENTRY]:
        return set()
    found: list[tuple[int, int]] = []  # (communicator size, rank)
    for (blob,) in trace._sqlite_rows(_resources.query("ranks_nccl_comm_inits")):
        rank = payload_value(blob, entries[_RANK_ENTRY])
        size = payload_value(blob, entries[_SIZE_ENTRY])
        if rank is not None and rank >= 0:
            found.append((size or 0, rank))
    if not found:
        return set()
    world = max(size for size, _ in found)
    return {rank for size, rank in found if size == world}


def _environment_ranks(trace: Trace) -> dict[str, set[int]]:
    """Per rank variable (in :data:`RANK_VARIABLES` order), the values the recorded
    launch environment gives it."""
    if "value" not in trace.tables.get("META_DATA_CAPTURE", ()):
        return {}
    out: dict[str, set[int]] = {name: set() for name in RANK_VARIABLES}
    for (text,) in trace._sqlite_rows(_resources.query("ranks_launch_environment")):
        name, _, value = (decode_text(text) or "").partition("=")
        if name in out and value.strip().isdigit():
            out[name].add(int(value))
    return {name: values for name, values in out.items() if values}
