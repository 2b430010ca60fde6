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


def test_a_tagged_list_partly_measured_gets_every_tables_values_in_order() -> None:
    """Some messages measured before (in any table), the others measured as their list is read; the ids a
    tagged list was looked up by serve its other tables too, and an untagged list of other objects is
    looked up by its own."""
    messages = [m for text in ("one", "two", "three", "four") for m in _messages(text)]
    plain = SerializedCache()
    expected = (
        [plain(m) for m in messages], [plain.h16(m) for m in messages], [plain.pairing(m) for m in messages]
    )
    memo = SerializedCache()
    memo(messages[4])
    memo.h16(messages[7])
    memo.pairing(messages[0])
    tagged = SameMessages(messages, object())
    assert memo.h16_of_all(tagged) == expected[1]
    assert memo.tokens_of_all(tagged) == expected[0]
    assert memo.pairing_of_all(tagged) == expected[2]
    others = [m for text in ("five", "six six", "seven", "eight eight eight") for m in _messages(text)]
    wanted = [plain(m) for m in others]
    assert wanted != expected[0]
    assert memo.tokens_of_all(list(others)) == wanted
    assert memo.tokens_of_all(SameMessages(others, object())) == wanted
    assert memo.size() == 2 * len(messages)
