"""One agent's SQLite database (``agents/<id>/agent/openclaw-agent.sqlite``), opened read-only and probed.

Tables and columns are probed rather than inferred from the schema number
(spec §3: features land without a version bump).  Every failure — a missing
file, a locked or damaged database — is a ``DatabaseError`` with one sentence;
callers turn it into a note.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

from ctxview.errors import DatabaseError
from ctxview.sqlite_readonly import open_database

AGENT_DB_RELATIVE = Path("agent") / "openclaw-agent.sqlite"
SESSIONS_IN_SQLITE_SCHEMA = 4  # agent schema 4 (v2026.7.2-beta.1) moved sessions into the database
DEFAULT_TIMEOUT = 2.0  # seconds to wait for a lock before saying the database is locked


class AgentDatabase:
    """A read-only agent database.  Use as a context manager or call ``close()``."""

    def __init__(
        self, path: Path, *, timeout: float = DEFAULT_TIMEOUT, what: str = "an OpenClaw agent database"
    ) -> None:
        self.path = path
        opened = open_database(path, what, timeout)
        self._conn = opened.connection
        self.immutable = opened.immutable
        self.notes: list[str] = [f"{path}: {w}" for w in opened.warnings]
        try:
            rows = self.query("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")
            self.tables = frozenset(str(name) for (name,) in rows)
            self.user_version = int(self.query("PRAGMA user_version")[0][0])
        except BaseException:
            self._conn.close()
            raise
        self._columns: dict[str, frozenset[str]] = {}

    def columns(self, table: str) -> frozenset[str]:
        if table not in self._columns:
            if table not in self.tables:
                self._columns[table] = frozenset()
            else:
                quoted = table.replace('"', '""')
                self._columns[table] = frozenset(str(r[1]) for r in self.query(f'PRAGMA table_info("{quoted}")'))
        return self._columns[table]

    def has(self, table: str, column: str | None = None) -> bool:
        if table not in self.tables:
            return False
        return column is None or column in self.columns(table)

    def col(self, table: str, column: str) -> str:
        """``column`` when the table has it, else ``NULL`` (optional columns of older schemas)."""
        return column if self.has(table, column) else "NULL"

    @property
    def sessions_in_sqlite(self) -> bool:
        """The SQLite era (spec §1): schema ≥ 4 and a ``transcript_events`` table."""
        return self.user_version >= SESSIONS_IN_SQLITE_SCHEMA and "transcript_events" in self.tables

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        try:
            return self._conn.execute(sql, params).fetchall()
        except sqlite3.Error as exc:
            if "locked" in str(exc).lower() or "busy" in str(exc).lower():
                raise DatabaseError(f"{self.path}: the database is locked by a writer ({exc}); try again") from exc
            raise DatabaseError(f"{self.path}: cannot read the database ({exc})") from exc

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> AgentDatabase:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


def open_agent_database(path: Path, *, timeout: float = DEFAULT_TIMEOUT) -> tuple[AgentDatabase | None, str | None]:
    """The database, or None and the one-sentence reason it cannot be read."""
    try:
        return AgentDatabase(path, timeout=timeout), None
    except DatabaseError as exc:
        return None, str(exc)
