"""The engine's message search for the prompt-recall cue, run read-only (spec §10.3).

For each key the engine asks its store for the conversation's 32 most recent
messages matching the key: a full-text query on ``messages_fts`` (each word of
the query quoted as an FTS5 phrase, newest ``created_at`` first), and, when
that query fails for any reason (no such table, a table that is not FTS5, a
SQLite without FTS5), a ``LIKE`` scan of ``messages.content`` for every term
of the query, checked again on the text the full-text index would hold.  Ties
in ``created_at`` come out in the order SQLite meets the rows (full-text
rowid order, or the index the ``LIKE`` scan uses), so the statements here are
the engine's own ``WHERE``/``ORDER BY``/``LIMIT`` and are never rewritten.

Nothing is written: the caller passes a connection opened with ``mode=ro``
and ``PRAGMA query_only`` (as ``ctxview.store`` opens one).
"""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass

from ctxview.assembly.prompt_recall import SEARCH_LIMIT, PromptRecallError, RecallHit
from ctxview.jsjson import JS_WS_CLASS, js_trim

PATH_FULL_TEXT = "fts"
PATH_LIKE = "like"  # the full-text query failed
PATH_LIKE_CJK = "like-cjk"  # CJK queries never go to the full-text index

_FULL_TEXT_SQL = (
    "SELECT m.message_id, m.conversation_id, m.role,"
    " snippet(messages_fts, 0, '', '', '...', 32) AS snippet, rank, m.created_at"
    " FROM messages_fts JOIN messages m ON m.message_id = messages_fts.rowid"
    " WHERE messages_fts MATCH ? AND m.conversation_id = ?"
    " ORDER BY m.created_at DESC LIMIT ?"
)
# Only the columns recall reads: the engine selects more, which its migrations guarantee to exist.
_MESSAGE_SQL = "SELECT role, content, seq FROM messages WHERE message_id = ?"
_LIKE_SELECT = "SELECT message_id, role, content, seq FROM messages WHERE "
_LIKE_ORDER = " AND conversation_id = ? ORDER BY created_at DESC LIMIT ?"

_JS_WS_RUN = re.compile(JS_WS_CLASS + "+")
_QUOTED_PHRASE = re.compile(r'"([^"]+)"')
_RAW_TERM = re.compile(r'"([^"]+)"|([^' + JS_WS_CLASS[1:-1] + r"]+)")
_CJK = re.compile("[\u2e80-\u9fff\u3400-\u4dbf\uf900-\ufaff\uac00-\ud7af\u3040-\u309f\u30a0-\u30ff]")
_EDGE_PUNCTUATION = r"""[`'"()\[\]{}<>.,:;!?*_+=|\\/-]+"""
_EDGES = re.compile("^" + _EDGE_PUNCTUATION + "|" + _EDGE_PUNCTUATION + r"\Z")
_LIKE_SPECIAL = re.compile(r"([\\%_])")
_LINE_BREAK = re.compile(r"\r?\n")
_EXTERNALIZED_PREFIXES = ("[LCM File:", "[LCM Tool Output:")
_DESCRIBE_HINTS = ("Use lcm_describe", "Call lcm_describe")


@dataclass(frozen=True, slots=True)
class SearchRecord:
    """How one query was answered, for the trace."""

    query: str
    path: str  # PATH_FULL_TEXT, PATH_LIKE or PATH_LIKE_CJK
    error: str | None  # why the full-text query failed (PATH_LIKE)
    message_ids: tuple[int, ...]


class RecallSearch:
    """``search(identifier) -> hits`` over one conversation, as ``scan_prompt_recall`` wants it.

    Raises ``sqlite3.Error`` when the fallback query itself fails and ``PromptRecallError`` when the
    fallback meets a content that is not text: the engine's recall throws there too.
    """

    def __init__(self, conn: sqlite3.Connection, conversation_id: int, *, limit: int = SEARCH_LIMIT) -> None:
        self._conn = conn
        self._conversation_id = conversation_id
        self._limit = limit
        self.records: list[SearchRecord] = []

    def __call__(self, query: str) -> list[RecallHit]:
        if contains_cjk(query):
            hits = self._like(query)
            path, error = PATH_LIKE_CJK, None
        else:
            try:
                message_ids = self._full_text_ids(query)
            except sqlite3.Error as exc:
                hits = self._like(query)
                path, error = PATH_LIKE, str(exc)
            else:
                hits = self._load(message_ids)
                path, error = PATH_FULL_TEXT, None
        self.records.append(SearchRecord(query, path, error, tuple(hit.message_id for hit in hits)))
        return hits

    def _full_text_ids(self, query: str) -> list[int]:
        rows = self._conn.execute(
            _FULL_TEXT_SQL, (sanitize_fts5_query(query), self._conversation_id, self._limit)
        ).fetchall()
        return [row[0] for row in rows]

    def _load(self, message_ids: list[int]) -> list[RecallHit]:
        """Each hit's row, read apart from the search as the engine does (its errors are not caught)."""
        hits: list[RecallHit] = []
        for message_id in message_ids:
            stored = self._conn.execute(_MESSAGE_SQL, (message_id,)).fetchone()
            if stored is None:
                continue
            hits.append(RecallHit(message_id, stored[0], stored[1], stored[2]))
        return hits

    def _like(self, query: str) -> list[RecallHit]:
        terms = like_terms(query)
        if not terms:
            return []
        where = " AND ".join("LOWER(content) LIKE ? ESCAPE '\\'" for _ in terms)
        args: list[object] = [f"%{escape_like(term)}%" for term in terms]
        args += [self._conversation_id, self._limit]
        rows = self._conn.execute(_LIKE_SELECT + where + _LIKE_ORDER, args).fetchall()
        hits: list[RecallHit] = []
        for message_id, role, content, seq in rows:
            if not isinstance(content, str):
                raise PromptRecallError(f"message {message_id} has no text content ({type(content).__name__})")
            indexed = full_text_index_form(content)
            haystack = (content if indexed is None else indexed).lower()
            if all(term in haystack for term in terms):
                hits.append(RecallHit(message_id, role, content, seq))
        return hits


def sanitize_fts5_query(raw: str) -> str:
    """Every whitespace-separated word (and every ``"quoted phrase"``) as one quoted FTS5 phrase, ANDed."""
    parts: list[str] = []
    last = 0
    for found in _QUOTED_PHRASE.finditer(raw):
        parts.extend(_quoted_words(raw[last : found.start()]))
        phrase = js_trim(found.group(1).replace('"', ""))
        if phrase:
            parts.append(f'"{phrase}"')
        last = found.end()
    parts.extend(_quoted_words(raw[last:]))
    return " ".join(parts) if parts else '""'


def _quoted_words(text: str) -> list[str]:
    return ['"' + word.replace('"', "") + '"' for word in _JS_WS_RUN.split(text) if word]


def contains_cjk(text: str) -> bool:
    return _CJK.search(text) is not None


def like_terms(query: str) -> list[str]:
    """The lowercased terms of the fallback scan: quoted phrases and words, edge punctuation removed."""
    terms: list[str] = []
    for found in _RAW_TERM.finditer(query):
        raw = found.group(1) if found.group(1) is not None else found.group(2)
        term = _fallback_term(raw)
        if term and term not in terms:
            terms.append(term)
    if not terms:
        whole = _fallback_term(query)
        if whole:
            terms.append(whole)
    return terms


def _fallback_term(raw: str) -> str:
    return _EDGES.sub("", js_trim(raw)).lower()


def escape_like(term: str) -> str:
    return _LIKE_SPECIAL.sub(r"\\\1", term)


def full_text_index_form(content: str) -> str | None:
    """The text the engine indexes for a message: externalized-payload references cut to header and summary."""
    trimmed = js_trim(content)
    if not trimmed:
        return None
    if not trimmed.startswith(_EXTERNALIZED_PREFIXES):
        return content
    lines = [line for line in (js_trim(part) for part in _LINE_BREAK.split(trimmed)) if line]
    if not lines:
        return None
    kept: list[str] = []
    in_summary = False
    for line in lines[1:]:
        if line == "Exploration Summary:":
            in_summary = True
            continue
        if line.startswith(_DESCRIBE_HINTS):
            continue
        if in_summary:
            kept.append(line)
    return "\n".join([lines[0], *kept]) or None
