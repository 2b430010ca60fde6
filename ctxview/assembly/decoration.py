"""Recognize a channel-decorated face of the current user turn (spec §9.5(b), Appendix B).

Chat channels deliver the current turn to the model with decoration the
database row does not have: a ``[Sun 2026-06-21 13:19 GMT+3]`` timestamp,
"(untrusted metadata)" JSON blocks, a history recap, memory-plugin tags.  The
engine treats such a live turn as a volatile input when it is recognizably a
decorated copy of a persisted bare row.  Every check here fails closed: text
that merely resembles decoration is never collapsed into another turn.

All regexes use the JavaScript whitespace class (``JS_WS_CLASS``) and ASCII
digits, because the reference runs them with JS semantics.
"""

from __future__ import annotations

import math
import re
from typing import Any

from ctxview.jsjson import (
    JS_WHITESPACE,
    JS_WS_CLASS,
    JSNumber,
    js_parse,
    js_trim,
    js_trim_end,
    js_trim_start,
    utf16_len,
)

_WS = JS_WS_CLASS
_NON_WS = "[^" + re.escape(JS_WHITESPACE) + "]"  # JS \S
# The reference's lazy "[\s\S]*?" bodies are written "(?s:.)*?": any character, line breaks included.
_FENCE = "```"

# B.1 channel timestamp
_TIMESTAMP_PREFIX = re.compile(
    "^" + _WS + r"*\[[A-Za-z]{3}" + _WS + r"+[0-9]{4}-[0-9]{2}-[0-9]{2}[^\]]*GMT[^\]]*\]" + _WS + "*"
)

# B.2 metadata blocks
CONVERSATION_INFO_HEADING = "Conversation info (untrusted metadata)"
SENDER_HEADING = "Sender (untrusted metadata)"
_METADATA_BLOCK = re.compile(
    r"^(Conversation info \(untrusted metadata\)|Sender \(untrusted metadata\)):\r?\n"
    + _FENCE
    + r"json\r?\n((?s:.)*?)\r?\n"
    + _FENCE
)
_CONVERSATION_INFO_KEYS = frozenset(
    {
        "chat_id",
        "message_id",
        "reply_to_id",
        "sender_id",
        "conversation_label",
        "sender",
        "timestamp",
        "group_subject",
        "group_channel",
        "group_space",
        "group_members",
        "thread_label",
        "inbound_event_kind",
        "topic_id",
        "topic_name",
        "is_forum",
        "mention_reason",
        "mention_target",
        "mentioned_user_ids",
        "mentioned_usernames",
        "has_reply_context",
        "has_forwarded_context",
        "has_thread_starter",
        "history_count",
        "history_media_count",
        "history_truncated",
    }
)
_SENDER_KEYS = frozenset({"label", "id", "name", "username", "tag", "e164"})

# B.3 delivery prelude
_DELIVERY_PRELUDE = re.compile(r"^Delivery:(?s:.)*?\r?\n\r?\n(?=Conversation info \(untrusted metadata\):)")

# B.5 injected-context tags, in the order they are tried
INJECTED_TAG_NAMES = (
    "relevant-memories",
    "relevant_memories",
    "hindsight_memories",
    "inherited-rules",
    "derived-focus",
    "error-detected",
    "active_memory_plugin",
)
INTERNAL_CONTEXT_BEGIN = "<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>"
# §9.5(b) step 3: markers whose presence lets the newest user row match by containment
INJECTED_MARKERS = (*(f"<{name}>" for name in INJECTED_TAG_NAMES), INTERNAL_CONTEXT_BEGIN)

# B.6 context blocks and history recap
_CONTEXT_BLOCK_HEADINGS = (
    "Thread starter (untrusted, for context)",
    "Reply chain of current user message (untrusted, nearest first)",
    "Reply target of current user message (untrusted, for context)",
    "Forwarded message context (untrusted metadata)",
    "Location (untrusted metadata)",
)
_CONTEXT_BLOCK = re.compile(
    "^(?:"
    + "|".join(re.escape(h) for h in _CONTEXT_BLOCK_HEADINGS)
    + r"):\r?\n"
    + _FENCE
    + r"json\r?\n((?s:.)*?)\r?\n"
    + _FENCE
)
RECAP_HEADERS = (
    "Chat history since last reply (untrusted, for context):",
    "Conversation context (untrusted, chronological, selected for current message):",
)
_RECAP_JSON_BLOCK = re.compile(
    "^(?:" + "|".join(re.escape(h) for h in RECAP_HEADERS) + r")\r?\n" + _FENCE + r"json\r?\n((?s:.)*?)\r?\n" + _FENCE
)
_RECAP_ENTRY_KEYS = frozenset({"sender", "timestamp_ms", "message_id", "body", "media"})
_RECAP_ID_PREFIX = re.compile("^#" + _NON_WS + "+ ")
_RECAP_TIMESTAMP_PREFIX = re.compile(
    r"^[A-Za-z]{3} [0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2} " + _NON_WS + "+ "
)
_RECAP_TERMINATORS = ("\n\n", "\n\r\n", "\r\n\n", "\r\n\r\n")

_SEPARATOR = re.compile(r"^[ \t]*(?:\r?\n)(?:[ \t]*(?:\r?\n))?")
_LINE_BREAK_BEFORE = re.compile(r"\n[ \t]*\Z")

_JSON_WHITESPACE = " \t\n\r"


def _json_parse(text: str) -> tuple[bool, Any]:
    """``JSON.parse``: like ``js_parse`` but only JSON whitespace may surround the value."""
    stripped = text.strip(_JSON_WHITESPACE)
    if stripped and (stripped[0] in JS_WHITESPACE or stripped[-1] in JS_WHITESPACE):
        return False, None
    try:
        return True, js_parse(stripped)
    except (ValueError, RecursionError):
        return False, None


# --- B.1 -----------------------------------------------------------------------------


def strip_timestamp(value: str) -> str:
    """TS(v): drop one leading channel timestamp such as ``[Sun 2026-06-21 13:19 GMT+3] ``."""
    match = _TIMESTAMP_PREFIX.match(value)
    return value[match.end() :] if match else value


# --- B.2 / B.3 --------------------------------------------------------------------------


def _metadata_record(heading: str, body: str) -> dict[str, Any] | None:
    ok, parsed = _json_parse(body)
    if not ok or not isinstance(parsed, dict):
        return None
    known = _CONVERSATION_INFO_KEYS if heading == CONVERSATION_INFO_HEADING else _SENDER_KEYS
    return parsed if any(key in known for key in parsed) else None


def _match_metadata_block(text: str) -> tuple[int, dict[str, Any]] | None:
    """Length and record of a valid metadata block at the start of ``text``."""
    match = _METADATA_BLOCK.match(text)
    if match is None:
        return None
    record = _metadata_record(match.group(1), match.group(2))
    if record is None:
        return None
    return match.end(), record


def split_prelude(content: str) -> tuple[str, str]:
    """B.3: (``Delivery:`` prelude, metadata candidate) of ``content``."""
    trimmed = js_trim_start(content)
    if trimmed.startswith(CONVERSATION_INFO_HEADING + ":"):
        return "", trimmed
    match = _DELIVERY_PRELUDE.match(trimmed)
    if match is None:
        return "", trimmed
    return match.group(0), trimmed[match.end() :]


# --- B.5 ---------------------------------------------------------------------------------


def strip_tags(content: str) -> str:
    """Remove complete leading memory/plugin tag blocks; an unclosed tag stops the loop."""
    remaining = content
    while True:
        candidate = js_trim_start(remaining)
        name = next((n for n in INJECTED_TAG_NAMES if candidate.startswith(f"<{n}>")), None)
        if name is None:
            return remaining
        close = f"</{name}>"
        at = candidate.find(close)
        if at < 0:
            return remaining
        remaining = candidate[at + len(close) :]


# --- B.6 ---------------------------------------------------------------------------------


def split_context_blocks(content: str) -> str:
    """Consume leading "(untrusted …)" context blocks; return what follows them."""
    remaining = content
    while True:
        candidate = js_trim_start(remaining)
        match = _CONTEXT_BLOCK.match(candidate)
        if match is None:
            return remaining
        ok, parsed = _json_parse(match.group(1))
        if not ok or not isinstance(parsed, (dict, list)):
            return remaining
        remaining = candidate[match.end() :]


def recap_length(candidate: str) -> int:
    """Length of a valid leading history recap (JSON or line form), else 0."""
    match = _RECAP_JSON_BLOCK.match(candidate)
    if match is not None:
        ok, parsed = _json_parse(match.group(1))
        valid = (
            ok
            and isinstance(parsed, list)
            and len(parsed) > 0
            and all(isinstance(e, dict) and any(k in _RECAP_ENTRY_KEYS for k in e) for e in parsed)
        )
        return match.end() if valid else 0
    return _recap_line_block_length(candidate)


def _recap_line_block_length(candidate: str) -> int:
    header = next((h for h in RECAP_HEADERS if candidate.startswith(h)), None)
    if header is None:
        return 0
    cursor = len(header)
    if candidate.startswith("\r\n", cursor):
        cursor += 2
    elif candidate.startswith("\n", cursor):
        cursor += 1
    else:
        return 0
    matched_end = -1
    while cursor < len(candidate):
        newline = candidate.find("\n", cursor)
        line_end = len(candidate) if newline < 0 else newline
        if line_end > cursor and candidate[line_end - 1] == "\r":
            line_end -= 1
        if not is_recap_entry_line(candidate[cursor:line_end]):
            break
        matched_end = line_end
        if newline < 0:
            break
        cursor = newline + 1
    if matched_end < 0:
        return 0
    rest = candidate[matched_end:]
    if rest in ("", "\n", "\r\n") or rest.startswith(_RECAP_TERMINATORS):
        return matched_end
    return 0


def _has_sender_and_content(text: str) -> bool:
    at = text.find(": ", 1)
    return at != -1 and at + 2 < len(text)


def is_recap_entry_line(line: str) -> bool:
    """``#id [timestamp] sender: content`` or ``timestamp sender: content``."""
    id_match = _RECAP_ID_PREFIX.match(line)
    if id_match is not None:
        after_id = line[id_match.end() :]
        ts_match = _RECAP_TIMESTAMP_PREFIX.match(after_id)
        if ts_match is not None and _has_sender_and_content(after_id[ts_match.end() :]):
            return True
        return _has_sender_and_content(after_id)
    ts_match = _RECAP_TIMESTAMP_PREFIX.match(line)
    return ts_match is not None and _has_sender_and_content(line[ts_match.end() :])


def _has_history(record: dict[str, Any]) -> bool:
    count = record.get("history_count")
    if isinstance(count, bool):
        return False
    if isinstance(count, int):
        return count > 0
    if isinstance(count, float):
        return count.is_integer() and count > 0
    if isinstance(count, JSNumber):
        return math.isfinite(count.value) and float(count.value).is_integer() and count.value > 0
    return False


# --- B.4 ---------------------------------------------------------------------------------


def decorated_body(content: str, *, strip: bool) -> str | None:
    """B.4 ``body(c, strip)``: the user body after a recognized metadata prelude, or None."""
    after_timestamp = strip_timestamp(js_trim_start(content))
    _prelude, candidate = split_prelude(after_timestamp)
    first = js_trim_start(candidate)
    block = _match_metadata_block(first)
    if block is None:
        return None
    end, record = block
    rest = first[end:]
    second = js_trim_start(rest)
    second_block = _match_metadata_block(second)
    if second_block is not None:
        rest = second[second_block[0] :]
    if strip:
        rest = strip_tags(rest)
    if _has_history(record):
        recap_candidate = js_trim_start(split_context_blocks(rest))
        n = recap_length(recap_candidate)
        if n > 0:
            rest = recap_candidate[n:]
    if strip:
        rest = strip_tags(rest)
    return _SEPARATOR.sub("", rest, count=1)


def decorated_bodies_match(live: str, assembled: str) -> bool:
    """B.4: both faces reduce to the same non-blank body (tags stripped on the live side only)."""
    live_body = decorated_body(live, strip=True)
    assembled_body = decorated_body(assembled, strip=False)
    return (
        live_body is not None
        and assembled_body is not None
        and js_trim(live_body) != ""
        and live_body == assembled_body
    )


# --- §9.5(b) structural current turn ------------------------------------------------------


def contains_bare_body(live: str, bare: str) -> bool:
    """The bare row is the live content itself or its line-aligned trailing segment."""
    bare_raw = js_trim(bare)
    if not bare_raw:
        return False
    b = js_trim(strip_timestamp(bare_raw))
    if not b:
        return False
    live_trimmed = js_trim_end(live)
    if live_trimmed == bare_raw or strip_timestamp(live_trimmed) == b:
        return True
    newline = live_trimmed.rfind("\n")
    if newline < 0:
        return False
    tail = live_trimmed[newline + 1 :]
    if tail == bare_raw or strip_timestamp(tail) == b:
        return True
    if live_trimmed.endswith("\n" + bare_raw):
        return True
    k = len(live_trimmed) - len(b)
    if k > 0 and live_trimmed.endswith(b):
        before = live_trimmed[:k]
        if _LINE_BREAK_BEFORE.search(before):
            return True
        line = before[before.rfind("\n") + 1 :]
        if line and js_trim(strip_timestamp(line)) == "":
            return True
    return False


def is_recognized_decorated_bare_body(live: str, bare: str) -> bool:
    """The live turn is the bare row behind a channel timestamp (whole content or final line)."""
    if not contains_bare_body(live, bare):
        return False
    b = js_trim(strip_timestamp(js_trim(bare)))
    if not b:
        return False
    live_trimmed = js_trim_end(live)
    leading_trimmed = js_trim_start(live_trimmed)
    without_ts = strip_timestamp(leading_trimmed)
    if without_ts != leading_trimmed and js_trim(without_ts) == b:
        return True
    k = len(live_trimmed) - len(b)
    if k > 0 and live_trimmed.endswith(b):
        before = live_trimmed[:k]
        line = before[before.rfind("\n") + 1 :]
        if line and js_trim(strip_timestamp(line)) == "":
            return True
    newline = live_trimmed.rfind("\n")
    tail = live_trimmed if newline < 0 else live_trimmed[newline + 1 :]
    tail_without_ts = strip_timestamp(tail)
    return tail_without_ts != tail and js_trim(tail_without_ts) == b


def carries_injected_marker(live: str) -> bool:
    return any(marker in live for marker in INJECTED_MARKERS)


def is_bare_face_of_current_turn(live: str, assembled: str, *, assembled_is_last_user: bool) -> bool:
    """§9.5(b): is the assembled user row a bare (persisted) face of the live current turn?"""
    if assembled == live:
        return False
    if utf16_len(assembled) >= utf16_len(live):
        return False
    if (
        assembled_is_last_user
        and carries_injected_marker(live)
        and (contains_bare_body(live, assembled) or decorated_bodies_match(live, assembled))
    ):
        return True
    return is_recognized_decorated_bare_body(live, assembled)
