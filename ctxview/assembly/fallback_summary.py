"""The engine's summaries when no summary model is available: deterministic truncations.

Without a model the engine's compaction summarizer falls back to an
"emergency" summarizer that keeps the first ~500 tokens of the source text
(after dropping sentences that look like prompt injection) and marks the cut.
The compaction's escalation then keeps that output only when it is smaller
than the source; otherwise it writes its own truncation, noting the source
size (``[Truncated from N tokens]``).  Both are pure functions of the source
text, so ctxview can reproduce the summary, its token count and the level the
engine logs ("normal" or "fallback").
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Literal

from ctxview.assembly.tokens import estimate_tokens
from ctxview.jsjson import JS_WHITESPACE, js_trim, js_trim_end

FALLBACK_SUMMARY_MARKER = "[LCM fallback summary; truncated for context management]"
FALLBACK_DIRECTIVE_SUMMARY_MARKER = "[LCM fallback summary; directive-shaped untrusted content omitted]"
FALLBACK_DIRECTIVE_OMISSION = "[LCM fallback summary omitted directive-shaped untrusted content]."
FALLBACK_MAX_TOKENS = 512  # config default of fallbackMaxTokens (the emergency summarizer's size cap)
SUMMARY_MAX_OVERAGE_FACTOR = 3  # config default: a summary may exceed its target this many times

_S = "[" + re.escape(JS_WHITESPACE) + "]"  # JS \s
_I = re.IGNORECASE | re.ASCII  # JS /i without u: only ASCII letters fold, \b is ASCII


def _js(pattern: str) -> str:
    """A JS regex source in Python: ``\\s`` is JS whitespace, ``$`` (no m flag) the end of input."""
    return pattern.replace(r"\s", _S).replace("$", r"\Z")


_SCOPE_PREFIX = r"(?:all\s+)?(?:of\s+)?(?:(?:the|your|my|any|these|those)\s+)?"
_SCOPE = r"(?:(?:previous|prior|above|earlier)(?:\s+(?:system|developer))?|(?:system|developer))"
_UNSCOPED_TARGET = (
    r"(?:(?:all|any)\s+)?(?:of\s+)?(?:(?:the|your|my|these|those|current|existing|original)\s+)?"
    r"(?:instructions?|prompts?|rules?)"
)
_DAN_OBJECT = (
    r"(?:(?:me|us)|(?:(?:(?:the|this|that|your|my|any|these|those|all|every)\s+)?(?:future\s+)?"
    r"(?:users?|requests?|questions?|prompts?|messages?)))"
)
_DAN_PREFIX = r"(?:^\s*|^\s*[A-Za-z][A-Za-z0-9 _/-]{0,40}:\s*)"

_DIRECTIVE_PATTERN_LIST = (
    re.compile(
        _js(
            "|".join(
                (
                    rf"\b(ignore|disregard|forget|override)\s+{_SCOPE_PREFIX}{_SCOPE}\s+(instructions?|prompts?|rules?)\b",
                    rf"\b(ignore|disregard|forget|override)\s+{_UNSCOPED_TARGET}\s*"
                    r"(?:$|[.,;:!?]|\s+(?:and|then|now|before|after|instead|to|with|from)\b)",
                    r"\byou\s+are\s+now\b",
                    r"\bfrom\s+now\s+on\b",
                    r"\breply\s+only\s+with\b",
                    r"\b(reveal|print|show|dump|exfiltrate|provide|give|send)\s+(?:me\s+)?(?:(?:the|your|my|any)\s+)?"
                    r"(system|developer)\s+prompt\b",
                    r"\bjailbreak\s+(?:mode|prompt|instructions?|the\s+model|the\s+assistant)\b",
                )
            )
        ),
        _I,
    ),
    re.compile(_js(r"\bdan\s+mode\b"), _I),
    re.compile(_js(r"\byou\s+are\s+dan\b"), _I),
    re.compile(_js(rf"\banswer\s+{_DAN_OBJECT}\s+as\s+dan\b"), _I),
    re.compile(_js(rf"{_DAN_PREFIX}(?:act\s+as|pretend\s+to\s+be)\s+dan\b"), _I),
    re.compile(
        _js(
            r"\b(?:[Aa][Cc][Tt]\s+[Aa][Ss]|[Pp][Rr][Ee][Tt][Ee][Nn][Dd]\s+[Tt][Oo]\s+[Bb][Ee])\s+(?!Dan\b)[Dd][Aa][Nn]\b"
        ),
        re.ASCII,
    ),
    re.compile(
        _js(
            r"\b(?:[Ee][Nn][Aa][Bb][Ll][Ee]|[Aa][Cc][Tt][Ii][Vv][Aa][Tt][Ee]|[Uu][Nn][Ll][Oo][Cc][Kk]|[Ee][Nn][Tt][Ee][Rr]"
            r"|[Ss][Tt][Aa][Rr][Tt]|[Uu][Ss][Ee])\s+(?!Dan\b)[Dd][Aa][Nn]\b"
        ),
        re.ASCII,
    ),
)
# one search for all of them: each keeps its own case rule as a scoped flag
_DIRECTIVE_PATTERNS = re.compile(
    "|".join(f"(?i:{p.pattern})" if p.flags & re.IGNORECASE else f"(?:{p.pattern})" for p in _DIRECTIVE_PATTERN_LIST),
    re.ASCII,
)
# a word every directive pattern needs (lower-cased; str.lower may only add matches): the cheap test first
_DIRECTIVE_WORDS = (
    "ignore", "disregard", "forget", "override", "you", "from", "reply", "reveal", "print", "show", "dump",
    "exfiltrate", "provide", "give", "send", "jailbreak", "dan", "answer",
)  # fmt: skip
_DIRECTIVE_CONTINUATION = re.compile(
    _js(
        r"^\s*(?:answer|reply|respond|say|output|print|return|show|provide|give|send|reveal|dump|exfiltrate)\b"
        r"[^.!?\n]{0,160}[.!?]?\s*$"
    ),
    _I,
)
_UNITS = re.compile(_js(r"\n+|[^\n.!?]+[.!?]*\s*"))
_NEWLINES_ONLY = re.compile(r"\n+\Z")
_SPACE_BEFORE_BREAK = re.compile(r"[ \t]+\n")


def _looks_directive(unit: str) -> bool:
    lowered = unit.lower()
    return any(word in lowered for word in _DIRECTIVE_WORDS) and _DIRECTIVE_PATTERNS.search(unit) is not None


def sanitize_fallback_text(text: str) -> tuple[str, bool]:
    """Sentences that look like prompt injection replaced by one omission marker per run; (text, omitted?)."""
    units = _UNITS.findall(text) or [text]
    output: list[str] = []
    omitted = False
    last_was_omission = False
    for unit in units:
        if _NEWLINES_ONLY.match(unit):
            output.append(unit)
            continue
        if _looks_directive(unit) or (
            last_was_omission and _DIRECTIVE_CONTINUATION.search(unit)
        ):
            omitted = True
            if not last_was_omission:
                output.append(FALLBACK_DIRECTIVE_OMISSION + " ")
                last_was_omission = True
            continue
        output.append(unit)
        last_was_omission = False
    return js_trim(_SPACE_BEFORE_BREAK.sub("\n", "".join(output))), omitted


def truncate_to_estimated_tokens(text: str, max_tokens: float) -> str:
    """The longest prefix whose estimate stays within ``max_tokens`` (whole code points)."""
    if max_tokens <= 0 or not text:
        return ""
    if text.isascii():  # a quarter each
        return text[: 4 * math.floor(max_tokens)]
    quarters = 0  # estimate weights are multiples of 1/4: count in quarters to stay exact
    limit = max_tokens * 4
    for index, char in enumerate(text):
        point = ord(char)
        step = 6 if _is_cjk(point) else 8 if point > 0xFFFF else 1
        if math.ceil((quarters + step) / 4) * 4 > limit:
            return text[:index]
        quarters += step
    return text


def _is_cjk(point: int) -> bool:
    return (
        0x4E00 <= point <= 0x9FFF
        or 0x3400 <= point <= 0x4DBF
        or 0x20000 <= point <= 0x2A6DF
        or 0x2A700 <= point <= 0x2B73F
        or 0x2B740 <= point <= 0x2B81F
        or 0x2B820 <= point <= 0x2CEAF
        or 0x2CEB0 <= point <= 0x2EBEF
        or 0x3000 <= point <= 0x303F
        or 0x3040 <= point <= 0x30FF
        or 0xAC00 <= point <= 0xD7AF
        or 0xFF00 <= point <= 0xFFEF
    )


def _utf16_prefix(text: str, units: int) -> str:
    """``text.slice(0, units)`` in UTF-16 code units (a split pair leaves its high surrogate)."""
    out = []
    used = 0
    for char in text:
        width = 2 if ord(char) > 0xFFFF else 1
        if used + width > units:
            if width == 2 and used < units:
                out.append(chr(0xD800 + ((ord(char) - 0x10000) >> 10)))
            break
        out.append(char)
        used += width
    return "".join(out)


def deterministic_fallback_summary(
    text: str,
    target_tokens: int,
    *,
    max_tokens: int | None = None,
    truncation_note: str | None = None,
    directive_note: str | None = None,
    always_append_note: bool = False,
) -> str:
    """The truncation: sanitized text cut to ``max_tokens`` (or ``target_tokens`` × 4 characters) plus a note."""
    trimmed = js_trim(text)
    if not trimmed:
        return ""
    sanitized, omitted = sanitize_fallback_text(trimmed)
    note = (
        (directive_note if directive_note is not None else FALLBACK_DIRECTIVE_SUMMARY_MARKER)
        if omitted
        else (truncation_note if truncation_note is not None else FALLBACK_SUMMARY_MARKER)
    )
    without_markers = js_trim("".join(sanitized.split(FALLBACK_DIRECTIVE_OMISSION))) if omitted else sanitized
    if not sanitized or not without_markers:
        return note
    if max_tokens is not None:
        budget = max(0, max(1, math.floor(max_tokens)) - estimate_tokens("\n" + note))
        head = js_trim_end(truncate_to_estimated_tokens(sanitized, budget))
        return f"{head}\n{note}" if head else note
    max_chars = max(256, max(1, math.floor(target_tokens)) * 4)
    length = len(sanitized.encode("utf-16-le", "surrogatepass")) // 2
    if length <= max_chars and not omitted and not always_append_note:
        return sanitized
    head = sanitized if length <= max_chars else js_trim_end(_utf16_prefix(sanitized, max_chars))
    return f"{head}\n{note}" if head else note


def emergency_summary(text: str, *, aggressive: bool = False, max_tokens: int = FALLBACK_MAX_TOKENS) -> str:
    """What the engine's emergency summarizer returns for ``text`` (always carrying a fallback marker)."""
    summary = js_trim(deterministic_fallback_summary(text, 600 if aggressive else 900, max_tokens=max_tokens))
    if not summary:
        return FALLBACK_SUMMARY_MARKER
    if FALLBACK_SUMMARY_MARKER in summary or FALLBACK_DIRECTIVE_SUMMARY_MARKER in summary:
        return summary
    return f"{summary}\n{FALLBACK_SUMMARY_MARKER}"


SummaryLevel = Literal["normal", "aggressive", "fallback", "capped"]


@dataclass(frozen=True, slots=True)
class FallbackSummary:
    """A summary as the compaction stores it: content, its estimate (the row's token_count) and the level logged."""

    content: str
    level: SummaryLevel

    @property
    def token_count(self) -> int:
        return estimate_tokens(self.content)


def _cap_summary_text(content: str, original_tokens: int, max_tokens: int) -> str:
    for suffix in (
        f"\n[Capped from {original_tokens} tokens to ~{max_tokens}]",
        f"\n[Capped to ~{max_tokens}]",
        "\n[Capped]",
        "",
    ):
        capped = truncate_to_estimated_tokens(content, max(0, max_tokens - estimate_tokens(suffix))) + suffix
        if estimate_tokens(capped) <= max_tokens:
            return capped
    return truncate_to_estimated_tokens(content, max_tokens)


def summarize_without_model(source_text: str, target_tokens: int, *, empty_is_failure: bool) -> FallbackSummary | None:
    """The compaction's summary of ``source_text`` when only the emergency summarizer exists.

    The emergency output is kept ("normal") when it estimates smaller than the source; an
    aggressive retry gives the same text, so otherwise the compaction's own truncation is
    written ("fallback", noting the source size).  An empty source is a failure on the 1.0
    line (``empty_is_failure``: None, as for a provider auth failure) and a fixed note on 0.15.
    """
    source = js_trim(source_text)
    if not source:
        return None if empty_is_failure else FallbackSummary("[Truncated from 0 tokens]", "fallback")
    input_tokens = max(1, estimate_tokens(source))

    def own_truncation() -> FallbackSummary:
        note = f"[Truncated from {input_tokens} tokens]"
        content = deterministic_fallback_summary(
            source,
            FALLBACK_MAX_TOKENS,
            max_tokens=FALLBACK_MAX_TOKENS,
            truncation_note=note,
            directive_note=f"{FALLBACK_DIRECTIVE_SUMMARY_MARKER}\n{note}",
            always_append_note=True,
        )
        return FallbackSummary(content, "fallback")

    summary = js_trim(emergency_summary(source))
    level: SummaryLevel = "normal"
    if not summary:
        return own_truncation()
    if estimate_tokens(summary) >= input_tokens:
        summary = js_trim(emergency_summary(source, aggressive=True))
        if not summary or estimate_tokens(summary) >= input_tokens:
            return own_truncation()
        level = "aggressive"
    tokens = estimate_tokens(summary)
    cap = math.ceil(target_tokens * SUMMARY_MAX_OVERAGE_FACTOR)
    if tokens > cap:
        return FallbackSummary(_cap_summary_text(summary, tokens, cap), "capped")
    return FallbackSummary(summary, level)
