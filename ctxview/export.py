"""Exports of an assembled context for people and other tools.

Every format is a pure function of a Trace, so the CLI, the TUI's export
dialog and the tests produce byte-identical output for the same run.
"""

from __future__ import annotations

import json
from typing import Any

from ctxview.jsjson import to_plain
from ctxview.model import Trace

_CALL_TYPES = frozenset({"toolCall", "toolUse", "tool_use", "tool-use", "functionCall", "function_call"})


def to_markdown(trace: Trace) -> str:
    """A readable transcript: the run's settings and totals, then each message."""
    s = trace.summary
    p = trace.params
    keys = trace.by_key()
    lines = [
        "# Assembled context",
        "",
        f"- conversation: {trace.conversation_id}",
        f"- prompt: {json.dumps(p.prompt, ensure_ascii=False)}",
        f"- budget: {s.token_budget:,} tokens"
        + (f" ({s.reserved_tokens:,} reserved → {s.effective_budget:,})" if s.reserved_tokens else ""),
        f"- selection: {s.selection_mode}; prompt-aware {'on' if p.prompt_aware_eviction else 'off'}; "
        f"engine step {'on' if p.engine else 'off'}",
        f"- fresh tail: from ordinal {s.fresh_tail_ordinal if s.fresh_tail_ordinal is not None else '—'} "
        f"({s.tail_tokens:,} tokens)",
        f"- tokens: assembler {s.assembler_tokens:,}; final (serialized) {s.final_tokens:,}",
        f"- messages: {len(trace.messages)}",
        "",
    ]
    for index, message in enumerate(trace.messages):
        key = trace.message_keys[index] if index < len(trace.message_keys) else None
        decision = keys.get(key) if key else None
        role = message.get("role", "?") if isinstance(message, dict) else "?"
        tags = []
        if decision is not None:
            tags.append(f"item {decision.ordinal}" if decision.ordinal is not None else f"live {decision.live_index}")
            if decision.kind == "summary":
                tags.append(decision.label)
            tags.append(decision.outcome.replace("-", " "))
        elif role == "toolResult":
            tags.append("synthetic result")
        lines.append(f"## {index + 1}. {role}" + (f" ({', '.join(tags)})" if tags else ""))
        lines.append("")
        if isinstance(message, dict) and role == "toolResult":
            error = " (error)" if message.get("isError") is True else ""
            lines.append(f"result of `{message.get('toolName', 'unknown')}` `{message.get('toolCallId', '')}`{error}")
            lines.append("")
        lines.extend(_markdown_content(message.get("content") if isinstance(message, dict) else message))
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def _markdown_content(content: Any) -> list[str]:
    if isinstance(content, str):
        return [_fence_if_needed(content)]
    if not isinstance(content, list):
        return [_json_fence(content)]
    out: list[str] = []
    for block in content:
        if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
            out.append(_fence_if_needed(block["text"]))
        elif isinstance(block, dict) and block.get("type") in _CALL_TYPES:
            ident = block.get("id") or block.get("call_id") or ""
            args = block.get("arguments", block.get("input"))
            out.append(f"**tool call** `{block.get('name', '?')}` `{ident}`")
            out.append(_json_fence(_maybe_json(args)))
        elif isinstance(block, dict) and block.get("type") in ("thinking", "reasoning"):
            text = block.get("thinking") or block.get("text") or ""
            out.append("> *thinking:* " + str(text).replace("\n", "\n> "))
        else:
            out.append(_json_fence(block))
        out.append("")
    return out[:-1] if out else ["*(empty)*"]


def _maybe_json(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _json_fence(value: Any) -> str:
    body = json.dumps(to_plain(value), ensure_ascii=False, indent=2)
    return f"```json\n{body}\n```"


def _fence_if_needed(text: str) -> str:
    """Keep text readable but never let it break the Markdown structure."""
    if "```" in text:
        return "````text\n" + text + "\n````"
    if text.lstrip().startswith("<summary") or text.lstrip().startswith("<focus_brief"):
        return "```xml\n" + text + "\n```"
    return text
