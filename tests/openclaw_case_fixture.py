"""A state directory whose newest recorded turn a real engine produced (parity case 024, lossless-claw 0.15.3).

The LCM database is the case's ``session.db``; the main agent's JSONL transcript
holds the case's ``liveMessages`` as message entries (the host's live window);
the record of the newest turn holds the case's prompt and the messages the
engine returned (``expected.json``), in the key order the engine writes them
(spec lcm-assembly.md §2.6 and §7.4; the stored file has its keys sorted).  The
case's settings (fresh tail 8, prompt-aware eviction, UTC) are in
``openclaw.json``; its budget, 1,171 tokens, is what the search must find.

Variants: ``match`` (a trajectory sidecar), ``differs`` (the recorded reply text
changed), ``stale`` (a compaction after the recorded turn), ``truncated`` (the
event's data dropped for size), ``cache-trace`` (no trajectory; a cache trace and a
config whose model entry gives the context window, so the budget is exact),
``sqlite`` (the same turn with the transcript and the trajectory in an agent
database).
"""

from __future__ import annotations

import json
import lzma
from collections import OrderedDict
from pathlib import Path
from typing import Any

from tests.openclaw_fixtures import (
    AGENT_SCHEMA_24,
    T0,
    cache_line,
    compiled_data,
    entry,
    header,
    insert_events,
    iso,
    js_line,
    trajectory_event,
    write_agent_db,
)

DATA = Path(__file__).parent / "unit" / "data" / "openclaw"
CASE = json.loads((DATA / "case024.json").read_text(encoding="utf-8"), object_pairs_hook=OrderedDict)
CASE_SESSION_ID: str = CASE["params"]["sessionId"]
CASE_BUDGET: int = CASE["params"]["tokenBudget"]
CASE_PROMPT: str = CASE["params"]["prompt"]
CASE_LIVE: list[dict[str, Any]] = CASE["params"]["liveMessages"]
TURN_MS = T0 + 14 * 3_600_000 + 2 * 60_000  # 2026-04-12T23:02:00Z: "turn at 23:02" in UTC

_MESSAGE_ORDER = ("role", "content", "provider", "api", "model", "responseModel", "reasoning_content", "__openclaw",
                  "toolCallId", "toolName", "isError", "usage")
_BLOCK_ORDER = ("type", "id", "name", "arguments", "text", "thinking")
_USAGE_ORDER = ("input", "output", "cacheRead", "cacheWrite", "totalTokens", "cost", "total")


def _ordered(value: dict[str, Any], order: tuple[str, ...]) -> dict[str, Any]:
    rank = {key: i for i, key in enumerate(order)}
    return {key: value[key] for key in sorted(value, key=lambda k: (rank.get(k, len(order)), k))}


def engine_order(message: dict[str, Any]) -> dict[str, Any]:
    """An expected.json message (keys sorted) in the key order the engine writes."""
    out = dict(message)
    if isinstance(out.get("content"), list):
        out["content"] = [_ordered(b, _BLOCK_ORDER) if isinstance(b, dict) else b for b in out["content"]]
    if isinstance(out.get("usage"), dict):
        usage = _ordered(out["usage"], _USAGE_ORDER)
        if isinstance(usage.get("cost"), dict):
            usage["cost"] = _ordered(usage["cost"], _USAGE_ORDER)
        out["usage"] = usage
    return _ordered(out, _MESSAGE_ORDER)


CASE_SENT: list[dict[str, Any]] = [engine_order(m) for m in CASE["messages"]]
LEAF_ID = f"{len(CASE_LIVE):08x}"


def config_text(*, context_window: int | None = None) -> str:
    plugin = {"freshTailCount": 8, "promptAwareEviction": True, "timezone": "UTC"}
    config: dict[str, Any] = {"plugins": {"entries": {"lossless-claw": {"enabled": True, "config": plugin}}}}
    if context_window is not None:
        config["models"] = {"providers": {"anthropic": {"models": [
            {"id": "claude-sonnet-4-5", "contextWindow": context_window}]}}}
    return json.dumps(config, indent=2)


def transcript_entries(*, compaction_after: bool = False) -> list[dict[str, Any]]:
    entries = []
    parent = None
    for number, message in enumerate(CASE_LIVE, start=1):
        entry_id = f"{number:08x}"
        entries.append(entry("message", entry_id, parent, T0 + number * 1000, message=message))
        parent = entry_id
    if compaction_after:
        entries.append(entry("message", "prompt01", parent, TURN_MS + 1000,
                             message={"role": "user", "content": CASE_PROMPT, "timestamp": TURN_MS + 1000}))
        entries.append(entry("compaction", "compact1", "prompt01", TURN_MS + 60_000, summary="Earlier work.",
                             firstKeptEntryId="prompt01", tokensBefore=9000))
    return entries


def turn_event(sent: Any) -> dict[str, Any]:
    data = compiled_data(sent, LEAF_ID, CASE_PROMPT)
    del data["tools"]  # the case ran without a tool list (availableTools absent)
    return trajectory_event(CASE_SESSION_ID, 5, TURN_MS, data)


def build_case_state(root: Path, variant: str = "match") -> Path:
    """Write the state directory for ``variant``; returns ``root``."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "lcm.db").write_bytes(lzma.decompress((DATA / "case024.session.db.xz").read_bytes()))
    exact = variant == "cache-trace"
    (root / "openclaw.json").write_text(config_text(context_window=CASE_BUDGET if exact else None), encoding="utf-8")
    sent: Any = [dict(m) for m in CASE_SENT]
    if variant == "differs":
        sent[-1] = {**sent[-1], "content": sent[-1]["content"].replace("84 ms", "85 ms")}
    if variant == "truncated":
        dropped = {"truncated": True, "originalBytes": 400_000, "limitBytes": 262_144,
                   "reason": "trajectory-event-size-limit"}
        event = trajectory_event(CASE_SESSION_ID, 5, TURN_MS, dropped)
    else:
        event = turn_event(sent)
    entries = transcript_entries(compaction_after=variant == "stale")
    if variant == "sqlite":
        path = root / "agents" / "main" / "agent" / "openclaw-agent.sqlite"
        conn = write_agent_db(path, AGENT_SCHEMA_24, wal=False)
        node = {"sessionId": CASE_SESSION_ID, "updatedAt": TURN_MS}
        conn.execute("INSERT INTO session_nodes VALUES (?, ?, ?, ?, 'active', NULL, NULL)",
                     ("agent:main:main", CASE_SESSION_ID, js_line(node), TURN_MS))
        insert_events(conn, CASE_SESSION_ID, [header(CASE_SESSION_ID, T0, version=4), *entries])
        conn.execute("INSERT INTO trajectory_runtime_events VALUES (?, 5, 'run-1', ?, 0)",
                     (CASE_SESSION_ID, js_line(event)))
        conn.commit()
        conn.close()
        return root
    sessions = root / "agents" / "main" / "sessions"
    sessions.mkdir(parents=True)
    lines = [js_line(header(CASE_SESSION_ID, T0)), *(js_line(e) for e in entries)]
    transcript = sessions / f"{CASE_SESSION_ID}.jsonl"
    transcript.write_text("\n".join(lines) + "\n", encoding="utf-8")
    index = {"agent:main:main": {"sessionId": CASE_SESSION_ID, "updatedAt": TURN_MS, "sessionFile": str(transcript)}}
    (sessions / "sessions.json").write_text(json.dumps(index), encoding="utf-8")
    if variant == "cache-trace":
        logs = root / "logs"
        logs.mkdir()
        limited = cache_line("session:limited", CASE_SESSION_ID, "run-c", 1, TURN_MS - 1, messages=CASE_LIVE,
                             messageCount=len(CASE_LIVE))
        before = cache_line("prompt:before", CASE_SESSION_ID, "run-c", 2, TURN_MS, messages=sent,
                            prompt=CASE_PROMPT, messageCount=len(sent))
        (logs / "cache-trace.jsonl").write_text(limited + "\n" + before + "\n", encoding="utf-8")
    else:
        (sessions / f"{CASE_SESSION_ID}.trajectory.jsonl").write_text(js_line(event) + "\n", encoding="utf-8")
    return root


__all__ = ["CASE_BUDGET", "CASE_SENT", "CASE_SESSION_ID", "TURN_MS", "build_case_state", "iso"]
