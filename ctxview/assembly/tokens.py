"""Token estimation exactly as the reference engine counts (spec §4).

Two views of size exist: the item estimate over text (drives fresh tail and
budget selection) and the serialized estimate over whole message objects
(drives the engine's volatile append and final clamp).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from ctxview.jsjson import js_stringify, js_stringify_message, utf16_len

# §4.1 ranges that weigh 1.5 (six quarters).
_CJK = re.compile(
    "[\u4e00-\u9fff\u3400-\u4dbf\U00020000-\U0002a6df\U0002a700-\U0002b73f"
    "\U0002b740-\U0002b81f\U0002b820-\U0002ceaf\U0002ceb0-\U0002ebef"
    "\u3000-\u303f\u3040-\u30ff\uac00-\ud7af\uff00-\uffef]"
)
_ASTRAL = re.compile("[\U00010000-\U0010ffff]")


def estimate_tokens(text: str) -> int:
    """ceil(Σ weight) with weights 1.5 (CJK), 2 (other astral), 0.25 (rest)."""
    if not text:
        return 0
    total = len(text)
    if text.isascii():
        return (total + 3) // 4
    cjk = total - len(_CJK.sub("", text))
    astral = total - len(_ASTRAL.sub("", text))
    # CJK astral ranges are counted in both; they weigh 6, not 6 + 8.
    cjk_astral = _count_cjk_astral(text) if astral and cjk else 0
    quarters = (total - cjk - astral + cjk_astral) + 6 * cjk + 8 * (astral - cjk_astral)
    return (quarters + 3) // 4


def _count_cjk_astral(text: str) -> int:
    return sum(1 for ch in text if ord(ch) > 0xFFFF and _CJK.match(ch))


# §4.3 opaque binary payload replacer.
OPAQUE_PLACEHOLDER = "[opaque binary payload]"
OPAQUE_SURCHARGE = 1600
_BINARY_KEYS = frozenset({"data", "image", "imageData", "image_data", "base64", "bytes", "source"})
_BASE64_HEAD = re.compile(r"[A-Za-z0-9+/=\r\n]+")
_HAS_DIGIT = re.compile(r"[0-9]")
_HAS_LETTER = re.compile(r"[A-Za-z]")


def _is_opaque(key: str, value: str) -> bool:
    if len(value) < 4096 or utf16_len(value) < 4096:
        return False
    if value.startswith("data:"):
        return True
    if key not in _BINARY_KEYS:
        return False
    head = _utf16_prefix(value, 512)
    return bool(_BASE64_HEAD.fullmatch(head) and _HAS_DIGIT.search(head) and _HAS_LETTER.search(head))


def _utf16_prefix(value: str, units: int) -> str:
    if value[:units].isascii():
        return value[:units]
    out = []
    count = 0
    for ch in value:
        width = 2 if ord(ch) > 0xFFFF else 1
        if count + width > units:
            if count < units:  # half a surrogate pair: JS would keep the high surrogate
                out.append(chr(0xD800 + ((ord(ch) - 0x10000) >> 10)))
            break
        out.append(ch)
        count += width
    return "".join(out)


def _has_long_string(value: Any) -> bool:
    if isinstance(value, str):
        return len(value) >= 2048  # a cheap pre-filter: 4096 UTF-16 units need ≥ 2048 code points
    if isinstance(value, dict):
        return any(_has_long_string(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_long_string(v) for v in value)
    return False


def _replace_opaque(value: Any, key: str, counter: list[int]) -> Any:
    if isinstance(value, str):
        if _is_opaque(key, value):
            counter[0] += 1
            return OPAQUE_PLACEHOLDER
        return value
    if isinstance(value, dict):
        return {k: _replace_opaque(v, k, counter) for k, v in value.items()}
    if isinstance(value, list):
        return [_replace_opaque(v, str(i), counter) for i, v in enumerate(value)]
    return value


def serialized_message_tokens(message: Any) -> int:
    """Estimate of ``JSON.stringify(message, replacer)`` plus 1600 per opaque payload."""
    return serialized_message_tokens_of_json(message, js_stringify_message(message))


def serialized_message_tokens_of_json(message: Any, text: str) -> int:
    """``serialized_message_tokens`` given ``text = js_stringify(message)`` (a caller that needs the JSON too)."""
    # a string of 2,048 code points or more spells at least 2,050 characters of JSON: a shorter text has none,
    # and the replacer (which only touches such strings) cannot change it
    if len(text) < 2050 or not _has_long_string(message):
        return estimate_tokens(text)
    counter = [0]
    replaced = _replace_opaque(message, "", counter)
    return estimate_tokens(js_stringify(replaced)) + OPAQUE_SURCHARGE * counter[0]


def serialized_tokens(messages: list[Any]) -> int:
    """Sum of per-message serialized estimates (not the estimate of the joined list)."""
    return sum(serialized_message_tokens(m) for m in messages)


# --- the 1.0 line (delta D1): tool results also weigh their provider-boundary estimate -----------

_TOOL_RESULT_ROLES = ("tool", "toolResult")


def _twice(text: str) -> int:
    return 2 * estimate_tokens(text)


def _json_twice(value: Any) -> int:
    """Twice the estimate of the plain JSON of a value (no opaque-payload replacer); 0 for null."""
    return 0 if value is None else _twice(js_stringify(value))


def tool_result_boundary_tokens(message: Any) -> int:
    """The 1.0 boundary estimate B(m) of a tool result; 0 for every other message.

    Integer forms of the reference's float arithmetic: ceil(n·4/3) = (4n + 2) // 3 and
    ceil(t·1.2) = (6t + 4) // 5, exact for every reachable size.
    """
    if not isinstance(message, dict):
        return 0
    if message.get("role") not in _TOOL_RESULT_ROLES and message.get("type") != "toolResult":
        return 0
    content = message.get("content")
    if isinstance(content, str):
        cost = _twice(content)
    elif isinstance(content, list):
        cost = 0
        for block in content:
            if isinstance(block, str):
                cost += _twice(block)
            elif not isinstance(block, dict):
                cost += _json_twice(block)
            elif block.get("type") == "text" and isinstance(block.get("text"), str):
                cost += 6 + _twice(block["text"])
            else:
                cost += 6 + _json_twice(block)
    else:
        cost = _json_twice(content)
    name = message.get("toolName")
    if name is None:  # JS `??`: only null and a missing key fall through, not ""
        name = message.get("tool_name")
    name_cost = 0 if name is None else (4 * estimate_tokens(js_stringify(name)) + 2) // 3
    total = 12 + cost + name_cost
    return (6 * total + 4) // 5


def serialized_message_tokens_1_0(message: Any) -> int:
    """§4.3 under the 1.0 rules: the larger of the JSON estimate and the tool-result boundary estimate."""
    return serialized_message_tokens_1_0_of_json(message, js_stringify_message(message))


def serialized_message_tokens_1_0_of_json(message: Any, text: str) -> int:
    """``serialized_message_tokens_1_0`` given ``text = js_stringify(message)``."""
    base = serialized_message_tokens_of_json(message, text)
    boundary = tool_result_boundary_tokens(message)
    return boundary if boundary > base else base


# each per-message estimate → the same estimate given the message's JSON text, for a caller that
# hashes that text too (the engine's per-message memo: one JSON.stringify per message, not two)
ESTIMATES_OF_JSON: dict[Callable[[Any], int], Callable[[Any, str], int]] = {
    serialized_message_tokens: serialized_message_tokens_of_json,
    serialized_message_tokens_1_0: serialized_message_tokens_1_0_of_json,
}
