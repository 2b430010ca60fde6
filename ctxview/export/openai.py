"""``openai``: a Chat Completions ``messages`` array that the API accepts."""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any

from ctxview.export.jsontext import pretty_plain
from ctxview.export.turns import (
    Image,
    Part,
    Text,
    Turn,
    arguments_json,
    block_json,
    text_items,
    thinking_block,
    to_turns,
)
from ctxview.jsjson import is_blank

if TYPE_CHECKING:
    from ctxview.model import Trace


_OPENAI_MAX_ID = 40  # Chat Completions rejects longer tool_call ids


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
    for turn in to_turns(messages, _openai_id):
        if turn.role == "system":
            text = "\n\n".join(p.text for p in turn.parts if isinstance(p, Text) and not is_blank(p.text))
            if text:
                out.append({"role": "system", "content": text})
        elif turn.role == "user":
            content = _openai_user_content(turn.parts)
            if content:
                out.append({"role": "user", "content": content})
        else:
            out.extend(_openai_assistant(turn))
    return out


def _openai_user_content(parts: list[Part]) -> str | list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for part in parts:
        if isinstance(part, Text):
            if not is_blank(part.text):
                items.append({"type": "text", "text": part.text})
        elif isinstance(part, Image):
            items.append({"type": "image_url", "image_url": {"url": part.data_url}})
        elif part.text or part.data:
            items.append({"type": "text", "text": block_json(thinking_block(part))})
    if len(items) == 1 and items[0]["type"] == "text":
        return str(items[0]["text"])
    return items


def _openai_text_content(texts: list[str]) -> str | list[dict[str, Any]]:
    if len(texts) == 1:
        return texts[0]
    return [{"type": "text", "text": t} for t in texts]


def _openai_assistant(turn: Turn) -> list[dict[str, Any]]:
    texts = text_items(turn.parts)
    if not texts and not turn.calls:
        return []
    message: dict[str, Any] = {"role": "assistant", "content": _openai_text_content(texts) if texts else None}
    if turn.calls:
        message["tool_calls"] = [
            {"id": c.final_id, "type": "function", "function": {"name": c.name, "arguments": arguments_json(c)}}
            for c in turn.calls
        ]
    out = [message]
    images: list[dict[str, Any]] = []
    for result in turn.results:
        texts = text_items(result.parts)
        out.append(
            {"role": "tool", "tool_call_id": result.call_id, "content": _openai_text_content(texts) if texts else ""}
        )
        result_images = [p for p in result.parts if isinstance(p, Image)]
        if result_images:
            images.append({"type": "text", "text": f"[images returned by tool call {result.call_id}]"})
            images.extend({"type": "image_url", "image_url": {"url": p.data_url}} for p in result_images)
    if images:
        out.append({"role": "user", "content": images})
    return out


def to_openai(trace: Trace) -> str:
    """The Chat Completions ``messages`` array as indented JSON."""
    return pretty_plain(convert_openai(trace.messages))
