"""The focus briefs and large files the engine wrote for a conversation, each with its detail.

Both tables have the same columns on the 0.15 and the 1.0 line (``focus_briefs``,
``focus_brief_sources``, ``large_files``); an older database may lack a table
(focus briefs came later than large files) or a column (``large_files.line_count``
was added by a migration), which reads as a note or as an empty field.  The brief the
assembler uses is the newest ``active`` one (``created_at DESC, rowid DESC``, spec §1.1).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field

from ctxview.browse.schema import SchemaProbe, as_int, as_text, plural


@dataclass(frozen=True, slots=True)
class FocusBrief:
    brief_id: str
    status: str
    prompt: str | None
    content: str
    token_count: int | None
    target_tokens: int | None
    covered_latest_at: str | None
    covered_message_seq: int | None
    created_at: str | None
    updated_at: str | None
    superseded_at: str | None
    error: str | None
    used: bool  # the brief the assembler overlays (newest active)


@dataclass(frozen=True, slots=True)
class BriefSource:
    summary_id: str
    role: str
    ordinal: int | None
    exists: bool  # the summary row exists
    in_context: bool  # a context item of this conversation


@dataclass(slots=True)
class BriefList:
    briefs: list[FocusBrief]  # newest first
    notes: list[str] = field(default_factory=list)
    has_sources: bool = False  # the database has focus_brief_sources


@dataclass(frozen=True, slots=True)
class LargeFile:
    file_id: str
    file_name: str | None
    mime_type: str | None
    byte_size: int | None
    line_count: int | None
    storage_uri: str | None
    exploration_summary: str | None
    created_at: str | None
    references: int  # messages of the conversation whose large_content names it


@dataclass(frozen=True, slots=True)
class FileReference:
    """A message whose ``large_content`` names the file, and whether the context holds it."""

    message_id: int
    seq: int | None
    role: str
    in_context: bool


@dataclass(slots=True)
class FileList:
    files: list[LargeFile]  # newest first
    notes: list[str] = field(default_factory=list)


def list_focus_briefs(connection: sqlite3.Connection, conversation_id: int) -> BriefList:
    """Every brief of the conversation, newest first, the one in use marked."""
    probe = SchemaProbe(connection)
    t = "focus_briefs"
    if not probe.has(t):
        return BriefList([], [f"this database has no {t} table (written before lossless-claw had focus briefs)"])
    needed = [c for c in ("brief_id", "content", "status") if not probe.has(t, c)]
    if needed:
        return BriefList([], [f"the focus_briefs table lacks {', '.join(needed)}: its briefs cannot be read"])
    c = probe.col
    created = c(t, "created_at")
    rows = probe.query(
        f"SELECT brief_id, status, {c(t, 'prompt')}, content, {c(t, 'token_count')}, {c(t, 'target_tokens')},"
        f" {c(t, 'covered_latest_at')}, {c(t, 'covered_message_seq')}, {created}, {c(t, 'updated_at')},"
        f" {c(t, 'superseded_at')}, {c(t, 'error')}"
        f" FROM focus_briefs WHERE conversation_id = ? ORDER BY {created} DESC, rowid DESC",
        (conversation_id,),
    )
    used_id = next((as_text(r[0]) for r in rows if r[1] == "active"), None)
    briefs = [
        FocusBrief(
            brief_id=as_text(bid) or "",
            status=as_text(status) or "",
            prompt=as_text(prompt),
            content=as_text(content) or "",
            token_count=as_int(tokens),
            target_tokens=as_int(target),
            covered_latest_at=as_text(covered_at),
            covered_message_seq=as_int(covered_seq),
            created_at=as_text(created_at),
            updated_at=as_text(updated),
            superseded_at=as_text(superseded),
            error=as_text(error),
            used=as_text(bid) == used_id,
        )
        for (bid, status, prompt, content, tokens, target, covered_at, covered_seq, created_at, updated, superseded,
             error) in rows
    ]
    notes: list[str] = []
    if used_id is not None:
        used = next(b for b in briefs if b.used)
        if not used.content.strip():
            notes.append(f"the active brief {used_id} is empty: the assembler skips the overlay")
    sources = probe.has("focus_brief_sources", "summary_id") and probe.has("focus_brief_sources", "brief_id")
    return BriefList(briefs, notes, sources)


def brief_sources(connection: sqlite3.Connection, conversation_id: int, brief_id: str) -> list[BriefSource]:
    """The summaries a brief was written from (``focus_brief_sources``), in ordinal order; [] without the table."""
    probe = SchemaProbe(connection)
    t = "focus_brief_sources"
    if not (probe.has(t, "brief_id") and probe.has(t, "summary_id")):
        return []
    rows = probe.query(
        f"SELECT fs.summary_id, {probe.col(t, 'role', 'fs')}, {probe.col(t, 'ordinal', 'fs')},"
        " EXISTS(SELECT 1 FROM summaries s WHERE s.summary_id = fs.summary_id),"
        " EXISTS(SELECT 1 FROM context_items ci WHERE ci.summary_id = fs.summary_id AND ci.conversation_id = ?)"
        f" FROM focus_brief_sources fs WHERE fs.brief_id = ? ORDER BY {probe.col(t, 'ordinal', 'fs')}, fs.summary_id",
        (conversation_id, brief_id),
    )
    return [
        BriefSource(as_text(sid) or "", as_text(role) or "", as_int(ordinal), bool(exists), bool(in_context))
        for sid, role, ordinal, exists, in_context in rows
    ]


def list_large_files(connection: sqlite3.Connection, conversation_id: int) -> FileList:
    """Every externalized payload of the conversation, newest first."""
    probe = SchemaProbe(connection)
    t = "large_files"
    if not probe.has(t, "file_id"):
        return FileList([], [f"this database has no {t} table (written before lossless-claw stored large files)"])
    c = probe.col
    created = c(t, "created_at")
    rows = probe.query(
        f"SELECT file_id, {c(t, 'file_name')}, {c(t, 'mime_type')}, {c(t, 'byte_size')}, {c(t, 'line_count')},"
        f" {c(t, 'storage_uri')}, {c(t, 'exploration_summary')}, {created}"
        f" FROM large_files WHERE {c(t, 'conversation_id')} = ? ORDER BY {created} DESC, rowid DESC",
        (conversation_id,),
    )
    notes: list[str] = []
    if not probe.has(t, "conversation_id"):
        notes.append("the large_files table has no conversation_id column: files cannot be told apart by conversation")
    counts: dict[str, int] = {}
    if probe.has("messages", "large_content"):
        counts = {
            as_text(fid) or "": int(n)
            for fid, n in probe.query(
                "SELECT large_content, COUNT(*) FROM messages WHERE conversation_id = ? AND large_content IS NOT NULL"
                " GROUP BY large_content",
                (conversation_id,),
            )
        }
    files = [
        LargeFile(as_text(fid) or "", as_text(name), as_text(mime), as_int(size), as_int(lines), as_text(uri),
                  as_text(summary), as_text(created_at), counts.get(as_text(fid) or "", 0))
        for fid, name, mime, size, lines, uri, summary, created_at in rows
    ]
    unreferenced = sum(1 for f in files if not f.references)
    if unreferenced and probe.has("messages", "large_content"):
        notes.append(f"no message of this conversation refers to {plural(unreferenced, 'file')}")
    return FileList(files, notes)


def file_references(connection: sqlite3.Connection, conversation_id: int, file_id: str) -> list[FileReference]:
    """The messages whose ``large_content`` is this file, in seq order (what the stub tier replaces)."""
    probe = SchemaProbe(connection)
    if not probe.has("messages", "large_content"):
        return []
    rows = probe.query(
        "SELECT m.message_id, m.seq, m.role, EXISTS(SELECT 1 FROM context_items ci WHERE ci.message_id = m.message_id"
        " AND ci.conversation_id = ?1) FROM messages m WHERE m.conversation_id = ?1 AND m.large_content = ?2"
        " ORDER BY m.seq, m.message_id",
        (conversation_id, file_id),
    )
    return [
        FileReference(int(mid), as_int(seq), as_text(role) or "", bool(in_context))
        for mid, seq, role, in_context in rows
        if as_int(mid) is not None
    ]


def human_bytes(size: int | None) -> str:
    if size is None:
        return "—"
    if size < 1024:
        return f"{size} B"
    value = float(size)
    for unit in ("KiB", "MiB", "GiB", "TiB"):
        value /= 1024
        if value < 1024 or unit == "TiB":
            return f"{value:.1f} {unit}"
    return f"{size} B"
