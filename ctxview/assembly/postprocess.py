"""Post-selection clean-up (spec §7.1–§7.3): orphan tool calls, blank blocks, empty messages.

Runs on the selected items in ordinal order and yields the ``cleaned``
entries that the pairing repair (§7.4) receives, each tagged with its
segment, plus a record of what was stripped or dropped and why.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ctxview.assembly.resolve import CALL_TYPES, ResolvedItem, block_call_id, block_type
from ctxview.assembly.tool_pairs import THINKING_LIKE_TYPES, is_blank_text_block
from ctxview.jsjson import js_trim

FRESH = "freshTail"
EVICTABLE = "evictable"


@dataclass(slots=True)
class Entry:
    message: Any
    item: ResolvedItem
    segment: str  # freshTail | evictable


@dataclass(slots=True)
class Cleaned:
    entries: list[Entry]
    removed_tool_use_block_count: int = 0
    touched_assistant_message_count: int = 0
    # item key → [(call id, why)]; why: "not-selected" (evictable) | "result-before-call" (fresh tail)
    stripped_calls: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    dropped_orphan_calls: set[str] = field(default_factory=set)  # every block was a stripped call (or none left)
    dropped_empty: dict[str, str] = field(default_factory=dict)  # item key → why it was empty


def strip_orphan_calls(
    message: Any,
    ordinal: int,
    orphan_stripping_ordinal: float,
    selected_results: Mapping[str, Sequence[int]],
    all_results: Collection[str],
) -> tuple[Any, list[tuple[str, str]], bool]:
    """§7.1 for one message → (message or None when dropped, stripped calls, touched?)."""
    if not isinstance(message, dict) or message.get("role") != "assistant":
        return message, [], False
    content = message.get("content")
    if not isinstance(content, list):
        return message, [], False
    kept: list[Any] = []
    stripped: list[tuple[str, str]] = []
    for block in content:
        if block_type(block) not in CALL_TYPES:
            kept.append(block)
            continue
        cid = block_call_id(block)
        if cid is None or any(o > ordinal for o in selected_results.get(cid, ())):
            kept.append(block)
            continue
        if ordinal < orphan_stripping_ordinal:
            stripped.append((cid, "not-selected"))
            continue
        if cid not in all_results:
            kept.append(block)
            continue
        stripped.append((cid, "result-before-call"))
    if not kept:
        return None, stripped, True
    if not stripped:
        return message, [], False
    out = dict(message)
    out["content"] = kept
    return out, stripped, True


def normalize_assistant(message: Any) -> Any:
    """§7.2: string content → one text block; blank text blocks removed from lists."""
    if not isinstance(message, dict) or message.get("role") != "assistant":
        return message
    content = message.get("content")
    if isinstance(content, str):
        out = dict(message)
        out["content"] = [{"type": "text", "text": content}]
        return out
    if isinstance(content, list):
        filtered = [b for b in content if not is_blank_text_block(b)]
        if len(filtered) != len(content):
            out = dict(message)
            out["content"] = filtered
            return out
    return message


def empty_reason(message: Any) -> str | None:
    """§7.3 ``isEmptyMessageContent``: why the message counts as empty, or None."""
    if message is None or (isinstance(message, (bool, int, float, str)) and not message):
        return "no message"
    if not isinstance(message, dict):
        return "no content"
    content = message.get("content")
    if content is None:
        return "no content"
    if isinstance(content, list):
        if not content:
            return "empty content"
        if message.get("role") == "assistant":
            if all(block_type(b) in THINKING_LIKE_TYPES for b in content):
                return "only thinking blocks"
            if all(is_blank_text_block(b) for b in content):
                return "only blank text"
        return None
    if isinstance(content, str):
        return "blank text" if js_trim(content) == "" else None
    return None


def is_empty_message_content(message: Any) -> bool:
    return empty_reason(message) is not None


def clean_selected(
    selected: Sequence[ResolvedItem],
    fresh_ordinals: set[int],
    orphan_stripping_ordinal: float,
    all_results: Collection[str],
) -> Cleaned:
    """§7.1 → §7.2 → §7.3 over the selected items (ordinal order)."""
    selected_results: dict[str, list[int]] = {}
    for item in selected:
        rid = item.result_id  # message_result_id(item.message), computed when the item was built
        if rid:
            selected_results.setdefault(rid, []).append(item.ordinal)
    result = Cleaned([])
    entries = result.entries
    for item in selected:
        segment = FRESH if item.ordinal in fresh_ordinals and not item.is_focus_brief else EVICTABLE
        original = item.message
        call_ids = item.call_ids
        if call_ids and all(_answered_later(selected_results.get(cid), item.ordinal) for cid in call_ids):
            message, stripped, touched = original, [], False  # every call is answered by a later selected result
        elif call_ids:
            message, stripped, touched = strip_orphan_calls(
                original, item.ordinal, orphan_stripping_ordinal, selected_results, all_results
            )
        else:  # no call block with an id: only an assistant with empty list content is affected
            content = original.get("content")
            touched = original.get("role") == "assistant" and isinstance(content, list) and not content
            message, stripped = (None if touched else original), []
        if touched:
            result.removed_tool_use_block_count += 1
            result.touched_assistant_message_count += 1
        if stripped:
            result.stripped_calls[item.key] = stripped
        if message is None:
            result.dropped_orphan_calls.add(item.key)
            continue
        if message is original:
            cached = item._clean
            if cached is None:
                cached = item._clean = _normalize_and_check(message)
            normalized, reason = cached
        else:
            normalized, reason = _normalize_and_check(message)
        if reason is not None:
            result.dropped_empty[item.key] = reason
            continue
        entries.append(Entry(normalized, item, segment))
    return result


def _answered_later(ordinals: Sequence[int] | None, ordinal: int) -> bool:
    return ordinals is not None and any(o > ordinal for o in ordinals)


def _normalize_and_check(message: Any) -> tuple[Any, str | None]:
    normalized = normalize_assistant(message)
    reason = empty_reason(normalized)
    if reason == "empty content" and normalized is not message:
        reason = "only blank text"
    return normalized, reason
