"""Opt-in scorers wired into selection: they change rankings, never the default result."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from ctxview.model import Params
from ctxview.pipeline import SessionAssembler
from ctxview.samples import DEMO_CONVERSATION_ID, build_sample
from ctxview.store import LcmStore


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> SessionAssembler:
    path = Path(tmp_path_factory.mktemp("demo")) / "demo.db"
    build_sample(path, "demo")
    with LcmStore(path) as store:
        return SessionAssembler(store.load_session(DEMO_CONVERSATION_ID))


BASE = Params(token_budget=3000, prompt="helm rollback", fresh_tail_count=8, prompt_aware_eviction=True, engine=False)


def test_default_scorer_names_are_the_reference_path(demo: SessionAssembler) -> None:
    reference = demo.run(BASE)
    explicit = demo.run(replace(BASE, scorer="lcm", tokenizer="lcm"))
    assert explicit.messages == reference.messages
    assert [(d.key, d.score, d.outcome) for d in explicit.decisions] == [
        (d.key, d.score, d.outcome) for d in reference.decisions
    ]
    assert "scoring" not in reference.stages


def test_rarity_mode_changes_scores_and_explains_each_term(demo: SessionAssembler) -> None:
    reference = demo.run(BASE)
    rarity = demo.run(replace(BASE, scorer="rarity"))
    ref_scores = {d.key: d.score for d in reference.decisions if d.score is not None}
    rar_scores = {d.key: d.score for d in rarity.decisions if d.score is not None}
    assert ref_scores.keys() == rar_scores.keys()
    assert ref_scores != rar_scores
    for decision in rarity.decisions:
        if decision.score:
            total = sum(m.contribution for m in decision.matched_terms)
            assert total == pytest.approx(decision.score, abs=1e-9)
            assert decision.label_extra in ("exact", "keyword-only")
    assert rarity.stages["scoring"]["scorer"] == "rarity"


def test_section_roi_stubs_items_and_counts_stub_tokens(demo: SessionAssembler) -> None:
    roi = demo.run(replace(BASE, scorer="roi"))
    stubbed = [d for d in roi.decisions if d.reason.startswith("stubbed:")]
    assert stubbed, "the derived citation log marks some sections as waste"
    scoring = roi.stages["scoring"]
    assert scoring["stubbedCount"] == len(stubbed)
    assert {row["category"] for row in scoring["sections"]} >= {"WASTE", "MED+"}
    kept_stubs = [d for d in stubbed if d.outcome == "stubbed"]
    for decision in kept_stubs:
        message = roi.messages[decision.output_index]
        text = message["content"] if isinstance(message["content"], str) else message["content"][0]["text"]
        assert "\n" not in text  # a one-line stub
    # the stub's tokens, not the original's, count against the budget
    assert roi.summary.kept_evictable_tokens <= roi.summary.remaining_budget


def test_cjk_prompt_scores_nothing_in_lcm_mode_and_finds_cjk_items_in_unicode_mode(demo: SessionAssembler) -> None:
    prompt = replace(BASE, prompt="部署 デプロイ")
    lcm = demo.run(prompt)
    assert lcm.summary.selection_mode == "chronological"
    assert all(d.score is None for d in lcm.decisions)
    unicode = demo.run(replace(prompt, tokenizer="unicode"))
    matched = [d for d in unicode.decisions if d.score]
    assert matched
    for decision in matched:
        assert any(ch in decision.text for ch in "部署デプロイ")
    assert unicode.summary.selection_mode == "prompt-aware"
    assert unicode.summary.prompt_terms


def test_roi_never_stubs_protected_items_and_stubbed_results_keep_their_pair(demo: SessionAssembler) -> None:
    """Spec E34 through the real assembler, and E35: turning ROI off restores the default."""
    params = replace(BASE, scorer="roi", token_budget=6000)
    roi = demo.run(params)
    stubbed = {d.key: d for d in roi.decisions if d.reason.startswith("stubbed:")}
    assert stubbed
    for decision in stubbed.values():
        assert decision.segment == "evictable"  # never the fresh tail, a focus brief or a live input
        assert not (decision.role == "assistant" and decision.tool_call_ids and decision.pair_with)
    results = [d for d in stubbed.values() if d.outcome == "stubbed" and d.role == "toolResult"]
    assert results, "a kept, stubbed tool result"
    for decision in results:
        message = roi.messages[decision.output_index]
        assert message["toolCallId"] == decision.tool_call_ids[0]
        previous = roi.messages[decision.output_index - 1]
        call_ids = [b.get("id") for b in previous["content"] if isinstance(b, dict) and "name" in b]
        assert message["toolCallId"] in call_ids or previous["role"] == "toolResult"
    default = demo.run(replace(params, scorer="lcm"))
    reference = demo.run(replace(BASE, token_budget=6000))
    assert default.messages == reference.messages
    assert [(d.key, d.outcome) for d in default.decisions] == [(d.key, d.outcome) for d in reference.decisions]
