"""The one reader of stored values: what each value becomes, and SQLite's own order over mixed types."""

from __future__ import annotations

import math
import sqlite3

import pytest

from ctxview.dbvalues import MAX_SAFE_INTEGER, engine_number, sqlite_order, text, total, whole_number


@pytest.mark.parametrize(
    ("stored", "expected"),
    [
        (7, 7),
        (-3, -3),
        (2**63 - 1, 2**63 - 1),
        (4.0, 4),
        (-0.0, 0),
        (4.5, None),
        (math.inf, None),
        (-math.inf, None),
        ("12", 12),
        (" 12 ", 12),
        ("+5", 5),
        ("-5", -5),
        ("+-5", None),
        ("1e3", None),
        ("12abc", None),
        ("٣", None),  # a digit Python reads, SQLite does not
        ("9" * 40, None),
        ("", None),
        (b"\x01", None),
        (None, None),
    ],
)
def test_whole_number(stored: object, expected: int | None) -> None:
    assert whole_number(stored) == expected


@pytest.mark.parametrize(
    ("stored", "expected"),
    [
        (5, 5),
        (MAX_SAFE_INTEGER, MAX_SAFE_INTEGER),
        (MAX_SAFE_INTEGER + 2, float(MAX_SAFE_INTEGER + 2)),  # a JS number: the nearest double
        (-(2**63), -9.223372036854776e18),
        (math.inf, math.inf),
        (1.5, 1.5),
        ("lots", "lots"),
        (b"ab\xff", "ab\ufffd"),
        (None, None),
    ],
)
def test_engine_number(stored: object, expected: object) -> None:
    value = engine_number(stored)
    assert value == expected and type(value) is type(expected)


@pytest.mark.parametrize(
    ("stored", "expected"),
    [(None, 0), (12, 12), (12.0, 12), (2.5, 2.5), (math.inf, math.inf), (-math.inf, -math.inf), ("7", 7), ("x", 0)],
)
def test_total(stored: object, expected: float) -> None:
    value = total(stored)
    assert value == expected and type(value) is type(expected)


def test_sqlite_order_is_the_order_of_sqlites_order_by() -> None:
    values: list[object] = [
        "b", 3, None, b"\x00", 2.5, "a", -math.inf, "é", b"\xff", math.inf, -7, "A", "", b"", 0, "10",
        9_007_199_254_740_993,
    ]
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE t (v)")  # no affinity: every value is stored as given
    conn.executemany("INSERT INTO t VALUES (?)", [(v,) for v in values])
    by_sqlite = [row[0] for row in conn.execute("SELECT v FROM t ORDER BY v")]
    assert sorted(values, key=sqlite_order) == by_sqlite


def test_text() -> None:
    assert text(None) is None
    assert text("x") == "x"
    assert text(b"\xc3\xa9\xff") == "é\ufffd"
    assert text(5) == "5"
