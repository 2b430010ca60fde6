"""§9.8 serialized clamp and §9.9 trailing-prefill stripping."""

from __future__ import annotations

from typing import Any

from ctxview.assembly.clamp import clamp_to_serialized_budget, is_substantive_assistant, strip_trailing_prefill
from ctxview.assembly.tokens import serialized_message_tokens


def msg(role: str, text: str) -> dict[str, Any]:
    return {"role": role, "content": text}


def sizes(messages: list[Any]) -> list[int]:
    return [serialized_message_tokens(m) for m in messages]


def test_no_clamp_at_or_below_the_trigger() -> None:
    messages = [msg("user", "a" * 40), msg("assistant", "b" * 40)]
    total = sum(sizes(messages))
    result = clamp_to_serialized_budget(messages, total, preserve=False)
    assert (result.clamped, result.tokens, result.evicted, result.over_budget) == (False, total, 0, False)
    assert result.messages == messages  # even with a trailing assistant: stripping only happens on a clamp
    empty = clamp_to_serialized_budget([], 0, preserve=False)
    assert (empty.messages, empty.tokens, empty.clamped) == ([], 0, False)


def test_keeps_the_newest_suffix_that_fits_ninety_percent() -> None:
    messages = [msg("user", "u" * 100), msg("user", "v" * 100), msg("user", "w" * 100)]
    each = sizes(messages)[0]  # 32
    budget = 2 * each + 1  # trigger 65 < 96; target floor(65 * 0.9) = 58 < 64
    result = clamp_to_serialized_budget(messages, budget, preserve=False)
    assert result.messages == [messages[2]]
    assert (result.tokens, result.tokens_before, result.evicted, result.over_budget) == (each, 3 * each, 2, False)
    assert result.stage(budget, False) == {
        "tokenBudget": budget,
        "preserveSubstantiveAssistantTail": False,
        "serializedTokensBefore": 3 * each,
        "serializedTokens": each,
        "clamped": True,
        "evictedMessages": 2,
        "overBudget": False,
    }


def test_always_keeps_one_message_and_reports_over_budget() -> None:
    messages = [msg("user", "short"), msg("user", "x" * 400)]
    result = clamp_to_serialized_budget(messages, 10, preserve=False)
    assert result.messages == [messages[1]]
    assert result.over_budget is True  # 106 > floor(10 * 0.9)


def test_leading_tool_results_are_dropped_and_a_user_is_put_back() -> None:
    call = {"role": "assistant", "content": [{"type": "toolCall", "id": "c", "name": "n", "arguments": {}}]}
    results = [{"role": "toolResult", "toolCallId": "c", "content": [{"type": "text", "text": "r" * 60}]}] * 2
    answer = msg("assistant", "done")
    question = msg("user", "q" * 200)
    messages = [question, call, *results, answer]
    keep = sizes(messages)
    budget = sum(keep[2:]) + 1  # 0.9 × budget holds the results and the answer, not the call
    result = clamp_to_serialized_budget(messages, budget, preserve=True)
    # suffix = [result, result, answer] -> leading results dropped -> [answer] -> no user: put the
    # newest earlier user back -> [question, answer]; the answer is substantive and preserved
    assert result.messages == [question, answer]
    assert result.tokens == keep[0] + keep[4]
    assert result.kept_indexes == [0, 4]
    stripped = clamp_to_serialized_budget(messages, budget, preserve=False)
    assert stripped.messages == [question]
    assert stripped.tokens == keep[0]
    assert stripped.final_indexes == [0]


def test_all_assistant_suffix_is_kept_when_stripping_would_empty_it() -> None:
    messages = [msg("assistant", "a" * 200), msg("assistant", "b" * 200)]
    result = clamp_to_serialized_budget(messages, 60, preserve=False)
    assert result.messages == [messages[1]]
    preserved = clamp_to_serialized_budget(
        [msg("assistant", "a" * 200), {"role": "assistant", "content": [{"type": "thinking", "thinking": "t" * 200}]}],
        60,
        preserve=True,
    )
    assert preserved.messages == []  # host delivers the turn separately: an empty list is allowed
    assert preserved.tokens == 0


def test_substantive_assistant() -> None:
    assert is_substantive_assistant({"role": "assistant", "content": [{"type": "text", "text": "hi"}]})
    assert not is_substantive_assistant({"role": "assistant", "content": [{"type": "text", "text": " \n"}]})
    assert is_substantive_assistant({"role": "assistant", "content": [], "tool_calls": [{"id": "x"}]})
    assert not is_substantive_assistant({"role": "assistant", "content": [], "tool_calls": []})
    assert is_substantive_assistant({"role": "assistant", "content": [{"type": "functionCall", "id": "f"}]})
    nested = {"role": "assistant", "content": [{"type": "wrapper", "items": [{"payload": {"type": "tool_use"}}]}]}
    assert is_substantive_assistant(nested)
    assert is_substantive_assistant({"role": "assistant", "content": [{"rawType": "toolCall"}]})
    # rawType is only consulted when type is not a string
    assert not is_substantive_assistant({"role": "assistant", "content": [{"type": "custom", "rawType": "toolCall"}]})
    assert not is_substantive_assistant({"role": "assistant", "content": [{"type": "thinking", "thinking": "t"}]})


def test_strip_trailing_prefill() -> None:
    text = msg("assistant", "reply")
    empty = {"role": "assistant", "content": []}
    messages = [msg("user", "q"), text, empty]
    assert strip_trailing_prefill(messages, preserve=False) == [messages[0]]
    assert strip_trailing_prefill(messages, preserve=True) == [messages[0], text]
    assert strip_trailing_prefill([msg("toolResult", "r"), text], preserve=False) == [msg("toolResult", "r")]
