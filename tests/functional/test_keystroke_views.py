"""The per-keystroke view work read from what the run left behind gives the same answers as computed afresh."""

from __future__ import annotations

from dataclasses import replace

import pytest

from ctxview.samples import DEMO_PARAMS, demo_live_messages
from ctxview.tui.view import layout_rows, sent_parts

DEMO = replace(DEMO_PARAMS, live_messages=tuple(demo_live_messages()))


@pytest.mark.parametrize("line", ["0.15", "1.0"])
@pytest.mark.parametrize("budget", [600, 1_200, 2_000, 5_000])
def test_sent_parts_from_the_runs_memo_and_key_index_equal_a_fresh_count(assembler, line, budget):
    trace = assembler.run(replace(DEMO, token_budget=budget, engine_line=line))
    layout = layout_rows(trace, "ordinal")
    fresh = sent_parts(trace)
    assert sent_parts(trace, assembler.message_tokens(trace.summary.engine_line), layout.index_of_key) == fresh
    assert sum(fresh.values()) == trace.summary.final_tokens
