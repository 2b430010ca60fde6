"""``f``: the focus briefs the engine wrote for the conversation, newest first, and each one's text.

The brief the assembler overlays (the newest ``active`` one) is marked ``in use``; the
detail shows its prompt, what it covers, the summaries it was written from and its
whole text.  A database from before focus briefs says so instead of failing.
"""

from __future__ import annotations

import sqlite3
from typing import ClassVar

from rich.console import Group, RenderableType
from rich.text import Text
from textual.binding import BindingType

from ctxview.browse.engine_tables import FocusBrief, brief_sources, list_focus_briefs
from ctxview.tui.actions import bindings
from ctxview.tui.screens.list_detail import ListDetailScreen, detail_field
from ctxview.tui.view import clean_block, clean_inline
from ctxview.tui.widgets.rows_list import Cell, ListColumn

TEXT_LIMIT = 20_000


def brief_cells(brief: FocusBrief) -> list[Cell]:
    status_tone = "active" if brief.used else "muted" if brief.status in ("superseded", "inactive") else (
        "warning" if brief.status == "failed" else "")
    status = f"{brief.status} · in use" if brief.used else brief.status
    tokens = "" if brief.token_count is None else f"{brief.token_count:,}"
    target = "" if brief.target_tokens is None else f"{brief.target_tokens:,}"
    return [
        (brief.brief_id, "active" if brief.used else ""),
        (status, status_tone),
        (brief.created_at or "", "muted"),
        (tokens, ""),
        (target, "muted"),
        ("" if brief.covered_message_seq is None else str(brief.covered_message_seq), ""),
        (brief.prompt or "", "muted"),
    ]


def _field(label: str, value: str, style: str = "") -> Text:
    """A detail line, labels as wide as the longest of this pane's."""
    return detail_field(label, value, style, width=14)


class BriefsScreen(ListDetailScreen[FocusBrief]):
    TITLE_NOUN = "focus briefs"
    EMPTY = "this conversation has no focus briefs"
    BINDINGS: ClassVar[list[BindingType]] = bindings("briefs")
    COLUMNS = (
        ListColumn("brief", 20),
        ListColumn("status", 18),
        ListColumn("created", 19),
        ListColumn("tokens", 7, ">"),
        ListColumn("target", 7, ">"),
        ListColumn("to seq", 7, ">"),
        ListColumn("prompt", None),
    )

    def read(self, connection: sqlite3.Connection) -> tuple[list[FocusBrief], list[str]]:
        found = list_focus_briefs(connection, self.conversation_id)
        return found.briefs, found.notes

    def cells(self, row: FocusBrief) -> list[Cell]:
        return brief_cells(row)

    def status(self, rows: list[FocusBrief]) -> Text:
        used = next((b.brief_id for b in rows if b.used), None)
        text = Text(f"{len(rows):,} focus brief{'s' if len(rows) != 1 else ''}; ")
        text.append(f"in use: {used}" if used else "none is active: the assembler overlays no brief",
                    style="bold" if used else "dim")
        return text

    def detail(self, row: FocusBrief, connection: sqlite3.Connection) -> RenderableType:
        parts: list[Text] = [Text(clean_inline(row.brief_id, 200), style="bold")]
        use = "in use: the assembler overlays it on the summaries it covers" if row.used else (
            "not in use" + (" (a newer active brief is)" if row.status == "active" else ""))
        parts.append(_field("status", f"{row.status} — {use}", "bold" if row.used else ""))
        parts.append(_field("prompt", row.prompt or "—"))
        parts.append(_field("tokens", f"{row.token_count if row.token_count is not None else '—'} "
                                      f"(target {row.target_tokens if row.target_tokens is not None else '—'})"))
        covers = []
        if row.covered_message_seq is not None:
            covers.append(f"messages up to seq {row.covered_message_seq}")
        if row.covered_latest_at:
            covers.append(f"up to {row.covered_latest_at}")
        parts.append(_field("covers", ", ".join(covers) or "— (no watermark: it covers nothing)"))
        parts.append(_field("created", row.created_at or "—"))
        if row.updated_at:
            parts.append(_field("updated", row.updated_at))
        if row.superseded_at:
            parts.append(_field("superseded", row.superseded_at))
        if row.error:
            parts.append(_field("error", row.error, "red"))
        sources = brief_sources(connection, self.conversation_id, row.brief_id)
        if sources:
            parts.append(Text("\nwritten from", style="bold"))
            for source in sources:
                line = Text(f"  {clean_inline(source.summary_id, 80)} ({clean_inline(source.role, 40)})")
                if not source.exists:
                    line.append(" — the summary does not exist", style="yellow")
                elif source.in_context:
                    line.append(" — in the context", style="green")
                else:
                    line.append(" — not in the context", style="dim")
                parts.append(line)
        parts.append(Text("\ntext", style="bold"))
        parts.append(Text(clean_block(row.content[:TEXT_LIMIT]) if row.content.strip() else "(empty)"))
        return Group(*parts)
