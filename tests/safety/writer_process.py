"""A stand-in for the agent: appends messages and context items to an LCM database in WAL mode.

Run as ``python writer_process.py DB COUNT SECONDS [DELAY]``.  Each commit adds
one user message with its text part and appends it to the context of
conversation 1, the way the engine's ingest does, then sleeps ``DELAY``.  It
stops after COUNT commits, after SECONDS or on SIGTERM, whichever comes first,
and prints one JSON line: ``{"written": n, "errors": [...]}``.  Exit status 0 means no
statement failed; 3 means one did (``database is locked`` included) — the
error text is in ``errors``.
"""

from __future__ import annotations

import json
import signal
import sqlite3
import sys
import time


def main(argv: list[str]) -> int:
    path, count, seconds = argv[0], int(argv[1]), float(argv[2])
    delay = float(argv[3]) if len(argv) > 3 else 0.005
    conn = sqlite3.connect(path, timeout=5.0, isolation_level=None)
    conn.execute("PRAGMA busy_timeout = 5000")
    mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
    errors: list[str] = []
    written = 0
    deadline = time.monotonic() + seconds
    stop: list[int] = []
    signal.signal(signal.SIGTERM, lambda signum, frame: stop.append(signum))
    print(json.dumps({"ready": True, "journal_mode": mode}), flush=True)
    try:
        while written < count and time.monotonic() < deadline and not stop:
            try:
                write_one(conn, written)
            except sqlite3.Error as exc:
                errors.append(f"{type(exc).__name__}: {exc}")
                break
            written += 1
            time.sleep(delay)
    finally:
        conn.close()
    print(json.dumps({"written": written, "errors": errors}), flush=True)
    return 3 if errors else 0


def write_one(conn: sqlite3.Connection, n: int) -> None:
    text = f"live writer message {n}: please check the helm rollback of batch {n}"
    conn.execute("BEGIN IMMEDIATE")
    try:
        seq = conn.execute("SELECT COALESCE(MAX(seq), -1) + 1 FROM messages WHERE conversation_id = 1").fetchone()[0]
        cur = conn.execute(
            "INSERT INTO messages (conversation_id, seq, role, content, token_count, created_at)"
            " VALUES (1, ?, 'user', ?, 12, '2026-03-12 12:00:00')",
            (seq, text),
        )
        mid = cur.lastrowid
        conn.execute(
            "INSERT INTO message_parts (part_id, message_id, session_id, part_type, ordinal, text_content, metadata)"
            " VALUES (?, ?, 'live-writer', 'text', 0, ?, '{\"originalRole\":\"user\"}')",
            (f"live-part-{mid}", mid, text),
        )
        ordinal = conn.execute(
            "SELECT COALESCE(MAX(ordinal), -1) + 1 FROM context_items WHERE conversation_id = 1"
        ).fetchone()[0]
        conn.execute(
            "INSERT INTO context_items (conversation_id, ordinal, item_type, message_id) VALUES (1, ?, 'message', ?)",
            (ordinal, mid),
        )
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
