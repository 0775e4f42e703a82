"""The path board lists a region's listed changes ``--top`` at most.

A device only one side holds lists every one of its listed launches as a change: on the
5M-kernel bench trace a whole added device printed 4,096 "added #i" lines (a 4,115-line
board). The board shows ``top`` of them and says how many more of each kind there are;
``--top 0`` and the JSON keep them all."""

from __future__ import annotations

from test_diffpairs_devices import replicas

from tracelens import fingerprint as fp


def test_an_added_device_lists_top_changes_and_counts_the_rest(tmp_path):
    a, b = fp(replicas(tmp_path, "a", 1)), fp(replicas(tmp_path, "b", 2))
    diff = fp.compare(a, b)
    (region,) = diff.regions
    listed = [c for c in region.changes if c.kind != "config"]
    assert len(listed) > 3  # the step's launches on device 1, each an addition
    lines = fp.board.lines(diff, "a", "b", top=3)
    added = [line for line in lines if line.lstrip().startswith("added ")]
    assert len(added) == 3
    more = [line for line in lines if "more listed changes" in line]
    assert more == [
        f"    … {len(listed) - 3:,} more listed changes ({len(listed) - 3:,} added; --top 0 or -f json)"
    ]
    every = fp.board.lines(diff, "a", "b", top=None)
    assert len([line for line in every if line.lstrip().startswith("added ")]) == len(listed)
    assert not any("more listed changes" in line for line in every)
