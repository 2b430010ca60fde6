"""Open a SQLite file strictly read-only, leaving no file behind (shared by the LCM store and the OpenClaw reader).

``mode=ro`` alone is not enough: a reader of a WAL database creates the ``-shm``
index (and, with no writer, an empty ``-wal``) when they are missing.  So a WAL
database without its ``-wal`` or ``-shm`` is read as an immutable snapshot;
a folder where the ``-shm`` cannot be made falls back to ``immutable=1`` too,
with a note that commits still in the ``-wal`` are not seen.  Only regular
files are opened: a FIFO or device would block or mislead the reader.
"""

from __future__ import annotations

import functools
import os
import sqlite3
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

from ctxview.errors import DatabaseError

SQLITE_MAGIC = b"SQLite format 3\x00"
IMMUTABLE_WARNING = "opened immutable: live changes will not be seen"
_HEADER_BYTES = 100  # the SQLite file header; bytes 18-19 are 2 for a WAL-mode database

TEXT_FACTORY = functools.partial(str, encoding="utf-8", errors="replace")

Connector = Callable[[bool], sqlite3.Connection]


def not_regular_reason(path: Path) -> str | None:
    """Why ``path`` is not a regular file (following symlinks), or None when it is one."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return "no such file" if not path.is_symlink() else "a symbolic link to a missing file"
    except OSError as exc:
        return f"cannot be read ({exc.strerror or exc})"
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "is a directory"
    if stat.S_ISFIFO(mode):
        return "is a named pipe, not a regular file"
    if stat.S_ISSOCK(mode):
        return "is a socket, not a regular file"
    return "is a device or special file, not a regular file"


def check_database_file(path: Path, what: str = "an LCM database") -> bool:
    """Raise ``DatabaseError`` unless ``path`` is a readable SQLite file; True for a WAL-mode one."""
    if not path.exists():
        raise DatabaseError(f"{path}: no such file")
    if path.is_dir():
        raise DatabaseError(f"{path}: is a directory, not {what} file")
    problem = not_regular_reason(path)
    if problem is not None:
        raise DatabaseError(f"{path}: {problem}")
    try:
        with path.open("rb") as handle:
            head = handle.read(_HEADER_BYTES)
    except OSError as exc:
        raise DatabaseError(f"{path}: cannot be read ({exc.strerror or exc})") from exc
    if not head:
        raise DatabaseError(f"{path}: empty file (0 bytes), not {what}")
    if head[: len(SQLITE_MAGIC)] != SQLITE_MAGIC:
        raise DatabaseError(f"{path}: not a SQLite database")
    return len(head) >= 20 and 2 in (head[18], head[19])


def connect_read_only(path: Path, immutable: bool, timeout: float = 5.0) -> sqlite3.Connection:
    """``mode=ro`` (optionally ``immutable=1``) plus ``PRAGMA query_only``; the first read happens here."""
    uri = f"file:{quote(str(path.resolve()))}?mode=ro"
    if immutable:
        uri += "&immutable=1"
    conn = sqlite3.connect(uri, uri=True, check_same_thread=False, timeout=timeout)
    conn.text_factory = TEXT_FACTORY
    try:
        conn.execute("PRAGMA query_only=ON")
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except BaseException:
        conn.close()
        raise
    return conn


@dataclass(slots=True)
class ReadOnlyOpen:
    connection: sqlite3.Connection
    immutable: bool  # this connection sees no later commits
    warnings: list[str] = field(default_factory=list)


def open_read_only(path: Path, wal_mode: bool, connect: Connector) -> ReadOnlyOpen:
    """Open ``path`` (already checked by ``check_database_file``) through ``connect(immutable)``."""
    wal = Path(f"{path}-wal")
    shm = Path(f"{path}-shm")
    if wal_mode and not (wal.exists() and shm.exists()):
        # No -wal: the file is complete, and a plain reader would leave empty -wal and -shm behind.
        # A -wal without its -shm (a writer that died): a plain reader would create the -shm.
        try:
            conn = connect(True)
        except sqlite3.DatabaseError as exc:
            raise open_error(path, exc) from exc
        return ReadOnlyOpen(conn, True, _immutable_warnings(wal, always=False))
    try:
        return ReadOnlyOpen(connect(False), False)
    except sqlite3.DatabaseError as exc:
        message = str(exc).lower()
        if "not a database" in message or "malformed" in message:
            raise open_error(path, exc) from exc
        if "locked" in message or "busy" in message:
            # an immutable read would ignore the writer's lock and could see half-written pages
            raise DatabaseError(f"{path}: the database is locked by a writer ({exc}); try again") from exc
        # A WAL database in a read-only directory: the -shm cannot be used.
        try:
            conn = connect(True)
        except sqlite3.Error as exc2:
            raise DatabaseError(f"{path}: cannot be opened read-only ({exc2})") from exc2
        return ReadOnlyOpen(conn, True, _immutable_warnings(wal, always=True))


def open_error(path: Path, exc: sqlite3.DatabaseError) -> DatabaseError:
    if "malformed" in str(exc).lower():
        return DatabaseError(f"{path}: the SQLite file is damaged ({exc})")
    return DatabaseError(f"{path}: not a SQLite database ({exc})")


def open_database(path: str | os.PathLike[str], what: str, timeout: float = 5.0) -> ReadOnlyOpen:
    """Check and open ``path`` read-only in one call (for readers that need no hook into the connect step)."""
    file = Path(path)
    wal_mode = check_database_file(file, what)
    return open_read_only(file, wal_mode, lambda immutable: connect_read_only(file, immutable, timeout))


def _immutable_warnings(wal: Path, *, always: bool) -> list[str]:
    """The note an immutable open needs: always where a live connection failed, else only if commits are hidden."""
    pending = _size(wal)
    if pending:
        return [f"{IMMUTABLE_WARNING}, and its {pending:,}-byte -wal file (the newest commits) is not read"]
    return [IMMUTABLE_WARNING] if always else []


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0
