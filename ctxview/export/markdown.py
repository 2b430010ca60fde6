"""``markdown``: a readable transcript with the run's settings and token totals, for people."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from ctxview.export.jsontext import pretty_js
from ctxview.export.native import messages_sha256
from ctxview.export.turns import CALL_TYPES, RESULT_ROLES, Call, call_of, image_of, reasoning_text
from ctxview.jsjson import js_parse, js_stringify, to_plain
from ctxview.model import count_text
from ctxview.report import fallback_text, rules_text

if TYPE_CHECKING:
    from ctxview.model import Decision, Trace


def to_markdown(trace: Trace) -> str:
    """A readable transcript: the run's settings and token totals, then each message."""
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
    if role in RESULT_ROLES:
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
        elif isinstance(block, dict) and (image := image_of(block)) is not None:
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
            call = call_of(block)
            out.append(f"**Tool call** `{call.name}` (call `{call.raw_id or ''}`)")
            out.append("")
            out.append(_fenced(_arguments_display(call), "json"))
        elif kind == "thinking" and isinstance(block.get("thinking"), str):
            signed = " (signed)" if block.get("thinkingSignature") else ""
            out.append(_quote("thinking" + signed, block["thinking"]))
        elif kind == "reasoning":
            text = reasoning_text(block)
            if text:
                out.append(_quote("reasoning", text))
            else:
                out.append(f"> *encrypted reasoning item* `{block.get('id', '')}`")
        elif kind == "redacted_thinking":
            out.append("> *redacted thinking*")
        elif isinstance(block, dict) and (image := image_of(block)) is not None:
            out.append(f"*{image.describe()}*")
        else:
            out.append(_fenced(pretty_js(block), "json"))
        out.append("")
    return out[:-1] if out else ["*(empty)*"]


def _arguments_display(call: Call) -> str:
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
