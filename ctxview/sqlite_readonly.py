"""Open a SQLite file strictly read-only, leaving no file behind (shared by the LCM store and the OpenClaw reader).

``mode=ro`` alone is not enough: a reader of a WAL database creates the ``-shm``
index (and, with no writer, an empty ``-wal``) when they are missing, rebuilds a
``-shm`` no live connection holds, and a hot rollback journal needs a write to
be undone.  So, before SQLite sees the file:

- only regular files are opened (a FIFO or device would block or mislead the
  reader), and the same goes for the ``-wal``, ``-shm`` and ``-journal`` beside it;
- a WAL database is read live only while another connection holds its ``-shm``
  (SQLite's own lock, seen in ``/proc/locks``); a ``-wal`` with commits but no live
  ``-shm`` is read through a private copy of the database and its ``-wal`` in a
  temporary folder that is never beside the database, and removed on close;
- a hot rollback journal is undone in a private copy the same way;
- anything else (no ``-wal``, an empty one, one that is not this database's) is
  read as an immutable snapshot, and where commits are then not shown a note says
  which.

Every statement on a connection opened here runs under a deadline
(``CTXVIEW_QUERY_DEADLINE`` seconds, default 10): SQLite's progress handler stops
it, and the caller gets a ``QueryTimeout`` naming the database instead of a hang.
"""

from __future__ import annotations

import atexit
import functools
import math
import os
import sqlite3
import struct
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from ctxview.errors import DatabaseError
from ctxview.files import not_regular_reason, open_regular_fd

SQLITE_MAGIC = b"SQLite format 3\x00"
IMMUTABLE_WARNING = "opened immutable: live changes will not be seen"
_HEADER_BYTES = 100  # the SQLite file header; bytes 18-19 are 2 for a WAL-mode database

QUERY_DEADLINE_ENV = "CTXVIEW_QUERY_DEADLINE"
DEFAULT_QUERY_DEADLINE = 10.0  # seconds one statement may run; a 150 MB session's longest takes well under 1 s
PROGRESS_STEPS = 10_000  # SQLite VM steps between two looks at the clock
MAX_VALUE_BYTES = 256 << 20  # the longest string or blob a statement may build (SQLite's own limit is 1 GB)
INTEGRITY_SECONDS = 5.0  # the most the check that a -wal belongs to its database may take
MAX_PRIVATE_COPY = 4 << 30  # bytes of database plus -wal copied at most; beyond, the -wal is not read
_WAL_HEADER = 32
_WAL_FRAME_HEADER = 24
_WAL_MAGIC = (0x377F0682, 0x377F0683)  # checksums of little- or big-endian words
_WAL_VERSION = 3007000
_SHM_DMS_BYTE = 128  # the byte of the -shm every live connection holds a shared lock on (SQLite's unix VFS)

TEXT_FACTORY = functools.partial(str, encoding="utf-8", errors="replace")

Connector = Callable[[bool], sqlite3.Connection]


# --- the query guard -----------------------------------------------------------------------------------


class QueryTimeout(DatabaseError):
    """A statement ran past the deadline and SQLite stopped it."""


def query_deadline() -> float:
    """Seconds one statement may run: ``CTXVIEW_QUERY_DEADLINE`` when it is a positive number, else 10."""
    raw = os.environ.get(QUERY_DEADLINE_ENV, "")
    try:
        value = float(raw)
    except ValueError:
        return DEFAULT_QUERY_DEADLINE
    return value if math.isfinite(value) and value > 0 else DEFAULT_QUERY_DEADLINE


class GuardedConnection(sqlite3.Connection):
    """A connection whose every statement gets ``deadline`` seconds from its ``execute``.

    The progress handler looks at the clock every ``PROGRESS_STEPS`` VM steps; past the
    deadline it stops the statement, and the cursor raises ``QueryTimeout`` (a
    ``CtxviewError``) in place of SQLite's bare "interrupted".  Fetching the rows of a
    statement counts against the deadline of its ``execute``.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.deadline = query_deadline()
        self.label = "the database"
        self.tripped = False
        self._expires = math.inf
        self.set_progress_handler(self._past_deadline, PROGRESS_STEPS)
        self.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, MAX_VALUE_BYTES)

    def _past_deadline(self) -> int:
        if time.monotonic() > self._expires:
            self.tripped = True
            return 1
        return 0

    def arm(self) -> None:
        self.tripped = False
        self._expires = time.monotonic() + self.deadline

    def timeout_error(self) -> QueryTimeout:
        return QueryTimeout(
            f"{self.label}: a query ran longer than {self.deadline:g} s and was stopped; the database holds more"
            f" than ctxview can read in that time, or something no engine writes (set {QUERY_DEADLINE_ENV}"
            " to allow longer)"
        )

    def cursor(self, factory: Any = None) -> GuardedCursor:  # type: ignore[override]
        return super().cursor(GuardedCursor)  # type: ignore[return-value]

    def execute(self, sql: str, parameters: Any = (), /) -> GuardedCursor:  # type: ignore[override]
        return self.cursor().execute(sql, parameters)


class GuardedCursor(sqlite3.Cursor):
    """Arms its connection's deadline on ``execute`` and names a stopped statement as a ``QueryTimeout``."""

    connection: GuardedConnection
    # the statement last executed, while none of its rows has been read (``fetchall`` may then run it again)
    _unread: tuple[str, Any] | None = None

    def _stopped(self, exc: sqlite3.OperationalError) -> BaseException:
        return self.connection.timeout_error() if self.connection.tripped else exc

    def execute(self, sql: str, parameters: Any = (), /) -> GuardedCursor:  # type: ignore[override]
        self.connection.arm()
        self._unread = None
        try:
            super().execute(sql, parameters)
        except sqlite3.OperationalError as exc:
            raise self._stopped(exc) from exc
        self._unread = (sql, parameters)
        return self

    def executemany(self, sql: str, seq_of_parameters: Any, /) -> GuardedCursor:  # type: ignore[override]
        self._unread = None
        super().executemany(sql, seq_of_parameters)
        return self

    def executescript(self, sql_script: str, /) -> GuardedCursor:  # type: ignore[override]
        self._unread = None
        super().executescript(sql_script)
        return self

    def fetchone(self) -> Any:
        self._unread = None
        try:
            return super().fetchone()
        except sqlite3.OperationalError as exc:
            raise self._stopped(exc) from exc

    def fetchmany(self, size: int | None = None) -> list[Any]:
        self._unread = None
        try:
            return super().fetchmany(self.arraysize if size is None else size)
        except sqlite3.OperationalError as exc:
            raise self._stopped(exc) from exc

    def fetchall(self) -> list[Any]:
        """Every row, each text decoded as ``TEXT_FACTORY`` decodes it.

        The rows of a statement nothing has read yet are first read with SQLite's own UTF-8 decoding, at C
        speed (``TEXT_FACTORY`` is a Python call per text: a third of reading 100,000 items' rows); a text
        that is not valid UTF-8 stops that read (an ``OperationalError``), and the statement is run again and
        read with ``TEXT_FACTORY``, which replaces what cannot be decoded.  (Only where no other thread could read
        from the connection meanwhile, since its text factory is changed for the read.)
        """
        statement, self._unread = self._unread, None
        connection = self.connection
        fast = statement is not None and connection.text_factory is TEXT_FACTORY and threading.active_count() == 1
        if fast:
            connection.text_factory = str
        try:
            return super().fetchall()
        except sqlite3.OperationalError as exc:
            if not fast or connection.tripped:
                raise self._stopped(exc) from exc
            # (SQLite's decoding refuses a text that is not UTF-8 with this error, whose wording the sqlite3
            # module may change: any error of the fast read reads again as below, where a real one recurs)
        finally:
            if fast:
                connection.text_factory = TEXT_FACTORY
        assert statement is not None
        self.execute(*statement)  # (a text that is not UTF-8: read again, replacing what cannot be decoded)
        self._unread = None
        try:
            return super().fetchall()
        except sqlite3.OperationalError as exc:
            raise self._stopped(exc) from exc

    def __next__(self) -> Any:
        self._unread = None
        try:
            return super().__next__()
        except sqlite3.OperationalError as exc:
            raise self._stopped(exc) from exc



# --- files ---------------------------------------------------------------------------------------------


def _read_head(path: Path, size: int) -> bytes:
    """The first ``size`` bytes of a regular file, opened so that a FIFO swapped in meanwhile cannot block."""
    fd = open_regular_fd(path)
    try:
        return os.pread(fd, size, 0)
    finally:
        os.close(fd)


def check_database_file(path: Path, what: str = "an LCM database") -> bool:
    """Raise ``DatabaseError`` unless ``path`` is a readable SQLite file; True for a WAL-mode one."""
    problem = not_regular_reason(path)
    if problem == "is a directory":
        raise DatabaseError(f"{path}: is a directory, not {what} file")
    if problem is not None:
        raise DatabaseError(f"{path}: {problem}")
    try:
        head = _read_head(path, _HEADER_BYTES)
    except OSError as exc:
        raise DatabaseError(f"{path}: cannot be read ({exc.strerror or exc})") from exc
    if not head:
        raise DatabaseError(f"{path}: empty file (0 bytes), not {what}")
    if head[: len(SQLITE_MAGIC)] != SQLITE_MAGIC:
        raise DatabaseError(f"{path}: not a SQLite database")
    return len(head) >= 20 and 2 in (head[18], head[19])


def _page_size(path: Path) -> int:
    raw = int.from_bytes(_read_head(path, 18)[16:18], "big")
    return 65536 if raw == 1 else raw


# --- connecting ----------------------------------------------------------------------------------------


def connect_read_only(
    path: Path, immutable: bool, timeout: float = 5.0, *, writable_copy: bool = False
) -> sqlite3.Connection:
    """``mode=ro`` (optionally ``immutable=1``) plus ``PRAGMA query_only``, guarded; the first read happens here.

    ``writable_copy`` opens a private copy ``mode=rw`` so SQLite can undo a hot journal in it.
    """
    uri = f"file:{quote(str(path.resolve()))}?mode={'rw' if writable_copy else 'ro'}"
    if immutable:
        uri += "&immutable=1"
    conn = sqlite3.connect(uri, uri=True, check_same_thread=False, timeout=timeout, factory=GuardedConnection)
    assert isinstance(conn, GuardedConnection)
    conn.label = str(path)
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
    immutable: bool  # this connection sees no later commits (immutable=1, or a private copy)
    warnings: list[str] = field(default_factory=list)
    private_copy: bool = False  # read through a copy in a temporary folder (removed when the connection closes)


def open_read_only(path: Path, wal_mode: bool, connect: Connector) -> ReadOnlyOpen:
    """Open ``path`` (already checked by ``check_database_file``) through ``connect(immutable)``."""
    opened = _open_wal(path, connect) if wal_mode else _open_rollback(path, connect)
    label = str(path)
    if isinstance(opened.connection, GuardedConnection):
        opened.connection.label = label
    return opened


def _immutable(path: Path, connect: Connector, warnings: list[str]) -> ReadOnlyOpen:
    try:
        conn = connect(True)
    except sqlite3.DatabaseError as exc:
        raise open_error(path, exc) from exc
    return ReadOnlyOpen(conn, True, warnings)


def _sidecar(path: Path, suffix: str) -> Path:
    """The -wal, -shm or -journal SQLite uses: beside the file a symbolic link leads to, not beside the link."""
    return Path(f"{os.path.realpath(path)}{suffix}")


def _open_wal(path: Path, connect: Connector) -> ReadOnlyOpen:
    wal = _sidecar(path, "-wal")
    shm = _sidecar(path, "-shm")
    if not os.path.lexists(wal):
        # No -wal: the file is complete, and a plain reader would leave empty -wal and -shm behind.
        return _immutable(path, connect, [])
    problem = not_regular_reason(wal)
    if problem is not None:
        return _immutable(path, connect, [f"{wal.name} {problem}: ignored; the database is shown as last checkpointed"])
    if not_regular_reason(shm) is None and shm_in_use(shm) is not False:
        # a writer holds the -shm (its -wal may hold no commit yet): read live, as one more reader
        return _open_live(path, wal, connect)
    info = wal_summary(wal, _page_size(path))
    if info.commits == 0:
        note = [] if info.problem is None else [f"{wal.name} {info.problem}: ignored"]
        return _immutable(path, connect, note)
    return _open_private_copy(path, wal, info, connect, rollback=False)


def _open_live(path: Path, wal: Path, connect: Connector) -> ReadOnlyOpen:
    """A WAL database another connection has open: read it live, as one more reader."""
    try:
        return ReadOnlyOpen(connect(False), False)
    except sqlite3.DatabaseError as exc:
        _refuse_damaged_or_locked(path, exc)
        # A WAL database in a read-only directory: the -shm cannot be used.
        return _immutable_after_failure(path, connect, _hidden_commits_warning(wal, always=True))


def _open_rollback(path: Path, connect: Connector) -> ReadOnlyOpen:
    journal = _sidecar(path, "-journal")
    if os.path.lexists(journal):
        problem = not_regular_reason(journal)
        if problem is not None:
            # SQLite would open it to see whether it is hot; immutable=1 never looks
            return _immutable(path, connect, [f"{journal.name} {problem}: ignored"])
    try:
        return ReadOnlyOpen(connect(False), False)
    except sqlite3.DatabaseError as exc:
        _refuse_damaged_or_locked(path, exc)
        if "readonly" in str(exc).lower() and os.path.lexists(journal):
            # a hot journal: a writer died mid-transaction, and only undoing it gives a consistent file
            return _open_private_copy(path, journal, None, connect, rollback=True)
        return _immutable_after_failure(path, connect, [IMMUTABLE_WARNING])


def _refuse_damaged_or_locked(path: Path, exc: sqlite3.DatabaseError) -> None:
    """A plain read-only open failed: a damaged file or a writer's lock is reported, never read around.

    An immutable read would ignore the writer's lock and could see half-written pages.
    """
    message = str(exc).lower()
    if "not a database" in message or "malformed" in message:
        raise open_error(path, exc) from exc
    if "locked" in message or "busy" in message:
        raise DatabaseError(f"{path}: the database is locked by a writer ({exc}); try again") from exc


def _immutable_after_failure(path: Path, connect: Connector, warnings: list[str]) -> ReadOnlyOpen:
    """The immutable read a plain open that failed for another reason (a read-only place) falls back to."""
    try:
        conn = connect(True)
    except sqlite3.Error as exc:
        raise DatabaseError(f"{path}: cannot be opened read-only ({exc})") from exc
    return ReadOnlyOpen(conn, True, warnings)


def open_error(path: Path, exc: sqlite3.DatabaseError) -> DatabaseError:
    if "malformed" in str(exc).lower():
        return DatabaseError(f"{path}: the SQLite file is damaged ({exc})")
    return DatabaseError(f"{path}: not a SQLite database ({exc})")


def open_database(path: str | os.PathLike[str], what: str, timeout: float = 5.0) -> ReadOnlyOpen:
    """Check and open ``path`` read-only in one call (for readers that need no hook into the connect step)."""
    file = Path(path)
    wal_mode = check_database_file(file, what)
    return open_read_only(file, wal_mode, lambda immutable: connect_read_only(file, immutable, timeout))


# --- the -wal, the -shm and private copies ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class WalSummary:
    """What the header and frame headers of a ``-wal`` say, checked against the database's page size."""

    size: int
    commits: int  # commit frames carrying the header's salts (checksums are SQLite's to check)
    problem: str | None = None  # why SQLite would read nothing from it, or why it is not this database's
    used: int = 0  # bytes up to the end of the last such commit frame: all SQLite would read


def wal_summary(wal: Path, page_size: int) -> WalSummary:
    """Read the header and the frame headers of ``wal`` (seeking from frame to frame: no page is read)."""
    try:
        fd = open_regular_fd(wal)
    except OSError as exc:
        return WalSummary(0, 0, f"cannot be read ({exc.strerror or exc})")
    try:
        size = os.fstat(fd).st_size
        header = os.pread(fd, _WAL_HEADER, 0)
        if size == 0:
            return WalSummary(0, 0, None)
        if len(header) < _WAL_HEADER:
            return WalSummary(size, 0, f"is {size:,} bytes, shorter than a WAL header")
        magic, version, wal_page_size, _seq, salt1, salt2, check1, check2 = struct.unpack(">8I", header)
        if magic not in _WAL_MAGIC or version != _WAL_VERSION:
            return WalSummary(size, 0, "is not a SQLite WAL file")
        if _wal_checksum(header[:24], big_endian=magic & 1 == 1) != (check1, check2):
            return WalSummary(size, 0, "has a damaged header (its checksum does not match)")
        if wal_page_size != page_size:
            return WalSummary(
                size, 0, f"belongs to another database (pages of {wal_page_size:,} bytes; this one's are {page_size:,})"
            )
        commits = 0
        used = 0
        frame = _WAL_FRAME_HEADER + page_size
        offset = _WAL_HEADER
        while offset + frame <= size:
            head = os.pread(fd, 16, offset)
            _page, commit_size, frame_salt1, frame_salt2 = struct.unpack(">4I", head)
            if (frame_salt1, frame_salt2) != (salt1, salt2):
                break
            offset += frame
            if commit_size:
                commits += 1
                used = offset
        return WalSummary(size, commits, None if commits else "holds no complete commit", used)
    finally:
        os.close(fd)


def _wal_checksum(data: bytes, *, big_endian: bool) -> tuple[int, int]:
    words = struct.unpack(f"{'>' if big_endian else '<'}{len(data) // 4}I", data)
    s0 = s1 = 0
    for i in range(0, len(words), 2):
        s0 = (s0 + words[i] + s1) & 0xFFFFFFFF
        s1 = (s1 + words[i + 1] + s0) & 0xFFFFFFFF
    return s0, s1


def shm_in_use(shm: Path) -> bool | None:
    """Whether a live connection holds ``shm`` (its dead-man-switch lock); None where locks cannot be seen.

    Read from ``/proc/locks`` rather than by opening the file: closing a descriptor of a file drops
    every POSIX lock this process holds on it, including those of its own SQLite connections.
    """
    try:
        info = os.stat(shm)
        with open("/proc/locks", encoding="ascii", errors="replace") as handle:
            table = handle.read()
    except OSError:
        return None
    device = f"{os.major(info.st_dev):02x}:{os.minor(info.st_dev):02x}:{info.st_ino}"
    for line in table.splitlines():
        fields = line.split()
        if device in fields:
            at = fields.index(device)
            try:
                start, end = int(fields[at + 1]), fields[at + 2]
            except (IndexError, ValueError):
                continue
            if start <= _SHM_DMS_BYTE and (end == "EOF" or int(end) >= _SHM_DMS_BYTE):
                return True
    return False


def _private_folder(beside: Path) -> Path:
    """A new folder for a private copy, in the first temporary location that is not the database's folder."""
    import tempfile  # (here, with shutil below: only a private copy needs them, and a start is faster without)

    home = Path(os.path.realpath(beside)).parent
    candidates = [tempfile.gettempdir(), os.environ.get("XDG_RUNTIME_DIR"), "/dev/shm", "/var/tmp"]
    for candidate in candidates:
        if not candidate or not os.path.isdir(candidate):
            continue
        if Path(candidate).resolve() == home:
            continue
        return Path(tempfile.mkdtemp(prefix="ctxview-", dir=candidate))
    raise OSError(0, "no temporary folder apart from the database's own")


def _copy_file(source: Path, target: Path, limit: int | None = None) -> None:
    """Copy a regular file (its first ``limit`` bytes), never following it into a FIFO swapped in meanwhile."""
    fd = open_regular_fd(source)
    try:
        left = os.fstat(fd).st_size if limit is None else limit
        with open(target, "xb") as writer:
            while left > 0:
                chunk = os.read(fd, min(left, 1 << 20))
                if not chunk:
                    break
                writer.write(chunk)
                left -= len(chunk)
    finally:
        os.close(fd)


@dataclass(slots=True)
class _PrivateCopy:
    """A copy of a database and its -wal or hot -journal, made once per state of those files."""

    folder: Path | None  # None: no copy is kept (it could not be made, or it is not this database's)
    notes: list[str]  # what every open of this state says


_COPIES: dict[tuple[Any, ...], _PrivateCopy] = {}
_COPIES_LOCK = threading.Lock()


@atexit.register
def _remove_private_copies() -> None:
    if not _COPIES:
        return
    import shutil

    for made in _COPIES.values():
        if made.folder is not None:
            shutil.rmtree(made.folder, ignore_errors=True)
    _COPIES.clear()


def _state(path: Path) -> tuple[int, int, int, int]:
    info = os.stat(path)
    return info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns


def _open_private_copy(
    path: Path, sidecar: Path, info: WalSummary | None, connect: Connector, *, rollback: bool
) -> ReadOnlyOpen:
    """Read ``path`` with its ``sidecar`` (-wal or hot -journal) through a copy in a private temporary folder.

    The copy is made once per state of the two files and shared by every connection of this process
    (a diff's two sides, the recall search, the inspector's reloads); it is removed when the process ends.
    """
    what = "the hot -journal is not undone" if rollback else _hidden_commits(sidecar, info)
    try:
        key = (os.path.realpath(path), _state(path), _state(sidecar), info.used if info is not None else None)
    except OSError as exc:
        return _immutable(path, connect, [f"{IMMUTABLE_WARNING}: {what} (no private copy: {exc.strerror or exc})"])
    with _COPIES_LOCK:
        made = _COPIES.get(key)
        if made is None:
            made = _COPIES[key] = _make_private_copy(path, sidecar, info, what, rollback=rollback)
    if made.folder is None:
        return _immutable(path, connect, list(made.notes))
    try:
        conn = connect_read_only(made.folder / "lcm.db", False)
    except sqlite3.Error as exc:
        return _immutable(path, connect, [f"{IMMUTABLE_WARNING}: {what} (the private copy cannot be read: {exc})"])
    assert isinstance(conn, GuardedConnection)
    conn.label = str(path)
    return ReadOnlyOpen(conn, True, list(made.notes), private_copy=True)


def _make_private_copy(
    path: Path, sidecar: Path, info: WalSummary | None, what: str, *, rollback: bool
) -> _PrivateCopy:
    """Copy, then let SQLite read the -wal (or undo the journal) in the copy and check the result."""
    try:
        sidecar_bytes = info.used if info is not None else sidecar.stat().st_size
        needed = path.stat().st_size + sidecar_bytes
        if needed > MAX_PRIVATE_COPY:
            raise OSError(0, f"{needed:,} bytes are too many to copy")
        folder = _private_folder(path)
    except OSError as exc:
        return _PrivateCopy(None, [f"{IMMUTABLE_WARNING}: {what} (no private copy: {exc.strerror or exc})"])
    copy = folder / "lcm.db"
    import shutil

    try:
        if shutil.disk_usage(folder).free < needed + (64 << 20):
            raise OSError(0, f"too little free space in {folder.parent}")
        _copy_file(path, copy)
        _copy_file(sidecar, Path(f"{copy}{sidecar.name[len(Path(os.path.realpath(path)).name):]}"), sidecar_bytes)
        conn = connect_read_only(copy, False, writable_copy=rollback)  # rw: SQLite undoes a hot journal
    except (OSError, sqlite3.Error) as exc:
        shutil.rmtree(folder, ignore_errors=True)
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        return _PrivateCopy(None, [f"{IMMUTABLE_WARNING}: {what} (no private copy: {reason})"])
    assert isinstance(conn, GuardedConnection)
    try:
        verdict = _integrity(conn)
    finally:
        conn.close()
    if verdict is None:
        note = (
            f"{sidecar.name} was read through a private copy without checking that it belongs to this database"
            f" (the check takes longer than {INTEGRITY_SECONDS:g} s)"
        )
        return _PrivateCopy(folder, [note])
    if verdict != "ok":
        shutil.rmtree(folder, ignore_errors=True)
        note = f"{sidecar.name} does not belong to this database or is damaged (with it: {verdict}): ignored; {what}"
        return _PrivateCopy(None, [note])
    return _PrivateCopy(folder, [])


def _integrity(conn: GuardedConnection) -> str | None:
    """SQLite's ``integrity_check`` of the copy: "ok", its first complaint, or None when it took too long.

    Pages of another database's -wal can each be well-formed (``quick_check`` passes); the rows they
    hold are then missing from this database's indexes, which only the full check sees (1.2 s on a
    150 MB session; at most ``INTEGRITY_SECONDS``).
    """
    deadline, conn.deadline = conn.deadline, min(conn.deadline, INTEGRITY_SECONDS)
    try:
        rows = conn.execute("PRAGMA integrity_check(1)").fetchall()
    except QueryTimeout:
        return None
    except sqlite3.Error as exc:
        return str(exc)
    finally:
        conn.deadline = deadline
    return str(rows[0][0]) if rows else "no answer"


def _hidden_commits(wal: Path, info: WalSummary | None) -> str:
    size = info.size if info is not None else _size(wal)
    commits = info.commits if info is not None else 0
    if commits == 1:
        return f"the newest commit (in the {size:,}-byte {wal.name}) is not shown"
    counted = f"the newest {commits:,} commits" if commits else "the newest commits"
    return f"{counted} (in the {size:,}-byte {wal.name}) are not shown"


def _hidden_commits_warning(wal: Path, *, always: bool) -> list[str]:
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
