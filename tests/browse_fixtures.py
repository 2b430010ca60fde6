"""Fixtures of the read-only browser views: a small OpenClaw state directory with its LCM database, and a
100,000-message database written in bulk.

The small session (``build_browse_state``): a JSONL transcript of 11 entries (one on an abandoned branch,
a model change, a last user turn not yet ingested) and an LCM conversation whose messages carry the
entries' ids.  Its context is a condensed summary (over a leaf covering the first two messages), a leaf
covering the third, and the last four messages; the fourth message is in no summary and not in the
context.  Three focus briefs (one in use), two large files (one referred to by nothing).
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.lcmdb import LCM_SCHEMA, LcmDbWriter

SID = "5e55a1de-0000-4000-8000-000000000001"
T0 = 1_775_984_400_000  # 2026-04-12T09:00:00Z


def _iso(ms: int) -> str:
    from datetime import UTC, datetime

    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z")


def _message(entry_id: str, parent: str | None, ms: int, message: dict[str, Any]) -> dict[str, Any]:
    return {"type": "message", "id": entry_id, "parentId": parent, "timestamp": _iso(ms),
            "message": {**message, "timestamp": ms}}


def _text(role: str, text: str) -> dict[str, Any]:
    return {"role": role, "content": [{"type": "text", "text": text}]}


ENTRIES: list[dict[str, Any]] = [
    _message("e0000001", None, T0 + 1000, _text("user", "Deploy billing-api 2.14 to staging, please.")),
    _message("e0000002", "e0000001", T0 + 2000, {
        "role": "assistant",
        "content": [{"type": "toolCall", "id": "call_1", "name": "exec", "arguments": {"command": "helm upgrade"}}],
    }),
    _message("e0000003", "e0000002", T0 + 3000, {
        "role": "toolResult", "toolCallId": "call_1", "toolName": "exec",
        "content": [{"type": "text", "text": "Release billing-api upgraded. REVISION: 57"}], "isError": False,
    }),
    _message("e0000004", "e0000003", T0 + 4000, _text("assistant", "Staging is on 2.14 and healthy.")),
    {"type": "model_change", "id": "e0000005", "parentId": "e0000004", "timestamp": _iso(T0 + 5000),
     "provider": "anthropic", "modelId": "claude-sonnet-4-5"},
    _message("e0000006", "e0000005", T0 + 6000, _text("user", "Now check the rollup job's logs.")),
    _message("e0000007", "e0000006", T0 + 7000, _text("assistant", "Trying grep on the pod first.")),
    _message("e0000008", "e0000006", T0 + 8000, _text("assistant", "The logs show a timeout in the rollup job.")),
    _message("e0000009", "e0000008", T0 + 9000, _text("user", "Raise the timeout to 60 s.")),
    _message("e000000a", "e0000009", T0 + 10000, _text("assistant", "Done: the rollup timeout is now 60 s.")),
    _message("e000000b", "e000000a", T0 + 11000, _text("user", "Thanks, ship it.")),
]


@dataclass(frozen=True)
class BrowseState:
    root: Path  # the state directory
    lcm: Path
    message_ids: dict[str, int]  # entry id → LCM message id


def build_browse_state(root: Path) -> BrowseState:
    sessions = root / "agents" / "main" / "sessions"
    sessions.mkdir(parents=True)
    header = {"type": "session", "version": 3, "id": SID, "timestamp": _iso(T0), "cwd": "/home/u/work"}
    lines = [json.dumps(header), *(json.dumps(e) for e in ENTRIES)]
    (sessions / f"{SID}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    index = {"agent:main:main": {"sessionId": SID, "updatedAt": T0 + 11000,
                                 "sessionFile": str(sessions / f"{SID}.jsonl")}}
    (sessions / "sessions.json").write_text(json.dumps(index), encoding="utf-8")
    lcm = root / "lcm.db"
    w = LcmDbWriter(lcm, session_id=SID)
    w.conn.execute("UPDATE conversations SET session_key = 'agent:main:main', title = 'Staging deploy'")
    ids: dict[str, int] = {}
    ids["e0000001"] = w.user("Deploy billing-api 2.14 to staging, please.", in_context=False)
    ids["e0000002"] = w.assistant_blocks(
        [{"type": "toolCall", "id": "call_1", "name": "exec", "arguments": {"command": "helm upgrade"}}],
        in_context=False,
    )
    ids["e0000003"] = w.tool_result("call_1", "Release billing-api upgraded. REVISION: 57", name="exec",
                                    in_context=False, large_content="file_0000000000aaa")
    ids["e0000004"] = w.assistant("Staging is on 2.14 and healthy.", in_context=False)
    w.summary("sum_leaf1", "The user asked for a staging deploy of billing-api 2.14; helm upgraded it.",
              source_messages=[ids["e0000001"], ids["e0000002"]], in_context=False)
    w.summary("sum_cond", "Deployed billing-api 2.14 to staging (revision 57).", kind="condensed", depth=1,
              parents=["sum_leaf1"], descendant_count=1)
    w.summary("sum_leaf2", "helm reported revision 57.", source_messages=[ids["e0000003"]])
    ids["e0000006"] = w.user("Now check the rollup job's logs.")
    ids["e0000008"] = w.assistant("The logs show a timeout in the rollup job.")
    ids["e0000009"] = w.user("Raise the timeout to 60 s.")
    ids["e000000a"] = w.assistant("Done: the rollup timeout is now 60 s.")
    for entry_id, message_id in ids.items():
        w.conn.execute("UPDATE messages SET transcript_entry_id = ? WHERE message_id = ?", (entry_id, message_id))
    w.large_file("file_0000000000aaa", byte_size=48_213, summary="helm output: 412 lines, one release upgraded.")
    w.large_file("file_0000000000bbb", byte_size=900, summary=None)
    w.conn.execute("UPDATE large_files SET file_name = 'helm-upgrade.log', mime_type = 'text/plain', line_count = 412,"
                   " created_at = '2026-04-12 09:00:03' WHERE file_id = 'file_0000000000aaa'")
    w.conn.execute("UPDATE large_files SET created_at = '2026-04-12 09:30:00' WHERE file_id = 'file_0000000000bbb'")
    w.focus_brief("brief_old", "Older brief.", status="superseded", prompt="deploy", token_count=40,
                  target_tokens=400, covered_message_seq=1, created_at="2026-04-12 09:10:00")
    w.focus_brief("brief_new", "Billing-api 2.14 runs on staging; the rollup timeout is the open issue.",
                  prompt="rollup timeout", token_count=52, target_tokens=400, covered_message_seq=2,
                  covered_latest_at="2026-04-12 09:00:03", created_at="2026-04-12 09:20:00")
    w.focus_brief("brief_fail", "", status="failed", prompt="logs", created_at="2026-04-12 09:25:00")
    w.conn.execute("UPDATE focus_briefs SET error = 'model timed out' WHERE brief_id = 'brief_fail'")
    w.conn.execute("UPDATE focus_briefs SET updated_at = created_at")  # reproducible screenshots
    for ordinal, (sid, role) in enumerate((("sum_cond", "covered"), ("sum_gone", "covered"))):
        w.conn.execute("INSERT INTO focus_brief_sources (brief_id, summary_id, ordinal, role) VALUES (?, ?, ?, ?)",
                       ("brief_new", sid, ordinal, role))
    w.close()
    return BrowseState(root, lcm, ids)


# --- 100,000 messages ----------------------------------------------------------------------------

BIG_MESSAGES = 100_000
BIG_SUMMARISED = 80_000  # the first 80,000 are covered by 100 leaves under one condensed summary
BIG_LEAF_SIZE = 800


def build_big_db(path: Path) -> None:
    """One conversation of 100,000 messages: the first 80,000 summarised, the rest in the context."""
    conn = sqlite3.connect(path)
    conn.executescript(LCM_SCHEMA)
    conn.execute("INSERT INTO conversations (conversation_id, session_id, active, created_at)"
                 " VALUES (1, 'big', 1, '2026-01-01 00:00:00')")
    conn.executemany(
        "INSERT INTO messages (message_id, conversation_id, seq, role, content, token_count, created_at)"
        " VALUES (?, 1, ?, ?, ?, 12, '2026-01-01 00:00:00')",
        ((i + 1, i, "user" if i % 2 == 0 else "assistant", f"message number {i} of the big session")
         for i in range(BIG_MESSAGES)),
    )
    leaves = BIG_SUMMARISED // BIG_LEAF_SIZE
    conn.executemany(
        "INSERT INTO summaries (summary_id, conversation_id, kind, depth, content, token_count, created_at)"
        " VALUES (?, 1, 'leaf', 0, ?, 100, '2026-01-01 00:00:00')",
        ((f"sum_leaf{k:03d}", f"leaf {k}") for k in range(leaves)),
    )
    conn.execute("INSERT INTO summaries (summary_id, conversation_id, kind, depth, content, token_count, created_at)"
                 " VALUES ('sum_root', 1, 'condensed', 1, 'the first 80,000 messages', 500, '2026-01-01 00:00:00')")
    conn.executemany(
        "INSERT INTO summary_parents (summary_id, parent_summary_id, ordinal) VALUES ('sum_root', ?, ?)",
        ((f"sum_leaf{k:03d}", k) for k in range(leaves)),
    )
    conn.executemany(
        "INSERT INTO summary_messages (summary_id, message_id, ordinal) VALUES (?, ?, ?)",
        ((f"sum_leaf{i // BIG_LEAF_SIZE:03d}", i + 1, i % BIG_LEAF_SIZE) for i in range(BIG_SUMMARISED)),
    )
    conn.execute("INSERT INTO context_items (conversation_id, ordinal, item_type, summary_id)"
                 " VALUES (1, 0, 'summary', 'sum_root')")
    conn.executemany(
        "INSERT INTO context_items (conversation_id, ordinal, item_type, message_id) VALUES (1, ?, 'message', ?)",
        ((i - BIG_SUMMARISED + 1, i + 1) for i in range(BIG_SUMMARISED, BIG_MESSAGES)),
    )
    conn.commit()
    conn.close()
