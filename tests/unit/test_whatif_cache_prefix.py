"""The cache-prefix line after an edit measures exactly what ``ctxview diff`` measures between the two runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxview.assembly.tokens import serialized_message_tokens
from ctxview.diff import diff_traces
from ctxview.model import Params
from ctxview.pipeline import SessionAssembler
from ctxview.store import LcmStore
from ctxview.whatif.cache_prefix import cache_prefix

DEMO = Path(__file__).resolve().parents[2] / "sample_sessions" / "demo.db"


@pytest.fixture(scope="module")
def assembler() -> SessionAssembler:
    with LcmStore(DEMO) as store:
        return SessionAssembler(store.load_session())


RETRY = "[Retry after the previous model attempt failed or timed out]\nx"
BASE = Params(token_budget=4000, fresh_tail_count=8, prompt="helm rollback", prompt_aware_eviction=True)


@pytest.mark.parametrize(
    "edit",
    [
        {"token_budget": 3000},
        {"scorer": "rarity"},
        {"prompt": "alembic migration"},
        {"live_messages": ({"role": "user", "content": RETRY},)},
        {},
    ],
)
def test_cache_prefix_is_the_diffs_prefix(assembler: SessionAssembler, edit: dict[str, object]) -> None:
    from dataclasses import replace

    before = assembler.run(BASE)
    after = assembler.run(replace(BASE, **edit))
    prefix = cache_prefix(before, after)
    diff = diff_traces(before, after)
    assert prefix.first_changed == diff.first_difference
    assert prefix.same_tokens == diff.prefix_tokens
    assert prefix.same_messages == min(diff.prefix_messages, len(after.messages))
    assert prefix.total_messages == len(after.messages)
    assert prefix.total_tokens == sum(serialized_message_tokens(m) for m in after.messages)
    if diff.first_difference is None:
        assert prefix.unchanged and prefix.first_changed_key is None
    elif diff.first_difference < len(after.messages):
        assert prefix.first_changed_key == after.message_keys[diff.first_difference]
    assert prefix.text() == (
        f"cache prefix: {prefix.same_messages:,} of {len(after.messages):,} messages, "
        f"{prefix.same_tokens:,} of {prefix.total_tokens:,} tokens unchanged"
    )
