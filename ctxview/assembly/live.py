"""Stored form, part rows and coverage signatures of live messages (spec Appendix A).

The engine compares the host's live messages with the assembled context as if
both had been written to the database: it flattens content the way ingest
does (A.1, A.2), rebuilds the part rows ingest would store (A.3), and calls two
messages "the same" when their signatures (A.5) are equal strings.  The same
functions serve §9.4 (system/tool projection of live inputs), §9.7 (tool-pair
ids) and §9.8 (role classes).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ctxview.assembly.tokens import estimate_tokens
from ctxview.jsjson import JSNumber, is_blank, js_string, js_stringify, js_trim, try_js_parse
from ctxview.model import PartRow

# --- block type vocabularies ------------------------------------------------------

TOOL_RAW_TYPES = frozenset(
    {
        "tool_use",
        "toolUse",
        "tool-use",
        "toolCall",
        "tool_call",
        "functionCall",
        "function_call",
        "function_call_output",
        "tool_result",
        "toolResult",
        "tool_use_result",
    }
)
REASONING_TYPES = frozenset({"thinking", "redacted_thinking", "reasoning"})
# §9.7 pairing view: call blocks on assistants, result blocks on tool messages.
PAIRING_CALL_TYPES = frozenset(
    {"tool_use", "toolUse", "tool-use", "toolCall", "tool_call", "functionCall", "function_call"}
)
PAIRING_RESULT_TYPES = frozenset({"function_call_output", "tool_result", "toolResult", "tool_use_result"})
_PAIRING_ID_KEYS = ("toolCallId", "tool_call_id", "toolUseId", "tool_use_id", "call_id", "id")
IDENTITY_META_KEYS = ("modelProvider", "modelApi", "modelId", "responseModelId")

_PART_TYPES: dict[str, str] = {
    "text": "text",
    "thinking": "reasoning",
    "redacted_thinking": "reasoning",
    "reasoning": "reasoning",
    "tool_use": "tool",
    "toolUse": "tool",
    "tool-use": "tool",
    "toolCall": "tool",
    "functionCall": "tool",
    "function_call": "tool",
    "function_call_output": "tool",
    "tool_result": "tool",
    "toolResult": "tool",
    "tool": "tool",
    "patch": "patch",
    "file": "file",
    "image": "file",
    "subtask": "subtask",
    "compaction": "compaction",
    "step_start": "step_start",
    "step-start": "step_start",
    "step_finish": "step_finish",
    "step-finish": "step_finish",
    "snapshot": "snapshot",
    "retry": "retry",
}

_STRUCTURED_TEXT_KEYS = ("text", "transcript", "transcription", "message", "summary")
_STRUCTURED_LIST_KEYS = ("segments", "utterances", "paragraphs", "alternatives", "words", "items", "results")
_STRUCTURED_NESTED_KEYS = ("content", "output", "result", "payload", "data", "value")
_MAX_STRUCTURED_DEPTH = 6


# --- small JS helpers ---------------------------------------------------------------


def _is_number(value: object) -> bool:
    """``typeof value === "number"`` for values that came from JSON."""
    return isinstance(value, (int, float, JSNumber)) and not isinstance(value, bool)




def _js_truthy(value: Any) -> bool:
    if value is None or value is False:
        return False
    if isinstance(value, str):
        return value != ""
    if isinstance(value, JSNumber):
        return value.value != 0 and not math.isnan(value.value)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value != 0 and not (isinstance(value, float) and math.isnan(value))
    return True


def _first_string(obj: dict[str, Any], keys: Sequence[str]) -> str | None:
    for key in keys:
        value = obj.get(key)
        if isinstance(value, str):
            return value
    return None


# --- A.2 flatten / structuredText ---------------------------------------------------


def structured_text(value: Any, depth: int = 0) -> str | None:
    """The readable text inside a content value, or None (A.2 ``structuredText``)."""
    if value is None or depth > _MAX_STRUCTURED_DEPTH:
        return None
    if isinstance(value, str):
        trimmed = js_trim(value)
        if (trimmed.startswith("{") and trimmed.endswith("}")) or (trimmed.startswith("[") and trimmed.endswith("]")):
            ok, parsed = try_js_parse(trimmed)
            if ok:
                inner = structured_text(parsed, depth + 1)
                if isinstance(inner, str) and inner != "":
                    return inner
        return value
    if isinstance(value, list):
        texts = _element_texts(value, depth + 1)
        return "\n".join(texts) if texts else None
    if not isinstance(value, dict):
        return None
    block_type = value.get("type")
    if isinstance(block_type, str) and block_type in REASONING_TYPES:
        return None
    if isinstance(block_type, str) and block_type in TOOL_RAW_TYPES:
        if value.get("toolOutputExternalized") is True:
            found: str | None = None
            for key in ("output", "content", "result"):
                found = structured_text(value.get(key), depth + 1)
                if found is not None:
                    break
            if found is not None and not is_blank(found):
                return found
        return None
    for key in _STRUCTURED_TEXT_KEYS:
        text = value.get(key)
        if isinstance(text, str) and not is_blank(text):
            return text
    for key in _STRUCTURED_LIST_KEYS:
        items = value.get(key)
        if isinstance(items, list):
            texts = _element_texts(items, depth + 1)
            if texts:
                return "\n".join(texts)
    for key in _STRUCTURED_NESTED_KEYS:
        if key in value:
            nested = structured_text(value[key], depth + 1)
            if nested is not None and not is_blank(nested):
                return nested
    return None


def _element_texts(items: list[Any], depth: int) -> list[str]:
    texts: list[str] = []
    for item in items:
        text = structured_text(item, depth)
        if isinstance(text, str) and not is_blank(text):
            texts.append(text)
    return texts


def flatten(content: Any) -> str:
    """The plain-text fallback ingest stores in ``messages.content`` (A.2)."""
    text = structured_text(content)
    if isinstance(text, str):
        return text
    if content is None:
        return ""
    if isinstance(content, list):
        if not content:
            return ""
        if all(_is_tool_or_reasoning_block(e) for e in content):
            return ""
    return js_stringify(content)


def _is_tool_or_reasoning_block(element: Any) -> bool:
    if not isinstance(element, dict):
        return False
    block_type = element.get("type")
    return isinstance(block_type, str) and (block_type in TOOL_RAW_TYPES or block_type in REASONING_TYPES)


# --- A.1 stored form and §9.8 role class ---------------------------------------------


@dataclass(frozen=True, slots=True)
class StoredForm:
    """What ingest would write to ``messages`` for one message."""

    role: str  # system | user | assistant | tool
    content: str
    token_count: int


def stored_role(message: Any) -> str:
    role = message.get("role") if isinstance(message, dict) else None
    if role in ("tool", "toolResult"):
        return "tool"
    if role in ("system", "user", "assistant"):
        return role
    return "assistant"


def stored_content(message: Any) -> str:
    if not isinstance(message, dict):
        return ""
    if "content" in message:
        return flatten(message["content"])
    if "output" in message:
        command = message.get("command")
        command_text = "" if command is None else js_string(command)
        return "$ " + command_text + "\n" + js_string(message["output"])
    return ""


def stored_form(message: Any) -> StoredForm:
    """A.1: role, flattened content and the A.4 token count of a message."""
    content = stored_content(message)
    return StoredForm(stored_role(message), content, stored_token_count(message, content))


def role_class(message: Any) -> str:
    """§9.8 roleClass: toolResult / user / assistant."""
    role = message.get("role") if isinstance(message, dict) else None
    if role in ("tool", "toolResult"):
        return "toolResult"
    if role in ("user", "system"):
        return "user"
    return "assistant"


# --- A.3 buildParts -------------------------------------------------------------------


def part_type_for(raw_type: str) -> str:
    return _PART_TYPES.get(raw_type, "agent")


@dataclass(frozen=True, slots=True)
class _TopLevel:
    role: str
    top_id: str | None
    top_name: str | None
    top_err: bool | None
    top_reason: str | None
    ident: dict[str, str] | None


def _top_level(message: dict[str, Any]) -> _TopLevel:
    role = message.get("role")
    if not isinstance(role, str):
        role = "unknown"
    top_id = _first_string(message, _PAIRING_ID_KEYS)
    top_name = _first_string(message, ("toolName", "tool_name"))
    top_err: bool | None = None
    for key in ("isError", "is_error"):
        value = message.get(key)
        if isinstance(value, bool):
            top_err = value
            break
    top_reason: str | None = None
    ident: dict[str, str] | None = None
    if role == "assistant":
        reasoning = message.get("reasoning_content")
        if isinstance(reasoning, str) and not is_blank(reasoning):
            top_reason = reasoning
        provider, api, model = message.get("provider"), message.get("api"), message.get("model")
        if isinstance(provider, str) and isinstance(api, str) and isinstance(model, str):
            ident = {"modelProvider": provider, "modelApi": api, "modelId": model}
            response_model = message.get("responseModel")
            if isinstance(response_model, str):
                ident["responseModelId"] = response_model
    return _TopLevel(role, top_id, top_name, top_err, top_reason, ident)


def _put(meta: dict[str, Any], key: str, value: Any) -> None:
    """Set a metadata key unless the value is JS ``undefined`` (here: None means absent)."""
    if value is not None:
        meta[key] = value


def _reasoning_keys(top: _TopLevel, *, only: bool = False) -> dict[str, Any]:
    if top.top_reason is None:
        return {}
    keys: dict[str, Any] = {
        "topLevelReasoningField": "reasoning_content",
        "topLevelReasoningContent": top.top_reason,
    }
    if only:
        keys["topLevelReasoningOnly"] = True
    return keys


def _reasoning_summary_text(summary: Any) -> str | None:
    collected: list[str] = []

    def visit(value: Any) -> None:
        if isinstance(value, str):
            piece = js_trim(value)
            if piece and piece not in collected:
                collected.append(piece)
        elif isinstance(value, list):
            for item in value:
                visit(item)
        elif isinstance(value, dict):
            if "text" in value:
                visit(value["text"])
            if "value" in value:
                visit(value["value"])

    visit(summary)
    return "\n".join(collected) if collected else None


def _json_of(value: Any) -> str | None:
    return js_stringify(value)


def _part(ordinal: int, part_type: str, meta: dict[str, Any], **columns: Any) -> PartRow:
    return PartRow(
        part_id=f"estimate-part-{ordinal}",
        part_type=part_type,
        ordinal=ordinal,
        metadata=js_stringify(meta),
        **columns,
    )


def build_parts(message: dict[str, Any], fallback: str) -> list[PartRow]:
    """A.3: the ``message_parts`` rows ingest would store for a live message."""
    top = _top_level(message)
    origin: dict[str, Any] = {"originalRole": top.role}
    if "content" not in message:
        if "command" in message and "output" in message:
            meta = {**origin, "source": "bash-exec"}
            if isinstance(message["command"], str):
                meta["command"] = message["command"]
            return [_part(0, "text", meta, text_content=fallback)]
        meta = {**origin, "source": "unknown-message-shape", "raw": message}
        return [_part(0, "agent", meta, text_content=fallback or None)]
    content = message["content"]
    if isinstance(content, str):
        meta = dict(origin)
        if top.ident:
            meta.update(top.ident)
        _put(meta, "toolCallId", top.top_id)
        _put(meta, "toolName", top.top_name)
        _put(meta, "isError", top.top_err)
        meta.update(_reasoning_keys(top))
        meta.update(_externalization_fields(message))
        return [_part(0, "text", meta, text_content=content)]
    if not isinstance(content, list):
        meta = {**origin, "source": "non-array-content", "raw": content, **_reasoning_keys(top)}
        return [_part(0, "agent", meta, text_content=fallback or None)]
    parts: list[PartRow] = []
    if not content and top.top_reason is not None:
        meta = dict(origin)
        if top.ident:
            meta.update(top.ident)
        meta["rawType"] = "reasoning_content"
        meta.update(_reasoning_keys(top, only=True))
        parts.append(_part(0, "reasoning", meta, text_content=None))
    for index, element in enumerate(content):
        parts.append(_element_part(index, element, top, origin))
    return parts


def _externalization_fields(message: dict[str, Any]) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    if message.get("rawPayloadExternalized") is True:
        fields["rawPayloadExternalized"] = True
    file_id = message.get("externalizedFileId")
    if isinstance(file_id, str):
        fields["externalizedFileId"] = file_id
    file_ids = message.get("externalizedFileIds")
    if isinstance(file_ids, list):
        fields["externalizedFileIds"] = [f for f in file_ids if isinstance(f, str)]
    if message.get("fileBlocksExternalized") is True:
        fields["fileBlocksExternalized"] = True
    size = message.get("originalByteSize")
    if _is_number(size):
        fields["originalByteSize"] = size
    reason = message.get("externalizationReason")
    if isinstance(reason, str):
        fields["externalizationReason"] = reason
    return fields


def _element_part(index: int, element: Any, top: _TopLevel, origin: dict[str, Any]) -> PartRow:
    rec: Any = element
    text: str | None = None
    if isinstance(element, dict):
        etype = element.get("type")
        btype = etype if isinstance(etype, str) else "agent"
        if isinstance(element.get("text"), str):
            text = element["text"]
        elif isinstance(element.get("thinking"), str):
            text = element["thinking"]
        elif etype in ("reasoning", "thinking"):
            text = _reasoning_summary_text(element.get("summary"))
    else:
        btype = "agent"
    rec_dict = rec if isinstance(rec, dict) else {}
    raw_type_field = rec_dict.get("rawType")
    rt = raw_type_field if isinstance(raw_type_field, str) else btype
    ptype = part_type_for(rt)
    if _js_truthy(rec) and rt != btype:
        raw_block: Any = {**rec, "type": rt} if isinstance(rec, dict) else rec
    else:
        raw_block = rec
    id_keys = ["toolCallId", "tool_call_id", "toolUseId", "tool_use_id", "call_id"]
    if ptype == "tool":
        id_keys.append("id")
    tool_call_id = _first_string(rec_dict, id_keys)
    if tool_call_id is None:
        tool_call_id = top.top_id
    tool_name = _first_string(rec_dict, ("name", "toolName", "tool_name"))
    if tool_name is None:
        tool_name = top.top_name
    tool_input: str | None = None
    if "input" in rec_dict:
        tool_input = _json_of(rec_dict["input"])
    elif "arguments" in rec_dict:
        tool_input = _json_of(rec_dict["arguments"])
    elif "toolInput" in rec_dict:
        tool_input = _json_of(rec_dict["toolInput"])
    elif isinstance(rec_dict.get("tool_input"), str):
        tool_input = rec_dict["tool_input"]
    tool_output: str | None = None
    if "output" in rec_dict:
        tool_output = _json_of(rec_dict["output"])
    elif "toolOutput" in rec_dict:
        tool_output = _json_of(rec_dict["toolOutput"])
    elif isinstance(rec_dict.get("tool_output"), str):
        tool_output = rec_dict["tool_output"]
    meta = dict(origin)
    if index == 0 and top.ident:
        meta.update(top.ident)
    _put(meta, "toolCallId", top.top_id)
    _put(meta, "toolName", top.top_name)
    _put(meta, "isError", top.top_err)
    if index == 0:
        meta.update(_reasoning_keys(top))
    for key, check in (
        ("externalizedFileId", lambda v: isinstance(v, str)),
        ("originalByteSize", _is_number),
        ("imageExternalized", lambda v: isinstance(v, bool)),
        ("toolOutputExternalized", lambda v: isinstance(v, bool)),
        ("externalizationReason", lambda v: isinstance(v, str)),
    ):
        value = rec_dict.get(key)
        if check(value):
            meta[key] = value
    meta["rawType"] = rt
    meta["raw"] = raw_block
    return PartRow(
        part_id=f"estimate-part-{index}",
        part_type=ptype,
        ordinal=index,
        text_content=text,
        tool_call_id=tool_call_id,
        tool_name=tool_name,
        tool_input=tool_input,
        tool_output=tool_output,
        metadata=js_stringify(meta),
    )


# --- A.4 token count of the stored form ----------------------------------------------


def stored_token_count(message: Any, content: str | None = None) -> int:
    """A.4 ``tokenCount``: a statistic (the volatile step's ``evictedTokens``)."""
    from ctxview.assembly.render import block_from_part

    if content is None:
        content = stored_content(message)
    if not isinstance(message, dict):
        return estimate_tokens(content)
    top = _top_level(message)
    if "content" not in message:
        base = estimate_tokens(content)
    else:
        parts = build_parts(message, content)
        rc = role_class(message)
        has_identity = top.ident is not None
        blocks = [b for b in (block_from_part(p, has_identity) for p in parts) if b is not None]
        norm: Any
        if not blocks:
            norm = _fallback_shape(rc, content)
        elif rc == "user" and len(blocks) == 1 and _is_text_block(blocks[0]):
            norm = blocks[0]["text"]
        else:
            norm = blocks
        if isinstance(norm, str):
            base = estimate_tokens(norm)
        elif isinstance(norm, list):
            if not norm:
                base = estimate_tokens(content)
            elif rc == "user" and len(norm) == 1 and _is_text_block(norm[0]):
                base = estimate_tokens(norm[0]["text"])
            else:
                base = estimate_tokens(js_stringify(norm))
        elif rc == "user" and _is_text_block(norm):
            base = estimate_tokens(norm["text"])
        else:
            base = estimate_tokens(js_stringify([norm]))
    return base + (estimate_tokens(top.top_reason) if top.top_reason else 0)


def _fallback_shape(role: str, fallback: str) -> Any:
    """§2.5 step 2 shapes by role class."""
    if role == "assistant":
        return [{"type": "text", "text": fallback}] if fallback else []
    if role == "toolResult":
        return [{"type": "text", "text": fallback}]
    return fallback


def _is_text_block(block: Any) -> bool:
    return isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str)


# --- §9.4 normalization -----------------------------------------------------------------


def normalize_live_message(message: Any) -> Any:
    """§9.4: project a live ``system`` message to ``user`` and a ``tool`` message to ``toolResult``.

    Other roles are returned unchanged (the same object).
    """
    from ctxview.assembly.render import content_from_parts

    if not isinstance(message, dict):
        return message
    role = stored_role(message)
    if role == "system":
        runtime_role = "user"
    elif role == "tool":
        runtime_role = "toolResult"
    else:
        return message
    content = stored_content(message)
    parts = build_parts(message, content) if "content" in message else []
    projected = dict(message)
    projected["role"] = runtime_role
    projected["content"] = content_from_parts(parts, runtime_role, content)
    return projected


# --- §9.7 pairing ids --------------------------------------------------------------------


def pairing_id(obj: dict[str, Any]) -> str | None:
    """First string among the pairing keys; an empty string means "no id"."""
    value = _first_string(obj, _PAIRING_ID_KEYS)
    return value if value else None


def assistant_pairing_ids(message: Any) -> list[str]:
    """Call ids an assistant message issues (pairing view of §9.7)."""
    if not isinstance(message, dict) or message.get("role") != "assistant":
        return []
    content = message.get("content")
    if not isinstance(content, list):
        return []
    ids: list[str] = []
    for block in content:
        if isinstance(block, dict) and block.get("type") in PAIRING_CALL_TYPES:
            call_id = pairing_id(block)
            if call_id is not None:
                ids.append(call_id)
    return ids


# the pairing view of a message that issues and answers no call (most of them): one shared value, read only
NO_PAIRING: tuple[list[str], str | None] = ([], None)


def sparse_pairings(pairings: Sequence[tuple[list[str], str | None]]) -> dict[int, tuple[list[str], str | None]]:
    """The pairing views that issue or answer a call, by index (most do neither: what is sent or kept is these)."""
    return {index: pairing for index, pairing in enumerate(pairings) if pairing != NO_PAIRING}


def dense_pairings(some: dict[int, Any], count: int) -> list[Any]:
    """``count`` pairing views from ``sparse_pairings``' answer (the indexes checked by the caller): the others
    are the one shared ``NO_PAIRING`` (pairing ids are read, never changed)."""
    pairings: list[Any] = [NO_PAIRING] * count
    for index, pairing in some.items():
        pairings[index] = pairing
    return pairings


def pairing_view(message: Any) -> tuple[list[str], str | None]:
    """(``assistant_pairing_ids``, ``result_pairing_id``) of a message from one look at its role: each is empty for
    every other role (the lists may be shared: read only)."""
    if not isinstance(message, dict):
        return NO_PAIRING
    role = message.get("role")
    if role == "assistant":
        calls = assistant_pairing_ids(message)
        return (calls, None) if calls else NO_PAIRING
    if role == "tool" or role == "toolResult":
        answered = result_pairing_id(message)
        return (NO_PAIRING[0], answered) if answered is not None else NO_PAIRING
    return NO_PAIRING


def result_pairing_id(message: Any) -> str | None:
    """The call id a tool/toolResult message answers (pairing view of §9.7)."""
    if not isinstance(message, dict) or message.get("role") not in ("tool", "toolResult"):
        return None
    own = pairing_id(message)
    if own is not None:
        return own
    content = message.get("content")
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and block.get("type") in PAIRING_RESULT_TYPES:
                block_id = pairing_id(block)
                if block_id is not None:
                    return block_id
    return None


# --- A.5 live-coverage signature -----------------------------------------------------------


def _is_single_text_part(parts: Sequence[PartRow], content: str) -> bool:
    if len(parts) != 1:
        return False
    part = parts[0]
    return (
        part.part_type == "text"
        and (part.text_content if part.text_content is not None else "") == content
        and part.tool_call_id is None
        and part.tool_name is None
        and part.tool_input is None
        and part.tool_output is None
    )


def _is_reasoning_content_sentinel(part: PartRow) -> bool:
    if part.part_type != "reasoning":
        return False
    meta = _metadata_object(part.metadata)
    if meta is None:
        return False
    raw = meta.get("raw")
    return (
        isinstance(raw, dict) and raw.get("type") == "thinking" and raw.get("thinkingSignature") == "reasoning_content"
    )


def _metadata_object(text: str | None) -> dict[str, Any] | None:
    if not isinstance(text, str):
        return None
    ok, value = try_js_parse(text)
    return value if ok and isinstance(value, dict) else None


def _norm_tool_name(name: str | None) -> str | None:
    if name is None or name == "" or name == "unknown":
        return None
    return name


def _is_openai_reasoning_payload(signature: str) -> bool:
    if not signature.startswith("{"):
        return False
    ok, value = try_js_parse(signature)
    return ok and isinstance(value, dict) and value.get("type") == "reasoning" and isinstance(value.get("id"), str)


def canonical_metadata(text: str | None) -> str | None:
    """A.5 (3): metadata with identity keys and replayable thinking signatures removed."""
    meta = _metadata_object(text)
    if meta is None:
        return text
    result = text
    if any(key in meta for key in IDENTITY_META_KEYS):
        meta = {k: v for k, v in meta.items() if k not in IDENTITY_META_KEYS}
        result = js_stringify(meta)
    raw = meta.get("raw")
    if isinstance(raw, dict) and raw.get("type") == "thinking":
        signature = raw.get("thinkingSignature")
        if isinstance(signature, str) and not _is_openai_reasoning_payload(signature):
            thinking = raw.get("thinking")
            if signature == "reasoning_content" or (isinstance(thinking, str) and thinking != ""):
                meta = dict(meta)
                meta["raw"] = {k: v for k, v in raw.items() if k != "thinkingSignature"}
                result = js_stringify(meta)
    return result


def live_signature(message: Any) -> str:
    """A.5 ``sig(m)``: equal strings mean "the same message" for coverage and anchors."""
    form = stored_form_without_tokens(message)
    role, content = form
    parts = build_parts(message, content) if isinstance(message, dict) else []
    if role in ("user", "system", "assistant") and content != "":
        canonical = _is_single_text_part(parts, content)
        if not canonical and role == "assistant":
            remaining = [p for p in parts if not _is_reasoning_content_sentinel(p)]
            canonical = len(remaining) < len(parts) and _is_single_text_part(remaining, content)
        if canonical:
            return js_stringify({"kind": "canonical-text", "role": role, "content": content})
    if role == "tool" and content != "" and len(parts) == 1:
        part = parts[0]
        if (
            part.part_type == "text"
            and part.text_content == content
            and part.tool_input is None
            and part.tool_output is None
        ):
            call_id = part.tool_call_id if part.tool_call_id is not None else result_pairing_id(message)
            return js_stringify(
                {
                    "kind": "canonical-tool-text",
                    "role": "tool",
                    "content": content,
                    "toolCallId": call_id,
                    "toolName": _norm_tool_name(part.tool_name),
                }
            )
    return js_stringify(
        {
            "role": role,
            "content": content,
            "parts": [
                {
                    "partType": p.part_type,
                    "ordinal": p.ordinal,
                    "textContent": p.text_content,
                    "toolCallId": p.tool_call_id,
                    "toolName": p.tool_name,
                    "toolInput": p.tool_input,
                    "toolOutput": p.tool_output,
                    "metadata": canonical_metadata(p.metadata),
                }
                for p in parts
            ],
        }
    )


def stored_form_without_tokens(message: Any) -> tuple[str, str]:
    """(role, content) of A.1 without the A.4 count, which needs the block renderer."""
    return stored_role(message), stored_content(message)
