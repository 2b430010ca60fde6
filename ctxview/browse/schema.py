"""Which tables and columns a database has, so a view can ask only for what exists (older schemas lack some)."""

from __future__ import annotations

import sqlite3
from typing import Any


class SchemaProbe:
    """Columns per table, read once with ``PRAGMA table_info``; ``col`` writes NULL for a missing column."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self.connection = connection
        self._columns: dict[str, frozenset[str]] = {}

    def columns(self, table: str) -> frozenset[str]:
        found = self._columns.get(table)
        if found is None:
            quoted = table.replace('"', '""')
            try:
                found = frozenset(str(row[1]) for row in self.connection.execute(f'PRAGMA table_info("{quoted}")'))
            except sqlite3.Error:
                found = frozenset()
            self._columns[table] = found
        return found

    def has(self, table: str, column: str | None = None) -> bool:
        cols = self.columns(table)
        return bool(cols) and (column is None or column in cols)

    def col(self, table: str, column: str, alias: str = "") -> str:
        prefix = f"{alias}." if alias else ""
        return f"{prefix}{column}" if self.has(table, column) else "NULL"

    def query(self, sql: str, params: tuple[Any, ...] | list[Any] = ()) -> list[tuple[Any, ...]]:
        return self.connection.execute(sql, params).fetchall()


def as_text(value: Any) -> str | None:
    """A TEXT column as str (BLOBs decoded, numbers printed); None stays None."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


def as_int(value: Any) -> int | None:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().lstrip("+-").isdecimal() and len(value) < 30:
        return int(value.strip())
    return None


def plural(n: int, noun: str, many: str | None = None) -> str:
    return f"{n:,} {noun if n == 1 else many or noun + 's'}"


def verb(n: int, singular: str, plural_form: str) -> str:
    return singular if n == 1 else plural_form
