"""The read-only opener on hostile files: the query guard, WAL leftovers, hot journals, private copies."""

from __future__ import annotations

import os
import shutil
import sqlite3
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import ctxview.sqlite_readonly as readonly
from ctxview.errors import DatabaseError
from ctxview.sqlite_readonly import (
    DEFAULT_QUERY_DEADLINE,
    IMMUTABLE_WARNING,
    QueryTimeout,
    connect_read_only,
    open_database,
    query_deadline,
    shm_in_use,
    wal_summary,
)
from tests.safety.hostile import KINDS, WAL_COMMIT, wal_database
from tests.safety.support import DEMO

ENDLESS = "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n)"


def files(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


@pytest.fixture
def private_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Where private copies go in these tests; what the process would remove at exit is removed after each."""
    folder = tmp_path / "private"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    yield folder
    readonly._remove_private_copies()


# --- the query guard ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [("5", 5.0), ("0.25", 0.25)] + [(raw, DEFAULT_QUERY_DEADLINE) for raw in ("", "soon", "-1", "0", "inf", "nan")],
)
def test_the_deadline_comes_from_the_environment(raw: str, expected: float, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CTXVIEW_QUERY_DEADLINE", raw)
    assert query_deadline() == expected


def test_an_endless_query_is_stopped_at_the_deadline_and_the_connection_still_works() -> None:
    conn = connect_read_only(DEMO, immutable=True)
    conn.deadline = 0.3  # type: ignore[attr-defined]
    started = time.monotonic()
    with pytest.raises(QueryTimeout) as caught:
        conn.execute(f"{ENDLESS} SELECT count(*) FROM n").fetchone()
    assert time.monotonic() - started < 3
    assert str(caught.value) == (
        f"{DEMO}: a query ran longer than 0.3 s and was stopped; the database holds more than ctxview can read"
        " in that time, or something no engine writes (set CTXVIEW_QUERY_DEADLINE to allow longer)"
    )
    assert isinstance(caught.value, DatabaseError)
    assert conn.execute("SELECT count(*) FROM conversations").fetchone() == (2,)
    conn.close()


def test_fetching_rows_counts_against_the_deadline_of_the_execute() -> None:
    conn = connect_read_only(DEMO, immutable=True)
    conn.deadline = 0.3  # type: ignore[attr-defined]
    rows = conn.execute(f"{ENDLESS} SELECT i FROM n")
    with pytest.raises(QueryTimeout):
        for _ in rows:
            pass
    with pytest.raises(QueryTimeout):
        conn.cursor().execute(f"{ENDLESS} SELECT i FROM n").fetchall()
    conn.close()


def test_a_string_longer_than_the_limit_is_an_error_not_a_gigabyte() -> None:
    conn = connect_read_only(DEMO, immutable=True)
    assert conn.execute("SELECT printf('%.*c', 300000000, 'x')").fetchone() == (None,)  # SQLite gives up
    with pytest.raises(sqlite3.DataError):
        conn.execute("SELECT zeroblob(300000000)").fetchone()
    conn.close()


def _texts_database(folder: Path, texts: list[bytes]) -> Path:
    """A database with one table ``t(i, x)`` whose TEXT values are the given bytes, as stored (UTF-8 or not)."""
    folder.mkdir(parents=True, exist_ok=True)
    db = folder / "texts.db"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE t(i INTEGER, x TEXT)")
        conn.executemany("INSERT INTO t VALUES (?, CAST(? AS TEXT))", list(enumerate(texts)))
    conn.close()
    return db


_VALID = [b"plain", "é, 😀 and ∑".encode(), b"", b"last"]
_BROKEN = [b"plain", b"a\xffb", b"\xed\xa0\x80 a lone surrogate's bytes", b"last"]


@pytest.mark.parametrize("texts", [_VALID, _BROKEN], ids=["utf-8", "not utf-8"])
def test_fetchall_gives_the_texts_the_replacing_decoder_gives(tmp_path: Path, texts: list[bytes]) -> None:
    conn = connect_read_only(_texts_database(tmp_path, texts), immutable=True)
    expected = [(i, readonly.TEXT_FACTORY(raw)) for i, raw in enumerate(texts)]
    assert conn.execute("SELECT i, x FROM t ORDER BY i").fetchall() == expected
    assert conn.text_factory is readonly.TEXT_FACTORY  # (put back after the read, whichever way it went)
    assert conn.execute("SELECT i, x FROM t WHERE i > ? ORDER BY i", (1,)).fetchall() == expected[2:]
    cursor = conn.execute("SELECT i, x FROM t ORDER BY i")
    assert cursor.fetchone() == expected[0]
    assert cursor.fetchall() == expected[1:]  # (rows read before are not read again)
    assert [tuple(row) for row in conn.execute("SELECT i, x FROM t ORDER BY i")] == expected
    conn.close()


def test_utf_8_is_decoded_at_c_speed_and_with_another_thread_running_by_the_replacing_decoder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    conn = connect_read_only(_texts_database(tmp_path, _BROKEN), immutable=True)
    seen: list[Any] = []
    real = readonly.TEXT_FACTORY

    def counted(raw: bytes) -> str:
        seen.append(raw)
        return real(raw)

    monkeypatch.setattr(readonly, "TEXT_FACTORY", counted)
    valid = connect_read_only(_texts_database(tmp_path / "valid", _VALID), immutable=True)
    valid.text_factory = counted
    assert valid.execute("SELECT i, x FROM t ORDER BY i").fetchall() == [(i, real(raw)) for i, raw in enumerate(_VALID)]
    assert seen == []  # (UTF-8 texts: read at C speed, none through the replacing decoder)
    valid.close()
    conn.text_factory = counted
    expected = [(i, real(raw)) for i, raw in enumerate(_BROKEN)]
    assert conn.execute("SELECT i, x FROM t ORDER BY i").fetchall() == expected
    assert seen == _BROKEN  # (the first read stopped at the broken text; the second read every text this way)
    seen.clear()
    monkeypatch.setattr(readonly.threading, "active_count", lambda: 2)
    assert conn.execute("SELECT i, x FROM t ORDER BY i").fetchall() == expected
    assert seen == _BROKEN  # (one read, every text through the replacing decoder)
    conn.close()


# --- the -wal and the -shm ------------------------------------------------------------------------------


def test_wal_summary_counts_the_commits_sqlite_would_read(tmp_path: Path) -> None:
    db = wal_database(tmp_path, commit=WAL_COMMIT)
    wal = Path(f"{db}-wal")
    size = wal.stat().st_size
    assert wal_summary(wal, 4096) == readonly.WalSummary(size, 1, None, size)
    assert wal_summary(wal, 1024).problem == "belongs to another database (pages of 4,096 bytes; this one's are 1,024)"
    data = wal.read_bytes()
    wal.write_bytes(data[:-100])
    assert wal_summary(wal, 4096) == readonly.WalSummary(size - 100, 0, "holds no complete commit", 0)
    wal.write_bytes(data[:24] + bytes(8) + data[32:])
    assert wal_summary(wal, 4096).problem == "has a damaged header (its checksum does not match)"
    wal.write_bytes(b"\x00" * 100)
    assert wal_summary(wal, 4096).problem == "is not a SQLite WAL file"
    wal.write_bytes(b"")
    assert wal_summary(wal, 4096) == readonly.WalSummary(0, 0, None, 0)


def test_only_a_shm_a_live_connection_holds_is_in_use(tmp_path: Path) -> None:
    db = tmp_path / "live.db"
    shutil.copyfile(DEMO, db)
    writer = sqlite3.connect(db)
    writer.execute("PRAGMA journal_mode=WAL")
    writer.execute(WAL_COMMIT)
    writer.commit()
    shm = Path(f"{db}-shm")
    assert shm_in_use(shm) is True  # this process's own writer counts
    copy = tmp_path / "copy.db-shm"
    shutil.copyfile(shm, copy)  # (closing a descriptor of the -shm drops the writer's locks: done last)
    assert shm_in_use(copy) is False
    writer.close()


def test_a_wal_without_its_shm_is_read_through_a_private_copy(tmp_path: Path, private_tmp: Path) -> None:
    folder = tmp_path / "db"
    folder.mkdir()
    db = wal_database(folder, commit=WAL_COMMIT)
    opened = open_database(db, "an LCM database")
    assert (opened.immutable, opened.private_copy, opened.warnings) == (True, True, [])
    title = opened.connection.execute("SELECT title FROM conversations WHERE conversation_id = 2").fetchone()
    assert title == ("renamed in the WAL",)
    [copy] = os.listdir(private_tmp)
    again = open_database(db, "an LCM database")  # the same files: the same copy, made once
    assert os.listdir(private_tmp) == [copy] and again.private_copy
    opened.connection.close()
    again.connection.close()
    assert files(folder) == ["lcm.db", "lcm.db-wal"]
    readonly._remove_private_copies()  # what the process does when it ends
    assert os.listdir(private_tmp) == []


@pytest.mark.parametrize(
    ("kind", "note"),
    [
        ("-wal is a named pipe", "lcm.db-wal is a named pipe, not a regular file: ignored; the database is shown as"
                                 " last checkpointed"),
        ("-wal is a symlink loop", "lcm.db-wal is a symbolic link loop, not a regular file: ignored; the database"
                                   " is shown as last checkpointed"),
        ("-wal is empty", None),
        ("-wal cut in the middle of a frame", "lcm.db-wal holds no complete commit: ignored"),
        ("-wal with its header checksum damaged", "lcm.db-wal has a damaged header (its checksum does not match):"
                                                  " ignored"),
        ("-wal from a database with another page size", "lcm.db-wal belongs to another database (pages of 1,024"
                                                        " bytes; this one's are 4,096): ignored"),
        ("-journal is a named pipe", "lcm.db-journal is a named pipe, not a regular file: ignored"),
    ],
)
def test_leftovers_that_hold_nothing_to_read_are_ignored_with_a_note(
    kind: str, note: str | None, tmp_path: Path, private_tmp: Path
) -> None:
    folder = tmp_path / "db"
    folder.mkdir()
    db = KINDS[kind](folder)
    before = files(folder)
    opened = open_database(db, "an LCM database")
    assert (opened.immutable, opened.private_copy) == (True, False)
    assert opened.warnings == ([note] if note else [])
    opened.connection.close()
    assert files(folder) == before and os.listdir(private_tmp) == []


def test_a_wal_left_by_another_database_is_ignored_and_the_commits_it_holds_are_named(
    tmp_path: Path, private_tmp: Path
) -> None:
    folder = tmp_path / "db"
    folder.mkdir()
    db = KINDS["-wal was left by another database"](folder)
    size = Path(f"{db}-wal").stat().st_size
    opened = open_database(db, "an LCM database")
    assert opened.warnings == [
        "lcm.db-wal does not belong to this database or is damaged (with it: row 1 missing from index"
        " conversations_session_id_active_created_idx): ignored;"
        f" the newest commit (in the {size:,}-byte lcm.db-wal) is not shown"
    ]
    title = opened.connection.execute("SELECT title FROM conversations WHERE conversation_id = 1").fetchone()
    assert title == ("Flaky prod deploy of billing-api 2.14",)
    opened.connection.close()
    assert os.listdir(private_tmp) == []


def test_a_hot_journal_is_undone_in_a_private_copy(tmp_path: Path, private_tmp: Path) -> None:
    folder = tmp_path / "db"
    folder.mkdir()
    db = KINDS["hot rollback journal (a writer died mid-transaction)"](folder)
    before = {name: (folder / name).read_bytes() for name in files(folder)}
    opened = open_database(db, "an LCM database")
    assert (opened.private_copy, opened.warnings) == (True, [])
    conn = opened.connection
    assert conn.execute("SELECT count(*) FROM messages WHERE content LIKE '%(never committed)'").fetchone() == (0,)
    assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    conn.close()
    assert {name: (folder / name).read_bytes() for name in files(folder)} == before


def test_the_private_copy_is_never_made_in_the_databases_own_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "db"
    folder.mkdir()
    db = wal_database(folder, commit=WAL_COMMIT)
    elsewhere = tmp_path / "runtime"
    elsewhere.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))  # the temporary folder is the database's own
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(elsewhere))
    opened = open_database(db, "an LCM database")
    assert opened.private_copy and len(os.listdir(elsewhere)) == 1
    assert files(folder) == ["lcm.db", "lcm.db-wal"]
    opened.connection.close()
    readonly._remove_private_copies()
    assert os.listdir(elsewhere) == []


def test_without_room_for_a_copy_the_note_says_which_commits_are_not_shown(
    tmp_path: Path, private_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "db"
    folder.mkdir()
    db = wal_database(folder, commit=WAL_COMMIT)
    monkeypatch.setattr(readonly, "MAX_PRIVATE_COPY", 1000)
    wal_bytes = Path(f"{db}-wal").stat().st_size
    opened = open_database(db, "an LCM database")
    assert opened.warnings == [
        f"{IMMUTABLE_WARNING}: the newest commit (in the {wal_bytes:,}-byte lcm.db-wal) is not shown (no private"
        f" copy: {db.stat().st_size + wal_bytes:,} bytes are too many to copy)"
    ]
    title = opened.connection.execute("SELECT title FROM conversations WHERE conversation_id = 2").fetchone()
    assert title == ("backfill-dry-run",)
    opened.connection.close()


@pytest.mark.parametrize(
    ("kind", "message"),
    [
        ("database is a named pipe", "is a named pipe, not a regular file"),
        ("database is a socket", "is a socket, not a regular file"),
        ("database is a symlink to /dev/zero", "is a character device, not a regular file"),
        ("database is a symlink loop", "is a symbolic link loop, not a regular file"),
        ("database is a dangling symlink", "a symbolic link to a missing file"),
        ("database is a directory", "is a directory, not an LCM database file"),
    ],
)
def test_a_database_path_that_is_no_regular_file_is_refused_before_any_open(
    kind: str, message: str, tmp_path: Path
) -> None:
    db = KINDS[kind](tmp_path)
    with pytest.raises(DatabaseError) as caught:
        open_database(db, "an LCM database")
    assert str(caught.value) == f"{db}: {message}"
