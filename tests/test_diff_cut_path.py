"""A capture cut short after a path change (review5 'swap_cut': B's backward GEMM becomes a
split-K one from step 12, and B stops inside step 18 of A's 24). The alignment is a path
change, and what A holds past B's end is no launch B's run left out: B never captured it.
The board says both (the first divergence, and that B's capture ends earlier, A's last
launches not compared), and the path clue's impact counts only what both captures hold:
it counted A's 103 launches past B's end as removed (-141 us/step)."""

from __future__ import annotations

import pytest
from test_cut_capture import END_CUT, START_CUT, build_nested

from tracelens.compare import diff
from tracelens.compare.align import align_sequences

PATH_CLUES = {"launch_order_changed", "same_count_different_path", "launch_sequence_diverges"}
SPLIT_K = ("void gemm_o_dgrad(float*)", "void gemm_o_dgrad_splitK(float*)", 6)
CUT_BOARD = (
    "first divergence at launch #188{step} on device 0 ({was} in A, {now} in B); 277 of the 283 "
    "launches both captures hold match in order; {short}'s capture ends earlier: {long}'s "
    "last 103 launches (#284 on) are past its end, not compared"
)


def _path_clue(d):
    (clue,) = [c for c in d.clues if c.id in PATH_CLUES]
    return clue


@pytest.fixture(scope="module")
def traces(tmp_path_factory):
    """The full capture and the swapped one cut short, with NVTX step ranges and without
    (period steps)."""
    root = tmp_path_factory.mktemp("cut_path")
    return {
        (kind, nvtx): build_nested(root / f"{kind}_{nvtx}.sqlite", nvtx=nvtx, **kwargs)
        for kind, kwargs in (
            ("full", {}),
            ("swap_cut", {"end_cut": END_CUT, "swap_from": 12}),
            ("swap", {"swap_from": 12}),
        )
        for nvtx in (True, False)
    }


@pytest.mark.parametrize("nvtx", [True, False], ids=["ranges", "period"])
def test_a_capture_cut_short_after_a_path_change_says_both(traces, nvtx):
    d = diff(traces["full", nvtx], traces["swap_cut", nvtx])
    (al,) = d.alignment
    assert al.relation == "aligned" and not al.capture_difference
    assert (al.launches_a, al.launches_b, al.past_end_a, al.past_end_b) == (386, 283, 103, 0)
    assert al.replaced == (SPLIT_K,) and al.only_in_a == () and al.only_in_b == ()
    assert al.compared == 283 and al.first_divergence == 187
    path = _path_clue(d)
    assert path.id == "launch_sequence_diverges"
    # With step ranges A's step 12 holds launch #188; the period steps begin after the
    # warm-up steps' launches (in no step): no step named.
    step = " (step 12 of A)" if nvtx else ""
    board = CUT_BOARD.format(
        step=step, was="gemm_o_dgrad", now="gemm_o_dgrad_splitK", short="B", long="A"
    )
    assert path.evidence == board, path.evidence
    # The split-K launches took what gemm_o_dgrad took: the variant and calls-per-step clues
    # count them; A's launches past B's end are no time B's path moved.
    assert path.impact_ns is None


def test_the_longer_capture_as_b_holds_launches_past_as_end(traces):
    d = diff(traces["swap_cut", True], traces["full", True])
    (al,) = d.alignment
    assert (al.past_end_a, al.past_end_b) == (0, 103) and al.only_in_b == ()
    # A (the cut capture) stops inside a step whose range has no end: its steps do not hold
    # all its launches, so no step is named (a count from the start could be off).
    board = CUT_BOARD.format(
        step="", was="gemm_o_dgrad_splitK", now="gemm_o_dgrad", short="A", long="B"
    )
    assert _path_clue(d).evidence == board


def test_a_capture_started_later_and_cut_short_after_a_path_change_says_so(traces, tmp_path):
    """B also starts inside step 2 (START_CUT): A's first 20 launches are before its start.
    The first divergence was launch #1 ('embed in A, flash_attn in B'), and A's launches
    before B's start counted as removed in the impact (-34.67 us/step)."""
    cut = build_nested(tmp_path / "both.sqlite", start_cut=START_CUT, end_cut=END_CUT, swap_from=12)
    d = diff(traces["full", True], cut)
    (al,) = d.alignment
    assert (al.before_start_a, al.past_end_a, al.launches_b, al.compared) == (20, 103, 263, 263)
    assert al.replaced == (SPLIT_K,) and al.only_in_a == () and al.first_divergence == 187
    path = _path_clue(d)
    assert path.evidence == (
        "first divergence at launch #188 (step 12 of A) on device 0 (gemm_o_dgrad in A, gemm_o_dgrad_splitK "
        "in B); 257 of the 263 launches both captures hold match in order; B's capture starts "
        "later: A's first 20 launches (to #20) are before its start, not compared; B's capture "
        "ends earlier: A's last 103 launches (#284 on) are past its end, not compared"
    ), path.evidence
    assert path.impact_ns is None


def test_a_path_change_without_a_cut_compares_every_launch(traces):
    d = diff(traces["full", True], traces["swap", True])
    (al,) = d.alignment
    assert (al.past_end_a, al.past_end_b) == (0, 0) and al.compared == al.aligned == 386
    assert _path_clue(d).evidence.startswith(
        "first divergence at launch #188 (step 12 of A) on device 0 (gemm_o_dgrad in A, gemm_o_dgrad_splitK "
        "in B); 373 of 386 launches match in order, 13 differ"
    )


STEP = list("abcdefgh")


@pytest.mark.parametrize(("tail_b", "cut"), [(["r", "s", "u"], False), (STEP, True)])
def test_only_a_run_of_matched_launches_ends_a_capture(tail_b, cut):
    """After the change, B's last launches must match A's in order (at least CUT_MATCHED)
    for A's rest to be past B's end: one alike by chance ('u') ends no capture, and A's
    launches after it stay A's alone."""
    a = STEP * 6 + ["x"] + STEP * 2 + ["u", "v", "w", "p", "q"]
    b = STEP * 6 + ["y"] + tail_b
    al = align_sequences(0, a, b)
    assert al.relation == "aligned" and al.first_divergence == 48
    if cut:
        assert al.past_end_a == len(a) - len(b) and al.replaced == (("x", "y", 1),)
        assert al.only_in_a == () and al.matched_in_order == len(b) - 1
    else:
        assert al.past_end_a == 0 and al.matched_in_order == 49  # the steps, and 'u'
        assert {"v", "w"} <= {n for n, _ in al.only_in_a}  # A's alone, not past B's end


def test_a_share_of_zero_moved_time_is_no_note(traces):
    """The split-K launches took what gemm_o_dgrad took: the calls-per-step clue's share of
    the moved time is 0, and the board said '+0 ns/step of the time these launches moved is
    counted by the calls-per-step clue'."""
    path = _path_clue(diff(traces["full", True], traces["swap", True]))
    assert path.evidence == (
        "first divergence at launch #188 (step 12 of A) on device 0 (gemm_o_dgrad in A, gemm_o_dgrad_splitK "
        "in B); 373 of 386 launches match in order, 13 differ"
    )
