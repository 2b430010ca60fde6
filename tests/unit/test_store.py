"""The read-only LCM store: validation, one-pass loading, WAL readers (spec §1)."""

from __future__ import annotations

import hashlib
import sqlite3
import time
from pathlib import Path

import pytest

from ctxview.errors import ConversationNotFound, DatabaseError
from ctxview.store import IMMUTABLE_WARNING, LcmStore
from tests.lcmdb import LcmDbWriter, block_part, text_part


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def small_db(tmp_path: Path) -> Path:
    path = tmp_path / "s.db"
    with LcmDbWriter(path) as w:
        w.user("hello", token_count=3)
        w.assistant_blocks(
            [{"type": "text", "text": "reading"}, {"type": "toolCall", "id": "c1", "name": "read", "arguments": {}}],
            "reading",
            token_count=4,
        )
        w.tool_result("c1", "body", token_count=5)
        w.summary("sum_1", "older work", latest_at="2026-01-02T00:00:00.000Z")
        w.message("user", "not in context", in_context=False)
    return path


def test_list_conversations(small_db: Path) -> None:
    with LcmStore(small_db) as store:
        [info] = store.list_conversations()
    assert info.conversation_id == 1
    assert info.session_id == "test-session"
    assert info.active and not info.archived
    assert (info.message_count, info.context_item_count, info.summary_count) == (4, 4, 1)
    assert info.token_total == 12  # 3 + 4 + 5 + the summary's stored 0


def test_load_session(small_db: Path) -> None:
    with LcmStore(small_db) as store:
        session = store.load_session()
    assert [(i.ordinal, i.item_type) for i in session.items] == [
        (0, "message"),
        (1, "message"),
        (2, "message"),
        (3, "summary"),
    ]
    assert sorted(session.messages) == [1, 2, 3]  # only messages the context references
    assistant = session.messages[2]
    assert [p.part_type for p in assistant.parts] == ["text", "tool"]
    assert assistant.parts[1].tool_call_id == "c1" and assistant.parts[1].tool_input == "{}"
    assert session.summaries["sum_1"].latest_at == "2026-01-02T00:00:00.000Z"
    assert session.focus_brief is None
    assert isinstance(session.data_version, int)
    assert session.source == str(small_db)


def test_never_writes(small_db: Path) -> None:
    before = digest(small_db)
    names = sorted(p.name for p in small_db.parent.iterdir())
    with LcmStore(small_db) as store:
        store.list_conversations()
        store.load_session(1)
        with pytest.raises(sqlite3.OperationalError):
            store._conn.execute("CREATE TABLE x (y)")
    assert digest(small_db) == before
    assert sorted(p.name for p in small_db.parent.iterdir()) == names


def test_conversation_choice(tmp_path: Path) -> None:
    path = tmp_path / "multi.db"
    with LcmDbWriter(path) as w:
        w.user("first")
        w.conn.execute("UPDATE conversations SET created_at = '2025-01-01 00:00:00' WHERE conversation_id = 1")
        old = w.conversation("old", created_at="2026-01-01 00:00:00")
        new = w.conversation("new", created_at="2026-03-01 00:00:00")
        w.conversation("newest-inactive", active=0, created_at="2026-05-01 00:00:00")
        w.message("user", "in new", conversation_id=new)
        w.message("user", "in old", conversation_id=old)
    with LcmStore(path) as store:
        assert store.load_session().conversation.conversation_id == new
        assert store.load_session(old).items[0].message_id is not None
        with pytest.raises(ConversationNotFound, match=r"conversation 99 not found; valid ids: 1, 2, 3, 4"):
            store.load_session(99)


def test_empty_database_has_no_conversations(tmp_path: Path) -> None:
    path = tmp_path / "e.db"
    w = LcmDbWriter(path)
    w.conn.execute("DELETE FROM conversations")
    w.close()
    with LcmStore(path) as store, pytest.raises(ConversationNotFound, match="no conversations"):
        store.load_session()


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        ("missing", "no such file"),
        ("empty", "empty file"),
        ("text", "not a SQLite database"),
        ("plain", "not an LCM database: missing tables conversations, context_items, messages"),
        ("column", "table messages is missing column seq"),
        ("directory", "is a directory"),
    ],
)
def test_bad_files(tmp_path: Path, setup: str, message: str) -> None:
    path = tmp_path / "bad.db"
    if setup == "empty":
        path.write_bytes(b"")
    elif setup == "text":
        path.write_text("hello, I am not a database " * 20)
    elif setup == "plain":
        conn = sqlite3.connect(path)
        conn.execute("CREATE TABLE notes (x)")
        conn.commit()
        conn.close()
    elif setup == "column":
        conn = sqlite3.connect(path)
        conn.executescript(
            "CREATE TABLE conversations (conversation_id INTEGER PRIMARY KEY, session_id TEXT, active INTEGER,"
            " created_at TEXT);"
            "CREATE TABLE context_items (conversation_id, ordinal, item_type, message_id, summary_id);"
            "CREATE TABLE messages (message_id INTEGER PRIMARY KEY, conversation_id, role, content);"
            "CREATE TABLE message_parts (part_id, message_id, part_type, ordinal);"
            "CREATE TABLE summaries (summary_id, conversation_id, kind, depth, content);"
            "CREATE TABLE summary_parents (summary_id, parent_summary_id, ordinal);"
            "CREATE TABLE summary_messages (summary_id, message_id, ordinal);"
        )
        conn.close()
    elif setup == "directory":
        path.mkdir()
    with pytest.raises(DatabaseError, match=message):
        LcmStore(path)


def test_old_schema_without_optional_columns(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    w = LcmDbWriter(path)
    w.user("hello")
    w.summary("s1", "c", kind="leaf")
    w.conn.executescript(
        "ALTER TABLE messages DROP COLUMN large_content; ALTER TABLE messages DROP COLUMN openclaw_sender_metadata;"
        "ALTER TABLE summaries DROP COLUMN model; ALTER TABLE summaries DROP COLUMN file_ids;"
        "DROP TABLE focus_brief_sources; DROP TABLE focus_briefs; DROP TABLE large_files;"
    )
    w.close()
    with LcmStore(path) as store:
        session = store.load_session()
    assert session.messages[1].large_content is None and session.messages[1].sender_metadata is None
    assert session.summaries["s1"].model is None and session.summaries["s1"].file_ids is None
    assert session.focus_brief is None and session.large_files == {}


def test_invalid_utf8_is_replaced(tmp_path: Path) -> None:
    path = tmp_path / "u.db"
    with LcmDbWriter(path) as w:
        mid = w.user("placeholder")
        w.conn.execute("UPDATE messages SET content = CAST(X'61FF62' AS TEXT) WHERE message_id = ?", (mid,))
    with LcmStore(path) as store:
        assert store.load_session().messages[1].content == "a\ufffdb"


def test_dangling_items_are_kept(tmp_path: Path) -> None:
    path = tmp_path / "d.db"
    with LcmDbWriter(path) as w:
        w.user("hi")
        w.conn.execute("PRAGMA foreign_keys=OFF")
        w.context_message(999)
        w.context_summary("sum_gone")
    with LcmStore(path) as store:
        session = store.load_session()
    assert [(i.message_id, i.summary_id) for i in session.items] == [(1, None), (999, None), (None, "sum_gone")]
    assert "2 context items reference missing rows" in session.warnings


def test_summary_lineage(tmp_path: Path) -> None:
    path = tmp_path / "l.db"
    with LcmDbWriter(path) as w:
        m = [w.message("user", f"m{i}", in_context=False) for i in range(6)]  # seqs 0..5
        w.summary("leaf_a", "a", source_messages=[m[0], m[1]], in_context=False)
        w.summary("leaf_b", "b", source_messages=[m[4]], in_context=False)
        w.summary("mid", "mid", kind="condensed", depth=1, parents=["leaf_b", "leaf_a"], in_context=False)
        w.conn.execute("PRAGMA foreign_keys=OFF")
        w.summary("top", "top", kind="condensed", depth=2, parents=["mid", "ghost"], source_messages=[m[2]])
        w.summary("alone", "alone")
        # a cycle must not hang
        w.conn.execute("INSERT INTO summary_parents VALUES ('leaf_a', 'top', 0)")
    with LcmStore(path) as store:
        session = store.load_session()
    top = session.summaries["top"]
    assert top.parent_ids == ("mid",)  # the missing parent is not rendered
    assert top.source_message_ids == (m[2],)
    assert top.max_source_seq == 4
    assert session.summaries["alone"].max_source_seq is None
    assert set(session.summaries) == {"top", "alone"}


def test_focus_brief_and_large_files(tmp_path: Path) -> None:
    path = tmp_path / "f.db"
    with LcmDbWriter(path) as w:
        part = block_part({"type": "text", "text": "x"}, "toolResult", toolCallId="c", toolName="read")
        part["tool_call_id"] = "c"
        w.message("tool", "x", [part], large_content="file_0123456789abcdef")
        w.large_file("file_0123456789abcdef", byte_size=1234, summary="sum")
        w.large_file("file_unused", byte_size=1)
        w.focus_brief("b_old", "old", created_at="2026-01-01 00:00:00")
        w.focus_brief("b_new", "new", created_at="2026-02-01 00:00:00")
        w.focus_brief("b_tie", "tie later rowid", created_at="2026-02-01 00:00:00")
        w.focus_brief("b_draft", "draft", status="draft", created_at="2026-03-01 00:00:00")
        w.message("user", "u", [text_part("u", "user")])
    with LcmStore(path) as store:
        session = store.load_session()
    assert list(session.large_files) == ["file_0123456789abcdef"]
    assert session.large_files["file_0123456789abcdef"].byte_size == 1234
    assert session.focus_brief is not None and session.focus_brief.brief_id == "b_tie"


def test_wal_reader_sees_new_commits(tmp_path: Path) -> None:
    path = tmp_path / "w.db"
    writer = LcmDbWriter(path)
    writer.conn.execute("PRAGMA journal_mode=WAL")
    writer.user("first")
    writer.conn.commit()
    with LcmStore(path) as store:
        version = store.data_version()
        assert len(store.load_session().items) == 1
        writer.user("second")
        writer.conn.commit()
        assert store.data_version() != version
        assert len(store.load_session().items) == 2
    writer.close()


def test_immutable_fallback_warns(small_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    original = LcmStore._connect

    def refuse_plain(self: LcmStore, immutable: bool) -> sqlite3.Connection:
        if not immutable:
            raise sqlite3.OperationalError("unable to open database file")
        return original(self, immutable)

    monkeypatch.setattr(LcmStore, "_connect", refuse_plain)
    with LcmStore(small_db) as store:
        session = store.load_session()
    assert session.warnings[0].startswith(IMMUTABLE_WARNING)
    assert len(session.items) == 4


def test_many_messages_load_in_one_pass(tmp_path: Path) -> None:
    path = tmp_path / "big.db"
    n = 20_000
    w = LcmDbWriter(path)
    w.conn.executemany(
        "INSERT INTO messages (message_id, conversation_id, seq, role, content, token_count) VALUES (?, 1, ?, ?, ?, 1)",
        [(i + 1, i, "user" if i % 2 == 0 else "assistant", f"message {i}") for i in range(n)],
    )
    w.conn.executemany(
        "INSERT INTO message_parts (part_id, message_id, session_id, part_type, ordinal, text_content, metadata)"
        " VALUES (?, ?, 's', 'text', 0, ?, '{\"originalRole\":\"user\"}')",
        [(f"p{i}", i + 1, f"message {i}") for i in range(n)],
    )
    w.conn.executemany(
        "INSERT INTO context_items (conversation_id, ordinal, item_type, message_id) VALUES (1, ?, 'message', ?)",
        [(i, i + 1) for i in range(n)],
    )
    w.close()
    started = time.perf_counter()
    with LcmStore(path) as store:
        session = store.load_session()
    elapsed = time.perf_counter() - started
    assert len(session.messages) == n and session.messages[n].parts[0].text_content == f"message {n - 1}"
    assert elapsed < 20  # one query per table; per-row queries would take minutes here


@pytest.mark.parametrize("linked", [True, False])
def test_summaries_read_by_bound_ids_are_those_the_subquery_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, linked: bool
) -> None:
    """The in-context summary ids are bound as parameters when few (one scan of the context items, not one
    per query); with many, the queries keep the subquery.  Both read the same summaries, lineage and sources,
    with a summary in context twice and one whose id is stored as a blob."""
    path = tmp_path / "s.db"
    with LcmDbWriter(path) as w:
        m = [w.message("user", f"m{i}", in_context=False) for i in range(4)]
        w.summary("leaf_a", "a", source_messages=[m[0], m[1]], in_context=not linked)
        w.summary("leaf_b", "b", source_messages=[m[3], m[2]])
        if linked:
            w.summary("top", "top", kind="condensed", depth=1, parents=["leaf_a"], source_messages=[m[1]])
        w.summary("twice", "twice")
        w.conn.execute("PRAGMA foreign_keys=OFF")
        w.conn.execute("INSERT INTO context_items (conversation_id, ordinal, item_type, summary_id)"
                       " VALUES (1, 90, 'summary', 'twice')")
        w.conn.execute("INSERT INTO summaries (summary_id, conversation_id, kind, depth, content, token_count)"
                       " VALUES (CAST('blob_id' AS BLOB), 1, 'leaf', 0, 'blob', 3)")
        w.conn.execute("INSERT INTO context_items (conversation_id, ordinal, item_type, summary_id)"
                       " VALUES (1, 91, 'summary', CAST('blob_id' AS BLOB))")

    def summaries(bound: int) -> dict[str, object]:
        monkeypatch.setattr("ctxview.store.BOUND_IDS", bound)
        with LcmStore(path) as store:
            return dict(store.load_session().summaries)

    bound, subquery = summaries(900), summaries(0)
    assert bound == subquery
    assert {"leaf_b", "twice", "blob_id"} <= set(bound)
    assert bound["leaf_b"].source_message_ids == (m[3], m[2])
