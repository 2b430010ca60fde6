"""Cheap change detection for ``--watch``: has another process committed to the database?

A held read-only connection answers ``PRAGMA data_version``, which changes
whenever another connection commits; it takes no lock between polls, so the
agent writing the database never waits for ctxview.  When the database can
only be read immutable (a WAL file nobody has open, a read-only directory) or
cannot be opened at all, the size and modification time of the file and its
``-wal`` are compared instead.  One ``changed()`` call is one poll; the caller
decides the interval (``WATCH_INTERVAL``) — nothing here loops or sleeps.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from pathlib import Path
from types import TracebackType

from ctxview.errors import CtxviewError
from ctxview.store import LcmStore

WATCH_INTERVAL = 0.75  # seconds between polls in the inspector

FileStat = tuple[int, int, int, int] | None  # (device, inode, size, mtime_ns); None when absent
Signature = tuple[FileStat, FileStat]  # the database file and its -wal


def _stat(path: str) -> FileStat:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def file_signature(path: str | os.PathLike[str]) -> Signature:
    """What the file system says about the database and its ``-wal`` (changes on every commit)."""
    name = os.fspath(path)
    return (_stat(name), _stat(f"{name}-wal"))


def _same_file(a: FileStat, b: FileStat) -> bool:
    return a is not None and b is not None and a[:2] == b[:2]


class DatabaseWatcher:
    """Reports, once per change, that the database was committed to since the last poll.

    Thread-safe: the inspector polls from a worker thread while it reloads in another.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._store: LcmStore | None = None
        self._version: int | None = None
        self._signature: Signature = file_signature(self.path)
        self._open()

    @property
    def uses_data_version(self) -> bool:
        """True when commits are seen through ``PRAGMA data_version`` (else by file stats)."""
        return self._store is not None

    def _open(self) -> None:
        """Hold a read-only connection when the database can be read live; otherwise watch the files."""
        self._close_store()
        try:
            store = LcmStore(self.path)
        except CtxviewError:
            return
        if store.immutable:  # sees no commits: the file stats are the only signal
            store.close()
            return
        try:
            self._version = store.data_version()
        except sqlite3.Error:
            store.close()
            return
        self._store = store

    def _close_store(self) -> None:
        if self._store is not None:
            try:
                self._store.close()
            except sqlite3.Error:
                pass
        self._store = None
        self._version = None

    def changed(self) -> bool:
        """One poll: True when something was committed (or the file appeared, vanished or was replaced)."""
        with self._lock:
            signature = file_signature(self.path)
            previous = self._signature
            self._signature = signature
            if self._store is None:
                if signature == previous:
                    return False
                self._open()  # the file changed: a writer may have appeared, so try a live connection again
                return True
            if not _same_file(signature[0], previous[0]):
                self._open()  # replaced by another file (or removed)
                return True
            try:
                version = self._store.data_version()
            except sqlite3.Error:
                self._close_store()
                return signature != previous
            changed = version != self._version
            self._version = version
            return changed

    def mark(self) -> None:
        """Take the current state as seen (called just before the session is re-read)."""
        with self._lock:
            self._signature = file_signature(self.path)
            if self._store is None:
                self._open()
                return
            try:
                self._version = self._store.data_version()
            except sqlite3.Error:
                self._close_store()

    def close(self) -> None:
        if self._lock.acquire(timeout=2):
            try:
                self._close_store()
            finally:
                self._lock.release()

    def __enter__(self) -> DatabaseWatcher:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

