"""Orphan tool-call stripping, blank blocks and empty messages (spec §7.1–§7.3, §11.5)."""

from __future__ import annotations

import math
from typing import Any

import pytest

from ctxview.assembly.postprocess import (
    clean_selected,
    empty_reason,
    is_empty_message_content,
    normalize_assistant,
    strip_orphan_calls,
)
from ctxview.assembly.resolve import ResolvedItem


def assistant(*blocks: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": list(blocks), "usage": {"output": 1}}


def tc(call_id: str) -> dict[str, Any]:
    return {"type": "toolCall", "id": call_id, "name": "read", "arguments": {}}


TEXT = {"type": "text", "text": "hello"}


def test_call_kept_when_a_later_result_is_selected() -> None:
    msg = assistant(TEXT, tc("c1"))
    out, stripped, touched = strip_orphan_calls(msg, 3, 10, {"c1": [5]}, {"c1": [5]})
    assert out is msg and stripped == [] and not touched


def test_evictable_call_without_selected_later_result_is_stripped() -> None:
    msg = assistant(TEXT, tc("c1"), tc("c2"))
    out, stripped, touched = strip_orphan_calls(msg, 3, 10, {"c1": [2], "c2": [7]}, {"c1": [2], "c2": [7]})
    assert out == {"role": "assistant", "content": [TEXT, tc("c2")], "usage": {"output": 1}}
    assert stripped == [("c1", "not-selected")] and touched
    assert msg["content"] == [TEXT, tc("c1"), tc("c2")]  # the input is not modified


def test_fresh_call_kept_without_any_result_removed_when_result_precedes() -> None:
    msg = assistant(TEXT, tc("c1"))
    kept, stripped, _ = strip_orphan_calls(msg, 12, 10, {}, {})
    assert kept is msg and stripped == []
    out, stripped, touched = strip_orphan_calls(msg, 12, 10, {"c1": [11]}, {"c1": [11]})
    assert out is not None and out["content"] == [TEXT]
    assert stripped == [("c1", "result-before-call")] and touched


def test_no_tail_means_everything_is_evictable() -> None:
    msg = assistant(tc("c1"))
    out, stripped, touched = strip_orphan_calls(msg, 10**6, math.inf, {}, {})
    assert out is None and stripped == [("c1", "not-selected")] and touched


def test_non_call_blocks_and_other_roles_untouched() -> None:
    msg = assistant({"type": "tool_call", "id": "x"}, {"type": "toolCall", "name": "no id"}, "raw", [1])
    assert strip_orphan_calls(msg, 1, 10, {}, {})[0] is msg
    user = {"role": "user", "content": [tc("c1")]}
    assert strip_orphan_calls(user, 1, 10, {}, {})[0] is user
    assert strip_orphan_calls({"role": "assistant", "content": "text"}, 1, 10, {}, {})[2] is False


def test_normalize_assistant() -> None:
    assert normalize_assistant({"role": "assistant", "content": "s"}) == {
        "role": "assistant",
        "content": [{"type": "text", "text": "s"}],
    }
    blank = {"type": "text", "text": " \n\t "}
    msg = assistant(blank, TEXT)
    assert normalize_assistant(msg)["content"] == [TEXT]
    untouched = assistant(TEXT)
    assert normalize_assistant(untouched) is untouched
    user = {"role": "user", "content": [blank]}
    assert normalize_assistant(user) is user


@pytest.mark.parametrize(
    "message",
    [
        None,
        {"role": "user"},
        {"role": "user", "content": None},
        {"role": "user", "content": ""},
        {"role": "user", "content": " \n "},
        {"role": "user", "content": []},
        {"role": "toolResult", "content": []},
        assistant({"type": "thinking", "thinking": "t"}, {"type": "redacted_thinking"}, {"type": "reasoning"}),
        assistant({"type": "text", "text": ""}, {"type": "text", "text": " "}),
    ],
)
def test_empty_messages(message: Any) -> None:
    # §11.5 #42 (true cases)
    assert is_empty_message_content(message)


@pytest.mark.parametrize(
    "message",
    [
        {"role": "user", "content": "hi"},
        assistant({"type": "tool_use", "id": "x", "name": "n", "input": {}}),
        {"role": "toolResult", "content": [{"type": "text", "text": "[lossless-claw] missing tool result …"}]},
        {"role": "user", "content": [{"type": "thinking", "thinking": "looks like thinking"}]},
        assistant({"type": "thinking", "thinking": "t"}, TEXT),
        {"role": "user", "content": {"type": "object"}},
    ],
)
def test_non_empty_messages(message: Any) -> None:
    # §11.5 #42 (false cases)
    assert not is_empty_message_content(message)


def test_empty_reasons() -> None:
    assert empty_reason(assistant({"type": "thinking"})) == "only thinking blocks"
    assert empty_reason({"role": "user", "content": "  "}) == "blank text"


def item(ordinal: int, message: dict[str, Any]) -> ResolvedItem:
    return ResolvedItem(ordinal=ordinal, stored_message=message, tokens=1, is_message=True, text="")


def test_clean_selected_counts_and_segments() -> None:
    selected = [
        item(0, assistant(TEXT, tc("old"))),  # evictable, result not selected → stripped
        item(1, assistant(tc("gone"))),  # evictable, only an orphan call → dropped
        item(2, assistant()),  # already empty → dropped here and counted
        item(3, assistant({"type": "text", "text": " "}, TEXT)),  # blank block removed
        item(4, assistant({"type": "thinking", "thinking": "t"})),  # thinking only → dropped
        item(5, {"role": "user", "content": "fresh"}),
    ]
    cleaned = clean_selected(selected, {5}, 5, {"old": [9]})
    assert cleaned.removed_tool_use_block_count == 3
    assert cleaned.touched_assistant_message_count == 3
    assert [(e.item.ordinal, e.segment) for e in cleaned.entries] == [
        (0, "evictable"),
        (3, "evictable"),
        (5, "freshTail"),
    ]
    assert cleaned.entries[0].message["content"] == [TEXT]
    assert cleaned.entries[1].message["content"] == [TEXT]
    assert cleaned.stripped_calls == {"o:0": [("old", "not-selected")], "o:1": [("gone", "not-selected")]}
    assert cleaned.dropped_orphan_calls == {"o:1", "o:2"}
    assert cleaned.dropped_empty == {"o:4": "only thinking blocks"}
    # cached per item: a second run gives equal results without touching the items
    again = clean_selected(selected, {5}, 5, {"old": [9]})
    assert [e.message for e in again.entries] == [e.message for e in cleaned.entries]
    assert selected[3].message["content"][0] == {"type": "text", "text": " "}
