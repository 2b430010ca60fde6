"""Lists tagged as copies of one remembered run: the engine's memo answers them once, and only them."""

from __future__ import annotations

from typing import Any

from ctxview.assembly.incremental.chunked_repair import SameMessages
from ctxview.assembly.volatile import PairIndex, SerializedCache, assistant_pairing_ids, result_pairing_id
from ctxview.jsjson import js_stringify


def _messages(text: str) -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": text},
        {"role": "assistant", "content": [{"type": "toolCall", "id": "a", "name": "read", "arguments": {}}]},
        {"role": "toolResult", "toolCallId": "a", "content": text * 40},
    ]


def test_copies_with_one_origin_are_answered_once_others_are_measured() -> None:
    memo = SerializedCache()
    origin = object()
    messages = _messages("short")
    first = SameMessages(messages, origin)
    tokens = memo.tokens_of_all(first)
    assert tokens == [SerializedCache()(m) for m in messages]
    assert memo.h16_of_all(first) == [SerializedCache().h16(m) for m in messages]
    again = SameMessages(list(messages), origin)
    answered = memo.tokens_of_all(again)
    assert answered == tokens and answered is not memo.tokens_of_all(again)  # (a new list each time)
    index = PairIndex.build(first, memo)
    assert PairIndex.build(again, memo) is index
    assert index.call_ids == [assistant_pairing_ids(m) for m in messages]
    assert index.result_id == [result_pairing_id(m) for m in messages]

    longer = _messages("a much longer text")  # other objects: another origin, or none, is measured afresh
    for other in (SameMessages(longer, object()), list(longer)):
        assert memo.tokens_of_all(other) == [SerializedCache()(m) for m in longer] != tokens
        assert PairIndex.build(other, memo) is not index
    assert js_stringify(memo.tokens_of_all(again)) == js_stringify(tokens)
