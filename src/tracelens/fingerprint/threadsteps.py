"""Which period step a launch is in when a process launches from several host threads: by
its place in its own thread's sequence, not by where the host scheduler put its call among
the other threads' calls.

A period step is ``p`` consecutive launches of a device in host launch order (correlation
id: :func:`tracelens.fingerprint.members.host_order_steps`), and CUPTI numbers the calls of
all of a process's threads in one sequence, as the scheduler ran them. A communication
thread's collective called at the end of iteration 5 in one run and just after the compute
thread's first launch of iteration 6 in the next run moves the block boundary: step 6 read
a, b, c, a and step 7 b, c, AllReduce, AllReduce, a path change (``--check`` fails) between
two runs of one program.

Each thread's own sequence is its program's order, so the fingerprint splits it by a rule
of its own: a thread whose launches in the steps (as the blocks put them) are about ``q``
a step (``q`` = its launches in the steps / the device's steps, rounded) has its launches
from its first one in the steps taken ``q`` at a time, one block of its own sequence a
step, in the steps' order. The steps themselves (count, windows: what ``tracelens steps``
says) are the step search's; only which of a thread's launches is in which is the
fingerprint's. A thread whose launches would move by more than one step from the block the
host order put them in does not launch steadily with the steps (a logger, a checkpoint
thread): its launches keep that block, as a process launching from one thread does (its
own sequence is then the block sequence, and nothing changes).

The steps themselves: where a thread's call slips past a step boundary, the block there is
off the motif; the step search then takes each thread in its own order
(:mod:`tracelens.steps_threads`, which shares the other threads' launches out with
:func:`thread_blocks`), so 12 iterations with one or two such calls keep their steps. At
the capture's edge it can still differ (a collective called past the first launch after
the last step: one step fewer), and the fingerprint keeps what the search found, as
``tracelens steps`` says it. And a thread's first
launch in the steps is the first its blocks hold: a collective of the iteration before the
first step called after the first step's first launch is in step 1 where the other run has
it before the steps, the two being the same kernel (a sequence cannot tell which of its
launches began the loop).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import polars as pl

_TID_BITS = 0xFFFFFF


def launch_groups(launches: pl.DataFrame, rows: pl.Series) -> pl.Series | None:
    """The launching (process, thread) of each of ``rows`` (row numbers of ``launches``)
    as one Int64; None when the launches have no ``thread`` column (each process launched
    from one thread: :mod:`tracelens.fingerprint.threads`)."""
    import polars as pl

    if "thread" not in launches.columns:
        return None
    thread = pl.col("thread").cast(pl.Int64)
    if "global_pid" in launches.columns:
        pid = (pl.col("global_pid").cast(pl.Int64) // 2**24) & _TID_BITS
        thread = pid.fill_null(0) * 2**32 + thread
    return launches.select(thread.gather(rows)).to_series()


def thread_blocks(groups: pl.Series, block: pl.Series, blocks: int) -> pl.Series:
    """The block (step index from 0; NULL: none) of each of a device's launches in host
    launch order (``groups``: each one's process and thread, :func:`launch_groups`;
    ``block``: its block in host order, of ``blocks``), each thread's launches split by
    their place in its own sequence (see the module docstring)."""
    import polars as pl

    from .order import sort_order

    n = groups.len()
    frame = pl.DataFrame(
        {"g": groups, "k": block, "pos": pl.int_range(n, dtype=pl.Int64, eager=True)}
    )
    # each thread's launches together, in its own order (a stable sort by thread)
    order = sort_order(frame, [("g", False), ("pos", False)], ())
    own = frame.select(pl.col("g", "k").gather(order))
    new = (own["g"] != own["g"].shift(1)).fill_null(True)
    starts = new.arg_true().cast(pl.Int64)
    j = pl.int_range(n, dtype=pl.Int64, eager=True) - starts.gather(new.cum_sum() - 1)
    own = own.with_columns(j=j)
    inside = pl.col("k").is_not_null()
    per = (
        own.lazy()
        .group_by("g")
        .agg(lo=pl.col("j").filter(inside).min(), n_in=inside.sum(), n=pl.len())
        .with_columns(q=(pl.col("n_in") / blocks).round().cast(pl.Int64))
        .filter((pl.col("q") > 0) & (pl.col("lo") + blocks * pl.col("q") <= pl.col("n")))
        .collect()
    )
    if per.is_empty():
        return block
    lo = own["g"].replace_strict(per["g"], per["lo"], default=None, return_dtype=pl.Int64)
    q = own["g"].replace_strict(per["g"], per["q"], default=None, return_dtype=pl.Int64)
    at = own["j"] - lo
    mine = pl.select(pl.when((at >= 0) & (at < q * blocks)).then(at // q)).to_series()
    # a thread whose launches would leave their host-order block by more than a step does
    # not launch steadily with the steps: it keeps the blocks
    far = (
        pl.DataFrame({"g": own["g"], "d": (mine - own["k"]).abs()})
        .lazy()
        .group_by("g")
        .agg(far=(pl.col("d") > 1).any())
        .filter(pl.col("far"))
        .collect()["g"]
    )
    keep = q.is_null() | own["g"].is_in(far.implode())
    chosen = pl.select(pl.when(keep).then(own["k"]).otherwise(mine)).to_series()
    return pl.repeat(None, n, dtype=pl.Int64, eager=True).scatter(order, chosen)
