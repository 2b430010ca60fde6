"""What makes repeated runs of one prompt cheap gives exactly what the plain forms give."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxview.assembly.tokens import serialized_message_tokens, serialized_message_tokens_1_0
from ctxview.assembly.volatile import SerializedCache
from ctxview.jsjson import h16
from ctxview.model import KEPT_OUTCOMES, Params
from ctxview.pipeline import SessionAssembler
from ctxview.samples import build_sample
from ctxview.store import LcmStore
from ctxview.sweep import _ExactRun, _kept_mask, _sent_budgets, _sent_budgets_by_key

OPAQUE = "iVBORw0KGgo" + "A1b2" * 1500  # a base64-looking payload the estimate replaces
MESSAGES: list[Any] = [
    {"role": "user", "content": "plain"},
    {"role": "assistant", "content": [{"type": "text", "text": "é 日本語 😀"}]},
    {"role": "toolResult", "toolName": "read", "content": [{"type": "text", "text": "x" * 5000}]},
    {"role": "toolResult", "tool_name": "shot", "content": [{"type": "image", "data": OPAQUE}]},
    {"role": "user", "content": "y" * 2100},
]


@pytest.mark.parametrize("estimate", [serialized_message_tokens, serialized_message_tokens_1_0])
@pytest.mark.parametrize("hash_first", [False, True])
def test_one_stringify_gives_the_tokens_and_the_hash_of_each_alone(estimate: Any, hash_first: bool) -> None:
    memo = SerializedCache(estimate=estimate)
    for message in MESSAGES:
        if hash_first:
            assert memo.h16(message) == h16([message])
        assert memo(message) == estimate(message)
        assert memo.h16(message) == h16([message])
    assert memo.tokens_of_all(MESSAGES) == [estimate(m) for m in MESSAGES]
    assert memo.h16_of_all(MESSAGES) == [h16([m]) for m in MESSAGES]
    assert serialized_message_tokens(MESSAGES[3]) > 1600 > serialized_message_tokens(MESSAGES[3] | {"content": []})


def _index_built(assembler: SessionAssembler) -> bool:
    resolved = assembler.resolved("UTC")
    return any(key.startswith("term-index:") for key in resolved.cache)


@pytest.mark.parametrize("engine", [False, True])
def test_one_prompt_at_many_budgets_reuses_its_scores_and_builds_no_index(
    tmp_path_factory: pytest.TempPathFactory, engine: bool
) -> None:
    path = tmp_path_factory.mktemp("reuse-one") / "medium.db"
    build_sample(path, "medium", messages=600)
    with LcmStore(path) as store:
        warm = SessionAssembler(store.load_session())
    params = Params(prompt="database migration rollback", prompt_aware_eviction=True, engine=engine)
    budgets = [1, 900, 2_500, 6_000, 14_000, 40_000, 10_000_000]
    for budget in budgets:
        at = replace(params, token_budget=budget)
        trace = warm.run(at)
        with LcmStore(path) as store:
            cold = SessionAssembler(store.load_session()).run(at)
        assert trace.summary == cold.summary
        assert list(trace.decisions) == list(cold.decisions)
        assert trace.messages == cold.messages
    assert not _index_built(warm)  # a budget edit is not a second prompt
    warm.run(replace(params, prompt="deploy helm"))
    assert _index_built(warm)  # the second distinct prompt builds it
    again = warm.run(replace(params, token_budget=2_500))
    with LcmStore(path) as store:
        cold = SessionAssembler(store.load_session()).run(replace(params, token_budget=2_500))
    assert again.summary == cold.summary and list(again.decisions) == list(cold.decisions)


@settings(max_examples=300, deadline=None)
@given(data=st.data(), items=st.integers(0, 40), runs=st.integers(1, 6), same_keys=st.booleans())
def test_sent_budgets_from_whole_run_masks_equal_the_key_by_key_walk(
    data: st.DataObject, items: int, runs: int, same_keys: bool
) -> None:
    keys = [f"o:{i}" for i in range(items)]
    ran = []
    for index in range(runs):
        kept = bytes(data.draw(st.lists(st.integers(0, 1), min_size=items, max_size=items)))
        run_keys = keys if same_keys or index == 0 else [*keys, f"l:{index}"]
        if run_keys is not keys:
            kept += b"\x01"
        ran.append((100 * (index + 1), _ExactRun(0, 0, run_keys, kept)))
    fast = _sent_budgets(ran)
    slow = _sent_budgets_by_key(ran)
    assert fast == slow
    assert [list(d) for d in fast] == [list(d) for d in slow]  # the same key order too


@pytest.mark.parametrize("engine", [False, True])
def test_each_runs_kept_mask_is_the_outcome_columns_whatever_share_of_it_changed(
    tmp_path_factory: pytest.TempPathFactory, engine: bool
) -> None:
    """From nothing selected to everything selected (most positions changed from the plan's base) and past
    it, with and without the engine step: the mask made from the column's changes is the whole column's."""
    path = tmp_path_factory.mktemp("kept-mask") / "medium.db"
    build_sample(path, "medium", messages=400)
    with LcmStore(path) as store:
        warm = SessionAssembler(store.load_session())
    params = Params(prompt="database migration rollback", prompt_aware_eviction=True, engine=engine)
    changed_shares = []
    for budget in [1, 700, 3_000, 12_000, 60_000, 10_000_000]:
        decisions = warm.run(replace(params, token_budget=budget)).decisions
        parts = decisions.column_changes("outcome")
        assert parts is not None
        changed_shares.append(len(parts[1]) / len(parts[0]))
        expected = bytes(d.outcome in KEPT_OUTCOMES for d in decisions)
        assert _kept_mask(decisions) == expected
    assert min(changed_shares) < 0.5 < max(changed_shares)  # (both sides of half the column)
