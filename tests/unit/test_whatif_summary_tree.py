"""The summary tree read from a hand-made database: covered tokens, roots, badges, outcomes."""

from __future__ import annotations

import sqlite3

from ctxview.assembly.fallback_summary import FALLBACK_SUMMARY_MARKER
from ctxview.whatif.summary_tree import badges_of, read_summary_tree, tree_lines, with_outcomes


def _db() -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    conn.executescript(
        """
        CREATE TABLE summaries (summary_id TEXT, conversation_id INTEGER, kind TEXT, depth INTEGER, content TEXT,
                                token_count INTEGER, earliest_at TEXT, latest_at TEXT);
        CREATE TABLE summary_parents (summary_id TEXT, parent_summary_id TEXT, ordinal INTEGER);
        CREATE TABLE summary_messages (summary_id TEXT, message_id INTEGER, ordinal INTEGER);
        CREATE TABLE messages (message_id INTEGER, seq INTEGER, role TEXT, content TEXT, token_count INTEGER,
                               created_at TEXT);
        INSERT INTO messages VALUES (1, 0, 'user', 'a', 100, NULL), (2, 1, 'assistant', 'b', 300, NULL),
                                    (3, 2, 'user', 'xxxxxxxxxx', NULL, NULL);
        INSERT INTO summaries VALUES
          ('s_top', 1, 'condensed', 1, 'top', 20, '2026-01-01T08:00:00Z', '2026-01-01T09:00:00Z'),
          ('s_a', 1, 'leaf', 0, 'leaf a', 40, '2026-01-01T08:00:00Z', '2026-01-01T08:30:00Z'),
          ('s_b', 1, 'leaf', 0, 'cut [Truncated from 900 tokens]', 10, '2026-01-01T08:30:00Z', '2026-01-01T09:00:00Z'),
          ('s_other', 2, 'leaf', 0, 'other conversation', 5, NULL, NULL);
        INSERT INTO summary_parents VALUES ('s_top', 's_a', 0), ('s_top', 's_b', 1);
        INSERT INTO summary_messages VALUES ('s_a', 1, 0), ('s_a', 2, 1), ('s_b', 2, 0), ('s_b', 3, 1);
        """
    )
    return conn


def test_covered_tokens_count_each_message_once() -> None:
    tree = read_summary_tree(_db(), 1)
    assert tree.roots == ["s_top"]
    assert set(tree.nodes) == {"s_top", "s_a", "s_b"}
    top, a, b = tree.nodes["s_top"], tree.nodes["s_a"], tree.nodes["s_b"]
    assert (a.covered_tokens, a.covered_messages) == (400, 2)
    assert (b.covered_tokens, b.covered_messages) == (303, 2)  # message 3 has no token_count: 10 characters / 4
    assert (top.covered_tokens, top.covered_messages) == (403, 3)  # message 2 under both leaves counts once
    assert top.ratio == 403 / 20
    assert b.badges == ("truncated",) and top.badges == ()


def test_badges() -> None:
    assert badges_of(f"x\n{FALLBACK_SUMMARY_MARKER}") == ("fallback",)
    assert badges_of("y\n[Capped from 900 tokens to ~500]") == ("capped",)
    assert badges_of("plain summary") == ()


def test_tree_lines_without_a_run() -> None:
    tree = with_outcomes(read_summary_tree(_db(), 1), None)
    assert tree_lines(tree, messages=True) == [
        "condensed d1 s_top  20 tok ← 403 tok in 3 msgs (20.1×)  2026-01-01 08:00 – 2026-01-01 09:00  not in context",
        "├─ leaf d0 s_a  40 tok ← 400 tok in 2 msgs (10.0×)  2026-01-01 08:00 – 2026-01-01 08:30  not in context",
        "│  ├─ msg:1 seq 0 user 100 tok  a",
        "│  └─ msg:2 seq 1 assistant 300 tok  b",
        "└─ leaf d0 s_b  10 tok ← 303 tok in 2 msgs (30.3×)  2026-01-01 08:30 – 2026-01-01 09:00  not in context "
        "[truncated]",
        "   ├─ msg:2 seq 1 assistant 300 tok  b",
        "   └─ msg:3 seq 2 user 3 tok  xxxxxxxxxx",
    ]
