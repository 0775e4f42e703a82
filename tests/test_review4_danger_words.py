"""danger's atomics_named rule says what a kernel's name shows and what it does not. review4:
on the real nsys2025.5_balinski_2gpu export it flagged find_min_valid_atomic2d with 'floating-
point accumulation through atomics has a varying order', a claim the name does not support
(an atomic minimum gives the same result in any order)."""

from __future__ import annotations

from tracelens.danger import load_danger_rules, match_danger


def test_atomics_named_does_not_claim_an_accumulation_it_cannot_see():
    (hit,) = [h for h in match_danger("find_min_valid_atomic2d") if h.rule_id == "atomics_named"]
    assert hit.level == "info"
    (rule,) = [r for r in load_danger_rules() if r.id == "atomics_named"]
    assert "the name does not say which atomics" in rule.why
    assert "min/max" in rule.why and "same result in any order" in rule.why
