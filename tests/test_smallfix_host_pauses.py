"""A device whose exact period the GPU's idle time does not phase, and that then searches
a shorter motif, asked for the host's pauses twice (period_phase for the stretch's first
periods, anchored_steps for the first launches): two reads of queries/steps_host_gaps.sql,
each a scan of the calls and launches (2.5 CPU s direct on the 5M-kernel trace whatever
the window). tracelens.steps_phase.HostPauses reads the larger window once and slices it;
the steps stay the same (tests/test_steps_host_phase.py's own fixture and expectations)."""

from __future__ import annotations

from test_steps_host_phase import HOST_PHASED, build

import tracelens
from tracelens.trace import Trace


def test_a_device_reads_the_hosts_pauses_once(tmp_path, monkeypatch):
    path = build(tmp_path / "ema.sqlite", iterations=24, ema=4)
    reads = []
    query = Trace.query

    def counting(self, name, *args, **params):
        if name == "steps_host_gaps":
            reads.append((params["start_ns"], params["end_ns"]))
        return query(self, name, *args, **params)

    monkeypatch.setattr(Trace, "query", counting)
    with tracelens.open(path, cache=False) as trace:
        steps = trace.steps()
    assert len(reads) == 1, reads
    assert steps.count == 24
    assert HOST_PHASED in steps.detail and "with void opt_ema(float*) too in 6" in steps.detail
