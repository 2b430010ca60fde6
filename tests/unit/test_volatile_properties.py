"""Property tests of the engine step: protection, tool pairing, determinism, no double appends."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxview.assembly.engine import reconcile
from ctxview.assembly.live import normalize_live_message
from ctxview.assembly.render import assistant_usage
from ctxview.assembly.tokens import estimate_tokens
from ctxview.assembly.tool_pairs import sanitize_tool_use_result_pairing_keyed
from ctxview.assembly.volatile import append_volatile_inputs, protected_indexes
from ctxview.jsjson import h16, js_stringify

BEGIN = "<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>"
END = "<<<END_OPENCLAW_INTERNAL_CONTEXT>>>"
VOLATILE_TEXTS = [
    f"[Inter-session message] from a\n{BEGIN}\n[Internal task completion event]\nresult one\n{END}",
    f"{BEGIN}\n[Internal task completion event]\nresult two {'z' * 120}\n{END}",
    "please go on\n[Retry after the previous model attempt failed or timed out]",
]
WORDS = st.text(alphabet="abcdefghij klmn\n你好", min_size=1, max_size=60).filter(lambda s: s.strip() != "")

Turn = tuple[str, Any]


def _turns() -> st.SearchStrategy[list[Turn]]:
    turn = st.one_of(
        st.tuples(st.just("user"), WORDS),
        st.tuples(st.just("assistant"), WORDS),
        st.tuples(st.just("call"), st.tuples(WORDS, st.integers(1, 3), st.integers(0, 400))),
        st.tuples(st.just("stored-volatile"), st.integers(0, len(VOLATILE_TEXTS) - 1)),
    )
    return st.lists(turn, min_size=1, max_size=14)


def build_assembled(turns: list[Turn]) -> tuple[list[Any], list[Any]]:
    """Assembled messages in the shape the assembler emits, and their live-window copies."""
    assembled: list[Any] = []
    live_copies: list[Any] = []
    call_no = 0
    for kind, value in turns:
        if kind == "user":
            assembled.append({"role": "user", "content": value})
            live_copies.append({"role": "user", "content": value})
        elif kind == "stored-volatile":
            assembled.append({"role": "user", "content": VOLATILE_TEXTS[value]})
            live_copies.append({"role": "user", "content": VOLATILE_TEXTS[value]})
        elif kind == "assistant":
            content = [{"type": "text", "text": value}]
            assembled.append(
                {"role": "assistant", "content": content, "usage": assistant_usage(estimate_tokens(value))}
            )
            live_copies.append({"role": "assistant", "content": copy.deepcopy(content)})
        else:
            text, count, size = value
            ids = [f"call_{call_no + i}" for i in range(count)]
            call_no += count
            content = [{"type": "text", "text": text}]
            content += [{"type": "toolCall", "id": cid, "name": "read", "arguments": {"n": cid}} for cid in ids]
            assembled.append({"role": "assistant", "content": content, "usage": assistant_usage(7)})
            live_copies.append({"role": "assistant", "content": copy.deepcopy(content)})
            for cid in ids:
                result = {
                    "role": "toolResult",
                    "content": [{"type": "text", "text": "r" * size or "empty"}],
                    "toolCallId": cid,
                    "toolName": "read",
                }
                assembled.append(result)
                live_copies.append(copy.deepcopy(result))
    return assembled, live_copies


@st.composite
def scenarios(draw: st.DrawFn) -> dict[str, Any]:
    turns = draw(_turns())
    assembled, copies = build_assembled(turns)
    # the live window: a subsequence of the persisted copies with volatile inputs spliced in
    keep = draw(st.lists(st.booleans(), min_size=len(copies), max_size=len(copies)))
    live = [c for c, k in zip(copies, keep, strict=True) if k]
    for _ in range(draw(st.integers(0, 3))):
        position = draw(st.integers(0, len(live)))
        live.insert(position, {"role": "user", "content": VOLATILE_TEXTS[draw(st.integers(0, 2))]})
    tail = draw(st.integers(0, len(assembled)))
    hashes = [h16([m]) for m in assembled[len(assembled) - tail :]]
    budget = draw(st.integers(1, 3000))
    return {"assembled": assembled, "live": live, "hashes": hashes, "budget": budget}


def run_engine(s: dict[str, Any]) -> Any:
    assembled = s["assembled"]
    return reconcile(
        assembled,
        [f"o:{i}" for i in range(len(assembled))],
        10,
        s["hashes"],
        live_messages=s["live"],
        token_budget=s["budget"],
        prompt=None,
        available_tools=None,
        context_item_count=len(assembled),
        has_summary_items=True,
    )


def run_volatile(s: dict[str, Any]) -> Any:
    seeds = protected_indexes(s["assembled"], s["hashes"])
    return append_volatile_inputs(
        s["assembled"],
        10,
        s["live"],
        seeds,
        s["budget"],
        sanitize=sanitize_tool_use_result_pairing_keyed,
        normalize=normalize_live_message,
    )


def _call_ids(message: Any) -> list[str]:
    if (
        not isinstance(message, dict)
        or message.get("role") != "assistant"
        or not isinstance(message.get("content"), list)
    ):
        return []
    return [b["id"] for b in message["content"] if isinstance(b, dict) and b.get("type") == "toolCall"]


def pairing_violations(messages: list[Any]) -> list[int]:
    """Positions of tool results not answering the assistant right before them, and of unanswered calls."""
    bad: list[int] = []
    index = 0
    while index < len(messages):
        calls = _call_ids(messages[index])
        if calls:
            answered = [
                m.get("toolCallId") for m in messages[index + 1 : index + 1 + len(calls)] if m["role"] == "toolResult"
            ]
            if sorted(answered) != sorted(calls):
                bad.append(index)
            index += 1 + len(answered)
            continue
        if messages[index].get("role") == "toolResult":
            bad.append(index)
        index += 1
    return bad


SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(scenarios())
def test_fresh_tail_and_exact_anchors_are_never_evicted(s: dict[str, Any]) -> None:
    outcome = run_volatile(s)
    evicted = {i for e in outcome.evictions for i in e.indexes}
    seeds = protected_indexes(s["assembled"], s["hashes"])
    assert not evicted & seeds
    assert not evicted & set(outcome.protected)
    assert not evicted & set(outcome.exact_anchor)
    assert not evicted & set(outcome.exact_protected)
    # everything protected is still in the volatile-stage output
    kept = {index for kind, index in (src for src in outcome.sources if src is not None) if kind == "a"}
    assert seeds <= kept


@SETTINGS
@given(scenarios())
def test_tool_calls_and_results_stay_paired(s: dict[str, Any]) -> None:
    outcome = run_volatile(s)
    assert pairing_violations(outcome.messages) == []
    result = run_engine(s)
    if result.engine_outcome != "assembled":
        return  # a live-transcript fallback returns the host's own messages
    violations = pairing_violations(result.messages)
    clamp = result.stages["serializedClamp"]
    if violations:
        # the only way: the clamp kept a lone oversized tool result (it always keeps one message)
        assert clamp["clamped"]
        lone = [m for m in result.messages if m["role"] != "user"]
        assert len(lone) == 1 and lone[0]["role"] == "toolResult"


@SETTINGS
@given(scenarios())
def test_engine_is_deterministic(s: dict[str, Any]) -> None:
    first = run_engine(copy.deepcopy(s))
    second = run_engine(copy.deepcopy(s))
    assert js_stringify(first.messages) == js_stringify(second.messages)
    assert first.message_keys == second.message_keys
    assert first.stages == second.stages
    assert [(d.key, d.outcome, d.reason) for d in first.live_decisions] == [
        (d.key, d.outcome, d.reason) for d in second.live_decisions
    ]
    assert first.item_updates == second.item_updates


@SETTINGS
@given(scenarios())
def test_covered_inputs_are_never_appended(s: dict[str, Any]) -> None:
    result = run_engine(s)
    keys = [k for k in result.message_keys if k is not None]
    assert len(keys) == len(set(keys))  # nothing appears twice
    for decision in result.live_decisions:
        if decision.outcome == "covered":
            assert decision.key not in keys
            assert decision.covered_by is not None
        if decision.outcome == "appended":
            assert keys.count(decision.key) == 1
    outcome = run_volatile(s)
    assert not set(outcome.covered) & set(outcome.appended)
    assert set(outcome.covered) | set(outcome.appended) == set(outcome.candidates)


@SETTINGS
@given(scenarios())
def test_a_roomy_budget_appends_every_uncovered_input_without_eviction(s: dict[str, Any]) -> None:
    s = {**s, "budget": 10**9}
    outcome = run_volatile(s)
    assert outcome.evictions == []
    assert outcome.appended == [i for i in outcome.candidates if i not in outcome.covered]
    assert len(outcome.messages) == len(s["assembled"]) + len(outcome.appended)


@SETTINGS
@given(scenarios())
def test_additive_search_matches_the_exact_search(s: dict[str, Any]) -> None:
    """The eviction search may sum sizes instead of re-running the pairing repair; results must agree."""
    fast = run_volatile(s)
    seeds = protected_indexes(s["assembled"], s["hashes"])
    exact = append_volatile_inputs(
        s["assembled"],
        10,
        s["live"],
        seeds,
        s["budget"],
        sanitize=sanitize_tool_use_result_pairing_keyed,
        normalize=normalize_live_message,
        allow_fast=False,
    )
    assert js_stringify(fast.messages) == js_stringify(exact.messages)
    assert fast.evictions == exact.evictions
    assert (fast.estimated_tokens, fast.evicted_tokens, fast.appended) == (
        exact.estimated_tokens,
        exact.evicted_tokens,
        exact.appended,
    )
