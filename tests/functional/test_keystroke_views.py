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
