"""The what-changed diff and the outcome counts read whole columns; both paths give the same answer."""

from __future__ import annotations

from ctxview.tui.view import diff_outcomes
from tests.unit.test_tui_view import decision, trace


def test_the_same_items_in_another_order_or_with_others_give_the_keyed_diff() -> None:
    before = trace([decision(0, 1, "kept"), decision(1, 1, "evicted"), decision(2, 1, "kept")], budget=9,
                   tail_ordinal=None)
    reordered = trace([decision(2, 1, "stubbed"), decision(1, 1, "kept"), decision(3, 1, "evicted"),
                       decision(0, 1, "kept")], budget=9, tail_ordinal=None)
    diff = diff_outcomes(before, reordered)
    # in the current trace's order; o:3 is new (no change to report) and o:0 did not change
    assert list(diff.changed.items()) == [("o:2", ("kept", "stubbed")), ("o:1", ("evicted", "kept"))]
    assert (diff.gained, diff.lost, diff.other) == (1, 0, 1)


def test_the_same_items_in_the_same_order_are_compared_position_by_position() -> None:
    outcomes = ["kept", "evicted", "kept", "fresh-tail", "evicted"]
    after = ["evicted", "evicted", "kept", "fresh-tail", "kept"]
    before = trace([decision(i, 1, o) for i, o in enumerate(outcomes)], budget=9, tail_ordinal=None)
    current = trace([decision(i, 1, o) for i, o in enumerate(after)], budget=9, tail_ordinal=None)
    diff = diff_outcomes(before, current)
    assert list(diff.changed.items()) == [("o:0", ("kept", "evicted")), ("o:4", ("evicted", "kept"))]
    assert (diff.gained, diff.lost, diff.other) == (1, 1, 0)
    assert diff_outcomes(current, current).changed == {}


def test_outcome_counts_follow_first_appearance() -> None:
    t = trace([decision(0, 1, "evicted"), decision(1, 1, "kept"), decision(2, 1, "evicted")], budget=9,
              tail_ordinal=None)
    assert list(t.outcome_counts().items()) == [("evicted", 2), ("kept", 1)]
