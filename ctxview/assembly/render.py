"""Turn stored rows back into the messages the reference assembler emits (spec §2, §3).

Message rows plus their ``message_parts`` become agent messages (user /
assistant / toolResult) with the exact key orders the reference produces,
and summary rows become the ``<summary …>`` XML user message.  Every branch
of the reference is reproduced, including the rare ones (legacy rows without
parts, identity-gated thinking signatures, OpenAI reasoning restore, sender
metadata), because token estimates and hashes are taken over the result.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from ctxview.assembly.tokens import estimate_tokens
from ctxview.jsdate import format_for_attribute, parse_utc_timestamp
from ctxview.jsjson import JS_JSON_DECODER, js_parse, js_string, js_stringify_message, js_trim
from ctxview.model import FocusBriefRow, MessageRow, PartRow, SummaryRow


class _Missing:
    """JS ``undefined``: a key that is absent (distinct from JSON ``null``)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()

# Block types that are rebuilt from columns instead of returned verbatim (§2.4 step 2d).
TOOL_BLOCK_TYPES = frozenset(
    {
        "toolCall",
        "tool_use",
        "tool-use",
        "toolUse",
        "functionCall",
        "function_call",
        "function_call_output",
        "toolResult",
        "tool_result",
    }
)
_CALL_RAW_TYPES = frozenset({"function_call", "functionCall", "tool_use", "tool-use", "toolUse", "toolCall"})
_RESULT_RAW_TYPES = frozenset({"function_call_output", "tool_result", "toolResult"})
_ARGUMENTS_KEY_TYPES = frozenset({"toolCall", "functionCall"})

SENDER_KEYS = ("senderId", "senderName", "senderUsername")

_JSON_WS = " \t\n\r"
_SCAN_JSON = JS_JSON_DECODER.scan_once


# --- JSON decoding with JSON.parse semantics --------------------------------------------


def parse_json_text(text: str) -> tuple[bool, Any]:
    """``JSON.parse(text)``: only JSON whitespace may surround the value."""
    stripped = text.strip(_JSON_WS)
    if not stripped or js_trim(stripped) != stripped:
        return False, None
    try:
        return True, js_parse(stripped)
    except (ValueError, RecursionError):
        return False, None


def _parse_json_loose(value: Any) -> Any:
    """The reference ``parseJson``: undefined (MISSING) for non-strings, blanks and failures."""
    if not isinstance(value, str) or js_trim(value) == "":
        return MISSING
    ok, parsed = parse_json_text(value)
    return parsed if ok else MISSING


def _decode_object(raw: str | None) -> Any:
    """The decoded metadata if it is a JS object (dict or list), else MISSING."""
    if isinstance(raw, str) and raw.startswith("{") and raw.endswith("}"):
        # the usual shape: nothing surrounds the braces, so no whitespace rule can apply (js_parse's scan,
        # called directly: this runs for every stored part)
        try:
            value, end = _SCAN_JSON(raw, 0)
        except (ValueError, StopIteration, RecursionError):
            return MISSING
        return value if end == len(raw) else MISSING
    parsed = _parse_json_loose(raw)
    if isinstance(parsed, (dict, list)):
        return parsed
    return MISSING


def decode_metadata(raw: str | None) -> dict[str, Any]:
    """§2.1: the decoded metadata object, or ``{}`` (arrays have no usable keys)."""
    parsed = _decode_object(raw)
    return parsed if isinstance(parsed, dict) else {}


def decode_stored(value: str | None) -> tuple[bool, Any]:
    """§2.1 ``decodeStored`` for ``tool_input``/``tool_output``: (present?, value)."""
    if not isinstance(value, str) or value == "":
        return False, None
    if value[0] == "{" and value[-1] == "}":  # the usual shape: nothing surrounds the braces (as _decode_object)
        try:
            parsed, end = _SCAN_JSON(value, 0)
        except (ValueError, StopIteration, RecursionError):
            return True, value
        return True, (parsed if end == len(value) else value)
    if js_trim(value) == "":
        return True, value
    ok, parsed = parse_json_text(value)
    return True, (parsed if ok else value)


def _non_empty_str(value: Any) -> bool:
    return isinstance(value, str) and len(value) > 0


@dataclass(slots=True)
class PartMeta:
    """The fields of a part's metadata the reconstruction reads (``getPartMetadata``).

    Read-only; not ``frozen`` because one is built per stored part and a frozen
    dataclass's ``__init__`` costs four times as much.
    """

    decoded: Any  # dict / list / MISSING
    original_role: str | None
    raw_type: str | None
    raw: Any  # MISSING when absent
    reasoning_field: str | None
    reasoning_content: str | None
    reasoning_only: bool | None

    @property
    def obj(self) -> dict[str, Any]:
        return self.decoded if isinstance(self.decoded, dict) else {}


def _nes(rec: dict[str, Any], key: str) -> str | None:
    value = rec.get(key)
    return value if value.__class__ is str and value else None


def part_meta(part: PartRow) -> PartMeta:
    decoded = _decode_object(part.metadata)
    if isinstance(decoded, dict):
        rec = decoded
        original = rec.get("originalRole")  # (_nes, inline: this runs for every stored part)
        raw_type = rec.get("rawType")
        field = rec.get("topLevelReasoningField")
        if field is None:
            reasoning_field = reasoning_content = None
        else:
            reasoning_field = field if field.__class__ is str and field else None
            reasoning_content = _nes(rec, "topLevelReasoningContent")
        only = rec.get("topLevelReasoningOnly")
        return PartMeta(
            decoded,
            original if original.__class__ is str and original else None,
            raw_type if raw_type.__class__ is str and raw_type else None,
            rec.get("raw", MISSING),
            reasoning_field,
            reasoning_content,
            only if only is True or only is False else None,
        )
    return PartMeta(decoded, None, None, MISSING, None, None, None)


# --- §2.2 / §2.3 pick helpers ------------------------------------------------------------


def _metas(parts: Sequence[PartRow], metas: Sequence[PartMeta] | None) -> Sequence[PartMeta]:
    return metas if metas is not None else [part_meta(p) for p in parts]


def get_original_role(parts: Sequence[PartRow], metas: Sequence[PartMeta] | None = None) -> str | None:
    for meta in _metas(parts, metas):
        if meta.original_role is not None:
            return meta.original_role
    return None


def runtime_role(db_role: str, parts: Sequence[PartRow], metas: Sequence[PartMeta] | None = None) -> str:
    """§2.2: the role a stored message is emitted as (before the toolResult degrade)."""
    original = get_original_role(parts, metas)
    if original == "toolResult":
        return "toolResult"
    if original == "assistant":
        return "assistant"
    if original in ("user", "system"):
        return "user"
    if db_role == "tool":
        return "toolResult"
    if db_role == "assistant":
        return "assistant"
    return "user"


def pick_tool_call_id(parts: Sequence[PartRow], metas: Sequence[PartMeta] | None = None) -> str | None:
    for part, meta in zip(parts, _metas(parts, metas), strict=True):
        if _non_empty_str(part.tool_call_id):
            return part.tool_call_id
        rec = meta.obj
        if _non_empty_str(rec.get("toolCallId")):
            return rec["toolCallId"]
        raw = rec.get("raw")
        if not isinstance(raw, dict):
            continue
        for key in ("toolCallId", "tool_call_id"):
            if _non_empty_str(raw.get(key)):
                return raw[key]
    return None


def pick_tool_name(parts: Sequence[PartRow], metas: Sequence[PartMeta] | None = None) -> str | None:
    for part, meta in zip(parts, _metas(parts, metas), strict=True):
        if _non_empty_str(part.tool_name):
            return part.tool_name
        rec = meta.obj
        if _non_empty_str(rec.get("toolName")):
            return rec["toolName"]
        raw = rec.get("raw")
        if not isinstance(raw, dict):
            continue
        for key in ("name", "toolName"):
            if _non_empty_str(raw.get(key)):
                return raw[key]
    return None


def pick_tool_is_error(parts: Sequence[PartRow], metas: Sequence[PartMeta] | None = None) -> bool | None:
    for meta in _metas(parts, metas):
        value = meta.obj.get("isError")
        if isinstance(value, bool):
            return value
    return None


def pick_model_identity(parts: Sequence[PartRow], metas: Sequence[PartMeta] | None = None) -> dict[str, str] | None:
    """§2.3: the first complete {provider, api, model[, responseModel]} identity."""
    for meta in _metas(parts, metas):
        rec = meta.decoded
        if not isinstance(rec, dict) or "modelProvider" not in rec:
            continue
        # (the keys one by one, in this order, each a non-empty string: this runs for every assistant part)
        provider, api, model = rec.get("modelProvider"), rec.get("modelApi"), rec.get("modelId")
        if not (isinstance(provider, str) and provider and isinstance(api, str) and api
                and isinstance(model, str) and model):
            continue
        identity = {"provider": provider, "api": api, "model": model}
        response = rec.get("responseModelId")
        if isinstance(response, str) and response:
            identity["responseModel"] = response
        return identity
    return None


def pick_top_level_reasoning(parts: Sequence[PartRow], metas: Sequence[PartMeta] | None = None) -> dict[str, str]:
    for meta in _metas(parts, metas):
        if meta.reasoning_field == "reasoning_content" and meta.reasoning_content is not None:
            return {"reasoning_content": meta.reasoning_content}
    return {}


# --- §2.4 block reconstruction -----------------------------------------------------------


def _restore_openai_reasoning(raw: dict[str, Any]) -> dict[str, Any] | None:
    if raw.get("type") != "thinking":
        return None
    sig = raw.get("thinkingSignature")
    if not isinstance(sig, str) or not sig.startswith("{"):
        return None
    ok, parsed = parse_json_text(sig)
    if ok and isinstance(parsed, dict) and parsed.get("type") == "reasoning" and isinstance(parsed.get("id"), str):
        return parsed
    return None


def _backfill(part: PartRow, raw: dict[str, Any]) -> PartRow:
    """§2.4e on a copy: fill empty id / name / input columns from the raw block."""
    changes: dict[str, Any] = {}
    rid = raw.get("id") if _non_empty_str(raw.get("id")) else None
    if rid is None and _non_empty_str(raw.get("call_id")):
        rid = raw["call_id"]
    if rid is not None and not _non_empty_str(part.tool_call_id):
        changes["tool_call_id"] = rid
    if _non_empty_str(raw.get("name")) and not _non_empty_str(part.tool_name):
        changes["tool_name"] = raw["name"]
    if part.tool_input is None or part.tool_input == "":
        args = raw.get("arguments")
        if args is None:  # `??`: absent and null both fall through
            args = raw.get("input", MISSING)
        if args is not MISSING:
            changes["tool_input"] = args if isinstance(args, str) else js_stringify_message(args)
    return replace(part, **changes) if changes else part


def tool_call_block(part: PartRow, raw_type: str | None) -> dict[str, Any]:
    block_type = raw_type if raw_type in _CALL_RAW_TYPES else "toolCall"
    present, value = decode_stored(part.tool_input)
    block: dict[str, Any] = {"type": block_type}
    if block_type == "function_call":
        if _non_empty_str(part.tool_call_id):
            block["call_id"] = part.tool_call_id
        if _non_empty_str(part.tool_name):
            block["name"] = part.tool_name
        if present:
            block["arguments"] = value
        return block
    if _non_empty_str(part.tool_call_id):
        block["id"] = part.tool_call_id
    else:
        block["id"] = f"toolu_lcm_{part.part_id if part.part_id is not None else 'unknown'}"
    if _non_empty_str(part.tool_name):
        block["name"] = part.tool_name
    if present:
        block["arguments" if block_type in _ARGUMENTS_KEY_TYPES else "input"] = value
    return block


def tool_result_block(part: PartRow, raw_type: str | None, raw: dict[str, Any] | None) -> dict[str, Any]:
    if (
        raw is not None
        and isinstance(raw.get("text"), str)
        and "output" not in raw
        and "content" not in raw
        and (part.tool_output is None or part.tool_output == "")
        and (part.text_content is None or part.text_content == raw["text"])
    ):
        return {"type": "text", "text": raw["text"]}
    block_type = raw_type if raw_type in _RESULT_RAW_TYPES else "tool_result"
    block: dict[str, Any] = {"type": block_type}
    if _non_empty_str(part.tool_name):
        block["name"] = part.tool_name
    present, output = decode_stored(part.tool_output)
    if present:
        block["output"] = output
    elif isinstance(part.text_content, str):
        block["output"] = part.text_content
    elif raw is not None and "output" in raw:
        block["output"] = raw["output"]
    elif raw is not None and "content" in raw:
        block["content"] = raw["content"]
    else:
        block["output"] = ""
    if raw is not None and isinstance(raw.get("is_error"), bool):
        block["is_error"] = raw["is_error"]
    elif raw is not None and isinstance(raw.get("isError"), bool):
        block["isError"] = raw["isError"]
    if _non_empty_str(part.tool_call_id):
        block["call_id" if block_type == "function_call_output" else "tool_use_id"] = part.tool_call_id
    return block


def _block_from_part(part: PartRow, meta: PartMeta, has_identity: bool) -> Any | None:
    raw = meta.raw
    if isinstance(raw, (dict, list)):
        if isinstance(raw, dict):
            raw_block_type = raw.get("type")
            if raw_block_type == "thinking":
                restored = _restore_openai_reasoning(raw)
                if restored is not None:
                    return restored
            rt = raw_block_type if isinstance(raw_block_type, str) else meta.raw_type
            if rt == "thinking" and isinstance(raw.get("thinkingSignature"), str):
                if raw["thinkingSignature"] == "reasoning_content":
                    return raw if has_identity else None
                if has_identity:
                    return raw
                return {k: v for k, v in raw.items() if k != "thinkingSignature"}
        else:
            rt = meta.raw_type
        if rt not in TOOL_BLOCK_TYPES:
            return raw
        if isinstance(raw, dict):
            part = _backfill(part, raw)
    raw_obj = raw if isinstance(raw, dict) else None
    if part.part_type == "reasoning":
        kind = "thinking" if meta.raw_type == "thinking" else "reasoning"
        if _non_empty_str(part.text_content):
            return (
                {"type": kind, "thinking": part.text_content}
                if kind == "thinking"
                else {
                    "type": kind,
                    "text": part.text_content,
                }
            )
        return {"type": kind}
    if part.part_type == "tool":
        if meta.original_role == "toolResult" or meta.raw_type == "function_call_output":
            return tool_result_block(part, meta.raw_type, raw_obj)
        return tool_call_block(part, meta.raw_type)
    if meta.raw_type in _CALL_RAW_TYPES:
        return tool_call_block(part, meta.raw_type)
    if meta.raw_type in _RESULT_RAW_TYPES:
        return tool_result_block(part, meta.raw_type, raw_obj)
    if part.part_type == "text":
        return {"type": "text", "text": part.text_content if part.text_content is not None else ""}
    if _non_empty_str(part.text_content):
        return {"type": "text", "text": part.text_content}
    if meta.decoded is not MISSING:
        return {"type": "text", "text": js_stringify_message(meta.decoded)}
    return {"type": "text", "text": ""}


def block_from_part(part: PartRow, has_identity: bool) -> Any | None:
    """§2.4 ``blockFromPart``: the content block of one part, or None ("nothing")."""
    return _block_from_part(part, part_meta(part), has_identity)


# --- §2.5 content assembly --------------------------------------------------------------


def fallback_content(role: str, fallback: str) -> str | list[Any]:
    """§2.5 step 2: the content of a message without usable parts."""
    if role == "assistant":
        return [{"type": "text", "text": fallback}] if fallback else []
    if role == "toolResult":
        return [{"type": "text", "text": fallback}]
    return fallback


def _finished_content(blocks: list[Any], usable: bool, role: str, fallback: str) -> str | list[Any]:
    """§2.5: the content of the blocks built from a message's parts (the fallback where no part was usable or
    none gave a block; a user message's lone text block as its text)."""
    if not usable or not blocks:
        return fallback_content(role, fallback)
    if role == "user" and len(blocks) == 1:
        first = blocks[0]
        if isinstance(first, dict) and first.get("type") == "text" and isinstance(first.get("text"), str):
            return first["text"]
    return blocks


def _content_from_parts(
    parts: Sequence[PartRow],
    metas: Sequence[PartMeta],
    role: str,
    fallback: str,
    filter_reasoning_only: bool,
    identity: Any = MISSING,  # the model identity when the caller has it already
) -> str | list[Any]:
    if identity is MISSING:
        identity = pick_model_identity(parts, metas) if role == "assistant" else None
    has_identity = role == "assistant" and identity is not None
    usable = False
    blocks: list[Any] = []
    for part, meta in zip(parts, metas, strict=True):
        if filter_reasoning_only and meta.reasoning_only is True:
            continue
        usable = True
        block = _block_from_part(part, meta, has_identity)
        if block is not None:
            blocks.append(block)
    return _finished_content(blocks, usable, role, fallback)


def content_from_parts(
    parts: Sequence[PartRow],
    role: str,
    fallback: str,
    *,
    filter_reasoning_only: bool = True,
) -> str | list[Any]:
    """§2.5 ``contentFromParts`` (``filter_reasoning_only=False`` is the A.4 variant)."""
    return _content_from_parts(parts, [part_meta(p) for p in parts], role, fallback, filter_reasoning_only)


# --- §2.6 a whole message ----------------------------------------------------------------


def normalize_sender_metadata(value: Any) -> dict[str, str] | None:
    """§1.1: keep senderId / senderName / senderUsername that are non-blank strings."""
    if not isinstance(value, dict):
        return None
    out = {k: value[k] for k in SENDER_KEYS if isinstance(value.get(k), str) and js_trim(value[k]) != ""}
    return out or None


def parse_sender_metadata(raw: str | None) -> dict[str, str] | None:
    """``openclaw_sender_metadata`` column → normalized object or None."""
    if not isinstance(raw, str) or raw == "":
        return None
    ok, parsed = parse_json_text(raw)
    return normalize_sender_metadata(parsed) if ok else None


def assistant_usage(tokens: int) -> dict[str, Any]:
    return {
        "input": 0,
        "output": tokens,
        "cacheRead": 0,
        "cacheWrite": 0,
        "totalTokens": tokens,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
    }


@dataclass(slots=True)
class RenderedMessage:
    """A message item after §2.6: the agent message plus the facts the assembler needs (read-only)."""

    message: dict[str, Any]
    tokens: int
    text: str  # contentText: the string used for relevance and duplicate detection
    role: str  # emitted role
    tool_call_id: str | None  # for toolResult
    tool_name: str | None  # for toolResult ("unknown" when none was stored)
    degraded: bool  # a toolResult without call id, emitted as assistant


def is_skipped_message(row: MessageRow) -> bool:
    """§2.6 step 2: an assistant row with blank content and no parts never resolves."""
    content = row.content if isinstance(row.content, str) else ""
    return row.role == "assistant" and js_trim(content) == "" and not row.parts


def render_message(row: MessageRow, sender_metadata: bool = True) -> RenderedMessage | None:
    """§2.6 ``resolveMessageItem`` for a loaded row (None when it is skipped).

    ``sender_metadata``: the 0.15 line adds the sender as ``__openclaw`` (and counts it in the
    tokens); the 1.0 line never reads the column (delta D3).  (This runs for every stored message
    of a session on a cold open: the steps of ``runtime_role`` and ``_content_from_parts`` are
    inlined for the usual parts, and the rest goes through them.)
    """
    parts = row.parts
    fallback = row.content if isinstance(row.content, str) else ""
    if not parts and row.role == "assistant" and js_trim(fallback) == "":
        return None  # (is_skipped_message)
    metas = [part_meta(p) for p in parts]
    original = None
    for meta in metas:
        if meta.original_role is not None:
            original = meta.original_role
            break
    role0 = _ROLE_OF_ORIGINAL.get(original) if original is not None else None
    if role0 is None:
        role0 = _ROLE_OF_DB_ROLE.get(row.role, "user")
    tool_call_id = tool_name = None
    is_error: bool | None = None
    degraded = False
    role = role0
    if role0 == "toolResult":
        tool_call_id = pick_tool_call_id(parts, metas)
        tool_name = pick_tool_name(parts, metas) or "unknown"
        is_error = pick_tool_is_error(parts, metas)
        if tool_call_id is None:
            degraded, role = True, "assistant"
    reasoning: dict[str, str] = {}
    identity: dict[str, str] | None = None
    if role == "assistant":
        reasoning = pick_top_level_reasoning(parts, metas)
        identity = pick_model_identity(parts, metas)
    content = _message_content(parts, metas, role, fallback, identity)
    content_text = content if isinstance(content, str) else js_stringify_message(content)
    sender = parse_sender_metadata(row.sender_metadata) if role == "user" and sender_metadata else None
    if reasoning or sender is not None:
        sender_text = js_stringify_message(sender) if sender is not None else ""
        pieces = [content_text, "\n".join(reasoning.values()), sender_text]
        tokens = estimate_tokens("\n".join(p for p in pieces if p))
    else:  # (the usual message: its content text alone)
        tokens = estimate_tokens(content_text)
    message: dict[str, Any]
    if role == "assistant":
        message = {"role": "assistant", "content": content}
        if identity:
            message.update(identity)
        if reasoning:
            message.update(reasoning)
        message["usage"] = assistant_usage(tokens)
    else:
        message = {"role": role, "content": content}
        if sender is not None:
            message["__openclaw"] = sender
        if tool_call_id:
            message["toolCallId"] = tool_call_id
        if tool_name and role == "toolResult":
            message["toolName"] = tool_name
        if role == "toolResult" and is_error is not None:
            message["isError"] = is_error
    if role == "toolResult":
        return RenderedMessage(message, tokens, content_text, role, tool_call_id, tool_name, degraded)
    return RenderedMessage(message, tokens, content_text, role, None, None, degraded)


# §2.2: the emitted role for a part's original role, then (when no part has one) for the DB role
_ROLE_OF_ORIGINAL = {"toolResult": "toolResult", "assistant": "assistant", "user": "user", "system": "user"}
_ROLE_OF_DB_ROLE = {"tool": "toolResult", "assistant": "assistant"}


def _message_content(
    parts: Sequence[PartRow], metas: Sequence[PartMeta], role: str, fallback: str, identity: dict[str, str] | None
) -> str | list[Any]:
    """``_content_from_parts(parts, metas, role, fallback, True, identity)``, with a part whose raw block is kept
    as it is (a dict of a string ``type`` other than thinking and the tool types) taken inline."""
    has_identity = role == "assistant" and identity is not None
    usable = False
    blocks: list[Any] = []
    for part, meta in zip(parts, metas, strict=True):
        if meta.reasoning_only is True:
            continue
        usable = True
        raw = meta.raw
        if raw.__class__ is dict:
            kind = raw.get("type")
            if kind.__class__ is str and kind != "thinking" and kind not in TOOL_BLOCK_TYPES:
                blocks.append(raw)  # (_block_from_part returns such a raw block itself)
                continue
        block = _block_from_part(part, meta, has_identity)
        if block is not None:
            blocks.append(block)
    return _finished_content(blocks, usable, role, fallback)


# --- §3 summary XML ------------------------------------------------------------------------


def escape_attr(value: str) -> str:
    return value.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;").replace(">", "&gt;")


def escape_text(value: str) -> str:
    return value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")




def descendant_count(value: Any) -> int:
    """§1.1: floor of a finite number ≥ 0, else 0."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return 0
    if isinstance(value, float) and not math.isfinite(value):
        return 0
    return math.floor(value) if value >= 0 else 0


def render_summary(summary: SummaryRow, timezone: str | None) -> str:
    """§3: the ``<summary …>`` XML the model sees for a summary item.

    Raises JSRangeError when a stored date is not NULL but JavaScript cannot parse it."""
    attrs = [
        f'id="{escape_attr(summary.summary_id)}"',
        f'kind="{escape_attr(js_string(summary.kind))}"',
        f'depth="{js_string(summary.depth)}"',
        f'descendant_count="{descendant_count(summary.descendant_count)}"',
        'trust="untrusted"',
    ]
    # A NULL column omits its attribute; any other value becomes a JS Date, and an
    # unparseable one makes the whole render raise (JSRangeError), as in the reference.
    if summary.earliest_at is not None:
        attrs.append(f'earliest_at="{format_for_attribute(parse_utc_timestamp(summary.earliest_at), timezone)}"')
    if summary.latest_at is not None:
        attrs.append(f'latest_at="{format_for_attribute(parse_utc_timestamp(summary.latest_at), timezone)}"')
    lines = [f"<summary {' '.join(attrs)}>"]
    if summary.kind == "condensed" and summary.parent_ids:
        lines.append("  <parents>")
        lines.extend(f'    <summary_ref id="{escape_attr(pid)}" />' for pid in summary.parent_ids)
        lines.append("  </parents>")
    content = summary.content if isinstance(summary.content, str) else js_string(summary.content)
    lines.extend(["  <content>", escape_text(content), "  </content>", "</summary>"])
    return "\n".join(lines)


def render_focus_brief(brief: FocusBriefRow, timezone: str | None) -> str:
    """§10.1: the ``<focus_brief …>`` XML (content is not escaped).

    A NULL ``created_at`` is the epoch; an unparseable date raises JSRangeError."""
    created = 0.0 if brief.created_at is None else parse_utc_timestamp(brief.created_at)
    attrs = [
        f'id="{escape_attr(brief.brief_id)}"',
        f'prompt="{escape_attr(js_string(brief.prompt))}"',
        f'token_count="{js_string(brief.token_count)}"',
        f'target_tokens="{js_string(brief.target_tokens)}"',
        f'created_at="{format_for_attribute(created, timezone)}"',
    ]
    if brief.covered_latest_at is not None:
        covered_at = parse_utc_timestamp(brief.covered_latest_at)
        attrs.append(f'covered_latest_at="{format_for_attribute(covered_at, timezone)}"')
    if brief.covered_message_seq is not None:
        attrs.append(f'covered_message_seq="{js_string(brief.covered_message_seq)}"')
    lines = [f"<focus_brief {' '.join(attrs)}>", "  <content>", brief.content, "  </content>", "</focus_brief>"]
    return "\n".join(lines)
