"""Tool use/result pairing repair (spec §7.4) and fresh-tail protection hashes (§7.5).

``sanitize_tool_use_result_pairing`` is the reference ``sanitizeToolUseResultPairing``:
results move right after their call, missing results get a synthetic error
result, orphan and duplicate results are dropped, duplicate and terminal call
blocks are removed.  The keyed variant carries a key per message through the
repair (copies keep their key, synthetic results get None) and can record
what happened to each keyed message, which is how the trace explains it.
"""

from __future__ import annotations

import hashlib
from bisect import bisect_right
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from itertools import compress
from typing import Any

from ctxview.assembly.resolve import CALL_TYPES, block_call_id, block_type, message_result_id
from ctxview.jsjson import js_stringify, js_trim

SYNTHETIC_RESULT_TEXT = (
    "[lossless-claw] missing tool result in session history; inserted synthetic error result for transcript repair."
)
_FUNCTION_CALL_TYPES = frozenset({"functionCall", "function_call"})
_REASONING_TYPES = frozenset({"reasoning", "thinking"})
THINKING_LIKE_TYPES = frozenset({"thinking", "redacted_thinking", "reasoning"})

_NO_NAME: Any = object()


@dataclass(slots=True)
class RepairLog:
    """What the repair did to keyed messages (keys as given by the caller)."""

    orphan_results: list[Any] = field(default_factory=list)  # dropped: no preceding call
    duplicate_results: list[Any] = field(default_factory=list)  # dropped: another result for that id won
    calls_removed: dict[Any, list[tuple[str, str]]] = field(default_factory=dict)  # key → [(call id, reason)]
    dropped_assistants: dict[Any, str] = field(default_factory=dict)  # key → "duplicate" | "terminal"
    synthetic: dict[Any, list[str]] = field(default_factory=dict)  # assistant key → call ids given a synthetic result
    moved_after_results: dict[Any, Any] = field(default_factory=dict)  # key → assistant key it was moved behind


# --- helpers --------------------------------------------------------------------------------


def synthetic_result(call_id: str, name: Any = _NO_NAME) -> dict[str, Any]:
    """The synthetic error result, in the reference key order."""
    return {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": name if isinstance(name, str) else "unknown",
        "content": [{"type": "text", "text": SYNTHETIC_RESULT_TEXT}],
        "isError": True,
    }


def is_synthetic_result(message: Any) -> bool:
    if not isinstance(message, dict) or message.get("isError") is not True:
        return False
    content = message.get("content")
    if not isinstance(content, list):
        return False
    return any(
        isinstance(b, dict) and b.get("type") == "text" and b.get("text") == SYNTHETIC_RESULT_TEXT for b in content
    )


def _prefer(existing: Any, candidate: Any) -> bool:
    return existing is None or (is_synthetic_result(existing) and not is_synthetic_result(candidate))


def _is_terminal(message: dict[str, Any]) -> bool:
    reason = message.get("stopReason")
    if not isinstance(reason, str):
        reason = message.get("stop_reason")
        if not isinstance(reason, str):
            return False
    return reason in ("error", "aborted")


def normalize_reasoning(message: dict[str, Any]) -> dict[str, Any]:
    """Move reasoning blocks in front of a single OpenAI function call (copy if changed)."""
    content = message.get("content")
    if not isinstance(content, list):
        return message
    saw_call = False
    after_call = False
    function_calls = 0
    for block in content:
        if not isinstance(block, dict):
            return message
        btype = block_type(block)
        if btype in _REASONING_TYPES:
            if saw_call:
                after_call = True
            continue
        if btype in CALL_TYPES:
            saw_call = True
            if btype in _FUNCTION_CALL_TYPES:
                function_calls += 1
            continue
        return message
    if not after_call or function_calls != 1:
        return message
    reasoning = [b for b in content if block_type(b) in _REASONING_TYPES]
    calls = [b for b in content if block_type(b) in CALL_TYPES]
    out = dict(message)
    out["content"] = reasoning + calls
    return out


# id(message) → (message, normalize_reasoning(message), terminal?, fast) where fast is (extract_calls of the
# normalized message, its call ids) when those ids are unique within the message and it is not terminal
# (filterCalls then keeps every block unless an id was seen before), else None.  Messages are never mutated,
# and the entry holds the message, so an id cannot be reused while it is cached.
_FACTS: dict[int, tuple[Any, dict[str, Any], bool, tuple[list[tuple[str, Any]], frozenset[str]] | None]] = {}
_FACTS_LIMIT = 400_000


def _assistant_facts(
    message: dict[str, Any],
) -> tuple[dict[str, Any], bool, tuple[list[tuple[str, Any]], frozenset[str]] | None]:
    hit = _FACTS.get(id(message))
    if hit is not None and hit[0] is message:
        return hit[1], hit[2], hit[3]
    normalized = normalize_reasoning(message)
    terminal = _is_terminal(normalized)
    fast = None
    if not terminal:
        calls = extract_calls(normalized)
        ids = frozenset(cid for cid, _ in calls)
        if len(ids) == len(calls):
            fast = (calls, ids)
    if len(_FACTS) >= _FACTS_LIMIT:
        _FACTS.clear()
    _FACTS[id(message)] = (message, normalized, terminal, fast)
    return normalized, terminal, fast


def _call_block_id(block: Any) -> str | None:
    if not isinstance(block, dict):
        return None
    cid = block_call_id(block)
    if cid is None or block_type(block) not in CALL_TYPES:
        return None
    return cid


def _filter_calls(
    message: dict[str, Any],
    seen: set[str],
    *,
    drop_all: bool,
    record: bool,
    preview: bool = False,
    extra: set[str] | frozenset[str] = frozenset(),
) -> tuple[dict[str, Any], list[tuple[str, Any]]]:
    """``filterCalls``; ``preview`` works on a virtual copy of ``seen`` (plus ``extra``) without copying it."""
    content = message.get("content")
    if not isinstance(content, list):
        return message, []
    kept: list[Any] = []
    dropped: list[tuple[str, Any]] = []
    target = set() if preview else seen
    for block in content:
        cid = _call_block_id(block)
        if cid is not None:
            if drop_all or cid in seen or cid in extra or (preview and cid in target):
                name = block.get("name")
                dropped.append((cid, name if isinstance(name, str) else _NO_NAME))
                continue
            if record:
                target.add(cid)
        kept.append(block)
    if not dropped:
        return message, dropped
    out = dict(message)
    out["content"] = kept
    return out, dropped


def extract_calls(message: dict[str, Any]) -> list[tuple[str, Any]]:
    """(id, name) of every call block with an id, in block order."""
    content = message.get("content")
    if not isinstance(content, list):
        return []
    calls: list[tuple[str, Any]] = []
    for block in content:
        cid = _call_block_id(block)
        if cid is not None:
            name = block.get("name")
            calls.append((cid, name if isinstance(name, str) else _NO_NAME))
    return calls


def _is_thinking_like(block: Any) -> bool:
    return block_type(block) in THINKING_LIKE_TYPES


def is_blank_text_block(block: Any) -> bool:
    return (
        isinstance(block, dict)
        and block.get("type") == "text"
        and isinstance(block.get("text"), str)
        and js_trim(block["text"]) == ""
    )


def _empty_after_drop(content: Any) -> bool:
    if not isinstance(content, list):
        return False
    return all(_is_thinking_like(b) or is_blank_text_block(b) for b in content)


# --- §7.4 -----------------------------------------------------------------------------------


def sanitize_tool_use_result_pairing_keyed(
    messages: Sequence[Any],
    keys: Sequence[Any],
    log: RepairLog | None = None,
) -> tuple[list[Any], list[Any]]:
    """§7.4 with a key carried by every message; synthetic results get the key None."""
    n = len(messages)
    out: list[Any] = []
    out_keys: list[Any] = []
    seen_results: set[str] = set()
    result_pos: dict[str, int] = {}
    seen_calls: set[str] = set()
    moved: set[int] = set()
    result_index: dict[str, list[int]] = {}
    for index, message in enumerate(messages):
        if isinstance(message, dict) and message.get("role") == "toolResult":
            rid = message_result_id(message)
            if rid:
                result_index.setdefault(rid, []).append(index)

    def removed_calls(key: Any, dropped: list[tuple[str, Any]], terminal: bool) -> None:
        if log is not None and key is not None:
            reason = "terminal" if terminal else "duplicate"
            log.calls_removed.setdefault(key, []).extend((cid, reason) for cid, _ in dropped)

    def duplicate(key: Any) -> None:
        if log is not None and key is not None:
            log.duplicate_results.append(key)

    def orphan(key: Any) -> None:
        if log is not None and key is not None:
            log.orphan_results.append(key)

    def push_result(result: Any, key: Any) -> None:
        rid = message_result_id(result)
        if rid and rid in seen_results:
            pos = result_pos[rid]
            if _prefer(out[pos], result):
                duplicate(out_keys[pos])
                out[pos] = result
                out_keys[pos] = key
            else:
                duplicate(key)
            return
        if rid:
            seen_results.add(rid)
            result_pos[rid] = len(out)
        out.append(result)
        out_keys.append(key)

    def take_span(span: dict[str, tuple[Any, Any, int]], rid: str, msg: Any, key: Any, index: int) -> None:
        existing = span.get(rid)
        if _prefer(existing[0] if existing else None, msg):
            if existing is not None:
                duplicate(existing[1])
            span[rid] = (msg, key, index)
        elif existing is not None:
            duplicate(key)

    i = 0
    while i < n:
        if i in moved:
            i += 1
            continue
        msg = messages[i]
        key = keys[i]
        if not isinstance(msg, dict):
            out.append(msg)
            out_keys.append(key)
            i += 1
            continue
        role = msg.get("role")
        if role != "assistant":
            if role != "toolResult":
                out.append(msg)
                out_keys.append(key)
            else:
                orphan(key)
            i += 1
            continue
        assistant, terminal, fast_calls = _assistant_facts(msg)
        if fast_calls is not None and seen_calls.isdisjoint(fast_calls[1]):
            # unique call ids, none seen before, not terminal: filterCalls keeps every block
            dropped: list[tuple[str, Any]] = []
            seen_calls.update(fast_calls[1])
        else:
            fast_calls = None
            assistant, dropped = _filter_calls(assistant, seen_calls, drop_all=terminal, record=not terminal)
        if dropped:
            removed_calls(key, dropped, terminal)
            if _empty_after_drop(assistant.get("content")):
                if log is not None and key is not None:
                    log.dropped_assistants[key] = "terminal" if terminal else "duplicate"
                i += 1
                continue
        if terminal:
            out.append(assistant)
            out_keys.append(key)
            i += 1
            continue
        calls = fast_calls[0] if fast_calls is not None else extract_calls(assistant)
        if not calls:
            out.append(assistant)
            out_keys.append(key)
            i += 1
            continue
        ids = {cid for cid, _ in calls}
        span: dict[str, tuple[Any, Any, int]] = {}  # call id → (result, key, input position)
        remainder: list[tuple[Any, Any, int]] = []
        j = i + 1
        while j < n:
            if j in moved:
                j += 1
                continue
            nxt = messages[j]
            nkey = keys[j]
            if not isinstance(nxt, dict):
                remainder.append((nxt, nkey, j))
                j += 1
                continue
            nrole = nxt.get("role")
            if nrole == "assistant":
                normalized, nterm, facts = _assistant_facts(nxt)
                if facts is not None and seen_calls.isdisjoint(facts[1]):
                    preview, pdrop, ncalls = normalized, [], facts[0]
                else:
                    preview, pdrop = _filter_calls(
                        normalized, seen_calls, drop_all=nterm, record=not nterm, preview=True
                    )
                    ncalls = [] if nterm else extract_calls(preview)
                if ncalls:
                    if pdrop:
                        _look_past(
                            messages,
                            keys,
                            j,
                            n,
                            moved,
                            seen_calls,
                            ncalls,
                            ids,
                            seen_results,
                            span,
                            take_span,
                            duplicate,
                        )
                    break
                if pdrop:
                    removed_calls(nkey, pdrop, nterm)
                    if _empty_after_drop(preview.get("content")):
                        if log is not None and nkey is not None:
                            log.dropped_assistants[nkey] = "terminal" if nterm else "duplicate"
                        j += 1
                        continue
                remainder.append((preview, nkey, j))
                j += 1
                continue
            if nrole == "toolResult":
                rid = message_result_id(nxt)
                if rid and rid in ids:
                    if rid in seen_results:
                        duplicate(nkey)
                    else:
                        take_span(span, rid, nxt, nkey, j)
                else:
                    orphan(nkey)
                j += 1
                continue
            remainder.append((nxt, nkey, j))
            j += 1

        # results for these calls after position j (the reference scans every later message;
        # the per-id index visits the same candidates in the same order)
        later: dict[str, tuple[Any, Any, int]] = {}
        for rid in ids:
            positions = result_index.get(rid)
            if not positions or rid in seen_results:
                continue
            for k in positions[bisect_right(positions, j) :]:
                if k in moved:
                    continue
                cand = messages[k]
                existing_later = later.get(rid)
                if _prefer(existing_later[0] if existing_later else None, cand):
                    later[rid] = (cand, keys[k], k)

        out.append(assistant)
        out_keys.append(key)
        last_result = -1  # input position of the furthest result emitted right after this assistant
        for cid, name in calls:
            chosen = span.get(cid)
            late = later.get(cid)
            if late is not None and _prefer(chosen[0] if chosen else None, late[0]):
                if chosen is not None:
                    duplicate(chosen[1])
                chosen = late
                moved.add(late[2])
            if chosen is not None:
                push_result(chosen[0], chosen[1])
                last_result = max(last_result, chosen[2])
            else:
                push_result(synthetic_result(cid, name), None)
                if log is not None and key is not None:
                    log.synthetic.setdefault(key, []).append(cid)
        for rmsg, rkey, rindex in remainder:
            if log is not None and rkey is not None and rindex < last_result:
                log.moved_after_results[rkey] = key
            out.append(rmsg)
            out_keys.append(rkey)
        i = j
    return out, out_keys


def _look_past(
    messages: Sequence[Any],
    keys: Sequence[Any],
    j: int,
    n: int,
    moved: set[int],
    seen_calls: set[str],
    ncalls: list[tuple[str, Any]],
    ids: set[str],
    seen_results: set[str],
    span: dict[str, tuple[Any, Any, int]],
    take_span: Callable[[dict[str, tuple[Any, Any, int]], str, Any, Any, int], None],
    duplicate: Callable[[Any], None],
) -> None:
    """The mixed-duplicate look-ahead: collect delayed results of this span past assistant ``j``."""
    look = {cid for cid, _ in ncalls}  # with seen_calls: the look-ahead's virtual seen set
    for k in range(j + 1, n):
        if k in moved:
            continue
        cand = messages[k]
        if not isinstance(cand, dict):
            continue
        crole = cand.get("role")
        if crole == "assistant":
            normalized = normalize_reasoning(cand)
            cterm = _is_terminal(normalized)
            preview, _ = _filter_calls(
                normalized, seen_calls, drop_all=cterm, record=not cterm, preview=True, extra=look
            )
            if not cterm and extract_calls(preview):
                break
            continue
        if crole != "toolResult":
            continue
        rid = message_result_id(cand)
        if not rid or rid not in ids:
            continue
        moved.add(k)
        if rid in seen_results:
            duplicate(keys[k])
            continue
        take_span(span, rid, cand, keys[k], k)


def sanitize_tool_use_result_pairing(messages: list[Any]) -> list[Any]:
    """§7.4 ``sanitizeToolUseResultPairing`` (a new list; input messages are not modified)."""
    out, _ = sanitize_tool_use_result_pairing_keyed(messages, [None] * len(messages))
    return out


# --- §7.5 hashes -------------------------------------------------------------------------------


def h16_of_jsons(jsons: Iterable[str]) -> str:
    """h16 of a list given the ``JSON.stringify`` text of each element."""
    text = "[" + ",".join(jsons) + "]"
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def fresh_tail_protection_hashes(
    pre_sanitize_fresh: Sequence[Any],
    sanitized: Sequence[Any],
    sanitized_keys: Sequence[Any],
    is_fresh_key: Callable[[Any], bool],
    json_of: Callable[[Any], str] = js_stringify,
) -> list[str]:
    """§7.5: list A (each fresh message alone and repaired alone) then list B, de-duplicated.

    ``is_fresh_key`` is asked of every key, None included (False for it).
    """
    hashes: dict[str, None] = {}
    for message in pre_sanitize_fresh:
        for value in _alone_hashes(message, json_of):
            hashes.setdefault(value, None)
    if len(sanitized) != len(sanitized_keys):
        raise ValueError("sanitized messages and their keys differ in length")
    # (the few fresh messages among 100,000 picked at C speed)
    for message in compress(sanitized, map(is_fresh_key, sanitized_keys)):
        hashes.setdefault(_alone_hashes(message, json_of)[0], None)
    return list(hashes)


# (id(message), id(json_of)) → (message, json_of, [h16 of the message alone, then of each message its
# repair alone yields]); the fresh tail is the same few messages run after run (bounded; entries hold
# their objects, so ids stay valid while cached)
_ALONE: dict[tuple[int, int], tuple[Any, Any, list[str]]] = {}
_ALONE_LIMIT = 100_000


def _alone_hashes(message: Any, json_of: Callable[[Any], str]) -> list[str]:
    key = (id(message), id(json_of))
    hit = _ALONE.get(key)
    if hit is not None and hit[0] is message and hit[1] is json_of:
        return hit[2]
    values = [h16_of_jsons([json_of(message)])]
    values.extend(h16_of_jsons([json_of(repaired)]) for repaired in sanitize_tool_use_result_pairing([message]))
    if len(_ALONE) >= _ALONE_LIMIT:
        _ALONE.clear()
    _ALONE[key] = (message, json_of, values)
    return values
