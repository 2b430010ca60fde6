"""The normalized view of a message list that the OpenAI and Anthropic exports are built from.

Messages become turns of text, thinking and image parts, with each tool call
answered exactly once, its result right after it: what both request formats
demand and hosts' stored transcripts do not guarantee.  ``markdown`` reads
single blocks through the same functions.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ctxview.assembly.live import PAIRING_RESULT_TYPES, pairing_id, result_pairing_id
from ctxview.jsjson import is_blank, js_parse, js_stringify, to_plain

# Text of the result ctxview adds for a call that has no result in the assembled list.
MISSING_RESULT_TEXT = "[ctxview] this tool call has no result in the assembled context."

CALL_TYPES = frozenset({"toolCall", "toolUse", "tool_use", "tool-use", "tool_call", "functionCall", "function_call"})
RESULT_ROLES = frozenset({"toolResult", "tool"})


@dataclass(frozen=True, slots=True)
class Text:
    text: str


@dataclass(frozen=True, slots=True)
class Thinking:
    kind: str  # thinking | redacted_thinking | reasoning
    text: str
    signature: str | None = None
    data: str | None = None  # redacted_thinking payload


@dataclass(frozen=True, slots=True)
class Image:
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


Part = Text | Thinking | Image


@dataclass(slots=True)
class Call:
    raw_id: str | None
    name: str
    arguments: Any
    has_arguments: bool
    payload_key: str  # "arguments" or "input": where the native block kept them
    final_id: str = ""


@dataclass(slots=True)
class Result:
    call_id: str
    name: str
    is_error: bool
    parts: list[Part]
    synthetic: bool = False


@dataclass(slots=True)
class Turn:
    role: str  # user | assistant | system
    parts: list[Part]
    calls: list[Call] = field(default_factory=list)
    results: list[Result] = field(default_factory=list)
    provider: str | None = None  # the assistant's stored provider/api, for thinking signatures


def block_json(value: Any) -> str:
    """A block no API slot takes, kept as its JSON text so that nothing is lost."""
    return js_stringify(value)


def image_of(block: dict[str, Any]) -> Image | None:
    """An image block in any of the shapes hosts store (pi-ai, Anthropic, OpenAI), or None."""
    kind = block.get("type")
    if kind == "image":
        source = block.get("source")
        if isinstance(source, dict):
            if source.get("type") == "base64" and isinstance(source.get("data"), str):
                media = source.get("media_type")
                return Image(media if isinstance(media, str) else None, source["data"], None)
            if source.get("type") == "url" and isinstance(source.get("url"), str):
                return _from_url(source["url"])
        for key in ("data", "image", "imageData", "image_data", "base64", "bytes"):
            data = block.get(key)
            if isinstance(data, str) and data:
                if data.startswith("data:"):
                    return _from_url(data)
                media = block.get("mimeType") or block.get("mime_type") or block.get("media_type")
                return Image(media if isinstance(media, str) else None, data, None)
        if isinstance(block.get("url"), str):
            return _from_url(block["url"])
        return None
    if kind in ("image_url", "input_image"):
        ref = block.get("image_url")
        url = ref.get("url") if isinstance(ref, dict) else ref
        return _from_url(url) if isinstance(url, str) and url else None
    return None


def _from_url(url: str) -> Image:
    match = re.match(r"data:([^;,]*)(;[^,]*)?,(.*)\Z", url, re.S)
    if match and match.group(2) and "base64" in match.group(2):
        return Image(match.group(1) or None, match.group(3), None)
    return Image(None, None, url)


def parts_of(content: Any, *, in_result: bool = False) -> list[Part]:
    """Text, thinking and image parts of a content value; anything else becomes JSON text."""
    if content is None:
        return []
    if isinstance(content, str):
        return [Text(content)]
    if not isinstance(content, list):
        return [Text(block_json(content))]
    parts: list[Part] = []
    for block in content:
        if isinstance(block, str):
            parts.append(Text(block))
            continue
        if not isinstance(block, dict):
            parts.append(Text(block_json(block)))
            continue
        kind = block.get("type")
        if kind in ("text", "input_text", "output_text") and isinstance(block.get("text"), str):
            parts.append(Text(block["text"]))
        elif kind == "thinking" and isinstance(block.get("thinking"), str):
            signature = block.get("thinkingSignature", block.get("signature"))
            parts.append(Thinking("thinking", block["thinking"], signature if isinstance(signature, str) else None))
        elif kind == "redacted_thinking":
            data = block.get("data")
            parts.append(Thinking("redacted_thinking", "", None, data if isinstance(data, str) else None))
        elif kind == "reasoning":
            parts.append(Thinking("reasoning", reasoning_text(block)))
        elif (image := image_of(block)) is not None:
            parts.append(image)
        elif in_result and kind in PAIRING_RESULT_TYPES:
            # a result block inside a tool result: its payload is the result
            payload = block.get("output", block.get("content"))
            if isinstance(payload, (str, list)):
                parts.extend(parts_of(payload, in_result=True))
            elif payload is not None:
                parts.append(Text(block_json(payload)))
        else:
            parts.append(Text(block_json(block)))
    return parts


def reasoning_text(block: dict[str, Any]) -> str:
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


def call_of(block: dict[str, Any]) -> Call:
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
    return Call(pairing_id(block), name if isinstance(name, str) and name else "unknown", args, present, key)


def _provider(message: dict[str, Any]) -> str | None:
    for key in ("api", "provider"):
        value = message.get(key)
        if isinstance(value, str):
            return value
    return None


def to_turns(messages: list[Any], fix_id: Callable[[str], str]) -> list[Turn]:
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
        elif role in RESULT_ROLES:
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

    turns: list[Turn] = []
    for index, message in enumerate(messages):
        if index in consumed:
            continue
        if not isinstance(message, dict):
            turns.append(Turn("user", [Text(block_json(message))]))
            continue
        role = message.get("role")
        content = message.get("content")
        if role == "assistant":
            turn = Turn("assistant", [], provider=_provider(message))
            blocks = content if isinstance(content, list) else [content] if content is not None else []
            position = 0
            for block in blocks:
                if isinstance(block, dict) and block.get("type") in CALL_TYPES:
                    call = call_of(block)
                    call.final_id = unique(call.raw_id or f"call_ctxview_{index}_{position}")
                    turn.calls.append(call)
                    result_index = answered.get((index, position))
                    if result_index is not None:
                        turn.results.append(_result(messages[result_index], call))
                    else:
                        turn.results.append(Result(call.final_id, call.name, True, [Text(MISSING_RESULT_TEXT)], True))
                    position += 1
                else:
                    turn.parts.extend(parts_of([block]))
            turns.append(turn)
        elif role in RESULT_ROLES:
            name = message.get("toolName")
            label = f"`{name}`" if isinstance(name, str) and name else "a tool"
            answered_id = result_pairing_id(message) or "(no id)"
            header = f"[result of {label} call {answered_id}, whose call is not in this context]"
            if message.get("isError") is True:
                header += " (error)"
            turns.append(Turn("user", [Text(header), *parts_of(content, in_result=True)]))
        elif role in ("system", "developer"):
            turns.append(Turn("system", parts_of(content)))
        elif role == "user":
            turns.append(Turn("user", parts_of(content)))
        else:
            turns.append(Turn("user", [Text(f"[{role} message]"), *parts_of(content)]))
    return turns


def _result(message: dict[str, Any], call: Call) -> Result:
    name = message.get("toolName")
    return Result(
        call.final_id,
        name if isinstance(name, str) and name else call.name,
        message.get("isError") is True or message.get("is_error") is True,
        parts_of(message.get("content"), in_result=True),
    )


def arguments_json(call: Call) -> str:
    """OpenAI's ``function.arguments``: the JSON text of the arguments."""
    if not call.has_arguments or call.arguments is None:
        return "{}"
    if isinstance(call.arguments, str):
        return call.arguments
    return js_stringify(call.arguments)


def arguments_object(call: Call) -> dict[str, Any]:
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


def thinking_block(part: Thinking) -> dict[str, Any]:
    """Thinking where an API has no place for it: the block as stored, to be passed on as text."""
    if part.kind == "redacted_thinking":
        return {"type": "redacted_thinking", "data": part.data}
    return {"type": part.kind, part.kind if part.kind == "thinking" else "text": part.text}


def text_items(parts: list[Part]) -> list[str]:
    """Text of the parts for a text-only slot: images are described, thinking is dropped."""
    texts: list[str] = []
    for part in parts:
        if isinstance(part, Text):
            if not is_blank(part.text):
                texts.append(part.text)
        elif isinstance(part, Image):
            texts.append(part.describe())
    return texts
