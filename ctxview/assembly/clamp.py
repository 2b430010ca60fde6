"""Final serialized-size clamp and trailing-prefill stripping (spec §9.8, §9.9).

The last thing the engine does: if the whole message list, measured by its
serialized JSON size, is over the budget, keep the newest suffix that fits
90 % of it, never start on a tool result, put back the latest user turn, and
do not end on an assistant message (a "prefill") unless the host delivers the
turn separately and that reply has substance.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ctxview.assembly.live import (
    PAIRING_CALL_TYPES,
    role_class,
    structured_text,
)
from ctxview.assembly.tokens import serialized_message_tokens
from ctxview.jsjson import is_blank

CLAMP_TARGET_RATIO = 0.9
_NESTED_KEYS = ("content", "output", "result", "payload", "data", "value")
_LIST_KEYS = ("segments", "utterances", "paragraphs", "alternatives", "words", "items", "results")

TokenFn = Callable[[Any], int]


def _has_tool_call_block(value: Any) -> bool:
    """A tool-call object anywhere under the structured-content keys (§9.9)."""
    if isinstance(value, list):
        return any(_has_tool_call_block(item) for item in value)
    if not isinstance(value, dict):
        return False
    block_type = value.get("type")
    if not isinstance(block_type, str):
        block_type = value.get("rawType")
    if isinstance(block_type, str) and block_type in PAIRING_CALL_TYPES:
        return True
    return any(_has_tool_call_block(value.get(key)) for key in (*_NESTED_KEYS, *_LIST_KEYS))


def is_substantive_assistant(message: Any) -> bool:
    """Visible text, a top-level ``tool_calls`` list, or a tool-call block (§9.9)."""
    if not isinstance(message, dict):
        return False
    tool_calls = message.get("tool_calls")
    if isinstance(tool_calls, list) and tool_calls:
        return True
    text = structured_text(message.get("content"))
    if isinstance(text, str) and not is_blank(text):
        return True
    return _has_tool_call_block(message.get("content"))


def strip_trailing_prefill(messages: Sequence[Any], *, preserve: bool) -> list[Any]:
    """Drop trailing ``assistant`` messages; keep a substantive one when ``preserve``."""
    kept = list(messages)
    while kept and isinstance(kept[-1], dict) and kept[-1].get("role") == "assistant":
        if preserve and is_substantive_assistant(kept[-1]):
            break
        kept.pop()
    return kept


@dataclass(slots=True)
class ClampResult:
    messages: list[Any]
    tokens: int
    tokens_before: int
    clamped: bool
    evicted: int
    over_budget: bool
    kept_indexes: list[int]  # input positions of the suffix (plus restored user) before prefill stripping
    final_indexes: list[int]  # input positions of ``messages``

    def stage(self, budget: int, preserve: bool) -> dict[str, Any]:
        """The parity ``stages.serializedClamp`` record."""
        return {
            "tokenBudget": budget,
            "preserveSubstantiveAssistantTail": preserve,
            "serializedTokensBefore": self.tokens_before,
            "serializedTokens": self.tokens,
            "clamped": self.clamped,
            "evictedMessages": self.evicted,
            "overBudget": self.over_budget,
        }


def clamp_to_serialized_budget(
    messages: Sequence[Any],
    budget: int,
    *,
    preserve: bool,
    tokens_of: TokenFn = serialized_message_tokens,
    per_message: Sequence[int] | None = None,
    trigger_at_target: bool = False,
) -> ClampResult:
    """§9.8 ``clampMessagesToSerializedBudget`` (``per_message``: ``tokens_of`` of each message, if known).

    ``trigger_at_target``: the 1.0 rule (delta D2), which clamps as soon as the list exceeds the target.
    """
    trigger = max(1, int(budget // 1))
    target = max(1, int((budget * CLAMP_TARGET_RATIO) // 1))
    if per_message is None:
        per_message = [tokens_of(m) for m in messages]
    before = sum(per_message)
    if before <= (target if trigger_at_target else trigger) or not messages:
        everything = list(range(len(messages)))
        return ClampResult(list(messages), before, before, False, 0, before > trigger, everything, everything)
    start = len(messages)
    kept_tokens = 0
    for index in range(len(messages) - 1, -1, -1):
        t = per_message[index]
        if start < len(messages) and kept_tokens + t > target:
            break
        start = index
        kept_tokens += t
    kept_indexes = list(range(start, len(messages)))
    while len(kept_indexes) > 1 and role_class(messages[kept_indexes[0]]) == "toolResult":
        kept_tokens -= per_message[kept_indexes[0]]
        kept_indexes.pop(0)
    if not any(role_class(messages[i]) == "user" for i in kept_indexes):
        for index in range(len(messages) - len(kept_indexes) - 1, -1, -1):
            if role_class(messages[index]) == "user":
                kept_indexes.insert(0, index)
                kept_tokens += per_message[index]
                break
    kept = [messages[i] for i in kept_indexes]
    stripped = strip_trailing_prefill(kept, preserve=preserve)
    final = stripped if (stripped or preserve) else kept
    tokens = kept_tokens if len(final) == len(kept) else sum(tokens_of(m) for m in final)
    final_indexes = kept_indexes[: len(final)]
    return ClampResult(
        final, tokens, before, True, len(messages) - len(final), tokens > target, kept_indexes, final_indexes
    )
