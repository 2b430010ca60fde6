"""``L``: the large files the engine stored for the conversation, newest first, and each one's detail.

A large tool result is kept outside the message (``messages.large_content`` names the
file); the assembler may show its stub instead.  The detail gives the file's name,
type, size, where it is stored, the engine's exploration summary and the messages
that refer to it, each marked as in the context or not.
"""

from __future__ import annotations

import sqlite3
from typing import ClassVar

from rich.console import Group, RenderableType
from rich.text import Text
from textual.binding import BindingType

from ctxview.browse.engine_tables import LargeFile, file_references, human_bytes, list_large_files
from ctxview.tui.actions import bindings
from ctxview.tui.screens.list_detail import ListDetailScreen, detail_field
from ctxview.tui.view import clean_block, clean_inline
from ctxview.tui.widgets.rows_list import Cell, ListColumn

TEXT_LIMIT = 20_000


def file_cells(row: LargeFile) -> list[Cell]:
    return [
        (row.file_id, ""),
        (row.file_name or "—", ""),
        (row.mime_type or "—", "muted"),
        (human_bytes(row.byte_size), ""),
        ("" if row.line_count is None else f"{row.line_count:,}", "muted"),
        (str(row.references), "" if row.references else "warning"),
        (row.created_at or "", "muted"),
    ]


class LargeFilesScreen(ListDetailScreen[LargeFile]):
    TITLE_NOUN = "large files"
    EMPTY = "this conversation has no large files"
    BINDINGS: ClassVar[list[BindingType]] = bindings("files")
    COLUMNS = (
        ListColumn("file", 19),
        ListColumn("name", None),
        ListColumn("type", 12),
        ListColumn("size", 10, ">"),
        ListColumn("lines", 7, ">"),
        ListColumn("refs", 4, ">"),
        ListColumn("created", 19),
    )

    def read(self, connection: sqlite3.Connection) -> tuple[list[LargeFile], list[str]]:
        found = list_large_files(connection, self.conversation_id)
        return found.files, found.notes

    def cells(self, row: LargeFile) -> list[Cell]:
        return file_cells(row)

    def status(self, rows: list[LargeFile]) -> Text:
        total = sum(f.byte_size or 0 for f in rows)
        return Text(f"{len(rows):,} large file{'s' if len(rows) != 1 else ''}, {human_bytes(total)} in all")

    def detail(self, row: LargeFile, connection: sqlite3.Connection) -> RenderableType:
        parts: list[Text] = [Text(clean_inline(row.file_id, 200), style="bold")]
        parts.append(detail_field("name", row.file_name or "—"))
        parts.append(detail_field("type", row.mime_type or "—"))
        size = human_bytes(row.byte_size)
        if row.byte_size is not None and row.byte_size >= 1024:
            size += f" ({row.byte_size:,} bytes)"
        parts.append(detail_field("size", size + (f", {row.line_count:,} lines" if row.line_count is not None else "")))
        parts.append(detail_field("stored at", row.storage_uri or "—"))
        parts.append(detail_field("created", row.created_at or "—"))
        refs = file_references(connection, self.conversation_id, row.file_id)
        parts.append(Text("\nreferred to by", style="bold"))
        if not refs:
            parts.append(Text("  no message of this conversation", style="yellow"))
        for ref in refs:
            line = Text(f"  message {ref.message_id} (seq {ref.seq}, {clean_inline(ref.role, 30)})")
            line.append(" — in the context" if ref.in_context else " — not in the context",
                        style="green" if ref.in_context else "dim")
            parts.append(line)
        parts.append(Text("\nexploration summary", style="bold"))
        summary = row.exploration_summary
        parts.append(Text(clean_block(summary[:TEXT_LIMIT]) if summary and summary.strip() else "(none)"))
        return Group(*parts)
