"""The engine's per-message memo measures a list's missing messages in one pass: every value it gives is the
one a message measured alone gets, whichever reader asks first, under either line's estimate, and with the
memo emptied on the way (``limit``)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxview.assembly.live import pairing_view
from ctxview.assembly.tokens import serialized_message_tokens, serialized_message_tokens_1_0
from ctxview.assembly.volatile import SerializedCache, h16_of_json
from ctxview.jsjson import js_stringify

_BLOCK = st.one_of(
    st.builds(lambda t: {"type": "text", "text": t}, st.text(max_size=30)),
    st.builds(
        lambda i, n: {"type": "toolCall", "id": i, "name": n, "arguments": {"path": n}},
        st.sampled_from(["a", "b", "call_1", ""]), st.text(max_size=8),
    ),
    st.builds(lambda x: {"type": "image", "data": x}, st.text(alphabet="AB12", min_size=0, max_size=10)),
)
_MESSAGE = st.one_of(
    st.builds(lambda t: {"role": "user", "content": t}, st.text(max_size=40)),
    st.builds(lambda b: {"role": "assistant", "content": b}, st.lists(_BLOCK, max_size=4)),
    st.builds(
        lambda i, t, f: {"role": "toolResult", "toolCallId": i, "toolName": "read", "content": t, "isError": f},
        st.sampled_from(["a", "b", "call_1"]), st.text(max_size=40), st.booleans(),
    ),
    st.builds(  # (numbers as a parsed message holds them: ints, and floats that print the same in JS)
        lambda n: {"role": "assistant", "content": "x", "usage": {"cost": n}},
        st.one_of(st.integers(-10**6, 10**6), st.floats(1e-4, 1e15)),
    ),
)


def _alone(estimate: Any, message: Any) -> tuple[int, str, Any]:
    return estimate(message), h16_of_json("[" + js_stringify(message) + "]"), pairing_view(message)


@pytest.mark.parametrize("estimate", [serialized_message_tokens, serialized_message_tokens_1_0])
@settings(max_examples=150, deadline=None)
@given(
    messages=st.lists(_MESSAGE, max_size=12),
    limit=st.one_of(st.none(), st.integers(1, 6)),
    first=st.sampled_from(["tokens", "h16", "pairing", "one"]),
    repeated=st.booleans(),
)
def test_each_value_of_a_list_is_the_one_of_the_message_alone(
    estimate: Any, messages: list[Any], limit: int | None, first: str, repeated: bool
) -> None:
    if repeated and messages:
        messages = [*messages, messages[0]]  # (the same object twice in one list)
    memo = SerializedCache(limit=limit, estimate=estimate)
    if first == "one" and messages:  # (one value measured before the list: the rest in the pass)
        memo(messages[-1])
    readers = {"tokens": memo.tokens_of_all, "h16": memo.h16_of_all, "pairing": memo.pairing_of_all}
    order = [first, *(name for name in readers if name != first)] if first in readers else list(readers)
    got = {name: readers[name](messages) for name in order}
    alone = [_alone(estimate, m) for m in messages]
    assert got["tokens"] == [a[0] for a in alone]
    assert got["h16"] == [a[1] for a in alone]
    assert got["pairing"] == [a[2] for a in alone]
    assert [memo(m) for m in messages] == got["tokens"]
    if limit is None:
        assert memo.size() == len({id(m) for m in messages})
    else:
        assert memo.size() <= max(limit, 1)
