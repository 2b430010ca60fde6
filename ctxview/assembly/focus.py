"""Focus-brief overlay (spec §10.1): an active brief replaces the summaries it covers.

The overlay runs right after resolution and before the fresh tail.  Covered
summaries leave the resolved list and one focus item takes the place of the
first of them; it is always kept and never part of the fresh tail.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ctxview.assembly.render import render_focus_brief
from ctxview.assembly.resolve import ResolvedItem
from ctxview.assembly.tokens import estimate_tokens
from ctxview.jsdate import parse_utc_timestamp
from ctxview.jsjson import js_trim
from ctxview.model import FocusBriefRow


@dataclass(frozen=True, slots=True)
class FocusOverlay:
    items: list[ResolvedItem]  # the resolved list after the overlay
    focus_item: ResolvedItem | None
    covered: tuple[ResolvedItem, ...]  # summaries the brief replaced, in ordinal order


def is_covered(item: ResolvedItem, brief: FocusBriefRow) -> bool:
    """§10.1 coverage: by source-message watermark, else by ``latest_at``."""
    if item.summary is None:
        return False
    if brief.covered_message_seq is not None and item.summary_max_source_seq is not None:
        watermark = _as_number(brief.covered_message_seq)
        seq = _as_number(item.summary_max_source_seq)
        return watermark is not None and seq is not None and seq <= watermark
    if brief.covered_latest_at is not None and item.summary.latest_at is not None:
        # Millisecond compare; an unparseable date is NaN, and NaN compares false.
        return parse_utc_timestamp(item.summary.latest_at) <= parse_utc_timestamp(brief.covered_latest_at)
    return False


def _as_number(value: Any) -> float | None:
    """JS relational comparison converts to numbers; NaN compares false (None here)."""
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        return None if value != value else float(value)
    if isinstance(value, str):
        text = js_trim(value)
        if text == "":
            return 0.0
        try:
            return float(text)
        except ValueError:
            return None
    return None


def apply_focus_overlay(resolved: list[ResolvedItem], brief: FocusBriefRow | None, timezone: str) -> FocusOverlay:
    """Replace covered summaries by one focus item (the input list is not modified)."""
    if brief is None or not isinstance(brief.content, str) or js_trim(brief.content) == "":
        return FocusOverlay(list(resolved), None, ())
    covered = [item for item in resolved if is_covered(item, brief)]
    if not covered:
        return FocusOverlay(list(resolved), None, ())
    first = min(item.ordinal for item in covered)
    content = render_focus_brief(brief, timezone)
    focus = ResolvedItem(
        ordinal=first,
        stored_message={"role": "user", "content": content},
        tokens=estimate_tokens(content),
        is_message=False,
        text=brief.content,
        is_focus_brief=True,
        brief=brief,
        covered_ordinals=tuple(item.ordinal for item in covered),
    )
    covered_ids = {id(item) for item in covered}
    out: list[ResolvedItem] = []
    inserted = False
    for item in resolved:
        if id(item) in covered_ids:
            continue
        if not inserted and item.ordinal > first:
            out.append(focus)
            inserted = True
        out.append(item)
    if not inserted:
        out.append(focus)
    return FocusOverlay(out, focus, tuple(covered))
