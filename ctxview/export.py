"""Exports of an assembled context: to replay it, attach it to a report, diff it.

Every format is a pure function of a Trace (``render(trace, fmt)``), so the
CLI, the TUI's export dialog and the tests produce byte-identical output for
the same run.  ``native`` is the parity message list exactly as the
reference engine returns it; ``openai`` and ``anthropic`` translate it into
request payloads those APIs accept (every tool call answered exactly once,
no empty blocks, Anthropic roles alternating); ``markdown`` is for people;
``trace`` is the whole decision record; ``jsonl`` is one message per line.
``write_export`` writes any of them atomically.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctxview.assembly.live import PAIRING_RESULT_TYPES, pairing_id, result_pairing_id
from ctxview.errors import InputError
from ctxview.export_formats import FORMAT_DESCRIPTIONS, FORMAT_SUFFIXES, FORMATS
from ctxview.files import rename_no_clobber
from ctxview.jsjson import JSNumber, escape_lone_surrogates, is_blank, js_parse, js_stringify, js_trim_end, to_plain
from ctxview.model import Decision, Params, Trace, count_text

EXPORT_VERSION = 1

# Text of the result ctxview adds for a call that has no result in the assembled list.
MISSING_RESULT_TEXT = "[ctxview] this tool call has no result in the assembled context."

CALL_TYPES = frozenset({"toolCall", "toolUse", "tool_use", "tool-use", "tool_call", "functionCall", "function_call"})
THINKING_TYPES = frozenset({"thinking", "redacted_thinking", "reasoning"})
_RESULT_ROLES = frozenset({"toolResult", "tool"})
_OPENAI_MAX_ID = 40  # Chat Completions rejects longer tool_call ids
_ANTHROPIC_ID_BAD = re.compile(r"[^A-Za-z0-9_-]")


# --- entry points -------------------------------------------------------------------------


def render(trace: Trace, fmt: str) -> str:
    """The text of one export format, ending with a newline."""
    renderers: dict[str, Callable[[Trace], str]] = {
        "native": to_native,
        "openai": to_openai,
        "anthropic": to_anthropic,
        "markdown": to_markdown,
        "trace": to_trace_json,
        "jsonl": to_jsonl,
    }
    renderer = renderers.get(fmt)
    if renderer is None:
        raise InputError(f"unknown export format {fmt!r}; choose one of: {', '.join(FORMATS)}")
    return renderer(trace)


def suggested_filename(fmt: str, *, stem: str = "ctxview", conversation_id: int | None = None) -> str:
    """A file name for an export, e.g. ``demo-conversation-1.openai.json``."""
    conversation = f"-conversation-{conversation_id}" if conversation_id is not None else ""
    return f"{stem}{conversation}{FORMAT_SUFFIXES.get(fmt, '.txt')}"


def messages_sha256(messages: list[Any]) -> str:
    """SHA-256 of ``JSON.stringify(messages)``: equal hashes mean byte-identical contexts.

    It is also the hash of a native export's text without its final newline.
    """
    return hashlib.sha256(js_stringify(messages).encode("utf-8", "surrogatepass")).hexdigest()


# --- native and jsonl -------------------------------------------------------------------------


def to_native(trace: Trace) -> str:
    """The final messages, serialized exactly as ``JSON.stringify`` would."""
    return js_stringify(trace.messages) + "\n"


def to_jsonl(trace: Trace) -> str:
    """One native message per line.

    U+2028/U+2029 are escaped so that line-splitting readers (Python's
    ``splitlines``) cannot cut a message in two; the JSON value is unchanged.
    """
    lines = [_escape_line_separators(js_stringify(m)) for m in trace.messages]
    return "".join(line + "\n" for line in lines)


def _escape_line_separators(text: str) -> str:
    return text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


# --- the normalized view both API formats are built from ------------------------------------


@dataclass(frozen=True, slots=True)
class _Text:
    text: str


@dataclass(frozen=True, slots=True)
class _Thinking:
    kind: str  # thinking | redacted_thinking | reasoning
    text: str
    signature: str | None = None
    data: str | None = None  # redacted_thinking payload


@dataclass(frozen=True, slots=True)
class _Image:
    media_type: str | None
    data: str | None  # base64, without a data: prefix
    url: str | None  # a remote URL when there is no inline data

    @property
    def data_url(self) -> str:
        if self.data is not None:
            return f"data:{self.media_type or 'application/octet-stream'};base64,{self.data}"
        return self.url or ""

    def describe(self) -> str:
        if self.data is not None:
            return f"[image: {self.media_type or 'unknown type'}, {len(self.data):,} base64 characters]"
        return f"[image: {self.url}]"


_Part = _Text | _Thinking | _Image


@dataclass(slots=True)
class _Call:
    raw_id: str | None
    name: str
    arguments: Any
    has_arguments: bool
    payload_key: str  # "arguments" or "input": where the native block kept them
    final_id: str = ""


@dataclass(slots=True)
class _Result:
    call_id: str
    name: str
    is_error: bool
    parts: list[_Part]
    synthetic: bool = False


@dataclass(slots=True)
class _Turn:
    role: str  # user | assistant | system
    parts: list[_Part]
    calls: list[_Call] = field(default_factory=list)
    results: list[_Result] = field(default_factory=list)
    provider: str | None = None  # the assistant's stored provider/api, for thinking signatures


def _block_json(value: Any) -> str:
    return js_stringify(value)


def _image(block: dict[str, Any]) -> _Image | None:
    """An image block in any of the shapes hosts store (pi-ai, Anthropic, OpenAI), or None."""
    kind = block.get("type")
    if kind == "image":
        source = block.get("source")
        if isinstance(source, dict):
            if source.get("type") == "base64" and isinstance(source.get("data"), str):
                media = source.get("media_type")
                return _Image(media if isinstance(media, str) else None, source["data"], None)
            if source.get("type") == "url" and isinstance(source.get("url"), str):
                return _from_url(source["url"])
        for key in ("data", "image", "imageData", "image_data", "base64", "bytes"):
            data = block.get(key)
            if isinstance(data, str) and data:
                if data.startswith("data:"):
                    return _from_url(data)
                media = block.get("mimeType") or block.get("mime_type") or block.get("media_type")
                return _Image(media if isinstance(media, str) else None, data, None)
        if isinstance(block.get("url"), str):
            return _from_url(block["url"])
        return None
    if kind in ("image_url", "input_image"):
        ref = block.get("image_url")
        url = ref.get("url") if isinstance(ref, dict) else ref
        return _from_url(url) if isinstance(url, str) and url else None
    return None


def _from_url(url: str) -> _Image:
    match = re.match(r"data:([^;,]*)(;[^,]*)?,(.*)\Z", url, re.S)
    if match and match.group(2) and "base64" in match.group(2):
        return _Image(match.group(1) or None, match.group(3), None)
    return _Image(None, None, url)


def _parts(content: Any, *, in_result: bool = False) -> list[_Part]:
    """Text, thinking and image parts of a content value; anything else becomes JSON text."""
    if content is None:
        return []
    if isinstance(content, str):
        return [_Text(content)]
    if not isinstance(content, list):
        return [_Text(_block_json(content))]
    parts: list[_Part] = []
    for block in content:
        if isinstance(block, str):
            parts.append(_Text(block))
            continue
        if not isinstance(block, dict):
            parts.append(_Text(_block_json(block)))
            continue
        kind = block.get("type")
        if kind in ("text", "input_text", "output_text") and isinstance(block.get("text"), str):
            parts.append(_Text(block["text"]))
        elif kind == "thinking" and isinstance(block.get("thinking"), str):
            signature = block.get("thinkingSignature", block.get("signature"))
            parts.append(_Thinking("thinking", block["thinking"], signature if isinstance(signature, str) else None))
        elif kind == "redacted_thinking":
            data = block.get("data")
            parts.append(_Thinking("redacted_thinking", "", None, data if isinstance(data, str) else None))
        elif kind == "reasoning":
            parts.append(_Thinking("reasoning", _reasoning_text(block)))
        elif (image := _image(block)) is not None:
            parts.append(image)
        elif in_result and kind in PAIRING_RESULT_TYPES:
            # a result block inside a tool result: its payload is the result
            payload = block.get("output", block.get("content"))
            if isinstance(payload, (str, list)):
                parts.extend(_parts(payload, in_result=True))
            elif payload is not None:
                parts.append(_Text(_block_json(payload)))
        else:
            parts.append(_Text(_block_json(block)))
    return parts


def _reasoning_text(block: dict[str, Any]) -> str:
    if isinstance(block.get("text"), str):
        return block["text"]
    summary = block.get("summary")
    texts: list[str] = []
    if isinstance(summary, list):
        for item in summary:
            if isinstance(item, str):
                texts.append(item)
            elif isinstance(item, dict) and isinstance(item.get("text"), str):
                texts.append(item["text"])
    return "\n".join(texts)


def _call(block: dict[str, Any]) -> _Call:
    if "arguments" in block:
        key, args, present = "arguments", block["arguments"], True
    elif "input" in block:
        key, args, present = "input", block["input"], True
    else:
        key, args, present = (
            ("input" if block.get("type") in ("tool_use", "tool-use", "toolUse") else "arguments"),
            None,
            False,
        )
    name = block.get("name")
    return _Call(pairing_id(block), name if isinstance(name, str) and name else "unknown", args, present, key)


def _provider(message: dict[str, Any]) -> str | None:
    for key in ("api", "provider"):
        value = message.get(key)
        if isinstance(value, str):
            return value
    return None


def _turns(messages: list[Any], fix_id: Callable[[str], str]) -> list[_Turn]:
    """The messages as turns, each call answered exactly once, results right after their call.

    A result answers the latest earlier call with its id that is still
    unanswered (results may sit anywhere after it: they are moved up).  A
    call without a result gets an error result saying so; a result whose call
    is not in the list becomes a user message, so no content is lost.
    """
    answered: dict[tuple[int, int], int] = {}
    consumed: set[int] = set()
    pending: dict[str, tuple[int, int]] = {}
    for index, message in enumerate(messages):
        if not isinstance(message, dict):
            continue
        role = message.get("role")
        content = message.get("content")
        if role == "assistant" and isinstance(content, list):
            position = 0
            for block in content:
                if isinstance(block, dict) and block.get("type") in CALL_TYPES:
                    call_id = pairing_id(block)
                    if call_id is not None:
                        pending[call_id] = (index, position)
                    position += 1
        elif role in _RESULT_ROLES:
            result_id = result_pairing_id(message)
            if result_id is not None and result_id in pending:
                answered[pending.pop(result_id)] = index
                consumed.add(index)

    used: set[str] = set()

    def unique(raw: str) -> str:
        base = fix_id(raw)
        candidate, n = base, 2
        while candidate in used:
            candidate = fix_id(f"{raw}_{n}")
            n += 1
        used.add(candidate)
        return candidate

    turns: list[_Turn] = []
    for index, message in enumerate(messages):
        if index in consumed:
            continue
        if not isinstance(message, dict):
            turns.append(_Turn("user", [_Text(_block_json(message))]))
            continue
        role = message.get("role")
        content = message.get("content")
        if role == "assistant":
            turn = _Turn("assistant", [], provider=_provider(message))
            blocks = content if isinstance(content, list) else [content] if content is not None else []
            position = 0
            for block in blocks:
                if isinstance(block, dict) and block.get("type") in CALL_TYPES:
                    call = _call(block)
                    call.final_id = unique(call.raw_id or f"call_ctxview_{index}_{position}")
                    turn.calls.append(call)
                    result_index = answered.get((index, position))
                    if result_index is not None:
                        turn.results.append(_result(messages[result_index], call))
                    else:
                        turn.results.append(_Result(call.final_id, call.name, True, [_Text(MISSING_RESULT_TEXT)], True))
                    position += 1
                else:
                    turn.parts.extend(_parts([block]))
            turns.append(turn)
        elif role in _RESULT_ROLES:
            name = message.get("toolName")
            label = f"`{name}`" if isinstance(name, str) and name else "a tool"
            answered_id = result_pairing_id(message) or "(no id)"
            header = f"[result of {label} call {answered_id}, whose call is not in this context]"
            if message.get("isError") is True:
                header += " (error)"
            turns.append(_Turn("user", [_Text(header), *_parts(content, in_result=True)]))
        elif role in ("system", "developer"):
            turns.append(_Turn("system", _parts(content)))
        elif role == "user":
            turns.append(_Turn("user", _parts(content)))
        else:
            turns.append(_Turn("user", [_Text(f"[{role} message]"), *_parts(content)]))
    return turns


def _result(message: dict[str, Any], call: _Call) -> _Result:
    name = message.get("toolName")
    return _Result(
        call.final_id,
        name if isinstance(name, str) and name else call.name,
        message.get("isError") is True or message.get("is_error") is True,
        _parts(message.get("content"), in_result=True),
    )


def _arguments_json(call: _Call) -> str:
    """OpenAI's ``function.arguments``: the JSON text of the arguments."""
    if not call.has_arguments or call.arguments is None:
        return "{}"
    if isinstance(call.arguments, str):
        return call.arguments
    return js_stringify(call.arguments)


def _arguments_object(call: _Call) -> dict[str, Any]:
    """Anthropic's ``input``: an object; other values are wrapped under their native key."""
    value = call.arguments
    if not call.has_arguments or value is None or (isinstance(value, str) and is_blank(value)):
        return {}
    if isinstance(value, str):
        try:
            value = js_parse(value)
        except (ValueError, RecursionError):
            return {call.payload_key: value}
    if isinstance(value, dict):
        return to_plain(value)
    return {call.payload_key: to_plain(value)}


# --- OpenAI Chat Completions ------------------------------------------------------------------


def _openai_id(raw: str) -> str:
    if len(raw) <= _OPENAI_MAX_ID:
        return raw
    digest = hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return raw[: _OPENAI_MAX_ID - 13] + "_" + digest


def convert_openai(messages: list[Any], *, system: str | None = None) -> list[dict[str, Any]]:
    """Chat Completions ``messages`` for a native message list.

    Assistant tool calls become ``tool_calls`` answered by ``role: "tool"``
    messages right after; thinking and reasoning are dropped (the API has no
    place for them); images in user turns become ``image_url`` parts, and
    images returned by tools follow the tool messages as a user message.
    Tool-call ids longer than the API's 40 characters are shortened with a
    hash, the same way on both sides of a pair.
    """
    out: list[dict[str, Any]] = []
    if system:
        out.append({"role": "system", "content": system})
    for turn in _turns(messages, _openai_id):
        if turn.role == "system":
            text = "\n\n".join(p.text for p in turn.parts if isinstance(p, _Text) and not is_blank(p.text))
            if text:
                out.append({"role": "system", "content": text})
        elif turn.role == "user":
            content = _openai_user_content(turn.parts)
            if content:
                out.append({"role": "user", "content": content})
        else:
            out.extend(_openai_assistant(turn))
    return out


def _openai_user_content(parts: list[_Part]) -> str | list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for part in parts:
        if isinstance(part, _Text):
            if not is_blank(part.text):
                items.append({"type": "text", "text": part.text})
        elif isinstance(part, _Image):
            items.append({"type": "image_url", "image_url": {"url": part.data_url}})
        elif part.text or part.data:
            items.append({"type": "text", "text": _block_json(_thinking_block(part))})
    if len(items) == 1 and items[0]["type"] == "text":
        return str(items[0]["text"])
    return items


def _thinking_block(part: _Thinking) -> dict[str, Any]:
    if part.kind == "redacted_thinking":
        return {"type": "redacted_thinking", "data": part.data}
    return {"type": part.kind, part.kind if part.kind == "thinking" else "text": part.text}


def _text_items(parts: list[_Part]) -> list[str]:
    """Text of the parts for a text-only slot: images are described, thinking is dropped."""
    texts: list[str] = []
    for part in parts:
        if isinstance(part, _Text):
            if not is_blank(part.text):
                texts.append(part.text)
        elif isinstance(part, _Image):
            texts.append(part.describe())
    return texts


def _openai_text_content(texts: list[str]) -> str | list[dict[str, Any]]:
    if len(texts) == 1:
        return texts[0]
    return [{"type": "text", "text": t} for t in texts]


def _openai_assistant(turn: _Turn) -> list[dict[str, Any]]:
    texts = _text_items(turn.parts)
    if not texts and not turn.calls:
        return []
    message: dict[str, Any] = {"role": "assistant", "content": _openai_text_content(texts) if texts else None}
    if turn.calls:
        message["tool_calls"] = [
            {"id": c.final_id, "type": "function", "function": {"name": c.name, "arguments": _arguments_json(c)}}
            for c in turn.calls
        ]
    out = [message]
    images: list[dict[str, Any]] = []
    for result in turn.results:
        texts = _text_items(result.parts)
        out.append(
            {"role": "tool", "tool_call_id": result.call_id, "content": _openai_text_content(texts) if texts else ""}
        )
        result_images = [p for p in result.parts if isinstance(p, _Image)]
        if result_images:
            images.append({"type": "text", "text": f"[images returned by tool call {result.call_id}]"})
            images.extend({"type": "image_url", "image_url": {"url": p.data_url}} for p in result_images)
    if images:
        out.append({"role": "user", "content": images})
    return out


def to_openai(trace: Trace) -> str:
    """The Chat Completions ``messages`` array as indented JSON."""
    return _pretty_plain(convert_openai(trace.messages))


# --- Anthropic Messages ------------------------------------------------------------------------


def _anthropic_id(raw: str) -> str:
    return _ANTHROPIC_ID_BAD.sub("_", raw) or "toolu_ctxview"


def _is_anthropic(provider: str | None) -> bool:
    return provider is not None and provider.startswith("anthropic")


def convert_anthropic(messages: list[Any], *, system: str | None = None) -> dict[str, Any]:
    """A Messages API request body (without ``model`` and ``max_tokens``) for a native message list.

    Tool calls become ``tool_use`` blocks; their results become
    ``tool_result`` blocks at the start of the next user turn; consecutive
    turns of one role are merged so roles alternate; blank text blocks and
    empty turns are removed; thinking is kept only where Anthropic signed it.
    ``system`` appears only when one is given: the reference engine emits no
    system messages, and the API rejects an empty system prompt.
    """
    turns = _turns(messages, _anthropic_id)
    system_texts = [system] if system else []
    raw: list[tuple[str, list[dict[str, Any]]]] = []
    for turn in turns:
        if turn.role == "system":
            system_texts.extend(_text_items(turn.parts))
        elif turn.role == "user":
            raw.append(("user", _anthropic_blocks(turn.parts, role="user", provider=None)))
        else:
            blocks = _anthropic_blocks(turn.parts, role="assistant", provider=turn.provider)
            blocks.extend(
                {"type": "tool_use", "id": c.final_id, "name": c.name, "input": _arguments_object(c)}
                for c in turn.calls
            )
            raw.append(("assistant", blocks))
            if turn.results:
                raw.append(("user", [_tool_result_block(r) for r in turn.results]))
    merged: list[dict[str, Any]] = []
    for role, blocks in raw:
        if not blocks:
            continue
        if merged and merged[-1]["role"] == role:
            merged[-1]["content"].extend(blocks)
        else:
            merged.append({"role": role, "content": list(blocks)})
    _trim_final_assistant(merged)
    for message in merged:
        content = message["content"]
        if len(content) == 1 and content[0]["type"] == "text":
            message["content"] = content[0]["text"]
    body: dict[str, Any] = {}
    if system_texts:
        body["system"] = "\n\n".join(t for t in system_texts if not is_blank(t))
    body["messages"] = merged
    return body


def _anthropic_image(part: _Image) -> dict[str, Any]:
    if part.data is not None:
        return {
            "type": "image",
            "source": {"type": "base64", "media_type": part.media_type or "image/png", "data": part.data},
        }
    return {"type": "image", "source": {"type": "url", "url": part.url or ""}}


def _anthropic_blocks(parts: list[_Part], *, role: str, provider: str | None) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for part in parts:
        if isinstance(part, _Text):
            if not is_blank(part.text):
                blocks.append({"type": "text", "text": part.text})
        elif isinstance(part, _Image):
            if role == "user":
                blocks.append(_anthropic_image(part))
            else:
                blocks.append({"type": "text", "text": part.describe()})
        elif role == "assistant":
            if not _is_anthropic(provider):
                continue
            if part.kind == "thinking" and part.signature:
                blocks.append({"type": "thinking", "thinking": part.text, "signature": part.signature})
            elif part.kind == "redacted_thinking" and part.data:
                blocks.append({"type": "redacted_thinking", "data": part.data})
        elif part.text or part.data:
            blocks.append({"type": "text", "text": _block_json(_thinking_block(part))})
    return blocks


def _tool_result_block(result: _Result) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": result.call_id}
    content: list[dict[str, Any]] = []
    for part in result.parts:
        if isinstance(part, _Text):
            if not is_blank(part.text):
                content.append({"type": "text", "text": part.text})
        elif isinstance(part, _Image):
            content.append(_anthropic_image(part))
    if content:
        block["content"] = content
    block["is_error"] = result.is_error
    return block


def _trim_final_assistant(merged: list[dict[str, Any]]) -> None:
    """The API rejects a final assistant turn that ends in whitespace."""
    while merged and merged[-1]["role"] == "assistant":
        content = merged[-1]["content"]
        if content and content[-1]["type"] == "text":
            trimmed = js_trim_end(content[-1]["text"])
            if trimmed:
                content[-1] = {"type": "text", "text": trimmed}
                return
            content.pop()
            if content:
                continue
            merged.pop()
            continue
        return


def to_anthropic(trace: Trace) -> str:
    """The Anthropic request body as indented JSON."""
    return _pretty_plain(convert_anthropic(trace.messages))


# --- the decision trace ----------------------------------------------------------------------


def params_json(params: Params) -> dict[str, Any]:
    """The run's parameters under the parity ``params.json`` names (plus ctxview's own)."""
    return {
        "tokenBudget": params.token_budget,
        "prompt": params.prompt,
        "freshTailCount": params.fresh_tail_count,
        "freshTailMaxTokens": params.fresh_tail_max_tokens,
        "promptAwareEviction": params.prompt_aware_eviction,
        "timezone": params.timezone,
        "liveMessages": list(params.live_messages) if params.live_messages is not None else None,
        "availableTools": list(params.available_tools) if params.available_tools is not None else None,
        "stubLargeToolPayloads": params.stub_large_tool_payloads,
        "engine": params.engine,
        "engineLine": params.engine_line,
        "sessionId": params.session_id,
        "sessionKey": params.session_key,
        "reservedTokens": params.reserved_tokens,
        "scorer": params.scorer,
        "tokenizer": params.tokenizer,
    }


def decision_json(d: Decision) -> dict[str, Any]:
    """Every field of one decision, with JSON names."""
    return {
        "key": d.key,
        "ordinal": d.ordinal,
        "liveIndex": d.live_index,
        "kind": d.kind,
        "label": d.label,
        "labelExtra": d.label_extra,
        "role": d.role,
        "sourceRole": d.source_role,
        "messageId": d.message_id,
        "seq": d.seq,
        "summaryId": d.summary_id,
        "summaryKind": d.summary_kind,
        "tokens": d.tokens,
        "serializedTokens": d.serialized_tokens,
        "score": d.score,
        "matchedTerms": [
            {"term": m.term, "count": m.count, "contribution": m.contribution, "weight": m.weight, "note": m.note}
            for m in d.matched_terms
        ],
        "segment": d.segment,
        "selected": d.selected,
        "outcome": d.outcome,
        "reason": d.reason,
        "pairWith": list(d.pair_with),
        "toolCallIds": list(d.tool_call_ids),
        "syntheticResultFor": list(d.synthetic_result_for),
        "outputIndex": d.output_index,
        "protected": d.protected,
        "evictedBy": d.evicted_by,
        "coveredBy": d.covered_by,
        "minBudget": d.min_budget,
    }


def trace_document(trace: Trace) -> dict[str, Any]:
    """The trace export: the parity-shaped result plus every decision and a hash of the messages.

    Deterministic (no timings), so two exports of the same run are identical.
    """
    from ctxview.report import trace_to_json

    document: dict[str, Any] = {
        "ctxview": {"format": "trace", "version": EXPORT_VERSION},
        "conversationId": trace.conversation_id,
        "params": params_json(trace.params),
        "messagesSha256": messages_sha256(trace.messages),
        "messageCount": len(trace.messages),
        "messageKeys": list(trace.message_keys),
        "decisions": [decision_json(d) for d in trace.decisions],
    }
    for key, value in trace_to_json(trace).items():
        document.setdefault(key, value)
    return document


def to_trace_json(trace: Trace) -> str:
    """The trace export as indented JSON (numbers formatted as JavaScript would)."""
    return pretty_js(trace_document(trace)) + "\n"


# --- markdown ----------------------------------------------------------------------------------


def to_markdown(trace: Trace) -> str:
    """A readable transcript: the run's settings and token totals, then each message."""
    from ctxview.report import fallback_text, rules_text

    s = trace.summary
    p = trace.params
    keys = trace.by_key()
    fresh_tail = "—" if s.fresh_tail_ordinal is None else f"ordinal {s.fresh_tail_ordinal}"
    outcomes = ", ".join(f"{k.replace('-', ' ')} {v}" for k, v in sorted(trace.outcome_counts().items()))
    fallback = (
        [f"> **Fallback:** the engine would not send the assembled context: {fallback_text(trace)}. "
         "The messages below are the live transcript it sends instead.", ""]
        if s.engine_outcome.startswith("live-fallback")
        else []
    )
    lines = [
        "# Assembled context",
        "",
        *fallback,
        "## Settings",
        "",
        f"- conversation: {trace.conversation_id if trace.conversation_id is not None else '—'}",
        f"- engine rules: {rules_text(trace)}",
        f"- prompt: {_inline_json(p.prompt)}",
        f"- token budget: {s.token_budget:,}"
        + (
            f" ({s.reserved_tokens:,} reserved → {s.effective_budget:,} for the assembler)" if s.reserved_tokens else ""
        ),
        f"- fresh tail: count {_number(p.fresh_tail_count)}, max tokens "
        + (f"{p.fresh_tail_max_tokens:,}" if p.fresh_tail_max_tokens is not None else "none")
        + f"; starts at {fresh_tail}",
        f"- prompt-aware eviction: {'on' if p.prompt_aware_eviction else 'off'}; selection mode: {s.selection_mode}",
        f"- engine step: {'on' if p.engine else 'off'}; live inputs: "
        + (str(len(p.live_messages)) if p.live_messages is not None else "none"),
        f"- time zone: {p.timezone}; scorer: {p.scorer}; tokenizer: {p.tokenizer}",
        "",
        "## Token totals",
        "",
        f"- final (serialized estimate of the messages): {s.final_tokens:,} tokens in "
        f"{count_text(len(trace.messages), 'message')}",
        f"- assembler (item estimates of the kept items): {s.assembler_tokens:,} tokens",
        f"- fresh tail: {s.tail_tokens:,} tokens; kept evictable: {s.kept_evictable_tokens:,} of "
        f"{s.evictable_total_tokens:,}; remaining budget: {s.remaining_budget:,}",
    ]
    if s.live_appended_tokens or s.evicted_for_live_tokens:
        lines.append(
            f"- live inputs appended: {s.live_appended_tokens:,} tokens; evicted for them: "
            f"{s.evicted_for_live_tokens:,}"
        )
    flags = [name for name, on in (("clamped", s.clamped), ("over budget", s.over_budget)) if on]
    if flags:
        lines.append(f"- note: {', '.join(flags)}")
    lines += [
        f"- outcomes: {outcomes or '—'}",
        f"- messages sha256: `{messages_sha256(trace.messages)}`",
        "",
        "## Messages",
        "",
    ]
    if trace.warnings or trace.notes:
        heading = lines.index("## Messages")
        said = [*(f"> note: {n}  " for n in trace.notes), *(f"> warning: {w}  " for w in trace.warnings)]
        lines[heading:heading] = [*said, ""]
    if not trace.messages:
        lines += ["*(no messages)*", ""]
    for index, message in enumerate(trace.messages):
        key = trace.message_keys[index] if index < len(trace.message_keys) else None
        decision = keys.get(key) if key else None
        lines.append(_markdown_heading(index, message, decision))
        lines.append("")
        lines.extend(_markdown_message(message, decision))
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def _number(value: float) -> str:
    if isinstance(value, float) and value.is_integer():
        return f"{int(value):,}"
    return f"{value:,}" if isinstance(value, int) else str(value)


def _inline_json(value: Any) -> str:
    text = json.dumps(to_plain(value), ensure_ascii=False)
    fence = "`" * (_longest_backtick_run(text) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _markdown_heading(index: int, message: Any, decision: Decision | None) -> str:
    role = message.get("role", "?") if isinstance(message, dict) else "?"
    tags: list[str] = []
    if decision is not None and decision.kind == "summary":
        role = f"summary ({decision.summary_kind or decision.label})"
    if decision is not None:
        where = f"item {decision.ordinal}" if decision.ordinal is not None else f"live input {decision.live_index}"
        tags.append(where)
        tags.append(decision.outcome.replace("-", " "))
        tags.append(f"{decision.tokens:,} tokens")
    elif role == "toolResult":
        tags.append("synthetic result added by the tool-pairing repair")
    elif (
        isinstance(message, dict)
        and isinstance(message.get("content"), str)
        and message["content"].lstrip().startswith("<summary ")
    ):
        role = "summary"
    return f"### {index + 1}. {role}" + (f" — {', '.join(tags)}" if tags else "")


def _markdown_message(message: Any, decision: Decision | None) -> list[str]:
    if not isinstance(message, dict):
        return [_fenced(js_stringify(message), "json")]
    out: list[str] = []
    role = message.get("role")
    if role in _RESULT_ROLES:
        name = message.get("toolName", "unknown")
        error = ", error" if message.get("isError") is True else ""
        out += [f"**Tool result** of `{name}` (call `{message.get('toolCallId', '')}`{error})", ""]
        out += _markdown_result(message.get("content"))
        return out
    if role == "assistant" and isinstance(message.get("reasoning_content"), str):
        out += [_quote("reasoning", message["reasoning_content"]), ""]
    content = message.get("content")
    if decision is not None and decision.kind == "summary" and isinstance(content, str):
        return [*out, _fenced(content, "xml")]
    out += _markdown_content(content)
    return out


def _markdown_result(content: Any) -> list[str]:
    """Tool output, fenced: pretty JSON when the text is JSON, plain otherwise."""
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
    if not isinstance(content, list) or not content:
        return ["*(empty result)*"] if not content else [_fenced(pretty_js(content), "json")]
    out: list[str] = []
    for block in content:
        if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
            out.append(_fenced_payload(block["text"]))
        elif isinstance(block, dict) and (image := _image(block)) is not None:
            out.append(f"*{image.describe()}*")
        else:
            out.append(_fenced(pretty_js(block), "json"))
        out.append("")
    return out[:-1]


def _fenced_payload(text: str) -> str:
    stripped = text.strip()
    if stripped[:1] in ("{", "["):
        try:
            value = js_parse(stripped)
        except (ValueError, RecursionError):
            value = None
        if isinstance(value, (dict, list)):
            return _fenced(pretty_js(value), "json")
    return _fenced(text, "text")


def _markdown_content(content: Any) -> list[str]:
    if isinstance(content, str):
        return [_markdown_text(content)] if content else ["*(empty)*"]
    if not isinstance(content, list):
        return [_fenced(pretty_js(content), "json")]
    out: list[str] = []
    for block in content:
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text" and isinstance(block.get("text"), str):
            out.append(_markdown_text(block["text"]))
        elif kind in CALL_TYPES:
            call = _call(block)
            out.append(f"**Tool call** `{call.name}` (call `{call.raw_id or ''}`)")
            out.append("")
            out.append(_fenced(_arguments_display(call), "json"))
        elif kind == "thinking" and isinstance(block.get("thinking"), str):
            signed = " (signed)" if block.get("thinkingSignature") else ""
            out.append(_quote("thinking" + signed, block["thinking"]))
        elif kind == "reasoning":
            text = _reasoning_text(block)
            if text:
                out.append(_quote("reasoning", text))
            else:
                out.append(f"> *encrypted reasoning item* `{block.get('id', '')}`")
        elif kind == "redacted_thinking":
            out.append("> *redacted thinking*")
        elif isinstance(block, dict) and (image := _image(block)) is not None:
            out.append(f"*{image.describe()}*")
        else:
            out.append(_fenced(pretty_js(block), "json"))
        out.append("")
    return out[:-1] if out else ["*(empty)*"]


def _arguments_display(call: _Call) -> str:
    if not call.has_arguments:
        return "{}"
    value = call.arguments
    if isinstance(value, str):
        try:
            value = js_parse(value)
        except (ValueError, RecursionError):
            return js_stringify(value)
    return pretty_js(value)


def _markdown_text(text: str) -> str:
    """Text as it is, unless it would break the transcript's structure."""
    stripped = text.lstrip()
    if stripped.startswith(("<summary", "<focus_brief")):
        return _fenced(text, "xml")
    if "```" in text or "~~~" in text or re.search(r"^#{1,6} ", text, re.M):
        return _fenced(text, "text")
    return text


def _quote(label: str, text: str) -> str:
    body = text.replace("\n", "\n> ")
    return f"> *{label}:* {body}"


def _longest_backtick_run(text: str) -> int:
    return max((len(m) for m in re.findall(r"`+", text)), default=0)


def _fenced(text: str, info: str) -> str:
    fence = "`" * max(3, _longest_backtick_run(text) + 1)
    return f"{fence}{info}\n{text}\n{fence}"


# --- JSON writers -------------------------------------------------------------------------------


def _pretty_plain(value: Any) -> str:
    return json.dumps(to_plain(value), ensure_ascii=False, indent=2) + "\n"


_NUM_OPEN = "\u0000\u2063ctxview-number:"
_NUM_CLOSE = "\u2063\u0000"
_NUM_RE = re.compile(
    re.escape(json.dumps(_NUM_OPEN, ensure_ascii=False)[:-1])
    + "(.*?)"
    + re.escape(json.dumps(_NUM_CLOSE, ensure_ascii=False)[1:])
)


def _number_placeholder(value: Any) -> Any:
    if isinstance(value, JSNumber):
        return _NUM_OPEN + value.text + _NUM_CLOSE
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def pretty_js(value: Any, indent: int = 2) -> str:
    """Indented JSON whose scalars are written exactly as ``JSON.stringify`` writes them."""
    try:
        text = json.dumps(value, ensure_ascii=False, indent=indent, default=_number_placeholder, allow_nan=False)
    except (TypeError, ValueError):
        # non-finite floats or odd values: the slow writer handles them one scalar at a time
        out: list[str] = []
        _write_pretty(value, 0, indent, out)
        return "".join(out)
    if "\u2063ctxview-number:" in text:
        text = _NUM_RE.sub(lambda m: m.group(1), text)
    return escape_lone_surrogates(text)


def _write_pretty(value: Any, level: int, indent: int, out: list[str]) -> None:
    if isinstance(value, dict) and value:
        pad = " " * (indent * (level + 1))
        out.append("{\n")
        for n, (key, item) in enumerate(value.items()):
            out.append(pad + js_stringify(str(key)) + ": ")
            _write_pretty(item, level + 1, indent, out)
            out.append(",\n" if n < len(value) - 1 else "\n")
        out.append(" " * (indent * level) + "}")
    elif isinstance(value, (list, tuple)) and value:
        pad = " " * (indent * (level + 1))
        out.append("[\n")
        for n, item in enumerate(value):
            out.append(pad)
            _write_pretty(item, level + 1, indent, out)
            out.append(",\n" if n < len(value) - 1 else "\n")
        out.append(" " * (indent * level) + "]")
    elif isinstance(value, (dict, list, tuple)):
        out.append("{}" if isinstance(value, dict) else "[]")
    elif isinstance(value, (str, int, float, bool, JSNumber)) or value is None:
        out.append(js_stringify(value))
    else:
        out.append(js_stringify(str(value)))


# --- writing files -----------------------------------------------------------------------------


def write_export(text: str, path: str | Path, *, force: bool = False) -> Path:
    """Write an export atomically: a temporary sibling, then a rename.

    Refuses to replace an existing file unless ``force``; a failed write
    leaves neither a partial file nor the temporary one behind (an existing
    file it was to replace is left as it was).
    """
    target = Path(path).expanduser()
    if target.is_dir():
        raise InputError(f"{target} is a directory; give a file name")
    if (target.exists() or target.is_symlink()) and not force:
        raise InputError(f"{target} exists; use --force to overwrite")
    directory = target.parent
    if not directory.is_dir():
        raise InputError(f"cannot write {target}: directory {directory} does not exist")
    data = text.encode("utf-8", "backslashreplace")
    try:
        fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=directory)
    except OSError as exc:
        raise InputError(f"cannot write {target}: {exc.strerror or exc}") from None
    tmp = Path(tmp_name)
    try:
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            _set_default_mode(tmp)
            if force:
                os.replace(tmp, target)
            else:
                rename_no_clobber(tmp, target, exists_message=f"{target} exists; use --force to overwrite")
        except OSError as exc:
            raise InputError(f"cannot write {target}: {exc.strerror or exc}") from None
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
    return target


def _set_default_mode(path: Path) -> None:
    """mkstemp makes 0600 files; an export should get the usual mode for new files."""
    with contextlib.suppress(OSError):
        os.chmod(path, 0o666 & ~_umask())


def _umask() -> int:
    """The process umask, read without changing it (the TUI writes from a worker thread)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    return 0o022


def iter_formats() -> Iterable[tuple[str, str]]:
    """(format, description) pairs, for help texts and the TUI's format picker."""
    return ((fmt, FORMAT_DESCRIPTIONS[fmt]) for fmt in FORMATS)
