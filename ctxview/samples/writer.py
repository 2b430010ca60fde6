"""The row writer: one LCM session database, stored the way the engine's ingest stores it.

``SessionDb`` collects conversations, messages, parts, summaries and large files in memory,
with seeded ids and fixed timestamps, then writes them in one transaction (plus the full-text
tables) and moves the file into place without ever exposing a half-written database or
clobbering a file that appeared meanwhile.  What ingest stores for a live message (spec
Appendix A.1-A.4: role, flattened content, token count, part rows) comes from
``ctxview.assembly.live``, the same code the engine uses to compare live messages with the
stored context, so samples and engine cannot drift apart.
"""

from __future__ import annotations

import hashlib
import random
import sqlite3
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ctxview.assembly.live import build_parts, stored_content, stored_role, stored_token_count
from ctxview.assembly.tokens import estimate_tokens
from ctxview.files import replacing
from ctxview.jsjson import js_stringify
from ctxview.samples.schema import LCM_FTS_TABLES, LCM_TABLES, MIGRATION_STEPS

SUMMARY_MODEL = "anthropic/claude-haiku-4-5"
# The model identity on every sample assistant message (one model throughout).
ASSISTANT_IDENTITY = {"provider": "anthropic", "api": "anthropic-messages", "model": "claude-sonnet-4-5"}


# --- public result ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SampleInfo:
    """What a build wrote, for the CLI's one-line report and for tests."""

    path: Path
    kind: str
    conversation_ids: tuple[int, ...]
    active_conversation_id: int
    message_count: int
    part_count: int
    summary_count: int
    context_item_count: int
    large_file_count: int
    context_items_by_conversation: dict[int, int] = field(default_factory=dict)
    messages_by_conversation: dict[int, int] = field(default_factory=dict)


# --- time and ids ---------------------------------------------------------------------------


def sql_time(moment: datetime) -> str:
    """``datetime('now')`` format: how the engine writes created_at."""
    return moment.strftime("%Y-%m-%d %H:%M:%S")


def iso_ms(moment: datetime) -> str:
    """ISO-8601 with milliseconds and Z: how the engine writes summary time ranges."""
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def epoch_ms(moment: datetime) -> int:
    return int(moment.replace(tzinfo=UTC).timestamp() * 1000)


_BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


class Ids:
    """Seeded source of realistic-looking ids (uuids, Anthropic tool-use ids, hex)."""

    def __init__(self, seed: str | int) -> None:
        self._rng = random.Random(f"ctxview-sample-ids:{seed}")

    def uuid(self) -> str:
        return str(uuid.UUID(int=self._rng.getrandbits(128), version=4))

    def tool_call(self) -> str:
        return "toolu_01" + "".join(self._rng.choices(_BASE62, k=22))

    def hex(self, length: int) -> str:
        return f"{self._rng.getrandbits(length * 4):0{length}x}"

    def base64ish(self, length: int) -> str:
        alphabet = _BASE62 + "+/"
        return "".join(self._rng.choices(alphabet, k=length))


# --- the rows of one database ------------------------------------------------------------


@dataclass(slots=True)
class StoredMessage:
    message_id: int
    conversation_id: int
    seq: int
    role: str
    content: str
    token_count: int
    created: datetime
    large_content: str | None


@dataclass(slots=True)
class StoredSummary:
    summary_id: str
    conversation_id: int
    kind: str
    depth: int
    content: str
    token_count: int
    earliest: datetime | None
    latest: datetime | None
    descendant_count: int
    descendant_token_count: int
    source_message_token_count: int
    created: datetime
    parent_ids: tuple[str, ...] = ()
    message_ids: tuple[int, ...] = ()
    file_ids: tuple[str, ...] = ()


@dataclass(slots=True)
class Conversation:
    conversation_id: int
    session_id: str
    session_key: str | None
    title: str | None
    created: datetime
    active: bool = True
    archived: datetime | None = None
    archive_cause: str | None = None
    # (item_type, message_id | summary_id, created)
    context: list[tuple[str, int | str, datetime]] = field(default_factory=list)
    next_seq: int = 0


class SessionDb:
    """Collects the rows of one sample database, then writes them in one transaction."""

    def __init__(self, ids: Ids) -> None:
        self.ids = ids
        self.conversations: list[Conversation] = []
        self.messages: list[StoredMessage] = []
        self.message_rows: list[tuple[Any, ...]] = []
        self.part_rows: list[tuple[Any, ...]] = []
        self.summaries: list[StoredSummary] = []
        self.large_files: list[tuple[Any, ...]] = []
        self._by_id: dict[int, StoredMessage] = {}

    # -- conversations and messages --

    def conversation(
        self,
        session_key: str | None,
        title: str | None,
        created: datetime,
        *,
        active: bool = True,
        archived: datetime | None = None,
        archive_cause: str | None = None,
    ) -> Conversation:
        conv = Conversation(
            conversation_id=len(self.conversations) + 1,
            session_id=self.ids.uuid(),
            session_key=session_key,
            title=title,
            created=created,
            active=active,
            archived=archived,
            archive_cause=archive_cause,
        )
        self.conversations.append(conv)
        return conv

    def ingest(
        self,
        conv: Conversation,
        message: dict[str, Any],
        created: datetime,
        *,
        large_content: str | None = None,
        in_context: bool = True,
    ) -> StoredMessage:
        """Store one live message as the engine's ingest would, and append it to the context."""
        role = stored_role(message)
        content = stored_content(message)
        stored = StoredMessage(
            message_id=len(self.messages) + 1,
            conversation_id=conv.conversation_id,
            seq=conv.next_seq,
            role=role,
            content=content,
            token_count=stored_token_count(message, content),
            created=created,
            large_content=large_content,
        )
        conv.next_seq += 1
        self.messages.append(stored)
        self._by_id[stored.message_id] = stored
        identity_hash = hashlib.sha256(f"{role}\0{content}".encode()).hexdigest()
        self.message_rows.append(
            (
                stored.message_id,
                conv.conversation_id,
                stored.seq,
                role,
                content,
                stored.token_count,
                identity_hash,
                sql_time(created),
                large_content,
            )
        )
        for part in build_parts(message, content):
            self.part_rows.append(
                (
                    self.ids.uuid(),
                    stored.message_id,
                    conv.session_id,
                    part.part_type,
                    part.ordinal,
                    part.text_content,
                    part.tool_call_id,
                    part.tool_name,
                    part.tool_input,
                    part.tool_output,
                    part.metadata,
                )
            )
        if in_context:
            conv.context.append(("message", stored.message_id, created))
        return stored

    def message(self, message_id: int) -> StoredMessage:
        return self._by_id[message_id]

    # -- summaries --

    def _summary_id(self, content: str, created: datetime) -> str:
        return "sum_" + hashlib.sha256(f"{content}{iso_ms(created)}".encode()).hexdigest()[:16]

    def leaf(self, conv: Conversation, message_ids: Sequence[int], content: str, created: datetime) -> StoredSummary:
        sources = [self.message(m) for m in message_ids]
        summary = StoredSummary(
            summary_id=self._summary_id(content, created),
            conversation_id=conv.conversation_id,
            kind="leaf",
            depth=0,
            content=content,
            token_count=estimate_tokens(content),
            earliest=min(m.created for m in sources),
            latest=max(m.created for m in sources),
            descendant_count=0,
            descendant_token_count=0,
            source_message_token_count=sum(m.token_count for m in sources),
            created=created,
            message_ids=tuple(message_ids),
        )
        self.summaries.append(summary)
        return summary

    def condensed(
        self, conv: Conversation, children: Sequence[StoredSummary], content: str, created: datetime
    ) -> StoredSummary:
        earliest = [c.earliest for c in children if c.earliest is not None]
        latest = [c.latest for c in children if c.latest is not None]
        summary = StoredSummary(
            summary_id=self._summary_id(content, created),
            conversation_id=conv.conversation_id,
            kind="condensed",
            depth=max(c.depth for c in children) + 1,
            content=content,
            token_count=estimate_tokens(content),
            earliest=min(earliest) if earliest else None,
            latest=max(latest) if latest else None,
            descendant_count=sum(c.descendant_count + 1 for c in children),
            descendant_token_count=sum(c.token_count + c.descendant_token_count for c in children),
            source_message_token_count=sum(c.source_message_token_count for c in children),
            created=created,
            parent_ids=tuple(c.summary_id for c in children),
        )
        self.summaries.append(summary)
        return summary

    def large_file(
        self,
        conv: Conversation,
        *,
        tool_name: str,
        payload: str,
        exploration_summary: str,
        created: datetime,
    ) -> str:
        file_id = "file_" + self.ids.hex(16)
        encoded = payload.encode("utf-8")
        self.large_files.append(
            (
                file_id,
                conv.conversation_id,
                f"{tool_name}.txt",
                "text/plain",
                len(encoded),
                payload.count("\n") + 1,
                f"/home/dev/.openclaw/lcm-files/{conv.conversation_id}/{file_id}.txt",
                exploration_summary,
                sql_time(created),
            )
        )
        return file_id

    # -- writing --

    def write(self, path: Path) -> None:
        conn = sqlite3.connect(path, isolation_level=None)
        try:
            conn.execute("PRAGMA page_size = 4096")
            conn.execute("PRAGMA journal_mode = DELETE")
            conn.execute("PRAGMA foreign_keys = ON")
            conn.execute("BEGIN")
            for ddl in LCM_TABLES:
                conn.execute(ddl)
            fts = _create_fts(conn)
            self._insert(conn, fts)
            conn.execute("COMMIT")
            conn.execute("ANALYZE")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        finally:
            conn.close()

    def _insert(self, conn: sqlite3.Connection, fts: bool) -> None:
        conn.executemany(
            "INSERT INTO conversations (conversation_id, session_id, session_key, active, archived_at, archive_cause,"
            " title, bootstrapped_at, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    c.conversation_id,
                    c.session_id,
                    c.session_key,
                    1 if c.active else 0,
                    sql_time(c.archived) if c.archived else None,
                    c.archive_cause,
                    c.title,
                    sql_time(c.created),
                    sql_time(c.created),
                    sql_time(self._updated_at(c)),
                )
                for c in self.conversations
            ],
        )
        conn.executemany(
            "INSERT INTO messages (message_id, conversation_id, seq, role, content, token_count, identity_hash,"
            " created_at, large_content) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            self.message_rows,
        )
        conn.executemany(
            "INSERT INTO message_parts (part_id, message_id, session_id, part_type, ordinal, text_content,"
            " tool_call_id, tool_name, tool_input, tool_output, metadata) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            self.part_rows,
        )
        conn.executemany(
            "INSERT INTO summaries (summary_id, conversation_id, kind, depth, content, token_count, earliest_at,"
            " latest_at, descendant_count, descendant_token_count, source_message_token_count, created_at,"
            " file_ids, model) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    s.summary_id,
                    s.conversation_id,
                    s.kind,
                    s.depth,
                    s.content,
                    s.token_count,
                    iso_ms(s.earliest) if s.earliest else None,
                    iso_ms(s.latest) if s.latest else None,
                    s.descendant_count,
                    s.descendant_token_count,
                    s.source_message_token_count,
                    sql_time(s.created),
                    js_stringify(list(s.file_ids)),
                    SUMMARY_MODEL,
                )
                for s in self.summaries
            ],
        )
        conn.executemany(
            "INSERT INTO summary_messages (summary_id, message_id, ordinal) VALUES (?, ?, ?)",
            [(s.summary_id, m, i) for s in self.summaries for i, m in enumerate(s.message_ids)],
        )
        conn.executemany(
            "INSERT INTO summary_parents (summary_id, parent_summary_id, ordinal) VALUES (?, ?, ?)",
            [(s.summary_id, p, i) for s in self.summaries for i, p in enumerate(s.parent_ids)],
        )
        conn.executemany(
            "INSERT INTO context_items (conversation_id, ordinal, item_type, message_id, summary_id, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            [
                (
                    c.conversation_id,
                    ordinal,
                    item_type,
                    ref if item_type == "message" else None,
                    ref if item_type == "summary" else None,
                    sql_time(created),
                )
                for c in self.conversations
                for ordinal, (item_type, ref, created) in enumerate(c.context)
            ],
        )
        conn.executemany(
            "INSERT INTO large_files (file_id, conversation_id, file_name, mime_type, byte_size, line_count,"
            " storage_uri, exploration_summary, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            self.large_files,
        )
        first = min((c.created for c in self.conversations), default=datetime(2026, 1, 1))
        conn.executemany(
            "INSERT INTO lcm_migration_state (step_name, algorithm_version, completed_at) VALUES (?, ?, ?)",
            [(name, version, sql_time(first)) for name, version in MIGRATION_STEPS],
        )
        if fts:
            conn.execute(
                "INSERT INTO messages_fts (rowid, content) SELECT message_id, content FROM messages"
                " WHERE content != '' ORDER BY message_id"
            )
            conn.execute(
                "INSERT INTO summaries_fts (summary_id, content) SELECT summary_id, content FROM summaries"
                " ORDER BY rowid"
            )
            conn.execute(
                "INSERT INTO summaries_fts_cjk (summary_id, content) SELECT summary_id, content FROM summaries"
                " ORDER BY rowid"
            )

    def _updated_at(self, conv: Conversation) -> datetime:
        times = [m.created for m in self.messages if m.conversation_id == conv.conversation_id]
        times += [s.created for s in self.summaries if s.conversation_id == conv.conversation_id]
        if conv.archived:
            times.append(conv.archived)
        return max(times, default=conv.created)

    def info(self, path: Path, kind: str) -> SampleInfo:
        items = {c.conversation_id: len(c.context) for c in self.conversations}
        per_conv: dict[int, int] = {}
        for m in self.messages:
            per_conv[m.conversation_id] = per_conv.get(m.conversation_id, 0) + 1
        active = [c.conversation_id for c in self.conversations if c.active]
        return SampleInfo(
            path=path,
            kind=kind,
            conversation_ids=tuple(c.conversation_id for c in self.conversations),
            active_conversation_id=active[0] if active else self.conversations[0].conversation_id,
            message_count=len(self.messages),
            part_count=len(self.part_rows),
            summary_count=len(self.summaries),
            context_item_count=sum(items.values()),
            large_file_count=len(self.large_files),
            context_items_by_conversation=items,
            messages_by_conversation=per_conv,
        )


def _create_fts(conn: sqlite3.Connection) -> bool:
    """Create the full-text tables; an SQLite without FTS5/trigram gets a DB without them."""
    conn.execute("SAVEPOINT fts")
    try:
        for ddl in LCM_FTS_TABLES:
            conn.execute(ddl)
    except sqlite3.OperationalError:
        conn.execute("ROLLBACK TO fts")
        conn.execute("RELEASE fts")
        return False
    conn.execute("RELEASE fts")
    return True


# --- moving a finished database into place ----------------------------------------------------


def write_atomically(db: SessionDb, target: Path, *, overwrite: bool) -> None:
    """Build the file next to ``target`` and rename it into place.

    A reader never sees a half-written database; without ``overwrite`` a file that appeared at
    ``target`` meanwhile is left alone.
    """
    exists = f"{target} already exists; choose another path or allow overwriting"
    with replacing(target, overwrite=overwrite, exists_message=exists) as temporary:
        temporary.unlink()  # let SQLite create the file itself
        db.write(temporary)
