"""Hostile inputs built from a real session: what an attacker or an unlucky user points ctxview at.

Each kind is one function ``build(folder) -> Path`` registered in ``KINDS``: it writes
its files into an empty ``folder`` and returns the path to give ctxview as the database.
Most kinds are a copy of the demo session (``sample_sessions/demo.db``) with a few SQL
statements applied, so adding one is one line::

    KINDS["token_count is a string"] = sql("UPDATE messages SET token_count = 'lots'")

The classes: files that are not regular files (FIFOs, sockets, devices, directories,
symbolic-link loops), tables swapped for views (one recursive with no end, one a cross
join) or virtual tables, constraints dropped, values no engine writes (±Infinity, NaN,
text, blobs, out-of-range integers, NULLs, duplicate / text / fractional ordinals),
cycles, self-loops and 100,000-long chains in ``summary_parents``, WAL leftovers (a
``-wal`` without its ``-shm``, one that is a FIFO, one left by another database, an
empty one), escape codes and Rich markup in content, and a few heavy ones (a 10 MB
message part, deeply nested JSON, 100,000 parents).  ``python -m tests.safety.hostile
DIR`` writes every kind into ``DIR/<kind>/`` for a look by hand.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterable
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "sample_sessions" / "demo.db"
MEDIUM = REPO / "sample_sessions" / "medium.db"
DB_NAME = "lcm.db"
CHAIN = 100_000  # the length of the long chains and cycles

Builder = Callable[[Path], Path]
KINDS: dict[str, Builder] = {}
HEAVY: set[str] = set()  # kinds whose every run takes a second or more: each command runs once, not each format
# kinds whose rows hold what no engine writes: every renderer (assemble format) meets them; the other kinds
# (files, WAL leftovers, schemas, graphs) hold the demo's rows, and share the formats out among themselves
EVERY_FORMAT: set[str] = set()

ESC = "\x1b"
ANSI_AND_MARKUP = (
    f"{ESC}[31mred{ESC}[0m {ESC}[2J{ESC}[H [bold red]markup[/] [/] [@click=app.quit]quit[/]"
    f" [link=https://evil.example]link[/link] {ESC}]0;title\x07 \x9b31m \u202eevil\u202c [/bold"
)


def kind(name: str, *, heavy: bool = False) -> Callable[[Builder], Builder]:
    """Register ``build`` under ``name`` (a decorator)."""

    def register(build: Builder) -> Builder:
        KINDS[name] = build
        if heavy:
            HEAVY.add(name)
        return build

    return register


# --- building blocks ----------------------------------------------------------------------------


def demo_copy(folder: Path, source: Path = DEMO, name: str = DB_NAME) -> Path:
    path = folder / name
    shutil.copyfile(source, path)
    return path


def execute(path: Path, statements: Iterable[str]) -> None:
    """Run ``statements`` on ``path`` with the checks an engine relies on switched off."""
    conn = sqlite3.connect(path)
    try:
        conn.execute("PRAGMA ignore_check_constraints = ON")
        conn.execute("PRAGMA foreign_keys = OFF")
        conn.execute("PRAGMA recursive_triggers = OFF")
        for statement in statements:
            conn.execute(statement)
        conn.commit()
    finally:
        conn.close()
    for suffix in ("-journal", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)


def sql(*statements: str) -> Builder:
    """A kind made of SQL statements run on a copy of the demo."""

    def build(folder: Path) -> Path:
        path = demo_copy(folder)
        execute(path, statements)
        return path

    return build


def without_constraints(table: str) -> list[str]:
    """Statements that rebuild ``table`` with the same columns and no key, CHECK or NOT NULL."""
    return [
        f"CREATE TABLE hostile_copy AS SELECT * FROM {table}",
        f"DROP TABLE {table}",
        f"ALTER TABLE hostile_copy RENAME TO {table}",
    ]


def as_view(table: str, select: str) -> list[str]:
    """``table`` replaced by a view of the same name (its rows kept in ``hostile_<table>``)."""
    return [f"ALTER TABLE {table} RENAME TO hostile_{table}", f"CREATE VIEW {table} AS {select}"]


def rows(path: Path, statement: str, values: Iterable[tuple[object, ...]], *before: str) -> None:
    conn = sqlite3.connect(path)
    try:
        conn.execute("PRAGMA ignore_check_constraints = ON")
        for sql_text in before:
            conn.execute(sql_text)
        conn.executemany(statement, values)
        conn.commit()
    finally:
        conn.close()


def wal_database(folder: Path, source: Path = DEMO, name: str = DB_NAME, *, commit: str | None = None) -> Path:
    """A WAL-mode copy of ``source`` in ``folder``; with ``commit`` the -wal (no -shm) holds that commit."""
    work = folder.parent / f".{folder.name}.make"
    work.mkdir(parents=True, exist_ok=True)
    try:
        made = work / name
        shutil.copyfile(source, made)
        conn = sqlite3.connect(made)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.close()
        if commit is not None:
            writer = sqlite3.connect(made)
            writer.execute("PRAGMA wal_autocheckpoint=0")
            writer.execute(commit)
            writer.commit()
            shutil.copyfile(made, folder / name)
            shutil.copyfile(f"{made}-wal", folder / f"{name}-wal")
            writer.close()
        else:
            shutil.copyfile(made, folder / name)
    finally:
        shutil.rmtree(work)
    return folder / name


def make_socket(path: Path) -> None:
    """A Unix socket file at ``path`` (bound in a child whose working folder is the parent: short names)."""
    program = "import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])"
    subprocess.run([sys.executable, "-c", program, path.name], cwd=path.parent, check=True, timeout=30)
    assert path.is_socket()


WAL_COMMIT = "UPDATE conversations SET title = 'renamed in the WAL' WHERE conversation_id = 2"

# --- files that are not regular files -------------------------------------------------------------


@kind("database is a named pipe")
def fifo_database(folder: Path) -> Path:
    os.mkfifo(folder / DB_NAME)
    return folder / DB_NAME


@kind("database is a symlink to a named pipe")
def symlink_to_fifo(folder: Path) -> Path:
    os.mkfifo(folder / "pipe")
    (folder / DB_NAME).symlink_to("pipe")
    return folder / DB_NAME


@kind("database is a socket")
def socket_database(folder: Path) -> Path:
    make_socket(folder / DB_NAME)
    return folder / DB_NAME


@kind("database is a directory")
def directory_database(folder: Path) -> Path:
    (folder / DB_NAME).mkdir()
    return folder / DB_NAME


@kind("database is a directory holding a database")
def directory_with_db(folder: Path) -> Path:
    (folder / DB_NAME).mkdir()
    demo_copy(folder / DB_NAME, name="lcm.db")
    return folder / DB_NAME


@kind("database is a symlink loop")
def symlink_loop(folder: Path) -> Path:
    (folder / DB_NAME).symlink_to("other.db")
    (folder / "other.db").symlink_to(DB_NAME)
    return folder / DB_NAME


@kind("database is a symlink to itself")
def symlink_self(folder: Path) -> Path:
    (folder / DB_NAME).symlink_to(DB_NAME)
    return folder / DB_NAME


@kind("database is a dangling symlink")
def dangling_symlink(folder: Path) -> Path:
    (folder / DB_NAME).symlink_to("missing.db")
    return folder / DB_NAME


@kind("database is a symlink to /dev/zero")
def device_zero(folder: Path) -> Path:
    (folder / DB_NAME).symlink_to("/dev/zero")
    return folder / DB_NAME


@kind("database is a symlink to /dev/null")
def device_null(folder: Path) -> Path:
    (folder / DB_NAME).symlink_to("/dev/null")
    return folder / DB_NAME


@kind("database is empty")
def empty_database(folder: Path) -> Path:
    (folder / DB_NAME).write_bytes(b"")
    return folder / DB_NAME


@kind("database is cut in half")
def truncated_database(folder: Path) -> Path:
    data = DEMO.read_bytes()
    (folder / DB_NAME).write_bytes(data[: len(data) // 2])
    return folder / DB_NAME


@kind("database is the SQLite header only")
def header_only(folder: Path) -> Path:
    (folder / DB_NAME).write_bytes(DEMO.read_bytes()[:100])
    return folder / DB_NAME


@kind("database has its schema page zeroed")
def zeroed_schema(folder: Path) -> Path:
    data = bytearray(DEMO.read_bytes())
    data[100:4096] = bytes(4096 - 100)
    (folder / DB_NAME).write_bytes(bytes(data))
    return folder / DB_NAME


@kind("database is a sparse 4 GB file with a SQLite header")
def sparse_database(folder: Path) -> Path:
    path = folder / DB_NAME
    path.write_bytes(DEMO.read_bytes()[:4096])
    os.truncate(path, 4 << 30)
    return path


@kind("database has a name with markup and escapes")
def odd_name(folder: Path) -> Path:
    return demo_copy(folder, name=f"[bold red]{ESC}[31mx[blink] \u202e.db")


# --- WAL and journal leftovers ------------------------------------------------------------------


@kind("-wal without -shm (newest commit only in the -wal)")
def wal_without_shm(folder: Path) -> Path:
    return wal_database(folder, commit=WAL_COMMIT)


@kind("database is a symlink to a WAL database whose -wal is beside the target")
def symlink_to_wal_database(folder: Path) -> Path:
    (folder / "real").mkdir()
    wal_database(folder / "real", commit=WAL_COMMIT)
    (folder / DB_NAME).symlink_to(Path("real") / DB_NAME)
    return folder / DB_NAME


@kind("database is a symlink whose own name has a -wal of another database beside it")
def symlink_with_foreign_wal(folder: Path) -> Path:
    (folder / "real").mkdir()
    wal_database(folder / "real")
    (folder / DB_NAME).symlink_to(Path("real") / DB_NAME)
    other = folder.parent / f".{folder.name}.other"
    other.mkdir()
    try:
        foreign = wal_database(other, MEDIUM, commit="UPDATE conversations SET title = 'another database'")
        shutil.copyfile(f"{foreign}-wal", folder / f"{DB_NAME}-wal")
    finally:
        shutil.rmtree(other)
    return folder / DB_NAME


@kind("-wal is a named pipe")
def wal_fifo(folder: Path) -> Path:
    path = wal_database(folder)
    os.mkfifo(f"{path}-wal")
    return path


@kind("-wal is a symlink to /dev/zero")
def wal_device(folder: Path) -> Path:
    path = wal_database(folder)
    Path(f"{path}-wal").symlink_to("/dev/zero")
    return path


@kind("-wal is a directory")
def wal_directory(folder: Path) -> Path:
    path = wal_database(folder)
    Path(f"{path}-wal").mkdir()
    return path


@kind("-wal is a symlink loop")
def wal_symlink_loop(folder: Path) -> Path:
    path = wal_database(folder)
    Path(f"{path}-wal").symlink_to(f"{DB_NAME}-wal")
    return path


@kind("-wal is empty")
def wal_empty(folder: Path) -> Path:
    path = wal_database(folder)
    Path(f"{path}-wal").write_bytes(b"")
    return path


@kind("-wal is random bytes")
def wal_random(folder: Path) -> Path:
    path = wal_database(folder)
    Path(f"{path}-wal").write_bytes(bytes(range(256)) * 64)
    return path


@kind("-wal was left by another database")
def wal_foreign(folder: Path) -> Path:
    other = folder.parent / f".{folder.name}.other"
    other.mkdir()
    try:
        foreign = wal_database(other, MEDIUM, commit="UPDATE conversations SET title = 'another database'")
        path = wal_database(folder)
        shutil.copyfile(f"{foreign}-wal", f"{path}-wal")
    finally:
        shutil.rmtree(other)
    return path


@kind("-wal cut in the middle of a frame")
def wal_truncated(folder: Path) -> Path:
    path = wal_database(folder, commit=WAL_COMMIT)
    wal = Path(f"{path}-wal")
    data = wal.read_bytes()
    wal.write_bytes(data[: len(data) - 1000])
    return path


@kind("-wal with its header checksum damaged")
def wal_bad_checksum(folder: Path) -> Path:
    path = wal_database(folder, commit=WAL_COMMIT)
    wal = Path(f"{path}-wal")
    data = bytearray(wal.read_bytes())
    data[24] ^= 0xFF
    wal.write_bytes(bytes(data))
    return path


@kind("-wal with -shm that is a named pipe")
def shm_fifo(folder: Path) -> Path:
    path = wal_database(folder, commit=WAL_COMMIT)
    os.mkfifo(f"{path}-shm")
    return path


@kind("-wal with an empty -shm")
def shm_empty(folder: Path) -> Path:
    path = wal_database(folder, commit=WAL_COMMIT)
    Path(f"{path}-shm").write_bytes(b"")
    return path


@kind("WAL database with a -shm and no -wal")
def shm_without_wal(folder: Path) -> Path:
    path = wal_database(folder)
    Path(f"{path}-shm").write_bytes(bytes(32768))
    return path


@kind("-wal from a database with another page size")
def wal_other_page_size(folder: Path) -> Path:
    other = folder.parent / f".{folder.name}.other"
    other.mkdir()
    try:
        small = demo_copy(other, name="small.db")
        conn = sqlite3.connect(small)
        conn.execute("PRAGMA page_size = 1024")
        conn.execute("VACUUM")
        conn.close()
        foreign = wal_database(other, small, commit=WAL_COMMIT)
        path = wal_database(folder)
        shutil.copyfile(f"{foreign}-wal", f"{path}-wal")
    finally:
        shutil.rmtree(other)
    return path


@kind("-wal followed by 8 GB of holes")
def wal_sparse_tail(folder: Path) -> Path:
    path = wal_database(folder, commit=WAL_COMMIT)
    os.truncate(f"{path}-wal", 8 << 30)
    return path


@kind("-shm is a symlink to /dev/zero")
def shm_device(folder: Path) -> Path:
    path = wal_database(folder, commit=WAL_COMMIT)
    Path(f"{path}-shm").symlink_to("/dev/zero")
    return path


@kind("hot rollback journal (a writer died mid-transaction)")
def hot_journal(folder: Path) -> Path:
    """The database half-written by a transaction that never committed, and its journal to undo it."""
    work = folder.parent / f".{folder.name}.make"
    work.mkdir()
    try:
        made = demo_copy(work)
        writer = sqlite3.connect(made, isolation_level=None)
        writer.execute("PRAGMA cache_size = 1")  # spill changed pages into the file before the commit
        writer.execute("BEGIN")
        writer.execute("UPDATE messages SET content = content || ' (never committed)'")
        writer.execute("UPDATE conversations SET title = 'never committed'")
        shutil.copyfile(made, folder / DB_NAME)
        shutil.copyfile(f"{made}-journal", folder / f"{DB_NAME}-journal")
        writer.execute("ROLLBACK")
        writer.close()
    finally:
        shutil.rmtree(work)
    return folder / DB_NAME


@kind("WAL database with a stale -shm (all three files copied)")
def stale_shm(folder: Path) -> Path:
    work = folder.parent / f".{folder.name}.make"
    work.mkdir()
    try:
        made = demo_copy(work)
        execute(made, ["PRAGMA journal_mode=WAL"])
        writer = sqlite3.connect(made)
        writer.execute("PRAGMA wal_autocheckpoint=0")
        writer.execute(WAL_COMMIT)
        writer.commit()
        for suffix in ("", "-wal", "-shm"):
            shutil.copyfile(f"{made}{suffix}", folder / f"{DB_NAME}{suffix}")
        writer.close()
    finally:
        shutil.rmtree(work)
    return folder / DB_NAME


@kind("-journal is a named pipe")
def journal_fifo(folder: Path) -> Path:
    path = demo_copy(folder)
    os.mkfifo(f"{path}-journal")
    return path


# --- tables that are not tables -----------------------------------------------------------------

KINDS["context_items is a recursive view with no end"] = sql(
    *as_view(
        "context_items",
        "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n)"
        " SELECT 1 AS conversation_id, i AS ordinal, 'message' AS item_type, 44 AS message_id,"
        " NULL AS summary_id, '2026-01-01' AS created_at FROM n",
    )
)
KINDS["messages is a cross-join view"] = sql(
    *as_view(
        "messages",
        "SELECT a.message_id, a.conversation_id, a.seq, a.role, a.content, a.token_count, a.identity_hash,"
        " a.openclaw_sender_metadata, a.transcript_entry_id, a.created_at, a.large_content, a.stable_event_key"
        " FROM hostile_messages a, hostile_messages b, hostile_messages c, hostile_messages d",
    )
)
KINDS["summary_parents is a view"] = sql(*as_view("summary_parents", "SELECT * FROM hostile_summary_parents"))
KINDS["conversations is a view"] = sql(*as_view("conversations", "SELECT * FROM hostile_conversations"))
KINDS["focus_briefs is a view with no end"] = sql(
    *as_view(
        "focus_briefs",
        "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n)"
        " SELECT 'b' || i AS brief_id, 1 AS conversation_id, 'p' AS prompt, 'c' AS content,"
        " 'active' AS status, 0 AS token_count, 0 AS target_tokens, NULL AS covered_latest_at,"
        " NULL AS covered_message_seq, '2026-01-01' AS created_at FROM n",
    )
)
KINDS["conversation_compaction_maintenance is a view with no end"] = sql(
    "DROP TABLE conversation_compaction_maintenance",
    "CREATE VIEW conversation_compaction_maintenance AS WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL"
    " SELECT i + 1 FROM n) SELECT 1 AS conversation_id, 1 AS pending, 0 AS running FROM n WHERE i < 0",
)
KINDS["context_items is a virtual table"] = sql(
    "DROP TABLE context_items",
    "CREATE VIRTUAL TABLE context_items USING fts5(conversation_id, ordinal, item_type, message_id, summary_id)",
    "INSERT INTO context_items VALUES (1, 0, 'message', 44, NULL)",
)
KINDS["messages_fts is a plain table"] = sql(
    "DROP TABLE messages_fts", "CREATE TABLE messages_fts (content TEXT)", "INSERT INTO messages_fts VALUES ('x')"
)
KINDS["messages_fts is gone"] = sql("DROP TABLE messages_fts")
KINDS["focus_briefs without rowid"] = sql(
    "DROP TABLE focus_briefs",
    "CREATE TABLE focus_briefs (brief_id TEXT PRIMARY KEY, conversation_id INTEGER, prompt TEXT, content TEXT,"
    " status TEXT, token_count INTEGER, target_tokens INTEGER, covered_latest_at TEXT, covered_message_seq INTEGER,"
    " created_at TEXT) WITHOUT ROWID",
    "INSERT INTO focus_briefs VALUES ('b1', 1, 'p', 'brief', 'active', 5, 5, NULL, 100000, '2026-03-12 10:00:00')",
)
KINDS["a generated column that builds a huge string"] = sql(
    "ALTER TABLE messages ADD COLUMN openclaw_huge TEXT GENERATED ALWAYS AS (printf('%.*c', 900000000, 'x'))",
    "ALTER TABLE messages RENAME COLUMN openclaw_sender_metadata TO old_sender",
    "ALTER TABLE messages RENAME COLUMN openclaw_huge TO openclaw_sender_metadata",
)
KINDS["a table with triggers and an index on an expression"] = sql(
    "CREATE TRIGGER hostile AFTER INSERT ON messages BEGIN DELETE FROM messages; END",
    "CREATE INDEX hostile_idx ON messages (length(content) * 2)",
)

KINDS["messages_fts is a recursive view with no end"] = sql(
    "DROP TABLE messages_fts",
    "CREATE VIEW messages_fts AS WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n)"
    " SELECT i AS rowid, 'RETRY_LIMIT' AS content, i AS messages_fts FROM n",
)
KINDS["table and column names in upper case"] = sql(
    *(
        statement
        for table in ("conversations", "context_items", "messages", "message_parts", "summaries")
        for statement in (
            f"ALTER TABLE {table} RENAME TO hostile_tmp", f"ALTER TABLE hostile_tmp RENAME TO {table.upper()}"
        )
    ),
    "ALTER TABLE MESSAGES RENAME COLUMN seq TO hostile_seq",
    "ALTER TABLE MESSAGES RENAME COLUMN hostile_seq TO SEQ",
    "ALTER TABLE CONTEXT_ITEMS RENAME COLUMN ordinal TO hostile_ordinal",
    "ALTER TABLE CONTEXT_ITEMS RENAME COLUMN hostile_ordinal TO Ordinal",
)
KINDS["forged planner statistics (sqlite_stat1)"] = sql(
    "ANALYZE",
    "UPDATE sqlite_stat1 SET stat = '1 1'",
    "INSERT INTO sqlite_stat1 VALUES ('messages', NULL, '100000000000')",
    "INSERT INTO sqlite_stat1 VALUES ('context_items', 'context_items_conv_idx', 'garbage 1 2 3')",
)


@kind("5,000 extra tables and views")
def many_tables(folder: Path) -> Path:
    path = demo_copy(folder)
    statements = [f"CREATE TABLE extra_{i} (a, b)" for i in range(2500)]
    statements += [f"CREATE VIEW extra_view_{i} AS SELECT * FROM extra_{i}, extra_{i + 1}" for i in range(2499)]
    execute(path, ["BEGIN", *statements, "COMMIT"])  # one transaction: 5,000 commits would take a minute
    return path


@kind("database in UTF-16")
def utf16_database(folder: Path) -> Path:
    from tests.lcmdb import LCM_SCHEMA

    path = folder / DB_NAME
    source = sqlite3.connect(DEMO)
    target = sqlite3.connect(path)
    try:
        target.execute("PRAGMA encoding = 'UTF-16le'")
        target.executescript(LCM_SCHEMA)
        for table in ("conversations", "context_items", "messages", "message_parts", "summaries",
                      "summary_parents", "summary_messages", "large_files"):
            columns = [row[1] for row in target.execute(f"PRAGMA table_info({table})")]
            names = ", ".join(columns)
            marks = ", ".join("?" for _ in columns)
            target.executemany(
                f"INSERT INTO {table} ({names}) VALUES ({marks})", source.execute(f"SELECT {names} FROM {table}")
            )
        target.commit()
    finally:
        source.close()
        target.close()
    return path


@kind("database is a chain of 39 symbolic links")
def symlink_chain(folder: Path) -> Path:
    demo_copy(folder, name="real.db")
    previous = "real.db"
    for i in range(39):
        (folder / f"link{i}").symlink_to(previous)
        previous = f"link{i}"
    (folder / DB_NAME).symlink_to(previous)
    return folder / DB_NAME


@kind("database with a page size of 512")
def small_pages(folder: Path) -> Path:
    path = demo_copy(folder)
    execute(path, [])
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA page_size = 512")
    conn.execute("VACUUM")
    conn.close()
    return path


@kind("database with 1 MB of garbage after its last page")
def trailing_garbage(folder: Path) -> Path:
    path = demo_copy(folder)
    with path.open("ab") as handle:
        handle.write(bytes(range(256)) * 4096)
    return path


# --- constraints dropped: rows no engine writes ---------------------------------------------------

_ROWS_FROM = len(KINDS)
DEMO_ROWS = set(KINDS)  # the kinds above: files, WAL leftovers and schemas around the demo's own rows

KINDS["constraints dropped and context rows duplicated"] = sql(
    *without_constraints("context_items"),
    "INSERT INTO context_items SELECT * FROM context_items WHERE conversation_id = 1",
)
KINDS["duplicate context_items ordinals"] = sql(
    *without_constraints("context_items"),
    "INSERT INTO context_items SELECT conversation_id, ordinal, item_type, message_id, summary_id, created_at"
    " FROM context_items WHERE conversation_id = 1 AND ordinal % 3 = 0",
)
KINDS["duplicate ordinal pointing at a summary and a message"] = sql(
    *without_constraints("context_items"),
    "INSERT INTO context_items VALUES (1, 5, 'summary', NULL, 'sum_3671f8a48430b484', '2026-01-01')",
)
KINDS["context_items ordinals as text"] = sql(
    "UPDATE context_items SET ordinal = CAST(ordinal AS TEXT) || 'x' WHERE ordinal % 2 = 0"
)
KINDS["context_items ordinals as numeric text"] = sql(
    "UPDATE context_items SET ordinal = ' ' || CAST(ordinal AS TEXT) WHERE ordinal % 2 = 0"
)
KINDS["context_items ordinals fractional"] = sql(
    "UPDATE context_items SET ordinal = ordinal + 0.5 WHERE ordinal % 2 = 1"
)
KINDS["context_items ordinals huge and negative"] = sql(
    "UPDATE context_items SET ordinal = 9223372036854775807 WHERE ordinal = 3",
    "UPDATE context_items SET ordinal = -9223372036854775808 WHERE ordinal = 7",
    "UPDATE context_items SET ordinal = 1e300 WHERE ordinal = 9",
)
KINDS["context_items ordinals are blobs and NULL"] = sql(
    *without_constraints("context_items"),
    "UPDATE context_items SET ordinal = X'00ff' WHERE ordinal = 2",
    "UPDATE context_items SET ordinal = NULL WHERE ordinal = 5",
)
KINDS["message_parts ordinals text, fractional and duplicate"] = sql(
    *without_constraints("message_parts"),
    "UPDATE message_parts SET ordinal = 'first' WHERE rowid % 5 = 0",
    "UPDATE message_parts SET ordinal = ordinal + 0.5 WHERE rowid % 5 = 1",
    "INSERT INTO message_parts SELECT * FROM message_parts WHERE rowid % 5 = 2",
    "UPDATE message_parts SET ordinal = NULL WHERE rowid % 7 = 3",
    "UPDATE message_parts SET ordinal = X'01' WHERE rowid % 11 = 4",
)
KINDS["context item pointing at another conversation's message"] = sql(
    "INSERT INTO context_items (conversation_id, ordinal, item_type, message_id)"
    " SELECT 1, 1000 + message_id, 'message', message_id FROM messages WHERE conversation_id = 2",
    "INSERT INTO context_items (conversation_id, ordinal, item_type, summary_id)"
    " SELECT 2, 1000, 'summary', summary_id FROM summaries LIMIT 1",
)
KINDS["context item with both a message and a summary"] = sql(
    "UPDATE context_items SET summary_id = 'sum_3671f8a48430b484' WHERE item_type = 'message' AND ordinal = 10",
    "UPDATE context_items SET message_id = 44 WHERE item_type = 'summary'",
)
KINDS["context item types no engine writes"] = sql(
    *without_constraints("context_items"),
    "UPDATE context_items SET item_type = 'MESSAGE' WHERE ordinal = 6",
    "UPDATE context_items SET item_type = NULL WHERE ordinal = 7",
    "UPDATE context_items SET item_type = X'6d657373616765' WHERE ordinal = 8",
    "UPDATE context_items SET item_type = 7 WHERE ordinal = 9",
)
KINDS["message ids and seqs no engine writes"] = sql(
    *without_constraints("messages"),
    "UPDATE messages SET seq = 'later' WHERE message_id = 50",
    "UPDATE messages SET seq = 50.5 WHERE message_id = 51",
    "UPDATE messages SET seq = NULL WHERE message_id = 52",
    "UPDATE messages SET seq = 9223372036854775807 WHERE message_id = 53",
    "UPDATE messages SET seq = -1e300 WHERE message_id = 54",
    "UPDATE messages SET seq = X'ff' WHERE message_id = 55",
    "INSERT INTO messages SELECT * FROM messages WHERE message_id = 60",
    "UPDATE context_items SET message_id = '44' WHERE message_id = 44",
    "UPDATE context_items SET message_id = 45.0 WHERE message_id = 45",
    "UPDATE context_items SET message_id = 46.5 WHERE message_id = 46",
)
KINDS["conversation ids no engine writes"] = sql(
    *without_constraints("conversations"),
    "INSERT INTO conversations SELECT * FROM conversations WHERE conversation_id = 1",
    "INSERT INTO conversations (conversation_id, session_id, active, created_at) VALUES ('three', 's3', 1, 'now')",
    "INSERT INTO conversations (conversation_id, session_id, active, created_at) VALUES (4.5, 's4', 1, X'00')",
    "INSERT INTO conversations (conversation_id, session_id, active, created_at)"
    " VALUES (9223372036854775807, NULL, 'yes', NULL)",
)
KINDS["no conversations"] = sql("DELETE FROM conversations")
KINDS["every table empty"] = sql(
    "DELETE FROM conversations", "DELETE FROM context_items", "DELETE FROM messages", "DELETE FROM message_parts",
    "DELETE FROM summaries", "DELETE FROM summary_parents", "DELETE FROM summary_messages",
)
KINDS["a conversation with no context items"] = sql("DELETE FROM context_items WHERE conversation_id = 1")

# --- odd stored values ----------------------------------------------------------------------------------

KINDS["token_count is +Infinity"] = sql(
    "UPDATE messages SET token_count = 9e999", "UPDATE summaries SET token_count = 9e999"
)
KINDS["token_count is -Infinity"] = sql("UPDATE messages SET token_count = -9e999 WHERE message_id % 2 = 0")
KINDS["token_count mixes +Infinity and -Infinity"] = sql(
    "UPDATE messages SET token_count = 9e999 WHERE message_id % 2 = 0",
    "UPDATE messages SET token_count = -9e999 WHERE message_id % 2 = 1",
)
KINDS["token_count is NaN (stored as NULL)"] = sql(
    *without_constraints("messages"), "UPDATE messages SET token_count = 0.0 * 9e999"
)
KINDS["token_count is text"] = sql(
    "UPDATE messages SET token_count = 'lots'", "UPDATE summaries SET token_count = '12abc'"
)
KINDS["token_count is a blob"] = sql("UPDATE messages SET token_count = X'deadbeef'")
KINDS["token_count is out of range"] = sql(
    "UPDATE messages SET token_count = 9223372036854775807",
    "UPDATE summaries SET token_count = 1e308",
)
KINDS["token_count sums past 2**63"] = sql(
    "UPDATE messages SET token_count = 9223372036854775807", "UPDATE summaries SET token_count = 9223372036854775807"
)
KINDS["summary numbers no engine writes"] = sql(
    "UPDATE summaries SET depth = 9e999, descendant_count = 'many' WHERE kind = 'condensed'",
    "UPDATE summaries SET depth = -9223372036854775808, descendant_count = 9e999 WHERE kind = 'leaf'"
    " AND rowid % 2 = 0",
    "UPDATE summaries SET depth = X'00', descendant_count = -1e300 WHERE kind = 'leaf' AND rowid % 2 = 1",
)
KINDS["summary columns NULL"] = sql(
    *without_constraints("summaries"),
    "UPDATE summaries SET kind = NULL, depth = NULL, content = NULL, token_count = NULL, descendant_count = NULL,"
    " earliest_at = NULL, latest_at = NULL",
)
KINDS["summary dates no calendar has"] = sql(
    "UPDATE summaries SET earliest_at = '99999-99-99 99:99:99', latest_at = 9e999 WHERE rowid % 2 = 0",
    "UPDATE summaries SET earliest_at = X'00ff', latest_at = '-271821-04-19T00:00:00Z' WHERE rowid % 2 = 1",
)
KINDS["message columns NULL"] = sql(
    *without_constraints("messages"),
    "UPDATE messages SET role = NULL, content = NULL, token_count = NULL, created_at = NULL WHERE message_id % 3 = 0",
)
KINDS["roles no engine writes"] = sql(
    "UPDATE messages SET role = 'toolResult' WHERE message_id % 4 = 0",
    "UPDATE messages SET role = X'00' WHERE message_id % 4 = 1",
    "UPDATE messages SET role = 42 WHERE message_id % 7 = 2",
)
KINDS["part columns as blobs and numbers"] = sql(
    *without_constraints("message_parts"),
    "UPDATE message_parts SET text_content = X'fffe00', metadata = 42 WHERE rowid % 3 = 0",
    "UPDATE message_parts SET tool_input = 9e999, tool_call_id = 1e300, tool_name = X'1b5b33316d' WHERE rowid % 3 = 1",
    "UPDATE message_parts SET part_type = NULL, message_id = 'x' WHERE rowid % 13 = 2",
)
KINDS["metadata JSON with non-finite and huge numbers"] = sql(
    "UPDATE message_parts SET metadata = '{\"originalRole\": \"assistant\", \"raw\": {\"type\": \"text\","
    " \"text\": 1e999, \"n\": NaN, \"big\": 123456789012345678901234567890}}' WHERE rowid % 2 = 0",
)
KINDS["focus brief with odd numbers"] = sql(
    "INSERT INTO focus_briefs (brief_id, conversation_id, prompt, content, status, token_count, target_tokens,"
    " covered_latest_at, covered_message_seq, created_at)"
    " VALUES ('fb1', 1, 'p', 'a brief', 'active', 9e999, 'lots', '2026-03-12 10:00:00', 'seventy', X'00')",
)
KINDS["focus brief covering everything at +Infinity"] = sql(
    "INSERT INTO focus_briefs (brief_id, conversation_id, prompt, content, status, token_count, target_tokens,"
    " covered_latest_at, covered_message_seq, created_at)"
    " VALUES ('fb2', 1, 'p', 'a brief', 'active', 1, 1, NULL, 9e999, '2026-03-12 10:00:00')",
)
KINDS["compaction pending with infinite pressure"] = sql(
    "UPDATE messages SET token_count = 9e999",
    "INSERT INTO conversation_compaction_maintenance (conversation_id, pending, running) VALUES (1, 1, 0)",
)
KINDS["compaction flags no engine writes"] = sql(
    "INSERT INTO conversation_compaction_maintenance (conversation_id, pending, running) VALUES (1, 'yes', 9e999)",
    "INSERT INTO conversation_bootstrap_state (conversation_id, session_file_path, last_seen_size,"
    " last_seen_mtime_ms, last_processed_offset, last_processed_entry_hash, fork_bounded, fork_source_message_count)"
    " VALUES (1, '/x', 0, 0, 0, '', 9e999, 'many')",
)
KINDS["large file with odd size"] = sql(
    "UPDATE large_files SET byte_size = 9e999",
    "INSERT INTO large_files (file_id, conversation_id, byte_size, storage_uri) VALUES ('file_x', 1, 'big', 'u')",
    "UPDATE messages SET large_content = 'file_x' WHERE message_id = 47",
)
KINDS["ANSI escapes and Rich markup everywhere"] = sql(
    f"UPDATE conversations SET title = '{ANSI_AND_MARKUP}', session_id = '{ANSI_AND_MARKUP}'",
    f"UPDATE message_parts SET text_content = '{ANSI_AND_MARKUP}' || text_content,"
    f" tool_name = '{ANSI_AND_MARKUP}' WHERE text_content IS NOT NULL",
    f"UPDATE messages SET content = '{ANSI_AND_MARKUP}' || content",
    f"UPDATE summaries SET content = '{ANSI_AND_MARKUP}' || content, model = '{ANSI_AND_MARKUP}'",
)
KINDS["invalid UTF-8 and NUL in ids"] = sql(
    "UPDATE conversations SET session_id = CAST(X'00c328ff' AS TEXT)",
    "UPDATE context_items SET summary_id = CAST(X'73756d00ff' AS TEXT) WHERE ordinal = 0",
    "UPDATE summaries SET summary_id = CAST(X'73756d00ff' AS TEXT) WHERE summary_id = 'sum_a052049e383801f2'",
)

KINDS["every tool call id the same"] = sql(
    "UPDATE message_parts SET tool_call_id = 'same' WHERE tool_call_id IS NOT NULL",
    "UPDATE message_parts SET metadata = replace(metadata, 'toolu_', 'same_') WHERE metadata LIKE '%toolu_%'",
)
KINDS["empty strings everywhere"] = sql(
    "UPDATE messages SET role = '', content = ''",
    "UPDATE message_parts SET part_type = '', text_content = '', metadata = '', tool_call_id = '', tool_name = ''",
    "UPDATE summaries SET kind = '', content = '', earliest_at = '', latest_at = ''",
    "UPDATE conversations SET session_id = '', title = '', created_at = ''",
)
KINDS["a 1 MB summary id"] = sql(
    "UPDATE summary_parents SET summary_id = printf('%.*c', 1000000, 's') WHERE summary_id = 'sum_a052049e383801f2'",
    "UPDATE context_items SET summary_id = printf('%.*c', 1000000, 's') WHERE summary_id = 'sum_a052049e383801f2'",
    "UPDATE summaries SET summary_id = printf('%.*c', 1000000, 's') WHERE summary_id = 'sum_a052049e383801f2'",
)
KINDS["10,000 dangling context items"] = sql(
    "WITH RECURSIVE n(i) AS (SELECT 1000 UNION ALL SELECT i + 1 FROM n WHERE i < 10999)"
    " INSERT INTO context_items (conversation_id, ordinal, item_type, message_id) SELECT 1, i, 'message', i FROM n",
)
KINDS["one message in the context 2,000 times"] = sql(
    "WITH RECURSIVE n(i) AS (SELECT 1000 UNION ALL SELECT i + 1 FROM n WHERE i < 2999)"
    " INSERT INTO context_items (conversation_id, ordinal, item_type, message_id) SELECT 1, i, 'message', 49 FROM n",
)
KINDS["a 1 MB conversation title with newlines"] = sql(
    "UPDATE conversations SET title = printf('%.*c', 500000, char(10)) || printf('%.*c', 500000, 'x')",
)
KINDS["message_parts with no message"] = sql(
    *without_constraints("message_parts"), "UPDATE message_parts SET message_id = NULL WHERE rowid % 2 = 0"
)

EVERY_FORMAT.update(list(KINDS)[_ROWS_FROM:])

# --- summary graphs -------------------------------------------------------------------------------------------


def summary_graph(edges: Callable[[list[str]], Iterable[tuple[str, str, int]]], count: int = CHAIN) -> Builder:
    """``count`` new leaf summaries s0…s{count-1} linked by ``edges(ids)``; s0 is put in conversation 1's context."""

    def build(folder: Path) -> Path:
        path = demo_copy(folder)
        ids = [f"hostile_{i}" for i in range(count)]
        rows(
            path,
            "INSERT INTO summaries (summary_id, conversation_id, kind, depth, content, token_count)"
            " VALUES (?, 1, 'condensed', 1, 'a summary in a hostile graph', 5)",
            ((sid,) for sid in ids),
        )
        rows(
            path,
            "INSERT OR IGNORE INTO summary_parents (summary_id, parent_summary_id, ordinal) VALUES (?, ?, ?)",
            edges(ids),
        )
        rows(
            path,
            "INSERT INTO summary_messages (summary_id, message_id, ordinal) VALUES (?, ?, 0)",
            [(ids[len(ids) // 2], 60), (ids[-1], 70)],
            "INSERT INTO context_items (conversation_id, ordinal, item_type, summary_id)"
            " VALUES (1, -1, 'summary', 'hostile_0')",
            "INSERT INTO context_items (conversation_id, ordinal, item_type, summary_id)"
            f" VALUES (1, -2, 'summary', 'hostile_{count // 3}')",
            "INSERT INTO focus_briefs (brief_id, conversation_id, prompt, content, status, token_count,"
            " target_tokens, covered_message_seq, created_at) VALUES ('fb', 1, 'p', 'the brief', 'active', 3, 3, 65,"
            " '2026-03-12 10:00:00')",
        )
        return path

    return build


KINDS["summary_parents: a cycle of 100,000"] = summary_graph(
    lambda ids: ((ids[i], ids[(i + 1) % len(ids)], 0) for i in range(len(ids)))
)
KINDS["summary_parents: a chain of 100,000"] = summary_graph(
    lambda ids: ((ids[i], ids[i + 1], 0) for i in range(len(ids) - 1))
)
KINDS["summary_parents: self-loops"] = summary_graph(lambda ids: ((sid, sid, 0) for sid in ids), count=1000)
KINDS["summary_parents: one summary with 100,000 parents"] = summary_graph(
    lambda ids: ((ids[0], ids[i], i) for i in range(1, len(ids)))
)
KINDS["summary_parents: many small cycles in the context"] = summary_graph(
    lambda ids: ((ids[i], ids[i ^ 1], 0) for i in range(len(ids))), count=2000
)
KINDS["summary_parents: a dense graph"] = summary_graph(
    lambda ids: ((ids[i], ids[j], j) for i in range(len(ids)) for j in range(len(ids)) if i != j), count=150
)
HEAVY.update(name for name in KINDS if name.startswith("summary_parents:") and "100,000" in name)
KINDS["summary_parents point at missing summaries"] = sql(
    *without_constraints("summary_parents"),
    "INSERT INTO summary_parents VALUES ('sum_a052049e383801f2', 'gone', 5)",
    "INSERT INTO summary_parents VALUES ('sum_a052049e383801f2', NULL, 6)",
    "INSERT INTO summary_parents VALUES ('sum_a052049e383801f2', 7, 7)",
)


# --- heavy content -------------------------------------------------------------------------------------------


@kind("a 10 MB message part", heavy=True)
def huge_part(folder: Path) -> Path:
    path = demo_copy(folder)
    blob = ("helm rollback " * 800_000)[:10_000_000]
    rows(path, "UPDATE message_parts SET text_content = ? WHERE message_id = 49", [(blob,)])
    rows(path, "UPDATE messages SET content = ? WHERE message_id = 49", [(blob,)])
    return path


@kind("deeply nested JSON in metadata", heavy=True)
def nested_metadata(folder: Path) -> Path:
    path = demo_copy(folder)
    deep = "[" * 200_000 + "]" * 200_000
    nested_object = '{"originalRole":"assistant","raw":' + '{"a":' * 50_000 + "1" + "}" * 50_000 + "}"
    rows(path, "UPDATE message_parts SET metadata = ? WHERE rowid % 3 = 0", [(deep,)])
    rows(path, "UPDATE message_parts SET metadata = ?, tool_input = ? WHERE rowid % 3 = 1", [(nested_object, deep)])
    rows(path, "UPDATE messages SET openclaw_sender_metadata = ?", [(deep,)])
    rows(path, "UPDATE summaries SET file_ids = ?", [(deep,)])
    return path


@kind("a message with 20,000 parts", heavy=True)
def many_parts(folder: Path) -> Path:
    path = demo_copy(folder)
    rows(
        path,
        "INSERT INTO message_parts (part_id, message_id, session_id, part_type, ordinal, text_content, metadata)"
        " VALUES (?, 81, 's', 'text', ?, 'x', '{\"originalRole\":\"assistant\"}')",
        ((f"hostile-{i}", 1000 + i) for i in range(CHAIN // 5)),
    )
    return path


@kind("10,000 conversations", heavy=True)
def many_conversations(folder: Path) -> Path:
    path = demo_copy(folder)
    rows(
        path,
        "INSERT INTO conversations (conversation_id, session_id, title, active, created_at)"
        " VALUES (?, ?, 'empty', 0, '2026-01-01 00:00:00')",
        ((100 + i, f"s{i}") for i in range(CHAIN // 10)),
    )
    return path


def main(argv: list[str]) -> int:
    """Write every kind (or the named ones) into ``DIR/<n>-<kind>/``."""
    target = Path(argv[0])
    names = argv[1:] or list(KINDS)
    for index, name in enumerate(names):
        folder = target / f"{index:02d}"
        folder.mkdir(parents=True)
        print(f"{folder}: {name} -> {KINDS[name](folder).name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
