"""Read-only access to an LCM session database (spec §1).

The store opens the file with ``mode=ro`` and ``PRAGMA query_only``, never
writes (no journal-mode change, no temp tables in the database) and works
while the agent keeps writing in WAL mode.  A WAL database nobody has open
(no ``-wal``, or a ``-wal`` without its ``-shm``) is read as an immutable snapshot, so
that no ``-wal`` or ``-shm`` is left behind (``ctxview.sqlite_readonly``); where the
``-shm`` cannot be created (a read-only file system) it falls back to ``immutable=1`` with a warning.  A session is
read in one bulk query per table, so a 100,000-message conversation loads in
seconds.  What is wrong with a file is said in one sentence
(``DatabaseError``); rows the assembler cannot use (a missing row, an id
that is no whole number) are skipped and counted in ``Session.warnings``.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from sys import intern
from types import TracebackType
from typing import Any, TypeVar

from ctxview import render_cache
from ctxview.dbvalues import engine_number, total, whole_number
from ctxview.dbvalues import text as read_text
from ctxview.errors import ConversationNotFound, DatabaseError
from ctxview.gc_pause import gc_paused
from ctxview.model import (
    ContextItemRow,
    ConversationInfo,
    ConversationRef,
    DeferredParts,
    FocusBriefRow,
    LargeFileRow,
    MessageRow,
    Params,
    PartRow,
    PartsSource,
    RowTexts,
    Session,
    SummaryRow,
    count_text,
    unread_texts_row,
)
from ctxview.render_cache import Identity, database_identity
from ctxview.sqlite_readonly import (  # noqa: F401 - IMMUTABLE_WARNING is part of this module's API
    IMMUTABLE_WARNING,
    check_database_file,
    connect_read_only,
    open_read_only,
)

# Tables the assembler cannot work without, and the columns it needs from them.
REQUIRED: dict[str, tuple[str, ...]] = {
    "conversations": ("conversation_id", "session_id", "active", "created_at"),
    "context_items": ("conversation_id", "ordinal", "item_type", "message_id", "summary_id"),
    "messages": ("message_id", "conversation_id", "seq", "role", "content"),
    "message_parts": ("part_id", "message_id", "part_type", "ordinal"),
    "summaries": ("summary_id", "conversation_id", "kind", "depth", "content"),
    "summary_parents": ("summary_id", "parent_summary_id", "ordinal"),
    "summary_messages": ("summary_id", "message_id", "ordinal"),
}
# Columns read when present (older schemas lack some of them → None).
OPTIONAL: dict[str, tuple[str, ...]] = {
    "conversations": ("session_key", "title", "archived_at"),
    "messages": ("token_count", "created_at", "large_content", "openclaw_sender_metadata"),
    "message_parts": ("text_content", "tool_call_id", "tool_name", "tool_input", "tool_output", "metadata"),
    "summaries": (
        "token_count",
        "earliest_at",
        "latest_at",
        "descendant_count",
        "created_at",
        "file_ids",
        "model",
    ),
}


# Tables the engine creates and ctxview reads: a view or virtual table in their place was not written by it.
_T = TypeVar("_T")
# in-context summary ids bound as parameters up to this many (SQLite builds before 3.32 allow 999 per statement)
BOUND_IDS = 900
ENGINE_TABLES = (*REQUIRED, "large_files", "focus_briefs", "conversation_compaction_maintenance",
                 "conversation_bootstrap_state")

# Every value read goes through ctxview.dbvalues (the one reader of stored values).
_int = whole_number
_number = engine_number
_text = read_text


LoadProgress = Callable[[int, int], None]  # (context items read, their total)


def _reread_parts(path: Path, cid: int, identity: Identity | None) -> dict[Any, tuple[PartRow, ...]]:
    """The parts a session loaded without them (render cache) turns out to need, from the same database state."""
    return _reread(path, identity, lambda store: store._read_parts(cid))


def _reread_texts(path: Path, cid: int, identity: Identity | None) -> dict[int, tuple[str, str | None]]:
    """The messages' content and creation times a session loaded without them (render cache) turns out to
    need, from the same database state."""
    return _reread(path, identity, lambda store: store._read_texts(cid))


def _reread(path: Path, identity: Identity | None, read: Callable[[LcmStore], _T]) -> _T:
    changed = f"{path}: the database changed since it was read; reload it (r) to see it"
    if database_identity(path) != identity:
        raise DatabaseError(changed)
    with LcmStore(path) as store:
        found = read(store)
    if database_identity(path) != identity:
        raise DatabaseError(changed)
    return found


class _Progress:
    """Counts items read and tells ``LoadProgress`` every so often (each call may cross threads)."""

    EVERY = 2048

    def __init__(self, callback: LoadProgress | None, total: int) -> None:
        self.callback, self.total, self.read = callback, max(0, total), 0
        if callback is not None:
            callback(0, self.total)

    def step(self) -> None:
        self.read += 1
        if self.callback is not None and self.read % self.EVERY == 0:
            self.callback(min(self.read, self.total), self.total)

    def done(self) -> None:
        if self.callback is not None:
            self.callback(self.total, self.total)


class LcmStore:
    """A read-only LCM database.  Use as a context manager or call ``close()``."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.warnings: list[str] = []
        self.immutable = False  # opened with immutable=1: this connection sees no later commits
        self._wal_mode = False
        self._check_file()
        self._conn = self._open()
        self._tables: set[str] = set()
        self._columns: dict[str, set[str]] = {}
        self._conversations: tuple[int, list[tuple[Any, ...]]] | None = None
        self._head_bound: int | None = None  # load_head: only context items up to this ordinal
        try:
            self._validate()
        except BaseException:
            self._conn.close()
            raise

    # --- opening and validation ---------------------------------------------------------

    def _check_file(self) -> None:
        self._wal_mode = check_database_file(self.path, "an LCM database")

    def _connect(self, immutable: bool) -> sqlite3.Connection:
        return connect_read_only(self.path, immutable)

    def _open(self) -> sqlite3.Connection:
        opened = open_read_only(self.path, self._wal_mode, self._connect)
        self.immutable = opened.immutable
        self.warnings.extend(opened.warnings)
        return opened.connection

    def _validate(self) -> None:
        try:
            rows = self._conn.execute(
                "SELECT name, type, sql FROM sqlite_master WHERE type IN ('table', 'view')"
            ).fetchall()
        except sqlite3.DatabaseError as exc:
            raise DatabaseError(f"{self.path}: not a SQLite database ({exc})") from exc
        # SQLite names are case-insensitive: so are ctxview's (CONTEXT_ITEMS is the engine's context_items)
        self._tables = {(_text(name) or "").lower() for name, _type, _sql in rows}
        missing = [t for t in REQUIRED if t not in self._tables]
        if missing:
            raise DatabaseError(f"{self.path}: not an LCM database: missing tables {', '.join(missing)}")
        for name, kind, sql in rows:
            if (_text(name) or "").lower() not in ENGINE_TABLES:
                continue
            if kind == "view" or (_text(sql) or "").lstrip()[:20].upper().startswith("CREATE VIRTUAL"):
                what = "a view" if kind == "view" else "a virtual table"
                # the engine writes these tables row by row; it cannot have written a view, and reading
                # one runs whatever query it holds (a recursive one never ends)
                raise DatabaseError(
                    f"{self.path}: {name} is {what}, not a table: this database was not written by the engine"
                )
        for table, needed in REQUIRED.items():
            absent = [c for c in needed if not self._has(table, c)]
            if absent:
                plural = "s" if len(absent) > 1 else ""
                raise DatabaseError(
                    f"{self.path}: table {table} is missing column{plural} {', '.join(absent)} "
                    "(not an LCM schema this version can read)"
                )

    def _table_columns(self, table: str) -> set[str]:
        quoted = table.replace('"', '""')
        try:
            return {(_text(row[1]) or "").lower() for row in self._conn.execute(f'PRAGMA table_info("{quoted}")')}
        except sqlite3.Error:
            return set()

    def _has(self, table: str, column: str | None = None) -> bool:
        """Whether the database has ``table`` (and its ``column``); columns are read on first use."""
        if table not in self._tables:
            return False
        if column is None:
            return True
        cols = self._columns.get(table)
        if cols is None:
            cols = self._columns[table] = self._table_columns(table)
        return column in cols

    def _col(self, table: str, column: str, alias: str = "") -> str:
        """``alias.column`` when the column exists, else ``NULL`` (optional columns)."""
        prefix = f"{alias}." if alias else ""
        return f"{prefix}{column}" if self._has(table, column) else "NULL"

    # --- lifecycle -------------------------------------------------------------------------

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> LcmStore:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    @property
    def connection(self) -> sqlite3.Connection:
        """The read-only connection (``mode=ro``, ``query_only``), for readers such as the recall search."""
        return self._conn

    def data_version(self) -> int:
        """``PRAGMA data_version``: changes whenever another connection commits."""
        return int(self._conn.execute("PRAGMA data_version").fetchone()[0])

    def _query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        try:
            return self._conn.execute(sql, params).fetchall()
        except sqlite3.DatabaseError as exc:
            raise DatabaseError(f"{self.path}: cannot read the database ({exc})") from exc

    # --- conversations ----------------------------------------------------------------------

    def _conversation_rows(self) -> list[tuple[Any, ...]]:
        """The conversations table, read once per database state (a session load asks three times)."""
        version = self.data_version()
        if self._conversations is not None and self._conversations[0] == version:
            return self._conversations[1]
        rows = self._read_conversation_rows()
        self._conversations = (version, rows)
        return rows

    def _read_conversation_rows(self) -> list[tuple[Any, ...]]:
        t = "conversations"
        rows = self._query(
            f"SELECT conversation_id, session_id, {self._col(t, 'session_key')}, {self._col(t, 'title')}, active, "
            f"{self._col(t, 'archived_at')}, created_at FROM conversations ORDER BY conversation_id"
        )
        # an id that is no whole number cannot be asked for (--conversation ID): such rows are not listed;
        # of rows sharing an id (no key) the first is the one the engine's lookup by id returns
        listed: dict[int, tuple[Any, ...]] = {}
        for row in rows:
            cid = _int(row[0])
            if cid is not None and cid not in listed:
                listed[cid] = (cid, *row[1:])
        return list(listed.values())

    def conversation_refs(self) -> tuple[ConversationRef, ...]:
        """Every conversation as the engine's session lookup reads it (spec §9.2 step 2)."""
        return tuple(
            ConversationRef(cid, session_id, session_key, active, created_at)
            for cid, session_id, session_key, _title, active, _archived, created_at in self._conversation_rows()
        )

    def tables(self) -> frozenset[str]:
        """The database's tables and views (which engine line wrote it shows in them)."""
        return frozenset(self._tables)

    def _counts(self, sql: str, params: Sequence[Any] = ()) -> dict[int, int | float]:
        counts: dict[int, int | float] = {}
        for cid, n in self._query(sql, params):
            key = _int(cid)
            if key is not None:
                counts[key] = counts.get(key, 0) + total(n)
        return counts

    def list_conversations(self) -> list[ConversationInfo]:
        """Every conversation with its counts; one aggregate query per figure."""
        msg_tokens = self._col("messages", "token_count", "m")
        sum_tokens = self._col("summaries", "token_count", "s")
        messages = self._counts("SELECT conversation_id, COUNT(*) FROM messages GROUP BY conversation_id")
        items = self._counts("SELECT conversation_id, COUNT(*) FROM context_items GROUP BY conversation_id")
        summaries = self._counts("SELECT conversation_id, COUNT(*) FROM summaries GROUP BY conversation_id")
        # TOTAL, not SUM: a list of sizes should not fail where stored counts add up past 2**63
        tokens = self._counts(
            "SELECT conversation_id, TOTAL(t) FROM ("
            f" SELECT ci.conversation_id AS conversation_id, COALESCE({msg_tokens}, 0) AS t"
            " FROM context_items ci JOIN messages m ON m.message_id = ci.message_id"
            " WHERE ci.item_type = 'message'"
            " UNION ALL"
            f" SELECT ci.conversation_id, COALESCE({sum_tokens}, 0)"
            " FROM context_items ci JOIN summaries s ON s.summary_id = ci.summary_id"
            " WHERE ci.item_type = 'summary'"
            ") GROUP BY conversation_id"
        )
        return [self._info(row, messages, items, summaries, tokens) for row in self._conversation_rows()]

    @staticmethod
    def _info(
        row: tuple[Any, ...],
        messages: dict[int, int | float],
        items: dict[int, int | float],
        summaries: dict[int, int | float],
        tokens: dict[int, int | float],
    ) -> ConversationInfo:
        cid, session_id, session_key, title, active, archived_at, created_at = row
        return ConversationInfo(
            conversation_id=cid,
            session_id=_text(session_id),
            session_key=_text(session_key),
            title=_text(title),
            active=active == 1,
            archived=archived_at is not None,
            created_at=_text(created_at),
            message_count=int(messages.get(cid, 0)),
            context_item_count=int(items.get(cid, 0)),
            summary_count=int(summaries.get(cid, 0)),
            token_total=tokens.get(cid, 0),  # type: ignore[arg-type]  # Infinity where a count is Infinity
        )

    def _conversation_info(self, conversation_id: int, token_total: Any = None) -> ConversationInfo:
        """The conversation's row and counts (``token_total``: the tokens' total, when already known)."""
        row = next((r for r in self._conversation_rows() if r[0] == conversation_id), None)
        if row is None:
            raise ConversationNotFound(f"conversation {conversation_id} not found")
        msg_tokens = self._col("messages", "token_count", "m")
        sum_tokens = self._col("summaries", "token_count", "s")
        cid = (conversation_id,)
        messages = self._counts("SELECT conversation_id, COUNT(*) FROM messages WHERE conversation_id = ?", cid)
        items = self._counts("SELECT conversation_id, COUNT(*) FROM context_items WHERE conversation_id = ?", cid)
        summaries = self._counts("SELECT conversation_id, COUNT(*) FROM summaries WHERE conversation_id = ?", cid)
        if token_total is not None:
            return self._info(row, messages, items, summaries, {conversation_id: token_total})
        tokens = self._counts(
            "SELECT ?, TOTAL(t) FROM ("
            f" SELECT COALESCE({msg_tokens}, 0) AS t FROM context_items ci"
            " JOIN messages m ON m.message_id = ci.message_id"
            " WHERE ci.conversation_id = ? AND ci.item_type = 'message'"
            " UNION ALL"
            f" SELECT COALESCE({sum_tokens}, 0) FROM context_items ci"
            " JOIN summaries s ON s.summary_id = ci.summary_id"
            " WHERE ci.conversation_id = ? AND ci.item_type = 'summary')",
            (conversation_id, conversation_id, conversation_id),
        )
        return self._info(row, messages, items, summaries, tokens)

    def _pick_conversation(self, conversation_id: int | None) -> int:
        rows = self._conversation_rows()
        if not rows:
            raise ConversationNotFound(f"{self.path}: the database has no conversations")
        if conversation_id is not None:
            if any(r[0] == conversation_id for r in rows):
                return conversation_id
            ids = [str(r[0]) for r in rows]
            shown = ", ".join(ids[:10]) + (f" … ({len(ids)} in all)" if len(ids) > 10 else "")
            raise ConversationNotFound(f"conversation {conversation_id} not found; valid ids: {shown}")
        if len(rows) == 1:
            return int(rows[0][0])
        active = [r for r in rows if r[4] == 1] or rows
        newest = max(active, key=lambda r: (_text(r[6]) or "", r[0]))
        return int(newest[0])

    # --- one session ----------------------------------------------------------------------------

    def load_session_for(self, params: Params, conversation_id: int | None = None) -> Session:
        """The session the engine would assemble for ``params``' session identity (§9.2 step 2).

        Without a session id or key (or when the engine's lookup finds nothing), the conversation
        ``conversation_id`` names, or the default one, is loaded: the run then reports the engine's fallback.
        """
        if params.session_id is not None or params.session_key is not None:
            from ctxview.assembly.lookup import find_conversation
            from ctxview.assembly.rules import detect_line, rules_for

            rules = rules_for(params.engine_line) if params.engine_line else detect_line(self.tables()).rules
            refs = self.conversation_refs()
            found = find_conversation(refs, params.session_id, params.session_key, rules)
            if found.conversation_id is not None:
                conversation_id = found.conversation_id
            elif params.engine and not refs:
                return self._no_conversation(params)  # the engine falls back to the live window (§9.2 step 2)
        return self.load_session(conversation_id)

    def _no_conversation(self, params: Params) -> Session:
        """A stand-in session for a database with no conversation, where the engine's lookup finds none."""
        info = ConversationInfo(0, params.session_id, params.session_key, None, False, False, None, 0, 0, 0, 0)
        note = f"{self.path}: the database has no conversations; the engine's session lookup finds none"
        return Session(
            conversation=info,
            items=[],
            messages={},
            summaries={},
            source=str(self.path),
            warnings=[*self.warnings, note],
            data_version=self.data_version(),
            tables=self.tables(),
            no_conversation=True,
        )

    def load_session(self, conversation_id: int | None = None, progress: LoadProgress | None = None) -> Session:
        """Everything the assembler needs about one conversation, read in one snapshot.

        ``progress(read, total)`` is told, now and then, how many of the conversation's context
        items have been read (from another thread, if the caller runs this in one).
        """
        conn = self._conn
        in_tx = False
        try:
            conn.execute("BEGIN")
            in_tx = True
        except sqlite3.Error:
            pass
        # a file that did not change while it was read can reuse the message renders of an earlier run
        # (render_cache): a rollback-mode commit always bumps the header's change counter, and a WAL
        # database counts only when read as a snapshot (a live writer's commits need not show in the files)
        identity = database_identity(self.path) if self.immutable or not self._wal_mode else None
        try:
            cid = self._pick_conversation(conversation_id)
            with gc_paused(keep=True):  # the cyclic GC would rescan the growing heap for every batch of rows
                session = self._load(cid, progress, identity)
                # checked while the read transaction still holds the rows: a rollback-mode writer cannot
                # commit meanwhile, so the same identity now means the rows are of that state
                if identity is not None and database_identity(self.path) == identity:
                    session.cache_identity = identity
                elif session.cached_renders is not None:
                    # changed before this read began: the cached rows and renders are of an older state;
                    # read it all again, in the same read transaction as the rest
                    session = self._load(cid, progress, None)
            session.data_version = self.data_version()
        finally:
            if in_tx:
                try:
                    conn.execute("COMMIT")
                except sqlite3.Error:
                    pass
        session.warnings[:0] = self.warnings
        return session

    def load_head(self, conversation_id: int | None, limit: int) -> Session:
        """The first ``limit`` context items of a conversation, with what they reference, as a session of
        their own (its ``conversation`` keeps the whole conversation's counts).

        What a viewer can draw while the whole session is still being read; never from the render cache.
        """
        cid = self._pick_conversation(conversation_id)
        first = self._query(
            "SELECT ordinal FROM context_items WHERE conversation_id = ? ORDER BY ordinal LIMIT ?", (cid, max(0, limit))
        )
        whole = [ordinal for ordinal in (_int(row[0]) for row in first) if ordinal is not None]
        self._head_bound = max(whole) if whole else -(2**63)
        try:
            with gc_paused():
                return self._load(cid)
        finally:
            self._head_bound = None

    def _load(self, cid: int, progress: LoadProgress | None = None, identity: Identity | None = None) -> Session:
        warnings: list[str] = []
        snapshot = self._cached_rows(cid, identity, warnings)
        sums = snapshot[4] if snapshot is not None else None  # two sums over every context row, as read then
        if self._head_bound is not None:
            sums = (0, 0)  # (a head is drawn, never assembled: no pass over every row for the token sums)
        info = self._conversation_info(cid, sums[0] if sums is not None else None)
        report = _Progress(progress, info.context_item_count)
        if snapshot is not None:
            items, messages, stored_ids, cached_renders, _ = snapshot
        else:
            items = self._read_items(cid, warnings)
            messages, stored_ids, cached_renders = self._load_messages(cid, warnings, report, identity)
        row_warnings = tuple(warnings)
        summaries = self._load_summaries(cid, warnings)
        report.done()
        large_files = self._load_large_files(cid)
        brief = self._load_focus_brief(cid)
        dangling = sum(
            1
            for it in items
            if (it.item_type == "message" and it.message_id not in messages)
            or (it.item_type == "summary" and it.summary_id not in summaries)
        )
        if dangling:
            warnings.append(f"{dangling} context item{'s' if dangling != 1 else ''} reference missing rows")
        if sums is not None:
            stored_context_tokens = sums[1]
        else:
            before = len(warnings)
            stored_context_tokens = self._stored_context_tokens(cid, warnings)
            if len(warnings) == before:  # (a sum SQLite cannot take is read again, with its warning)
                sums = (info.token_total, stored_context_tokens)
        return Session(
            conversation=info,
            items=items,
            messages=messages,
            summaries=summaries,
            large_files=large_files,
            focus_brief=brief,
            maintenance=self._row_of("conversation_compaction_maintenance", cid),
            bootstrap_state=self._row_of("conversation_bootstrap_state", cid),
            pending_summary_batch=self._active_pending_batch(cid),
            stored_context_tokens=stored_context_tokens,
            source=str(self.path),
            warnings=warnings,
            tables=self.tables(),
            conversation_refs=self.conversation_refs(),
            cached_renders=cached_renders,
            row_warnings=row_warnings,
            stored_message_ids=stored_ids,
            stored_sums=sums,
        )

    def _read_items(self, cid: int, warnings: list[str]) -> list[ContextItemRow]:
        rows = self._query(
            "SELECT ordinal, item_type, message_id, summary_id FROM context_items"
            f" WHERE conversation_id = ?{self._bound} ORDER BY ordinal",
            (cid,),
        )
        items: list[ContextItemRow] = []
        seen: set[int] = set()
        shared: list[int] = []
        for raw_ordinal, item_type, mid, sid in rows:
            ordinal = _int(raw_ordinal)
            if ordinal is None:
                continue
            if ordinal in seen:  # no key on the table: ordinals are what ctxview tells items apart by
                shared.append(ordinal)
                continue
            seen.add(ordinal)
            items.append(ContextItemRow(ordinal, intern(_text(item_type) or ""), _int(mid), _text(sid)))
        unreadable = len(rows) - len(items) - len(shared)
        if unreadable:
            skipped = count_text(unreadable, "context item")
            warnings.append(f"{skipped} without a whole-number ordinal skipped")
        if shared:
            listed = ", ".join(str(o) for o in sorted(set(shared))[:5]) + (" …" if len(set(shared)) > 5 else "")
            warnings.append(
                f"{count_text(len(shared), 'context item')} sharing an ordinal with an earlier one skipped"
                f" (ordinal {listed}); the engine would assemble them too"
            )
        return items

    @property
    def _bound(self) -> str:
        """The head's ordinal bound as SQL (empty: the whole conversation); an int, never user text."""
        return "" if self._head_bound is None else f" AND ordinal <= {int(self._head_bound)}"

    @property
    def _context_messages(self) -> str:
        return f"SELECT message_id FROM context_items WHERE conversation_id = ? AND message_id IS NOT NULL{self._bound}"

    @property
    def _context_summaries(self) -> str:
        return f"SELECT summary_id FROM context_items WHERE conversation_id = ? AND summary_id IS NOT NULL{self._bound}"

    def _read_parts(self, cid: int, report: _Progress | None = None) -> dict[Any, tuple[PartRow, ...]]:
        """The parts of the conversation's context messages, by the message id as stored."""
        t = "message_parts"
        part_rows = self._query(
            f"SELECT p.message_id, p.part_id, p.part_type, p.ordinal, {self._col(t, 'text_content', 'p')},"
            f" {self._col(t, 'tool_call_id', 'p')}, {self._col(t, 'tool_name', 'p')},"
            f" {self._col(t, 'tool_input', 'p')}, {self._col(t, 'tool_output', 'p')}, {self._col(t, 'metadata', 'p')}"
            f" FROM message_parts p WHERE p.message_id IN ({self._context_messages})"
            " ORDER BY p.message_id, p.ordinal",
            (cid,),
        )
        parts: dict[Any, list[PartRow]] = {}  # in SQLite's ORDER BY ordinal, whatever the ordinals hold
        for mid, pid, ptype, ordinal, text, call_id, name, tin, tout, meta in part_rows:
            if report is not None and mid not in parts:
                report.step()  # the parts come message by message: one more message read
            parts.setdefault(mid, []).append(
                PartRow(
                    _text(pid),
                    _text(ptype) or "",
                    _number(ordinal),
                    _text(text),
                    _text(call_id),
                    _text(name),
                    _text(tin),
                    _text(tout),
                    _text(meta),
                )
            )
        return {mid: tuple(rows) for mid, rows in parts.items()}

    def _message_rows(self, cid: int) -> Any:
        """The context messages' rows (one query: ``_load_messages`` and ``_read_texts`` read the same rows)."""
        t = "messages"
        return self._query(
            f"SELECT m.message_id, m.seq, m.role, m.content, {self._col(t, 'token_count', 'm')},"
            f" {self._col(t, 'created_at', 'm')}, {self._col(t, 'large_content', 'm')},"
            f" {self._col(t, 'openclaw_sender_metadata', 'm')}"
            f" FROM messages m WHERE m.message_id IN ({self._context_messages})",
            (cid,),
        )

    def _read_texts(self, cid: int) -> dict[int, tuple[str, str | None]]:
        """Message id → (content, created_at), as ``_load_messages`` reads them (the first row of an id)."""
        texts: dict[int, tuple[str, str | None]] = {}
        for raw_mid, raw_seq, _role, content, _tokens, created, _large, _sender in self._message_rows(cid):
            mid = _int(raw_mid)
            if mid is None or _int(raw_seq) is None or mid in texts:
                continue
            texts[mid] = (_text(content) or "", _text(created))
        return texts

    def _load_messages(
        self, cid: int, warnings: list[str], report: _Progress | None = None, identity: Identity | None = None
    ) -> tuple[dict[int, MessageRow], dict[int, Any], tuple[bool, dict[int, Any]] | None]:
        """The context messages with their parts, or with ``DeferredParts`` when the render cache has them all.

        Returns the messages, the stored ids that are not the plain integer id, and the cached renders
        (engine rule, renders) when they were used.
        """
        rows = self._message_rows(cid)
        messages: dict[int, MessageRow] = {}
        stored_ids: list[tuple[MessageRow, Any]] = []
        unreadable = 0
        for raw_mid, raw_seq, role, content, tokens, created, large, sender in rows:
            mid, seq = _int(raw_mid), _int(raw_seq)
            if mid is None or seq is None:
                unreadable += 1  # its context item stays unresolved, as for a missing row
                continue
            if mid in messages:  # no key on the table: the engine's lookup by id returns the first row
                continue
            row = MessageRow(
                mid,
                seq,
                intern(_text(role) or ""),  # (a handful of values over 100,000 rows: one string each)
                _text(content) or "",
                _number(tokens),
                _text(created),
                _text(large),
                _text(sender),
            )
            messages[mid] = row
            stored_ids.append((row, raw_mid))
        if unreadable:
            warnings.append(f"{count_text(unreadable, 'message')} without a whole-number id or seq skipped")
        unlike = {row.message_id: raw for row, raw in stored_ids if type(raw) is not int or raw != row.message_id}
        cached = self._cached_renders(cid, messages, identity)
        if cached is not None:
            source = PartsSource(partial(_reread_parts, self.path, cid, identity))
            for row, raw_mid in stored_ids:
                row.parts = DeferredParts(source, raw_mid)
            return messages, unlike, cached
        parts = self._read_parts(cid, report)
        for row, raw_mid in stored_ids:
            row.parts = parts.get(raw_mid, ())
        return messages, unlike, None

    def _cached_rows(
        self, cid: int, identity: Identity | None, warnings: list[str]
    ) -> tuple[list[ContextItemRow], dict[int, MessageRow], dict[int, Any], tuple[bool, dict[int, Any]], Any] | None:
        """The context items and messages as an earlier run read them from this very database state
        (render_cache), with a render of every message; None: read them.

        Their warnings are added to ``warnings``.
        """
        if identity is None:
            return None
        from ctxview.assembly.rules import detect_line

        line_rule = detect_line(self.tables()).rules.sender_metadata
        for rule in (True, False) if line_rule else (False,):
            payload = render_cache.load_payload(identity, cid, rule)
            if payload is None or payload[1] is None:
                continue
            renders, (item_rows, message_rows, row_warnings, sums) = payload
            messages: dict[int, MessageRow] = {}
            stored: dict[int, Any] = {}
            texts = RowTexts(partial(_reread_texts, self.path, cid, identity))
            for mid, seq, role, tokens, large, sender, raw in message_rows:
                messages[mid] = unread_texts_row(mid, seq, intern(role), tokens, large, sender, texts)
                if type(raw) is not int or raw != mid:
                    stored[mid] = raw
            if rule != (line_rule and any(m.sender_metadata for m in messages.values())):
                continue  # (the file of the other rule: this state's messages say which applies)
            if any(mid not in renders for mid in messages):
                return None
            renders.render_from(messages, rule)
            texts.defer_parts(PartsSource(partial(_reread_parts, self.path, cid, identity)), stored)
            warnings.extend(row_warnings)
            items = [ContextItemRow(ordinal, intern(kind), mid, sid) for ordinal, kind, mid, sid in item_rows]
            return items, messages, stored, (rule, renders), sums
        return None

    def _cached_renders(
        self, cid: int, messages: dict[int, MessageRow], identity: Identity | None
    ) -> tuple[bool, dict[int, Any]] | None:
        """(engine rule, renders) from the render cache when it holds a render of every message."""
        if identity is None or len(messages) < render_cache.min_messages():
            return None
        from ctxview.assembly.rules import detect_line

        # the rule of the line the tables name (a run that chooses the other line reads the parts then)
        rule = detect_line(self.tables()).rules.sender_metadata and any(m.sender_metadata for m in messages.values())
        renders = render_cache.load(identity, cid, rule)
        if renders is None or any(mid not in renders for mid in messages):
            return None
        renders.render_from(messages, rule)
        return rule, renders

    def _summary_scope(self, cid: int) -> tuple[str, tuple[Any, ...]] | None:
        """The conversation's in-context summary ids as an ``IN (…)`` list and its parameters; None: there are
        none.  The ids themselves where they are few: each of the queries below would otherwise scan every
        context item for them (three scans of 100,000 rows for 15 ids); the subquery where they are many."""
        ids = [row[0] for row in self._query(f"SELECT DISTINCT summary_id FROM ({self._context_summaries})", (cid,))]
        if not ids:
            return None
        if len(ids) > BOUND_IDS:
            return self._context_summaries, (cid,)
        return ", ".join("?" * len(ids)), tuple(ids)  # (bound as read: the same values and storage classes)

    def _load_summaries(self, cid: int, warnings: list[str]) -> dict[str, SummaryRow]:
        t = "summaries"
        scope = self._summary_scope(cid)
        if scope is None:
            return {}
        in_context, in_params = scope
        rows = self._query(
            f"SELECT s.summary_id, s.kind, s.depth, s.content, {self._col(t, 'token_count', 's')},"
            f" {self._col(t, 'earliest_at', 's')}, {self._col(t, 'latest_at', 's')},"
            f" {self._col(t, 'descendant_count', 's')}, {self._col(t, 'created_at', 's')},"
            f" {self._col(t, 'file_ids', 's')}, {self._col(t, 'model', 's')}"
            f" FROM summaries s WHERE s.summary_id IN ({in_context})",
            in_params,
        )
        if not rows:
            return {}
        # The sources condensed into each context summary, as rendered (§3), in summary_parents order.
        existing_parents: dict[str, list[str]] = {}
        linked = False
        for sid, parent, exists in self._query(
            "SELECT sp.summary_id, sp.parent_summary_id,"
            " EXISTS(SELECT 1 FROM summaries x WHERE x.summary_id = sp.parent_summary_id)"
            f" FROM summary_parents sp WHERE sp.summary_id IN ({in_context})"
            " ORDER BY sp.summary_id, sp.ordinal",
            in_params,
        ):
            linked = True
            if exists:
                existing_parents.setdefault(_text(sid) or "", []).append(_text(parent) or "")
        # summaryMaxSourceSeq walks every summary reachable through summary_parents: the edges are read
        # whole (one plain scan; a recursive query here costs more than the walk) and walked in Python.
        edges: dict[str, list[str]] = {}
        if linked:
            for sid, parent in self._query("SELECT summary_id, parent_summary_id FROM summary_parents"):
                edges.setdefault(_text(sid) or "", []).append(_text(parent) or "")
        within = "" if linked else f" WHERE sm.summary_id IN ({in_context})"
        direct: dict[str, int] = {}
        for sid, max_seq in self._query(
            "SELECT sm.summary_id, MAX(m.seq) FROM summary_messages sm"
            f" JOIN messages m ON m.message_id = sm.message_id{within} GROUP BY sm.summary_id",
            () if linked else in_params,
        ):
            seq = _int(max_seq)
            if seq is not None:
                direct[_text(sid) or ""] = seq
        sources: dict[str, list[int]] = {}
        for sid, mid in self._query(
            "SELECT sm.summary_id, sm.message_id FROM summary_messages sm"
            f" WHERE sm.summary_id IN ({in_context}) ORDER BY sm.summary_id, sm.ordinal",
            in_params,
        ):
            source = _int(mid)
            if source is not None:
                sources.setdefault(_text(sid) or "", []).append(source)
        roots = [_text(row[0]) or "" for row in rows]
        watermarks, cycles = source_seq_watermarks(roots, edges, direct)
        if cycles:
            warnings.append(cycle_warning(cycles))
        summaries: dict[str, SummaryRow] = {}
        for sid, kind, depth, content, tokens, earliest, latest, desc, created, file_ids, model in rows:
            sid = _text(sid) or ""
            if sid in summaries:  # no key on the table: the engine's lookup by id returns the first row
                continue
            summaries[sid] = SummaryRow(
                summary_id=sid,
                kind=_text(kind) or "",
                depth=_number(depth),
                content=_text(content) or "",
                token_count=_number(tokens),
                earliest_at=_text(earliest),
                latest_at=_text(latest),
                descendant_count=_number(desc) if desc is not None else 0,
                created_at=_text(created),
                file_ids=_text(file_ids),
                model=_text(model),
                parent_ids=tuple(existing_parents.get(sid, ())),
                source_message_ids=tuple(sources.get(sid, ())),
                max_source_seq=watermarks.get(sid),
            )
        return summaries

    def _load_large_files(self, cid: int) -> dict[str, LargeFileRow]:
        if not self._has("large_files", "file_id") or not self._has("messages", "large_content"):
            return {}
        if not self._query("SELECT 1 FROM large_files LIMIT 1"):
            return {}  # (the query below would look at every context message first)
        t = "large_files"
        rows = self._query(
            f"SELECT f.file_id, {self._col(t, 'file_name', 'f')}, {self._col(t, 'mime_type', 'f')},"
            f" {self._col(t, 'byte_size', 'f')}, {self._col(t, 'exploration_summary', 'f')}"
            " FROM large_files f WHERE f.file_id IN ("
            f" SELECT m.large_content FROM messages m WHERE m.message_id IN ({self._context_messages})"
            " AND m.large_content LIKE 'file!_%' ESCAPE '!')",
            (cid,),
        )
        return {
            _text(fid) or "": LargeFileRow(_text(fid) or "", _text(name), _text(mime), _number(size), _text(summary))
            for fid, name, mime, size, summary in rows
        }

    def _load_focus_brief(self, cid: int) -> FocusBriefRow | None:
        t = "focus_briefs"
        if not self._has(t, "brief_id") or not self._has(t, "status") or not self._has(t, "content"):
            return None
        rows = self._query(
            f"SELECT brief_id, {self._col(t, 'prompt')}, content, status, {self._col(t, 'token_count')},"
            f" {self._col(t, 'target_tokens')}, {self._col(t, 'covered_latest_at')},"
            f" {self._col(t, 'covered_message_seq')}, {self._col(t, 'created_at')}"
            " FROM focus_briefs WHERE conversation_id = ? AND status = 'active'"
            f" ORDER BY {self._col(t, 'created_at')} DESC, rowid DESC LIMIT 1",
            (cid,),
        )
        if not rows:
            return None
        bid, prompt, content, status, tokens, target, covered_at, covered_seq, created = rows[0]
        return FocusBriefRow(
            brief_id=_text(bid) or "",
            prompt=_text(prompt),
            content=_text(content) or "",
            status=_text(status) or "",
            token_count=_number(tokens),
            target_tokens=_number(target),
            covered_latest_at=_text(covered_at),
            covered_message_seq=_number(covered_seq),
            created_at=_text(created),
        )

    def _row_of(self, table: str, cid: int) -> dict[str, Any] | None:
        """The conversation's row of an engine-state table, keyed by column (None: no table or no row)."""
        if not self._has(table, "conversation_id"):
            return None
        try:
            cursor = self._conn.execute(f"SELECT * FROM {table} WHERE conversation_id = ? LIMIT 1", (cid,))
            row = cursor.fetchone()
        except sqlite3.DatabaseError as exc:
            raise DatabaseError(f"{self.path}: cannot read the database ({exc})") from exc
        if row is None:
            return None
        columns = [str(column[0]).lower() for column in cursor.description]
        return {column: _number(value) for column, value in zip(columns, row, strict=True)}

    def _active_pending_batch(self, cid: int) -> dict[str, Any] | None:
        """The conversation's pending summary batch still being planned, prepared or published (1.0), if any."""
        if not self._has("pending_compaction_batches", "conversation_id") or not self._has(
            "pending_compaction_batches", "status"
        ):
            return None
        try:
            cursor = self._conn.execute(
                "SELECT * FROM pending_compaction_batches WHERE conversation_id = ?"
                " AND status IN ('planning', 'ready', 'publishing') LIMIT 1",
                (cid,),
            )
            row = cursor.fetchone()
        except sqlite3.DatabaseError as exc:
            raise DatabaseError(f"{self.path}: cannot read the database ({exc})") from exc
        if row is None:
            return None
        columns = [str(column[0]).lower() for column in cursor.description]
        return {column: _number(value) for column, value in zip(columns, row, strict=True)}

    def _stored_context_tokens(self, cid: int, warnings: list[str]) -> Any:
        """Σ the stored ``token_count`` of the context items, as the engine's degrade gate sums them (§10.5)."""
        msg_tokens = self._col("messages", "token_count", "m")
        sum_tokens = self._col("summaries", "token_count", "s")
        inner = (
            f" SELECT {msg_tokens} AS t FROM context_items ci JOIN messages m ON m.message_id = ci.message_id"
            " WHERE ci.conversation_id = ?1 AND ci.item_type = 'message'"
            " UNION ALL"
            f" SELECT {sum_tokens} FROM context_items ci JOIN summaries s ON s.summary_id = ci.summary_id"
            " WHERE ci.conversation_id = ?1 AND ci.item_type = 'summary'"
        )
        try:
            rows = self._conn.execute(f"SELECT COALESCE(SUM(t), 0) FROM ({inner})", (cid,)).fetchall()
        except sqlite3.OperationalError as exc:
            if "overflow" not in str(exc):
                raise DatabaseError(f"{self.path}: cannot read the database ({exc})") from exc
            # SUM of integers past 2**63 fails in SQLite, in the engine's query too; TOTAL sums as doubles
            warnings.append(
                "the stored token counts of the context sum past 2**63, where SQLite's SUM (the engine's"
                " degrade gate) fails; ctxview uses their sum as a floating-point number"
            )
            rows = self._query(f"SELECT TOTAL(t) FROM ({inner})", (cid,))
        return _number(rows[0][0]) if rows else 0


def source_seq_watermarks(
    roots: Sequence[str], edges: dict[str, list[str]], direct: dict[str, int]
) -> tuple[dict[str, int | None], list[list[str]]]:
    """§3 ``summaryMaxSourceSeq`` of every summary reachable from ``roots``, and the cycles met on the way.

    The value of a summary is the largest ``direct`` seq over it and every summary reachable through
    ``edges`` (summary_parents), or None.  The engine's recursive query (``UNION``) visits each summary
    once, so on a cycle it answers the same for every member: the largest seq over the whole cycle and
    what it reaches.  Computed over the strongly connected components (Tarjan's algorithm, without
    recursion), so a 100,000-long chain or cycle costs one visit per summary and per edge.
    """
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    value: dict[str, int | None] = {}  # closed summaries; a visited one not in it is on the stack
    stack: list[str] = []
    cycles: list[list[str]] = []
    none: tuple[str, ...] = ()
    for root in roots:
        if root in index:
            continue
        index[root] = low[root] = len(index)
        stack.append(root)
        work = [(root, iter(edges.get(root, none)))]
        while work:
            node, successors = work[-1]
            for successor in successors:
                if successor not in index:
                    index[successor] = low[successor] = len(index)
                    stack.append(successor)
                    work.append((successor, iter(edges.get(successor, none))))
                    break
                if successor not in value and index[successor] < low[node]:
                    low[node] = index[successor]
            else:
                work.pop()
                node_low = low[node]
                if work and node_low < low[work[-1][0]]:
                    low[work[-1][0]] = node_low
                if node_low == index[node]:
                    _close_component(node, stack, edges, direct, value, cycles)
    return value, cycles


def _close_component(
    head: str,
    stack: list[str],
    edges: dict[str, list[str]],
    direct: dict[str, int],
    value: dict[str, int | None],
    cycles: list[list[str]],
) -> None:
    """Pop the component ``head`` heads off ``stack`` and give all its members their watermark."""
    members = [stack.pop()]
    while members[-1] != head:
        members.append(stack.pop())
    best: int | None = None
    looped = len(members) > 1
    for member in members:
        seq = direct.get(member)
        if seq is not None and (best is None or seq > best):
            best = seq
        for successor in edges.get(member, ()):
            if successor == member:
                looped = True
                continue
            reached = value.get(successor)  # None also for a member of this component: not closed yet
            if reached is not None and (best is None or reached > best):
                best = reached
    for member in members:
        value[member] = best
    if looped:
        members.reverse()
        cycles.append(members)


def cycle_warning(cycles: list[list[str]]) -> str:
    """One sentence on the cycles of ``summary_parents`` (for the session's warnings and so the trace)."""
    members = sum(len(c) for c in cycles)
    first = cycles[0]
    shown = " → ".join(_shown_id(sid) for sid in first[:3]) + (" → …" if len(first) > 3 else "")
    loop = f"{shown} → {_shown_id(first[0])}" if len(first) > 1 else f"{shown} → itself"
    many = f"{len(cycles):,} cycles through {members:,} summaries" if len(cycles) > 1 else "a cycle"
    return (
        f"summary ancestry has {many} in summary_parents (e.g. {loop}); each summary's sources are counted once,"
        " as the engine's recursive query counts them"
    )


def _shown_id(summary_id: str) -> str:
    clean = "".join(ch if ch.isprintable() else "?" for ch in summary_id)
    return clean if len(clean) <= 32 else clean[:31] + "…"


def parts_releaser(session: Session) -> Callable[[MessageRow], None] | None:
    """What lets go of a message's parts once its render is made (issue 19: the largest table, held for
    nothing): as on a render-cache open, they are then read again, from the same database state, if
    something needs them after all.  None for a session of no known database state (``cache_identity``:
    a live WAL database), whose parts could not be read again safely."""
    identity = session.cache_identity
    if identity is None:
        return None
    source = PartsSource(partial(_reread_parts, Path(session.source), session.conversation.conversation_id, identity))
    stored = session.stored_message_ids

    def release(row: MessageRow) -> None:
        if type(row.parts) is tuple:
            row.parts = DeferredParts(source, stored.get(row.message_id, row.message_id))

    return release
