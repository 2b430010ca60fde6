"""``anthropic``: a Messages API request body that the API accepts (roles alternate, no empty blocks)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from ctxview.export.jsontext import pretty_plain
from ctxview.export.turns import (
    Image,
    Part,
    Result,
    Text,
    arguments_object,
    block_json,
    text_items,
    thinking_block,
    to_turns,
)
from ctxview.jsjson import is_blank, js_trim_end

if TYPE_CHECKING:
    from ctxview.model import Trace


_ANTHROPIC_ID_BAD = re.compile(r"[^A-Za-z0-9_-]")


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
    turns = to_turns(messages, _anthropic_id)
    system_texts = [system] if system else []
    raw: list[tuple[str, list[dict[str, Any]]]] = []
    for turn in turns:
        if turn.role == "system":
            system_texts.extend(text_items(turn.parts))
        elif turn.role == "user":
            raw.append(("user", _anthropic_blocks(turn.parts, role="user", provider=None)))
        else:
            blocks = _anthropic_blocks(turn.parts, role="assistant", provider=turn.provider)
            blocks.extend(
                {"type": "tool_use", "id": c.final_id, "name": c.name, "input": arguments_object(c)}
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


def _anthropic_image(part: Image) -> dict[str, Any]:
    if part.data is not None:
        return {
            "type": "image",
            "source": {"type": "base64", "media_type": part.media_type or "image/png", "data": part.data},
        }
    return {"type": "image", "source": {"type": "url", "url": part.url or ""}}


def _anthropic_blocks(parts: list[Part], *, role: str, provider: str | None) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for part in parts:
        if isinstance(part, Text):
            if not is_blank(part.text):
                blocks.append({"type": "text", "text": part.text})
        elif isinstance(part, Image):
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
            blocks.append({"type": "text", "text": block_json(thinking_block(part))})
    return blocks


def _tool_result_block(result: Result) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": result.call_id}
    content: list[dict[str, Any]] = []
    for part in result.parts:
        if isinstance(part, Text):
            if not is_blank(part.text):
                content.append({"type": "text", "text": part.text})
        elif isinstance(part, Image):
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
    return pretty_plain(convert_anthropic(trace.messages))
