"""§10.3 the recall search: the engine's full-text query, its LIKE fallback, order and ties, read-only.

The expected orders were checked by running the engine's own SQL statements with Node 24's
``node:sqlite`` (SQLite 3.53) on the same databases: ties in ``created_at`` come out in full-text
rowid order, and in the order of the index the LIKE scan picks (here ``(conversation_id,
identity_hash)``).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from ctxview.assembly.prompt_recall import PromptRecallError, RecallHit, build_prompt_recall_cue
from ctxview.recall_search import (
    PATH_FULL_TEXT,
    PATH_LIKE,
    PATH_LIKE_CJK,
    RecallSearch,
    SearchRecord,
    escape_like,
    full_text_index_form,
    like_terms,
    sanitize_fts5_query,
)
from ctxview.samples.schema import LCM_FTS_TABLES
from tests.lcmdb import LcmDbWriter
from tests.parity.corpus import case_dir

TIE = "2026-01-01 00:00:00"


def build_db(path: Path, *, fts: bool = True) -> None:
    """Seven messages of conversation 1 (and one of conversation 2) that mention the key in different ways."""
    with LcmDbWriter(path) as db:
        rows = [
            # (role, content, seq, created_at, identity_hash)
            ("user", "note 1: RETRY_LIMIT is 1.", 5, TIE, "c"),
            ("assistant", "note 2: RETRY_LIMIT is 2.", 3, TIE, "a"),
            ("user", "note 3: retry-limit is 3.", 1, TIE, "b"),
            ("user", "MAX_RETRY_LIMIT stays.", 4, TIE, "d"),
            ("user", "older RETRY_LIMIT note.", 9, "2025-01-01 00:00:00", "f"),
            ("user", "newest Retry limits here.", 8, "2026-02-01 00:00:00", "g"),
            ("tool", "RETRY_LIMIT from a tool.", 10, TIE, "e"),
        ]
        for role, content, seq, created_at, identity in rows:
            message_id = db.message(role, content, seq=seq, created_at=created_at)
            db.conn.execute("UPDATE messages SET identity_hash = ? WHERE message_id = ?", (identity, message_id))
        other = db.conversation("other-session")
        db.message(
            "user", "RETRY_LIMIT in another conversation.", conversation_id=other, created_at="2027-01-01 00:00:00"
        )
        if fts:
            db.conn.execute(LCM_FTS_TABLES[0])
            db.conn.execute("INSERT INTO messages_fts(rowid, content) SELECT message_id, content FROM messages")


def open_ro(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    conn.execute("PRAGMA query_only=ON")
    return conn


@pytest.fixture
def fts_db(tmp_path: Path) -> Iterator[sqlite3.Connection]:
    path = tmp_path / "fts.db"
    build_db(path)
    conn = open_ro(path)
    yield conn
    conn.close()


@pytest.fixture
def plain_db(tmp_path: Path) -> Iterator[sqlite3.Connection]:
    path = tmp_path / "plain.db"
    build_db(path, fts=False)
    conn = open_ro(path)
    yield conn
    conn.close()


# --- query building ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "query"),
    [
        ("RETRY_LIMIT", '"RETRY_LIMIT"'),
        ("sub-agent restrict", '"sub-agent" "restrict"'),
        ("lcm_expand OR crash", '"lcm_expand" "OR" "crash"'),
        ('hello "world"', '"hello" "world"'),
        ('a "b c" d', '"a" "b c" "d"'),
        ('say "  x  "', '"say" "x"'),
        ('x"y', '"xy"'),
        ("", '""'),
        (" \u00a0 ", '""'),
    ],
)
def test_sanitize_fts5_query(raw: str, query: str) -> None:
    assert sanitize_fts5_query(raw) == query


@pytest.mark.parametrize(
    ("query", "terms"),
    [
        ("RETRY_LIMIT", ["retry_limit"]),
        ('"Foo Bar" baz.', ["foo bar", "baz"]),
        ("(a) A _a_", ["a"]),
        ("___", []),
        ("x\u00a0y", ["x", "y"]),
    ],
)
def test_like_terms(query: str, terms: list[str]) -> None:
    assert like_terms(query) == terms


def test_escape_like() -> None:
    assert escape_like("a_b%c\\") == "a\\_b\\%c\\\\"


def test_full_text_index_form() -> None:
    assert full_text_index_form("plain RETRY_LIMIT") == "plain RETRY_LIMIT"
    assert full_text_index_form(" \n ") is None
    reference = (
        "[LCM File: f1]\nbody RETRY_LIMIT\nUse lcm_describe f1\nExploration Summary:\n  sums up\nCall lcm_describe(x)\n"
    )
    assert full_text_index_form(reference) == "[LCM File: f1]\nsums up"


# --- full-text path ------------------------------------------------------------------------------


def test_full_text_order_and_filters(fts_db: sqlite3.Connection) -> None:
    search = RecallSearch(fts_db, 1)
    hits = search("RETRY_LIMIT")
    # the phrase "retry limit" (porter-stemmed): newest first, ties in rowid order, conversation 1 only
    assert [hit.message_id for hit in hits] == [6, 1, 2, 3, 4, 7, 5]
    assert hits[1] == RecallHit(1, "user", "note 1: RETRY_LIMIT is 1.", 5)
    assert hits[5].role == "tool"
    assert search.records == [SearchRecord("RETRY_LIMIT", PATH_FULL_TEXT, None, (6, 1, 2, 3, 4, 7, 5))]


def test_full_text_limit(fts_db: sqlite3.Connection) -> None:
    assert [hit.message_id for hit in RecallSearch(fts_db, 1, limit=3)("RETRY_LIMIT")] == [6, 1, 2]
    assert [hit.message_id for hit in RecallSearch(fts_db, 2)("RETRY_LIMIT")] == [8]


def test_cue_from_the_full_text_hits(fts_db: sqlite3.Connection) -> None:
    cue = build_prompt_recall_cue(
        "what is RETRY_LIMIT", [{"role": "user", "content": "hi"}], [], RecallSearch(fts_db, 1)
    )
    assert cue is not None
    # 6 and 3 do not contain the exact key, 4 only inside a longer word, 7 is a tool message
    assert cue.lines == (
        '- user matched RETRY_LIMIT: "note 1: RETRY_LIMIT is 1."',
        '- assistant matched RETRY_LIMIT: "note 2: RETRY_LIMIT is 2."',
        '- user matched RETRY_LIMIT: "older RETRY_LIMIT note."',
    )
    assert cue.message_ids_by_identifier() == {"RETRY_LIMIT": (1, 2, 5)}
    assert [match.seq for match in cue.matches] == [5, 3, 9]


# --- LIKE fallback -------------------------------------------------------------------------------


def test_like_fallback_without_full_text_table(plain_db: sqlite3.Connection) -> None:
    search = RecallSearch(plain_db, 1)
    hits = search("RETRY_LIMIT")
    # substring "retry_limit": newest first, ties in (conversation_id, identity_hash) index order
    assert [hit.message_id for hit in hits] == [2, 1, 4, 7, 5]
    assert search.records == [SearchRecord("RETRY_LIMIT", PATH_LIKE, "no such table: messages_fts", (2, 1, 4, 7, 5))]


def test_like_fallback_when_the_full_text_query_fails(tmp_path: Path) -> None:
    path = tmp_path / "odd.db"
    build_db(path, fts=False)
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE messages_fts (content TEXT)")  # not a full-text table: MATCH fails
    conn.close()
    ro = open_ro(path)
    try:
        search = RecallSearch(ro, 1)
        assert [hit.message_id for hit in search("RETRY_LIMIT")] == [2, 1, 4, 7, 5]
        record = search.records[0]
        assert record.path == PATH_LIKE and record.error == "no such column: messages_fts"
    finally:
        ro.close()


def test_like_checks_the_indexed_form_of_externalized_payloads(tmp_path: Path) -> None:
    path = tmp_path / "ext.db"
    with LcmDbWriter(path) as db:
        db.message("tool", "[LCM Tool Output: t1]\nbody mentions RETRY_LIMIT\n", created_at="2026-01-02 00:00:00")
        db.message("tool", "[LCM File: f1]\nExploration Summary:\nsets RETRY_LIMIT", created_at="2026-01-01 00:00:00")
    conn = open_ro(path)
    try:
        assert [hit.message_id for hit in RecallSearch(conn, 1)("RETRY_LIMIT")] == [2]
    finally:
        conn.close()


def test_like_fails_on_non_text_content(tmp_path: Path) -> None:
    path = tmp_path / "blob.db"
    with LcmDbWriter(path) as db:
        message_id = db.message("user", "placeholder")
        db.conn.execute("UPDATE messages SET content = ? WHERE message_id = ?", (b"RETRY_LIMIT as blob", message_id))
    conn = open_ro(path)
    try:
        with pytest.raises(PromptRecallError):
            RecallSearch(conn, 1)("RETRY_LIMIT")
    finally:
        conn.close()


def test_cjk_query_goes_to_like(fts_db: sqlite3.Connection) -> None:
    search = RecallSearch(fts_db, 1)
    assert search("\u8a2d\u5b9a") == []
    assert search.records == [SearchRecord("\u8a2d\u5b9a", PATH_LIKE_CJK, None, ())]


# --- read-only and the parity case ---------------------------------------------------------------


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_case_303_search_and_cue_leave_the_file_unchanged(tmp_path: Path) -> None:
    path = tmp_path / "session.db"
    shutil.copyfile(case_dir("303") / "session.db", path)
    before = _digest(path)
    expected = json.loads((case_dir("303") / "expected.json").read_text(encoding="utf-8"))
    conn = open_ro(path)
    try:
        search = RecallSearch(conn, 1)
        cue = build_prompt_recall_cue(
            "what was CACHE_TTL_SECONDS?", expected["stages"]["assembler"]["messages"], [], search
        )
    finally:
        conn.close()
    assert cue is not None and cue.message == expected["messages"][0]
    assert search.records == [SearchRecord("CACHE_TTL_SECONDS", PATH_FULL_TEXT, None, (1,))]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["session.db"]
    assert _digest(path) == before


def test_case_303_without_the_full_text_table(tmp_path: Path) -> None:
    path = tmp_path / "session.db"
    shutil.copyfile(case_dir("303") / "session.db", path)
    with sqlite3.connect(path) as conn:
        conn.execute("DROP TABLE messages_fts")
    conn.close()
    expected = json.loads((case_dir("303") / "expected.json").read_text(encoding="utf-8"))
    ro = open_ro(path)
    try:
        search = RecallSearch(ro, 1)
        cue = build_prompt_recall_cue(
            "what was CACHE_TTL_SECONDS?", expected["stages"]["assembler"]["messages"], [], search
        )
    finally:
        ro.close()
    assert cue is not None and cue.message == expected["messages"][0]
    assert search.records[0].path == PATH_LIKE
