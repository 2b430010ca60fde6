"""The list of agents and sessions as ``ctxview conversations --state-dir`` prints it (text and JSON).

Agents in the order they are listed (``main`` first), each with its sessions
newest first; every session names the LCM conversation it maps to, or says
plainly why there is none; then the LCM conversations no session's transcript
belongs to, then the notes.  Times are local (``TZ`` applies).
"""

from __future__ import annotations

import time
from typing import Any

from ctxview.model import ConversationInfo
from ctxview.openclaw.agents import Agent, OpenClawSession, StateScan
from ctxview.openclaw.mapping import SessionRow


def local_time(ms: int | None) -> str:
    """``2026-04-12 10:00`` in the local zone, or ``—``."""
    if ms is None:
        return "—"
    try:
        return time.strftime("%Y-%m-%d %H:%M", time.localtime(ms / 1000))
    except (OverflowError, OSError, ValueError):
        return "—"


def short_id(session_id: str) -> str:
    return session_id[:8] + "…" if len(session_id) > 9 else session_id


def session_name(session: OpenClawSession) -> str:
    """The session key (and label), or what the transcript file says when no index names it."""
    name = session.session_key or "(no index entry)"
    if session.label:
        name += f" · {session.label}"
    if session.archived:
        name += " (archived)"
    return name


def agent_line(agent: Agent, count: int) -> str:
    era = "JSONL transcripts" if agent.era == "jsonl" else f"SQLite transcripts, schema {agent.schema_version}"
    sessions = f"{count} session{'s' if count != 1 else ''}"
    return f"agent {agent.agent_id} · {era} · {sessions}"


def row_status(row: SessionRow) -> str:
    """What is missing, in plain words ("" when the session has both a conversation and a transcript)."""
    parts: list[str] = []
    if row.conversation is None:
        parts.append(row.why if row.why.startswith("no LCM") else f"no LCM conversation ({row.why})")
    if row.session.transcript is None:
        missing = next((n for n in row.session.notes if n.startswith("no transcript")), "no transcript")
        parts.append(missing)
    return "; ".join(parts)


def rows_by_agent(scan: StateScan) -> list[tuple[Agent, list[SessionRow]]]:
    grouped: dict[str, list[SessionRow]] = {a.agent_id: [] for a in scan.agents}
    for row in scan.rows:
        grouped.setdefault(row.session.agent_id, []).append(row)
    return [(agent, grouped.get(agent.agent_id, [])) for agent in scan.agents]


HEADER = f"  {'last activity':<16}  {'session':<40} {'conv':>5} {'messages':>9} {'summaries':>9} {'items':>6}  id"


def scan_table(scan: StateScan) -> str:
    """The readable list."""
    lcm = scan.lcm
    rules = f"; lossless-claw {scan.engine_line} rules" if scan.engine_line else ""
    lines = [
        f"state directory: {scan.state.path} ({scan.state.how})",
        f"LCM database: {lcm.path} ({lcm.how}){'' if lcm.exists else ', not found'}{rules}",
    ]
    for agent, rows in rows_by_agent(scan):
        lines.append("")
        lines.append(agent_line(agent, len(rows)))
        if not rows:
            lines.append("  (no sessions)")
            continue
        lines.append(HEADER)
        for row in rows:
            lines.append(_row_line(row))
    if scan.conversations_without_transcript:
        lines.append("")
        lines.append("LCM conversations without a transcript (no listed session has one for them)")
        for conv in scan.conversations_without_transcript:
            lines.append(_conversation_line(conv))
    if scan.notes:
        lines.append("")
        lines.append("notes:")
        lines.extend(f"  - {note}" for note in scan.notes)
    return "\n".join(lines)


def _printable(text: str) -> str:
    return "".join(ch if ch.isprintable() else " " for ch in text)


def _row_line(row: SessionRow) -> str:
    session = row.session
    name = _printable(session_name(session))
    if len(name) > 40:
        name = name[:39] + "…"
    conv = row.conversation
    if conv is not None:
        counts = (
            f"{conv.conversation_id:>5} {conv.message_count:>9,} {conv.summary_count:>9,} "
            f"{conv.context_item_count:>6,}"
        )
    else:
        counts = f"{'—':>5} {'':>9} {'':>9} {'':>6}"
    line = f"  {local_time(session.updated_at_ms):<16}  {name:<40} {counts}  {short_id(session.session_id)}"
    status = row_status(row)
    return f"{line}  — {_printable(status)}" if status else line


def _conversation_line(conv: ConversationInfo) -> str:
    state = "active" if conv.active else ("archived" if conv.archived else "inactive")
    name = _printable(conv.session_key or conv.title or "")
    sid = short_id(conv.session_id) if conv.session_id else "—"
    return (
        f"  conversation {conv.conversation_id} ({state}) {name}  session {sid}  "
        f"{conv.message_count:,} messages, {conv.summary_count:,} summaries, {conv.context_item_count:,} items"
    )


def conversation_json(conv: ConversationInfo | None) -> dict[str, Any] | None:
    if conv is None:
        return None
    return {
        "conversationId": conv.conversation_id,
        "sessionId": conv.session_id,
        "sessionKey": conv.session_key,
        "active": conv.active,
        "archived": conv.archived,
        "createdAt": conv.created_at,
        "messageCount": conv.message_count,
        "summaryCount": conv.summary_count,
        "contextItemCount": conv.context_item_count,
        "tokenTotal": conv.token_total,
    }


def scan_json(scan: StateScan) -> dict[str, Any]:
    """Every fact of the list, for scripts."""
    base = scan.state.path
    agents = []
    for agent, rows in rows_by_agent(scan):
        agents.append(
            {
                "agentId": agent.agent_id,
                "era": agent.era,
                "database": str(agent.database) if agent.database else None,
                "schemaVersion": agent.schema_version,
                "notes": list(agent.notes),
                "sessions": [
                    {
                        "sessionKey": r.session.session_key,
                        "sessionId": r.session.session_id,
                        "label": r.session.label,
                        "updatedAt": r.session.updated_at_ms,
                        "archived": r.session.archived,
                        "status": r.session.status,
                        "transcript": (
                            {"kind": r.session.transcript.kind, "path": r.session.transcript.describe(base)}
                            if r.session.transcript
                            else None
                        ),
                        "conversation": conversation_json(r.conversation),
                        "why": r.why,
                        "missing": row_status(r) or None,
                        "notes": list(r.session.notes),
                    }
                    for r in rows
                ],
            }
        )
    return {
        "stateDir": {"path": str(scan.state.path), "how": scan.state.how, "exists": scan.state.exists},
        "lcmDatabase": {"path": str(scan.lcm.path), "how": scan.lcm.how, "exists": scan.lcm.exists},
        "engineLine": scan.engine_line,
        "agents": agents,
        "conversationsWithoutTranscript": [conversation_json(c) for c in scan.conversations_without_transcript],
        "notes": list(scan.notes),
    }
