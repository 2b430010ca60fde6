"""How much of the assembled prefix an edit left byte-identical: what a provider's prompt cache can still serve.

The comparison is the diff's (``ctxview.diff.shared_prefix``): messages are equal
when their JSON is, and the tokens are the serialized estimate of each message.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ctxview.assembly.tokens import serialized_message_tokens
from ctxview.diff import shared_prefix
from ctxview.model import Trace


@dataclass(frozen=True, slots=True)
class CachePrefix:
    same_messages: int
    total_messages: int  # of the new run
    same_tokens: int
    total_tokens: int  # serialized estimate of the new run's messages
    first_changed: int | None  # index of the first changed message (None: nothing changed; = length: one ended)
    first_changed_key: str | None  # its decision key (None: unchanged, synthetic, or the list got shorter)

    @property
    def unchanged(self) -> bool:
        return self.first_changed is None

    def text(self) -> str:
        """``cache prefix: 12 of 14 messages, 1,520 of 1,977 tokens unchanged``."""
        return (
            f"cache prefix: {self.same_messages:,} of {self.total_messages:,} messages, "
            f"{self.same_tokens:,} of {self.total_tokens:,} tokens unchanged"
        )


# Serialized tokens of the messages seen lately, by identity: runs of one session share their message
# objects, so after the first edit only new messages are serialized (the object is held, so its id stays its own).
_TOKENS: dict[int, tuple[Any, int]] = {}
_TOKENS_LIMIT = 200_000


def _tokens(message: Any) -> int:
    hit = _TOKENS.get(id(message))
    if hit is not None and hit[0] is message:
        return hit[1]
    if len(_TOKENS) >= _TOKENS_LIMIT:
        _TOKENS.clear()
    count = serialized_message_tokens(message)
    _TOKENS[id(message)] = (message, count)
    return count


def cache_prefix(before: Trace, after: Trace) -> CachePrefix:
    """The shared prefix of two runs' final messages, measured on the later run."""
    first, same_tokens = shared_prefix(before.messages, after.messages, _tokens)
    messages = after.messages
    same = len(messages) if first is None else min(first, len(messages))
    total = same_tokens + sum(_tokens(m) for m in messages[same:])
    key = after.message_keys[first] if first is not None and first < len(after.message_keys) else None
    return CachePrefix(same, len(messages), same_tokens, total, first, key)
