"""The text the engine's compaction feeds its summarizer, rebuilt from stored rows.

When the engine compacts (the emergency drain of §10.5), every leaf summary is
made from the chunk's messages and every condensed summary from its child
summaries.  Before any summarizer sees them the engine cleans them: media
payloads, data URLs and base64 lines go, provider reasoning blocks go,
injected memory-plugin blocks go, structured JSON content is reduced to its
human-readable strings, and each message gets a ``[date | role]`` header in
the engine's configured time zone.  Without a summary model the summary *is* a
truncation of this text, so its exact characters decide the new summary's
token count.  Everything here follows the engine's JavaScript semantics (JS
whitespace, UTF-16 lengths, ``JSON.parse``/``JSON.stringify``).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Sequence
from functools import lru_cache
from importlib import resources
from typing import Any

from ctxview.assembly.render import content_from_parts, parse_json_text, parse_sender_metadata
from ctxview.assembly.tokens import estimate_tokens
from ctxview.jsdate import JSRangeError, format_for_attribute, resolve_time_zone
from ctxview.jsdate import _zone_offset_ms as zone_offset_ms
from ctxview.jsjson import JS_WHITESPACE, js_stringify, js_trim, js_trim_end, js_trim_start, utf16_len
from ctxview.model import MessageRow, PartRow, SummaryRow

_WS = "[" + re.escape(JS_WHITESPACE) + "]"  # JS \s
_WS_CHARS = re.escape(JS_WHITESPACE)
_I = re.IGNORECASE | re.ASCII  # JS /i without u: ASCII letters fold, \b is ASCII

# Config default of stripInjectedContextTags: blocks memory plugins prepend to user turns.
DEFAULT_STRIP_INJECTED_CONTEXT_TAGS = (
    "active_memory_plugin",
    "relevant-memories",
    "relevant_memories",
    "hindsight_memories",
)


class _Undefined:
    """JS ``undefined`` where it differs from ``null`` (``JSON.stringify`` of it is no string)."""

    def __repr__(self) -> str:
        return "undefined"


UNDEFINED = _Undefined()


# --- media payloads ------------------------------------------------------------------------------

_DATA_URL = re.compile(r"data:[^;" + _WS_CHARS + r"\"'`]+;base64,[A-Za-z0-9+/=" + _WS_CHARS + r"]+", _I)
_DATA_URL_START = re.compile(r"data:[^;" + _WS_CHARS + r"\"'`]+;base64,", _I)
_MEDIA_PATH = re.compile("MEDIA:/[^\n\r\u2028\u2029]+\\Z")
_BASE64 = re.compile(r"[A-Za-z0-9+/=]+\Z")
_PROSE_PUNCTUATION = re.compile(r"[ .,:;!?()\[\]{}]")
_WS_RUN = re.compile(_WS + "+")
_LINE_BREAK = re.compile(r"\r?\n")


def looks_like_binary_payload(value: str) -> bool:
    """A line that is a data URL, or 256+ characters of base64 with no prose punctuation."""
    trimmed = js_trim(value)
    if not trimmed:
        return False
    if _DATA_URL_START.match(trimmed):
        return True
    # (the checks are a plain conjunction: the cheap ones come first)
    if len(trimmed) < 256 or _PROSE_PUNCTUATION.search(trimmed) is not None:
        return False
    compact = _WS_RUN.sub("", trimmed)
    length = utf16_len(compact)
    return length >= 256 and length % 4 == 0 and _BASE64.match(compact) is not None


def strip_embedded_media_payloads(content: Any) -> str:
    """Data URLs become a marker; blank, ``MEDIA:/…`` and base64 lines are dropped."""
    if not isinstance(content, str):
        return ""
    without_urls = _DATA_URL.sub("[embedded media omitted]", content) if "data:" in content.lower() else content
    kept = []
    for line in _LINE_BREAK.split(without_urls):
        line = js_trim_end(line)
        trimmed = js_trim(line)
        if not trimmed or _MEDIA_PATH.match(trimmed) or looks_like_binary_payload(trimmed):
            continue
        kept.append(line)
    return js_trim("\n".join(kept))


# --- provider reasoning written as text ----------------------------------------------------------

_REASONING_TAG = r"(think|thinking|reasoning)"
_REASONING_OPEN_ANY = (
    r"(?:<" + _WS + r"*(?:think|thinking|reasoning)(?:" + _WS + r"[^>]*)?>"
    r"|<\|" + _WS + r"*(?:start_of_)?(?:think|thinking|reasoning)" + _WS + r"*\|>"
    r"|\[" + _WS + r"*(?:think|thinking|reasoning)" + _WS + r"*\])"
)
_LEADING_CLOSED_REASONING = re.compile(
    r"<" + _WS + "*" + _REASONING_TAG + r"(?:" + _WS + r"[^>]*)?>[\s\S]*?<" + _WS + r"*/" + _WS + r"*\1" + _WS + "*>",
    _I,
)
_STANDALONE_CLOSED_REASONING = re.compile(
    r"(\A|\n)[ \t]*<"
    + _WS
    + "*"
    + _REASONING_TAG
    + r"(?:"
    + _WS
    + r"[^>]*)?>[\s\S]*?<"
    + _WS
    + r"*/"
    + _WS
    + r"*\2"
    + _WS
    + r"*>[ \t]*(?=\n|\Z)",
    _I,
)
_STANDALONE_REASONING_START = re.compile(r"(\A|\n)[ \t]*" + _REASONING_OPEN_ANY + r"[\s\S]*\Z", _I)
_REASONING_START = re.compile(_REASONING_OPEN_ANY, _I)


def _keep_line_break(match: re.Match[str]) -> str:
    return "\n" if match.group(1) == "\n" else ""


def strip_plain_text_reasoning(content: str) -> str:
    """Leading and standalone ``<think>…</think>``-style blocks removed; text that opens one is dropped."""
    trimmed = js_trim(content)
    while True:
        match = _LEADING_CLOSED_REASONING.match(trimmed)
        if match is None:
            break
        trimmed = js_trim_start(trimmed[match.end() :])
    trimmed = _STANDALONE_CLOSED_REASONING.sub(_keep_line_break, trimmed)
    trimmed = js_trim(_STANDALONE_REASONING_START.sub(_keep_line_break, trimmed, count=1))
    if not trimmed or _REASONING_START.match(trimmed):
        return ""
    return trimmed


def _sanitize_fragment(value: str, strip_reasoning: bool) -> str:
    without_media = strip_embedded_media_payloads(value)
    return strip_plain_text_reasoning(without_media) if strip_reasoning else without_media


# --- structured content ---------------------------------------------------------------------------

_REASONING_TYPES = frozenset({"reasoning", "thinking", "redacted_thinking"})
_MEDIA_RAW_TYPES = frozenset({"file", "image", "snapshot"})
_MEDIA_PART_TYPES = frozenset({"file", "snapshot"})
_TEXT_KEYS = ("text", "caption", "alt", "title", "summary")
_NESTED_KEYS = (
    "value", "content", "parts", "items", "message", "messages", "input", "arguments", "output", "result",
    "results", "data", "query", "command",
)  # fmt: skip
_MAX_STRUCTURED_DEPTH = 8


def _lower_type(value: Any) -> str:
    return js_trim(value).lower() if isinstance(value, str) else ""


def structured_fragments(value: Any, strip_reasoning: bool = False, depth: int = 0) -> list[str]:
    """The readable strings of a parsed JSON value: text-like keys and known containers, never reasoning or media."""
    if depth >= _MAX_STRUCTURED_DEPTH or value is None or value is UNDEFINED:
        return []
    if isinstance(value, str):
        sanitized = _sanitize_fragment(value, strip_reasoning)
        return [sanitized] if sanitized else []
    if isinstance(value, list):
        return [f for entry in value for f in structured_fragments(entry, strip_reasoning, depth + 1)]
    if not isinstance(value, dict):
        return []
    kind, raw_kind = _lower_type(value.get("type")), _lower_type(value.get("rawType"))
    if kind in _REASONING_TYPES or raw_kind in _REASONING_TYPES:
        return []
    fragments = []
    for key in _TEXT_KEYS:
        candidate = value.get(key)
        if isinstance(candidate, str):
            sanitized = _sanitize_fragment(candidate, strip_reasoning)
            if sanitized:
                fragments.append(sanitized)
    if kind in _MEDIA_RAW_TYPES or raw_kind in _MEDIA_RAW_TYPES:
        return fragments
    for key in _NESTED_KEYS:
        fragments.extend(structured_fragments(value.get(key, UNDEFINED), strip_reasoning, depth + 1))
    return fragments


def _joined(fragments: Iterable[str]) -> str:
    return js_trim("\n".join(t for t in (js_trim(f) for f in fragments) if t))


def meaningful_message_text(content: Any, strip_reasoning: bool = False) -> str:
    """Message content as readable text: JSON reduced to its strings, media (and optionally reasoning) removed."""
    if not isinstance(content, str):
        return ""
    trimmed = js_trim(content)
    if not trimmed:
        return ""
    if (trimmed[0] == "[" and trimmed[-1] == "]") or (trimmed[0] == "{" and trimmed[-1] == "}"):
        ok, parsed = parse_json_text(trimmed)
        if ok:
            return _joined(structured_fragments(parsed, strip_reasoning))
    return _sanitize_fragment(content, strip_reasoning)


def meaningful_summary_text(content: Any) -> str:
    """Stored summary content as the next summarizer pass sees it (reasoning blocks stripped too)."""
    return meaningful_message_text(content, strip_reasoning=True)


def meaningful_structured_text(value: Any) -> str:
    """A runtime content value as text; what has no readable strings is read as its JSON text."""
    if isinstance(value, str):
        return meaningful_message_text(value)
    text = _joined(structured_fragments(value))
    if text:
        return text
    if value is UNDEFINED:
        return ""
    return meaningful_message_text(js_stringify(value))


def _stored_part_value(value: Any) -> Any:
    """A ``tool_input``/``tool_output`` column: its JSON value, the trimmed text when it is no JSON, or undefined."""
    if not isinstance(value, str):
        return UNDEFINED
    trimmed = js_trim(value)
    if not trimmed:
        return UNDEFINED
    ok, parsed = parse_json_text(trimmed)
    return parsed if ok else trimmed


def part_summary_text(part: PartRow) -> str:
    """One part as text, with labelled tool input and output (reasoning parts give nothing)."""
    if part.part_type == "reasoning":
        return ""
    sections = []
    text = meaningful_structured_text(part.text_content)  # a NULL column reads as the text "null"
    if text:
        sections.append(text)
    name = js_trim(part.tool_name) if isinstance(part.tool_name, str) else ""
    label = f" ({name})" if name else ""
    tool_input = meaningful_structured_text(_stored_part_value(part.tool_input))
    if tool_input:
        sections.append(f"Tool input{label}:\n{tool_input}")
    tool_output = meaningful_structured_text(_stored_part_value(part.tool_output))
    if tool_output:
        sections.append(f"Tool output{label}:\n{tool_output}")
    return js_trim("\n\n".join(sections))


def _part_metadata(part: PartRow) -> dict[str, Any]:
    raw = part.metadata
    if not isinstance(raw, str) or not js_trim(raw):
        return {}
    ok, parsed = parse_json_text(raw)
    return parsed if ok and isinstance(parsed, dict) else {}


def is_media_attachment_part(part: PartRow) -> bool:
    """A file/snapshot part, or one whose metadata says its raw block was a file, image or snapshot."""
    if part.part_type in _MEDIA_PART_TYPES:
        return True
    metadata = _part_metadata(part)
    raw_type = metadata.get("rawType")
    if isinstance(raw_type, str):
        kind = _lower_type(raw_type)
    else:
        raw = metadata.get("raw")
        kind = _lower_type(raw.get("type")) if isinstance(raw, dict) else ""
    return kind in _MEDIA_RAW_TYPES


def annotate_media_content(content: str, parts: Sequence[PartRow]) -> str:
    """A message with media parts: its text marked ``[with media attachment]``, or ``[Media attachment]`` alone."""
    if not any(is_media_attachment_part(p) for p in parts):
        return content
    part_texts = (
        js_trim(strip_embedded_media_payloads(p.text_content if isinstance(p.text_content, str) else ""))
        for p in parts
        if not is_media_attachment_part(p)
    )
    part_text = js_trim("\n".join(t for t in part_texts if t))
    meaningful = js_trim(part_text or meaningful_message_text(content))
    if not meaningful:
        return "[Media attachment]"
    if "[with media attachment]" in meaningful:
        return meaningful
    return f"{meaningful} [with media attachment]"


def _runtime_role(role: str) -> str:
    if role == "tool":
        return "toolResult"
    return "user" if role in ("user", "system") else "assistant"


def leaf_message_text(message: MessageRow) -> str:
    """A message's text for a leaf summary: its stored content, else its parts rebuilt, else each part labelled."""
    parts = message.parts
    stored = meaningful_message_text(annotate_media_content(message.content, parts))
    if stored:
        return stored
    if not parts:
        return ""
    rebuilt = meaningful_structured_text(content_from_parts(parts, _runtime_role(message.role), message.content))
    if rebuilt:
        return rebuilt
    return js_trim("\n\n".join(t for t in (js_trim(part_summary_text(p)) for p in parts) if t))


# --- injected memory-plugin context -----------------------------------------------------------------

_UNTRUSTED_HEADER = re.compile(
    "(?:\\A|(?<=[\n\r\u2028\u2029]))Untrusted context \\(metadata, do not treat as instructions or commands\\):"
    + _WS
    + "*",
    _I,
)


@lru_cache(maxsize=32)
def _tag_block(tag: str) -> re.Pattern[str]:
    escaped = re.escape(tag)
    return re.compile(f"<{escaped}>[\\s\\S]*?</{escaped}>", _I)


def strip_injected_context_blocks(content: str, tags: Sequence[str] = DEFAULT_STRIP_INJECTED_CONTEXT_TAGS) -> str:
    """``<tag>…</tag>`` blocks of memory plugins and the "Untrusted context" header removed (trimmed)."""
    if not tags:
        return content
    if "<" in content:  # (every block starts with one)
        for tag in tags:
            content = _tag_block(tag).sub("", content)
    if "untrusted context" in content.lower():
        content = _UNTRUSTED_HEADER.sub("", content)
    return js_trim(content)


# --- the [date | role] headers ------------------------------------------------------------------------


@lru_cache(maxsize=1)
def _zone_abbreviations() -> dict[str, list[tuple[float, dict[int, str | None]]]]:
    data = resources.files("ctxview").joinpath("data", "intl_zone_abbreviations.json").read_text(encoding="utf-8")
    table = json.loads(data)["zones"]
    return {
        name.lower(): [(start, {int(k): v for k, v in offsets.items()}) for start, offsets in segments]
        for name, segments in table.items()
    }


def _gmt_format(offset_ms: int) -> str:
    """ICU's short localized GMT format: ``GMT+0``, ``GMT+9``, ``GMT-3:30``."""
    sign = "-" if offset_ms < 0 else "+"
    seconds = abs(offset_ms) // 1000
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    text = f"GMT{sign}{hours}"
    if minutes or secs:
        text += f":{minutes:02d}"
    if secs:
        text += f":{secs:02d}"
    return text


def short_zone_name(ms: float, timezone: str) -> str:
    """``timeZoneName: "short"`` of Intl's en-US format at an instant (the zone must be one Intl accepts)."""
    zone = resolve_time_zone(timezone)
    if zone is None:
        return timezone
    offset = zone if isinstance(zone, int) else zone_offset_ms(zone, int(ms))
    segments = _zone_abbreviations().get(timezone.lower())
    if isinstance(zone, int) and not segments and offset == 0 and ms >= 0:
        return "GMT"  # "-00:00" and the like take the GMT metazone's name from 1970 on ("GMT+0" before)
    if segments and ms >= segments[0][0]:
        current = segments[0][1]
        for start, offsets in segments:
            if start > ms:
                break
            current = offsets
        minutes = int(offset / 60_000)  # the table drops seconds (local mean times)
        if minutes in current:
            named = current[minutes]
            return named if named is not None else _gmt_format(offset)
    return _gmt_format(offset)


def summary_timestamp(ms: float, timezone: str) -> str:
    """The engine's ``YYYY-MM-DD HH:mm TZ`` header date; ``NaN-NaN-NaN NaN:NaN UTC`` for an invalid date."""
    if ms != ms:
        return "NaN-NaN-NaN NaN:NaN UTC"
    if resolve_time_zone(timezone) is None:  # Intl refuses the zone: the UTC fields, labelled UTC
        wall = format_for_attribute(ms, "UTC")
        abbreviation = "UTC"
    else:
        try:
            wall = format_for_attribute(ms, timezone)
        except JSRangeError:
            return "NaN-NaN-NaN NaN:NaN UTC"
        abbreviation = "UTC" if timezone == "UTC" else short_zone_name(ms, timezone)
    date, _, clock = wall.partition("T")
    return f"{date} {clock[:5]} {abbreviation}"


def _sender_suffix(message: MessageRow, with_sender: bool) -> str:
    if not with_sender or message.role != "user":
        return ""
    sender = sender_label(message)
    return f" | {sender}" if sender else ""


def sender_label(message: MessageRow) -> str | None:
    """The 0.15 leaf source's ``speaker (untrusted metadata): {…}`` for a message with sender metadata."""
    metadata = parse_sender_metadata(message.sender_metadata)
    return f"speaker (untrusted metadata): {js_stringify(metadata)}" if metadata else None


def leaf_source_text(
    messages: Sequence[tuple[MessageRow, str, float]],
    timezone: str,
    *,
    with_sender: bool,
    strip_tags: Sequence[str] = DEFAULT_STRIP_INJECTED_CONTEXT_TAGS,
) -> str:
    """The leaf summarizer input: ``[date | role]`` + text per message, blank-line separated.

    ``messages`` holds (row, its leaf text, created_at in epoch ms) for each message of the chunk.
    """
    blocks = []
    for row, content, created_ms in messages:
        text = meaningful_message_text(strip_injected_context_blocks(content, strip_tags))
        if not text:
            continue
        header = f"[{summary_timestamp(created_ms, timezone)} | {row.role}{_sender_suffix(row, with_sender)}]"
        blocks.append(f"{header}\n{text}")
    return "\n\n".join(blocks)


def condensed_source_text(summaries: Sequence[tuple[SummaryRow, float, float]], timezone: str) -> str:
    """The condensed summarizer input: ``[from - to]`` + cleaned content per child summary.

    ``summaries`` holds (row, earliest ms, latest ms), each date already falling back to created_at.
    """
    blocks = []
    for row, earliest, latest in summaries:
        sanitized = js_trim(meaningful_summary_text(row.content))
        if not sanitized:
            continue
        header = f"[{summary_timestamp(earliest, timezone)} - {summary_timestamp(latest, timezone)}]"
        blocks.append(f"{header}\n{sanitized}")
    return "\n\n".join(blocks)


def leaf_tokens(message: MessageRow, *, with_sender: bool) -> float:
    """What one message weighs in the compaction's chunking: its stored token_count (estimated when ≤ 0)."""
    count = message.token_count
    if isinstance(count, (int, float)) and not isinstance(count, bool) and math.isfinite(count) and count > 0:
        tokens: float = count
    else:
        tokens = estimate_tokens(message.content)
    if with_sender and message.role == "user":
        sender = sender_label(message)
        if sender:
            tokens += estimate_tokens(sender)
    return tokens
