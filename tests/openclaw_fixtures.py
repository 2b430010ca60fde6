"""Builders of OpenClaw state directories for tests, in both transcript formats (spec shared/spec/openclaw-state.md).

``build_state(root)`` writes one state directory with:

- ``main`` (JSONL era): the main session (compaction, unknown entry type, custom
  message, branch summary, a cut-off last line, a trajectory sidecar with two
  turns), a cron session whose ``sessionFile`` is stale and whose transcript is
  format 1, a thread transcript no index entry names, an index entry with no
  transcript, and archives that must be skipped;
- ``ops`` (JSONL era): a session without an LCM conversation;
- ``coder`` (SQLite era, schema 24): a branched transcript (leaf row, side append,
  re-parenting, an unknown type), a zstd-compressed body, the host's active-branch
  index, trajectory rows (one whose data was dropped for size);
- ``legacy`` (SQLite era, schema 9): ``session_entries``, a rollback-journal database;
- ``broken``: an agent database that is not SQLite; ``remote``: an agent database
  listed in ``state/openclaw.sqlite`` that does not exist;
- ``lcm.db``, ``openclaw.json`` (JSON5) and ``logs/cache-trace.jsonl``.

Every id and time is a constant here so tests can state exact expectations.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.lcmdb import LcmDbWriter

SID_MAIN = "3f1c2a9e-5b7d-4e21-9c3a-0d8e6f1b2a47"
SID_MAIN_OLD = "0b0b0b0b-1111-4222-8333-444455556666"
SID_CRON = "7c7c7c7c-aaaa-4bbb-8ccc-dddddddddddd"
SID_THREAD = "9e9e9e9e-1212-4343-8565-878787878787"
SID_GONE = "deadbeef-0000-4000-8000-000000000000"
SID_OPS = "0a5e0a5e-2222-4333-8444-555566667777"
SID_CODER = "c0de0001-aaaa-4bbb-8ccc-000000000001"
SID_REVIEW = "c0de0002-aaaa-4bbb-8ccc-000000000002"
SID_LEGACY = "1e9ac100-aaaa-4bbb-8ccc-000000000003"
SID_ORPHAN = "0e0e0e0e-9999-4888-8777-666655554444"

T0 = 1775984400000  # 2026-04-12T09:00:00.000Z


def iso(ms: int) -> str:
    from datetime import UTC, datetime

    return datetime.fromtimestamp(ms / 1000, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def js_line(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def user(text: str, ms: int) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": ms}


def assistant(text: str, ms: int) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "api": "anthropic-messages",
        "provider": "anthropic",
        "model": "claude-sonnet-4-5",
        "usage": {
            "input": 10,
            "output": 5,
            "cacheRead": 0,
            "cacheWrite": 0,
            "totalTokens": 15,
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
        },
        "stopReason": "stop",
        "timestamp": ms,
    }


def tool_call(call_id: str, ms: int) -> dict[str, Any]:
    message = assistant("", ms)
    message["content"] = [{"type": "toolCall", "id": call_id, "name": "exec", "arguments": {"command": "ls"}}]
    message["stopReason"] = "toolUse"
    return message


def tool_result(call_id: str, text: str, ms: int) -> dict[str, Any]:
    return {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": "exec",
        "content": [{"type": "text", "text": text}],
        "isError": False,
        "timestamp": ms,
    }


def entry(kind: str, entry_id: str, parent: str | None, ms: int, **fields: Any) -> dict[str, Any]:
    return {"type": kind, "id": entry_id, "parentId": parent, "timestamp": iso(ms), **fields}


def header(session_id: str, ms: int, version: int | None = 3) -> dict[str, Any]:
    head: dict[str, Any] = {"type": "session"}
    if version is not None:
        head["version"] = version
    head.update({"id": session_id, "timestamp": iso(ms), "cwd": "/home/u/work"})
    return head


# --- the main session (JSONL) ------------------------------------------------------------------------

MAIN_ENTRIES: list[dict[str, Any]] = [
    entry("message", "a1b2c3d4", None, T0 + 1000, message=user("List files", T0 + 1000)),
    entry("message", "b2c3d4e5", "a1b2c3d4", T0 + 3000, message=tool_call("call_1", T0 + 3000)),
    entry("message", "c3d4e5f6", "b2c3d4e5", T0 + 4000, message=tool_result("call_1", "a.txt", T0 + 4000)),
    entry(
        "compaction",
        "d4e5f6a7",
        "c3d4e5f6",
        T0 + 3_600_000,
        summary="User listed files.",
        firstKeptEntryId="c3d4e5f6",
        tokensBefore=120000,
    ),
    entry("model_change", "e5f6a7b8", "d4e5f6a7", T0 + 3_601_000, provider="anthropic", modelId="claude-sonnet-4-5"),
    entry("message", "f6a7b8c9", "e5f6a7b8", T0 + 3_602_000, message=user("Now read a.txt", T0 + 3_602_000)),
    entry("mystery", "0a0b0c0d", "f6a7b8c9", T0 + 3_603_000, payload={"x": 1}),
    entry(
        "custom_message",
        "1a2b3c4d",
        "0a0b0c0d",
        T0 + 3_604_000,
        customType="reminder",
        content="Be brief.",
        display=False,
    ),
    entry("branch_summary", "2a3b4c5d", "1a2b3c4d", T0 + 3_605_000, fromId="b2c3d4e5", summary="Tried cat first."),
    entry("message", "3a4b5c6d", "2a3b4c5d", T0 + 3_606_000, message=assistant("a.txt holds 42.", T0 + 3_606_000)),
]
MAIN_CUT_LINE = '{"type":"message","id":"4a5b6c7d","parentId":"3a4b5c6d","timestamp":"2026-04-12T10:01'

# What the host passes to assemble for the main session (its own leaf).
MAIN_LIVE_WINDOW: list[dict[str, Any]] = [
    {"role": "compactionSummary", "summary": "User listed files.", "tokensBefore": 120000, "timestamp": T0 + 3_600_000},
    tool_result("call_1", "a.txt", T0 + 4000),
    user("Now read a.txt", T0 + 3_602_000),
    {
        "role": "custom",
        "customType": "reminder",
        "content": "Be brief.",
        "display": False,
        "timestamp": T0 + 3_604_000,
    },
    {"role": "branchSummary", "summary": "Tried cat first.", "fromId": "b2c3d4e5", "timestamp": T0 + 3_605_000},
    assistant("a.txt holds 42.", T0 + 3_606_000),
]
MAIN_LIVE_IDS = ["d4e5f6a7", "c3d4e5f6", "f6a7b8c9", "1a2b3c4d", "2a3b4c5d", "3a4b5c6d"]

# The compiled messages the trajectory recorded for the main session's newest turn (prompt "Now read a.txt",
# transcriptLeafId e5f6a7b8: the entry before the prompt).
MAIN_COMPILED: list[dict[str, Any]] = [
    {"role": "user", "content": [{"type": "text", "text": "List files"}], "timestamp": T0 + 1000},
    tool_call("call_1", T0 + 3000),
    tool_result("call_1", "a.txt", T0 + 4000),
]


def trajectory_event(
    session_id: str, seq: int, ts_ms: int, data: dict[str, Any], *, kind: str = "context.compiled", run: str = "run-1"
) -> dict[str, Any]:
    return {
        "traceSchema": "openclaw-trajectory",
        "schemaVersion": 1,
        "traceId": session_id,
        "source": "runtime",
        "type": kind,
        "ts": iso(ts_ms),
        "seq": seq,
        "sourceSeq": seq,
        "sessionId": session_id,
        "sessionKey": "agent:main:main",
        "runId": run,
        "provider": "anthropic",
        "modelId": "claude-sonnet-4-5",
        "modelApi": "anthropic-messages",
        "data": data,
    }


def compiled_data(messages: Any, leaf: str, prompt: str) -> dict[str, Any]:
    return {
        "systemPrompt": "You are helpful.",
        "prompt": prompt,
        "messages": messages,
        "tools": [],
        "imagesCount": 0,
        "streamStrategy": "default",
        "transport": "sse",
        "transcriptLeafId": leaf,
    }


# --- the coder session (SQLite) -------------------------------------------------------------------------

BIG_TEXT = "Here is the whole file, line by line. " * 60  # > 1024 bytes, ASCII: compressed by the host's rule
CODER_EVENTS: list[dict[str, Any]] = [
    header(SID_CODER, T0, version=4),
    entry("message", "e1", None, T0 + 1000, message=user("Start", T0 + 1000)),
    entry("message", "e2", "e1", T0 + 2000, message=assistant("Started.", T0 + 2000)),
    entry("message", "e3", "e2", T0 + 3000, message=user("Abandoned branch", T0 + 3000)),
    {"type": "leaf", "id": "l1", "parentId": "e3", "targetId": "e2"},
    entry("message", "e4", "e2", T0 + 5000, message=user("Second try", T0 + 5000)),
    {**entry("custom", "s1", "e4", T0 + 5500, customType="model-snapshot", data={}), "appendMode": "side"},
    entry("message", "e5", "s1", T0 + 6000, message=assistant("Reading.", T0 + 6000)),
    entry("message", "e6", "e5", T0 + 7000, message=assistant(BIG_TEXT, T0 + 7000)),
    entry("plugin_note", "x1", "e6", T0 + 7500, note="opaque"),
    entry("message", "e7", "x1", T0 + 8000, message=user("Thanks", T0 + 8000)),
    {"type": "leaf", "id": "l2", "parentId": "e7", "targetId": "nope"},
]
CODER_BRANCH = ["e1", "e2", "e4", "e5", "e6", "e7"]
CODER_COMPRESSED_SEQ = 9  # e6
CODER_COMPILED = [
    user("Start", T0 + 1000),
    assistant("Started.", T0 + 2000),
    user("Second try", T0 + 5000),
    assistant("Reading.", T0 + 6000),
    assistant(BIG_TEXT, T0 + 7000),
]

AGENT_SCHEMA_24 = """
CREATE TABLE schema_meta (meta_key TEXT PRIMARY KEY, role TEXT, agent_id TEXT, schema_version INTEGER,
  app_version TEXT);
CREATE TABLE session_nodes (session_key TEXT PRIMARY KEY, current_session_id TEXT, entry_json TEXT,
  updated_at INTEGER, status TEXT, label TEXT, archived_at INTEGER);
CREATE TABLE session_windows (session_id TEXT PRIMARY KEY, session_key TEXT, previous_session_id TEXT,
  reason TEXT, created_at INTEGER, model TEXT);
CREATE TABLE transcript_events (session_id TEXT NOT NULL, seq INTEGER NOT NULL, event_json TEXT,
  created_at INTEGER, event_zstd BLOB, event_utf8_bytes INTEGER, navigation_json TEXT,
  PRIMARY KEY (session_id, seq));
CREATE TABLE transcript_event_identities (session_id TEXT, event_id TEXT, seq INTEGER, event_type TEXT,
  parent_id TEXT, PRIMARY KEY (session_id, event_id));
CREATE TABLE session_transcript_active_events (session_id TEXT, active_position INTEGER, event_seq INTEGER,
  message_position INTEGER, context_eligible INTEGER);
CREATE TABLE session_transcript_index_state (session_id TEXT PRIMARY KEY, indexed_seq INTEGER,
  leaf_event_id TEXT, needs_rebuild INTEGER);
CREATE TABLE session_transcript_cold_archives (session_id TEXT, archive_id TEXT);
CREATE TABLE trajectory_runtime_events (session_id TEXT NOT NULL, seq INTEGER NOT NULL, run_id TEXT,
  event_json TEXT, created_at INTEGER, PRIMARY KEY (session_id, seq));
PRAGMA user_version = 24;
"""

AGENT_SCHEMA_9 = """
CREATE TABLE session_entries (session_key TEXT PRIMARY KEY, session_id TEXT, entry_json TEXT,
  updated_at INTEGER, status TEXT);
CREATE TABLE sessions (session_id TEXT PRIMARY KEY, session_key TEXT, created_at INTEGER);
CREATE TABLE transcript_events (session_id TEXT NOT NULL, seq INTEGER NOT NULL, event_json TEXT,
  created_at INTEGER, PRIMARY KEY (session_id, seq));
PRAGMA user_version = 9;
"""


def zstd_compress(text: str) -> bytes:
    import zstandard

    return zstandard.ZstdCompressor(level=1, write_checksum=True).compress(text.encode("utf-8"))


def write_agent_db(path: Path, schema: str, *, wal: bool) -> sqlite3.Connection:
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path)
    if wal:
        conn.execute("PRAGMA journal_mode=WAL")
    conn.executescript(schema)
    return conn


def insert_events(conn: sqlite3.Connection, session_id: str, events: list[dict[str, Any]], *, zstd_seqs=()) -> None:
    has_zstd = "event_zstd" in {r[1] for r in conn.execute("PRAGMA table_info(transcript_events)")}
    for seq, event in enumerate(events, start=1):
        text = js_line(event)
        if seq in zstd_seqs:
            conn.execute(
                "INSERT INTO transcript_events (session_id, seq, event_json, created_at, event_zstd, event_utf8_bytes)"
                " VALUES (?, ?, NULL, ?, ?, ?)",
                (session_id, seq, T0 + seq, zstd_compress(text), len(text.encode("utf-8"))),
            )
        elif has_zstd:
            conn.execute(
                "INSERT INTO transcript_events (session_id, seq, event_json, created_at, event_utf8_bytes)"
                " VALUES (?, ?, ?, ?, ?)",
                (session_id, seq, text, T0 + seq, len(text.encode("utf-8"))),
            )
        else:
            conn.execute(
                "INSERT INTO transcript_events (session_id, seq, event_json, created_at) VALUES (?, ?, ?, ?)",
                (session_id, seq, text, T0 + seq),
            )


# --- the whole state directory ---------------------------------------------------------------------------

CONFIG_JSON5 = """// OpenClaw config (JSON5)
{
  models: {
    providers: {
      anthropic: { models: [ { id: 'claude-sonnet-4-5', contextWindow: 200000, }, ], },
    },
  },
  agents: { defaults: { contextTokens: 150000, compaction: { reserveTokens: 16384 } } },
  /* lossless-claw keeps its default database */
  plugins: { entries: { "lossless-claw": { enabled: true, config: {} } } },
}
"""


@dataclass(frozen=True)
class StateFixture:
    root: Path  # the state directory
    lcm: Path


def build_state(root: Path) -> StateFixture:
    root.mkdir(parents=True, exist_ok=True)
    (root / "openclaw.json").write_text(CONFIG_JSON5, encoding="utf-8")
    _main_agent(root)
    _ops_agent(root)
    _coder_agent(root)
    _legacy_agent(root)
    broken = root / "agents" / "broken" / "agent"
    broken.mkdir(parents=True)
    (broken / "openclaw-agent.sqlite").write_bytes(b"this is not a database at all\n" * 10)
    (root / "agents" / "Not An Agent").mkdir()
    state_db = root / "state" / "openclaw.sqlite"
    state_db.parent.mkdir()
    conn = sqlite3.connect(state_db)
    conn.execute("CREATE TABLE agent_databases (agent_id TEXT PRIMARY KEY, path TEXT, created_at INTEGER)")
    conn.execute("INSERT INTO agent_databases VALUES ('remote', ?, 0)", (str(root / "elsewhere" / "remote.sqlite"),))
    conn.commit()
    conn.close()
    _cache_trace(root)
    lcm = _lcm(root)
    return StateFixture(root, lcm)


def _write_jsonl(path: Path, lines: list[str], *, final_newline: bool = True) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + ("\n" if final_newline else ""), encoding="utf-8")


def _main_agent(root: Path) -> None:
    sessions = root / "agents" / "main" / "sessions"
    main_lines = [js_line(header(SID_MAIN, T0)), *(js_line(e) for e in MAIN_ENTRIES), "", MAIN_CUT_LINE]
    _write_jsonl(sessions / f"{SID_MAIN}.jsonl", main_lines, final_newline=False)
    older = trajectory_event(SID_MAIN, 1, T0 + 3000, compiled_data(MAIN_COMPILED[:1], "a1b2c3d4", "hi"), run="run-0")
    newest = trajectory_event(SID_MAIN, 7, T0 + 3_602_500, compiled_data(MAIN_COMPILED, "e5f6a7b8", "Now read a.txt"))
    other = trajectory_event(SID_MAIN, 8, T0 + 3_607_000, {"usage": {}}, kind="model.completed")
    _write_jsonl(sessions / f"{SID_MAIN}.trajectory.jsonl", [js_line(older), js_line(newest), js_line(other)])
    cron = [
        js_line(header(SID_CRON, T0, version=None)),
        js_line({"type": "message", "timestamp": iso(T0 + 10), "message": user("nightly run", T0 + 10)}),
        js_line({"type": "message", "timestamp": iso(T0 + 20), "message": {"role": "hookMessage", "content": "x",
                                                                          "timestamp": T0 + 20}}),
    ]
    _write_jsonl(sessions / f"{SID_CRON}.jsonl", cron)
    _write_jsonl(sessions / f"{SID_THREAD}-topic-42.jsonl", [js_line(header(SID_THREAD, T0))])
    _write_jsonl(sessions / f"{SID_MAIN_OLD}.jsonl.reset.2026-04-11T08-00-00.000Z", [js_line(header(SID_MAIN_OLD, T0))])
    _write_jsonl(sessions / f"{SID_CRON}.jsonl.deleted.2026-04-11T08-00-00.000Z", ["{}"])
    index = {
        "agent:main:main": {
            "sessionId": SID_MAIN,
            "updatedAt": T0 + 3_606_000,
            "sessionFile": str(sessions / f"{SID_MAIN}.jsonl"),
            "compactionCount": 1,
            "model": "claude-sonnet-4-5",
            "label": "Main",
        },
        "agent:main:cron:nightly": {
            "sessionId": SID_CRON,
            "updatedAt": T0 + 20,
            "sessionFile": f"/nonexistent/old-home/.openclaw/agents/main/sessions/{SID_CRON}.jsonl",
        },
        "agent:main:telegram:dm:99": {"sessionId": SID_GONE, "updatedAt": T0 + 5},
        "broken-entry": {"updatedAt": 1},
    }
    (sessions / "sessions.json").write_text(json.dumps(index, indent=2), encoding="utf-8")
    # the thread transcript is newer than everything by its mtime: give it a fixed one
    import os

    os.utime(sessions / f"{SID_THREAD}-topic-42.jsonl", (T0 / 1000 - 60, T0 / 1000 - 60))


def _ops_agent(root: Path) -> None:
    sessions = root / "agents" / "ops" / "sessions"
    lines = [
        js_line(header(SID_OPS, T0)),
        js_line(entry("message", "0p000001", None, T0 + 100, message=user("status?", T0 + 100))),
    ]
    _write_jsonl(sessions / f"{SID_OPS}.jsonl", lines)
    (sessions / "sessions.json").write_text(
        json.dumps({"agent:ops:main": {"sessionId": SID_OPS, "updatedAt": T0 + 100}}), encoding="utf-8"
    )


def _coder_agent(root: Path) -> None:
    path = root / "agents" / "coder" / "agent" / "openclaw-agent.sqlite"
    conn = write_agent_db(path, AGENT_SCHEMA_24, wal=True)
    conn.execute("INSERT INTO schema_meta VALUES ('primary', 'agent', 'coder', 24, '2026.9.9')")
    node = {"sessionId": SID_CODER, "updatedAt": T0 + 8000, "sessionFile": f"sqlite:coder:{SID_CODER}:{path}"}
    conn.execute(
        "INSERT INTO session_nodes VALUES (?, ?, ?, ?, ?, ?, ?)",
        ("agent:coder:main", SID_CODER, js_line(node), T0 + 8000, "active", "Coder", None),
    )
    review = {"sessionId": SID_REVIEW, "updatedAt": T0 + 500}
    conn.execute(
        "INSERT INTO session_nodes VALUES (?, ?, ?, ?, ?, ?, ?)",
        ("agent:coder:review", SID_REVIEW, js_line(review), T0 + 500, "archived", None, T0 + 600),
    )
    insert_events(conn, SID_CODER, CODER_EVENTS, zstd_seqs=(CODER_COMPRESSED_SEQ,))
    review_events = [header(SID_REVIEW, T0), entry("message", "r1", None, T0 + 1, message=user("r", 1))]
    insert_events(conn, SID_REVIEW, review_events)
    conn.execute("INSERT INTO session_transcript_index_state VALUES (?, ?, ?, 0)", (SID_CODER, len(CODER_EVENTS), "e7"))
    for position, seq in enumerate([2, 3, 6, 8, 9, 11]):
        conn.execute(
            "INSERT INTO session_transcript_active_events VALUES (?, ?, ?, ?, 1)", (SID_CODER, position, seq, position)
        )
    compiled = trajectory_event(SID_CODER, 3, T0 + 7800, compiled_data(CODER_COMPILED, "e6", "Thanks"))
    compiled["sessionKey"] = "agent:coder:main"
    older = trajectory_event(SID_CODER, 1, T0 + 1500, compiled_data([], "e1", "Start"), run="run-0")
    conn.execute("INSERT INTO trajectory_runtime_events VALUES (?, 1, 'run-0', ?, 0)", (SID_CODER, js_line(older)))
    conn.execute("INSERT INTO trajectory_runtime_events VALUES (?, 2, 'run-1', ?, 0)", (SID_CODER, "{not json"))
    conn.execute("INSERT INTO trajectory_runtime_events VALUES (?, 3, 'run-1', ?, 0)", (SID_CODER, js_line(compiled)))
    dropped = trajectory_event(
        SID_REVIEW,
        1,
        T0 + 550,
        {"truncated": True, "originalBytes": 300000, "limitBytes": 262144, "reason": "trajectory-event-size-limit"},
    )
    conn.execute("INSERT INTO trajectory_runtime_events VALUES (?, 1, 'run-r', ?, 0)", (SID_REVIEW, js_line(dropped)))
    conn.commit()
    conn.close()  # the last connection checkpoints: a clean WAL database without -wal and -shm


def _legacy_agent(root: Path) -> None:
    path = root / "agents" / "legacy" / "agent" / "openclaw-agent.sqlite"
    conn = write_agent_db(path, AGENT_SCHEMA_9, wal=False)
    conn.execute(
        "INSERT INTO session_entries VALUES (?, ?, ?, ?, 'active')",
        ("agent:legacy:main", SID_LEGACY, js_line({"sessionId": SID_LEGACY, "label": "Old"}), T0 + 50),
    )
    events = [
        header(SID_LEGACY, T0),
        entry("message", "g1", None, T0 + 10, message=user("old one", T0 + 10)),
        entry("message", "g2", "g1", T0 + 20, message=assistant("old answer", T0 + 20)),
    ]
    insert_events(conn, SID_LEGACY, events)
    conn.commit()
    conn.close()


# The cache trace of the coder session's newest run: its compiled messages differ from the trajectory's.
CACHE_LIMITED = CODER_COMPILED[:4]
CACHE_COMPILED = [*CODER_COMPILED[:4], assistant("A different reply.", T0 + 7000)]


def cache_line(stage: str, session_id: str, run: str, seq: int, ts_ms: int, **fields: Any) -> str:
    line = {
        "ts": iso(ts_ms),
        "seq": seq,
        "stage": stage,
        "runId": run,
        "sessionId": session_id,
        "sessionKey": "agent:coder:main",
        "provider": "anthropic",
        "modelId": "claude-sonnet-4-5",
        "modelApi": "anthropic-messages",
        "workspaceDir": "/home/u/work",
        **fields,
    }
    return js_line(line)


def _cache_trace(root: Path) -> None:
    lines = [
        cache_line("session:limited", SID_CODER, "run-a", 1, T0 + 1400, messages=[], messageCount=0),
        cache_line("prompt:before", SID_CODER, "run-a", 2, T0 + 1401, messages=[], prompt="Start", messageCount=0),
        cache_line("session:limited", SID_CODER, "run-b", 1, T0 + 7700, messages=CACHE_LIMITED, messageCount=4),
        cache_line("session:limited", SID_OPS, "run-z", 1, T0 + 7750, messages=[], messageCount=0),
        cache_line(
            "prompt:before", SID_CODER, "run-b", 2, T0 + 7800, messages=CACHE_COMPILED, prompt="Thanks", messageCount=5
        ),
        cache_line("stream:context", SID_CODER, "run-b", 3, T0 + 7801, messageCount=5),
        '{"ts":"2026-04-12T09:00:09',
    ]
    _write_jsonl(root / "logs" / "cache-trace.jsonl", lines)


def _lcm(root: Path) -> Path:
    path = root / "lcm.db"
    w = LcmDbWriter(path, session_id=SID_MAIN)
    w.conn.execute(
        "UPDATE conversations SET session_key = 'agent:main:main', created_at = '2026-04-12 09:00:00'"
        " WHERE conversation_id = ?",
        (w.conversation_id,),
    )
    w.user("List files")
    w.assistant("ok")
    old = w.conversation(SID_MAIN_OLD, active=0, created_at="2026-04-10 09:00:00")
    w.conn.execute(
        "UPDATE conversations SET session_key = 'agent:main:main', archived_at = '2026-04-11 08:00:00' "
        "WHERE conversation_id = ?",
        (old,),
    )
    coder = w.conversation(SID_CODER, created_at="2026-04-12 09:00:00")
    w.conn.execute("UPDATE conversations SET session_key = 'agent:coder:main' WHERE conversation_id = ?", (coder,))
    w.message("user", "Start", conversation_id=coder)
    cron = w.conversation("some-other-id", created_at="2026-04-12 09:00:00")
    w.conn.execute(
        "UPDATE conversations SET session_key = 'agent:main:cron:nightly' WHERE conversation_id = ?", (cron,)
    )
    orphan = w.conversation(SID_ORPHAN, created_at="2026-04-12 09:00:00")
    w.conn.execute("UPDATE conversations SET session_key = 'agent:gone:main' WHERE conversation_id = ?", (orphan,))
    w.conversation(SID_LEGACY, created_at="2026-04-12 09:00:00")
    w.close()
    return path


def tree(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` (relative path → bytes), for before/after comparisons."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}
