"""Stub-tier substitution (spec §10.2): externalized tool results become short references.

Only evictable, stub-eligible tool results are replaced, before the budget
pass, so selection sees the smaller size.  The cached resolved item is never
touched: the stubbed variant is a copy, built once and cached on the item.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ctxview.assembly.resolve import ResolvedItem
from ctxview.assembly.tokens import estimate_tokens
from ctxview.jsjson import js_trim


def format_en_us(value: Any) -> str:
    """``Math.max(0, value).toLocaleString("en-US")``: thousands separators, ≤ 3 decimals."""
    number = _to_number(value)
    if math.isnan(number):
        return "NaN"
    number = max(0.0, number) if isinstance(number, float) else max(0, number)
    if isinstance(number, float) and math.isinf(number):
        return "∞"
    if isinstance(number, int) or float(number).is_integer():
        return f"{int(number):,}"
    from decimal import ROUND_HALF_UP, Decimal, InvalidOperation  # (here: a run without stubs never needs it)

    try:
        rounded = Decimal(repr(number)).quantize(Decimal("0.001"), rounding=ROUND_HALF_UP)
    except InvalidOperation:  # pragma: no cover - repr of a finite float is always decimal
        return str(number)
    whole, _, frac = f"{rounded:f}".partition(".")
    frac = frac.rstrip("0")
    head = f"{int(whole):,}"
    return f"{head}.{frac}" if frac else head


def _to_number(value: Any) -> int | float:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, (int, float)):
        return value
    if value is None:
        return 0
    if isinstance(value, str):
        text = js_trim(value)
        if text == "":
            return 0
        try:
            return int(text) if text.lstrip("+-").isdigit() else float(text)
        except ValueError:
            return math.nan
    return math.nan


def stub_text(file_id: str, tool_name: str | None, byte_size: Any, summary: str | None) -> str:
    """The ``[LCM Tool Output: …]`` reference that replaces the payload."""
    name = js_trim(tool_name) if isinstance(tool_name, str) else ""
    body = js_trim(summary) if isinstance(summary, str) else ""
    return "\n".join(
        [
            f"[LCM Tool Output: {file_id} | tool={name or 'unknown'} | {format_en_us(byte_size)} bytes]",
            "",
            "Exploration Summary:",
            body or "(no summary available)",
            "",
            'Call lcm_describe(id="<file_id above>", expandFile=true) to fetch the full output content from disk.',
        ]
    )


def stubbed_item(item: ResolvedItem) -> ResolvedItem | None:
    """The stubbed copy of an eligible item (cached on it), or None if it is not eligible."""
    if not item.stub_eligible or item.file_id is None:
        return None
    if item._stub is not None:
        return item._stub
    text = stub_text(
        item.file_id,
        item.stub_tool_name,
        item.file_byte_size if item.file_byte_size is not None else 0,
        item.file_summary,
    )
    content: Any = [{"type": "text", "text": text}] if isinstance(item.message.get("content"), list) else text
    message = dict(item.message)
    message["content"] = content
    stub = ResolvedItem(
        ordinal=item.ordinal,
        stored_message=message,
        tokens=estimate_tokens(text),
        is_message=item.is_message,
        text=text,
        message_id=item.message_id,
        seq=item.seq,
        source_role=item.source_role,
        degraded=item.degraded,
        file_id=item.file_id,
        file_byte_size=item.file_byte_size,
        file_summary=item.file_summary,
        stub_tool_name=item.stub_tool_name,
        stub_tool_call_id=item.stub_tool_call_id,
        stub_of=item,
    )
    item._stub = stub
    return stub


@dataclass(frozen=True, slots=True)
class StubResult:
    items: list[ResolvedItem]  # the evictable list with stubbed copies substituted
    stubbed_count: int
    tokens_saved: int


def apply_stub_substitution(evictable: list[ResolvedItem]) -> StubResult:
    """§10.2: replace every eligible evictable item by its stub."""
    out: list[ResolvedItem] = []
    count = 0
    saved = 0
    for item in evictable:
        stub = stubbed_item(item)
        if stub is None:
            out.append(item)
            continue
        out.append(stub)
        count += 1
        saved += max(0, item.tokens - stub.tokens)
    return StubResult(out, count, saved)
