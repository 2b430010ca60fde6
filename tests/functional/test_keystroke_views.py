"""The per-keystroke view work read from what the run left behind gives the same answers as computed afresh."""

from __future__ import annotations

from dataclasses import replace

import pytest

from ctxview.model import index_of
from ctxview.samples import DEMO_PARAMS, demo_live_messages
from ctxview.tui.view import diff_outcomes, layout_rows, outcome_counts, partner, sent_parts

DEMO = replace(DEMO_PARAMS, live_messages=tuple(demo_live_messages()))


@pytest.mark.parametrize("line", ["0.15", "1.0"])
@pytest.mark.parametrize("budget", [600, 1_200, 2_000, 5_000])
def test_sent_parts_from_the_runs_memo_and_key_index_equal_a_fresh_count(assembler, line, budget):
    trace = assembler.run(replace(DEMO, token_budget=budget, engine_line=line))
    layout = layout_rows(trace, "ordinal")
    fresh = sent_parts(trace)
    assert sent_parts(trace, assembler.message_tokens(trace.summary.engine_line), layout.index_of_key) == fresh
    assert sum(fresh.values()) == trace.summary.final_tokens


@pytest.mark.parametrize("line", ["0.15", "1.0"])
def test_outcome_counts_carried_over_by_the_diff_equal_a_fresh_count(assembler, line):
    before = assembler.run(replace(DEMO, token_budget=400, engine_line=line))
    counts = outcome_counts(before)
    seen_changes = 0
    for budget, prompt in [(600, ""), (1_200, "deploy"), (2_000, "deploy"), (5_000, ""), (900, "staging")]:
        trace = assembler.run(replace(DEMO, token_budget=budget, prompt=prompt, engine_line=line))
        diff = diff_outcomes(before, trace)
        assert diff.same_items
        seen_changes += len(diff.changed)
        counts = outcome_counts(trace, counts, diff)
        assert counts == trace.outcome_counts()
        before = trace
    assert seen_changes > 10
    assert not diff_outcomes(None, trace).same_items and outcome_counts(trace, None, None) == trace.outcome_counts()


def test_the_partner_of_an_item_is_found_by_key_without_building_every_decision(assembler):
    params = replace(DEMO, token_budget=2_000)
    paired = [(d.key, d.pair_with[0]) for d in assembler.run(params).decisions if d.pair_with]
    assert len(paired) >= 2
    trace = assembler.run(replace(params, prompt="deploy"))  # a fresh lazy list: nothing built yet
    for key, mate_key in paired:
        decision = trace.decisions[index_of(trace.decisions, key)]
        assert partner(trace, decision).key == mate_key
    assert trace.decisions.built < len(trace.decisions)


def _naive_diff(before, after) -> dict[str, tuple[str, str]]:
    """The definition: every decision whose outcome differs between two runs of the same items, in order."""
    old = [(d.key, d.outcome) for d in before.decisions]
    new = [(d.key, d.outcome) for d in after.decisions]
    assert [k for k, _ in old] == [k for k, _ in new]
    return {key: (o, n) for (key, o), (_, n) in zip(old, new, strict=True) if o != n}


@pytest.mark.parametrize("line", ["0.15", "1.0"])
def test_the_diff_from_each_runs_changed_positions_equals_a_diff_of_every_decision(assembler, line):
    from ctxview.model import KEPT_OUTCOMES
    from ctxview.tui.view import _diff_by_changes

    before = assembler.run(replace(DEMO, token_budget=400, engine_line=line))
    seen_changes = 0
    edits = [(600, ""), (1_200, "deploy"), (2_000, "deploy"), (5_000, ""), (900, "staging"), (300, "staging"),
             (300, "rollback deploy"), (100_000, "")]
    for budget, prompt in edits:
        trace = assembler.run(replace(DEMO, token_budget=budget, prompt=prompt, engine_line=line))
        sparse = _diff_by_changes(before, trace)
        assert sparse is not None and sparse.same_items  # (these runs share their plan: the fast form applies)
        expected = _naive_diff(before, trace)
        assert sparse.changed == expected and list(sparse.changed) == list(expected)
        assert sparse.gained == sum(n in KEPT_OUTCOMES and o not in KEPT_OUTCOMES for o, n in expected.values())
        assert sparse.lost == sum(o in KEPT_OUTCOMES and n not in KEPT_OUTCOMES for o, n in expected.values())
        assert diff_outcomes(before, trace) == sparse
        seen_changes += len(expected)
        before = trace
    assert seen_changes > 10


@pytest.mark.parametrize("budget", [300, 1_200, 100_000])
def test_column_changes_rebuild_the_column(assembler, budget):
    trace = assembler.run(replace(DEMO, token_budget=budget, prompt="deploy"))
    for name in ("key", "outcome", "segment"):
        parts = trace.decisions.column_changes(name)
        assert parts is not None
        base, changes, extra = parts
        rebuilt = list(base)
        for pos, value in changes.items():
            rebuilt[pos] = value
        assert rebuilt + extra == [getattr(d, name) for d in trace.decisions]


@pytest.mark.parametrize("line", ["0.15", "1.0"])
def test_a_deferred_diff_marks_every_key_as_the_whole_diff_does(assembler, line):
    """Before it is resolved, a ``DeferredDiff`` answers each key from the two runs' decisions; resolved, it is the
    whole diff.  Both agree with ``diff_outcomes`` on every key of the runs (and on a key of neither)."""
    from ctxview.tui.view import DeferredDiff, deferred_diff

    before = assembler.run(replace(DEMO, token_budget=400, engine_line=line))
    seen_changes = 0
    edits = [(600, ""), (1_200, "deploy"), (2_000, "deploy"), (5_000, ""), (900, "staging"), (300, "rollback deploy")]
    for budget, prompt in edits:
        trace = assembler.run(replace(DEMO, token_budget=budget, prompt=prompt, engine_line=line))
        full = diff_outcomes(before, trace)
        deferred = deferred_diff(before, trace)
        assert isinstance(deferred, DeferredDiff) and not deferred.resolved
        keys = [d.key for d in trace.decisions] + ["o:999999"]
        assert [deferred.mark(key) for key in keys] == [full.mark(key) for key in keys]
        assert not deferred.resolved  # (the marks built no diff)
        assert deferred.resolve() == full and deferred.resolved
        assert (list(deferred.changed.items()), deferred.gained, deferred.lost, deferred.same_items) == (
            list(full.changed.items()), full.gained, full.lost, full.same_items
        )
        assert [deferred.mark(key) for key in keys] == [full.mark(key) for key in keys]
        assert [full.mark(key) for key in keys] == [
            full.direction(key) if key in full.changed else None for key in keys
        ]
        seen_changes += len(full.changed)
        before = trace
    assert seen_changes > 10


def test_a_diff_of_runs_of_other_items_is_computed_at_once(assembler):
    """Other live inputs (or no trace before): no per-key answer stands for the diff, which is made at once."""
    from ctxview.tui.view import DeferredDiff, deferred_diff

    with_live = assembler.run(replace(DEMO, token_budget=1_200))
    without = assembler.run(replace(DEMO, token_budget=1_200, live_messages=None))
    for previous, current in ((with_live, without), (without, with_live), (None, without)):
        diff = deferred_diff(previous, current)
        assert not isinstance(diff, DeferredDiff)
        assert diff == diff_outcomes(previous, current)
