"""A session transcript beside the assembled context: which entries reached the model, and how.

Each transcript entry is matched to the LCM message ingested from it
(``messages.transcript_entry_id``).  Its message then reached the model *as itself*
when its context item was kept, *as a summary* when a kept summary covers it
(``summary_messages`` through ``summary_parents``), and *not at all* otherwise: evicted,
no longer in the context, never ingested, or on an abandoned branch.  Without an
assembly run the stored context stands in for the assembled one, and says so.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ctxview.browse.messages import read_stored_context
from ctxview.browse.schema import SchemaProbe, as_int, as_text, plural, verb
from ctxview.model import KEPT_OUTCOMES, ConversationInfo, Trace, column

Reach = Literal["itself", "summary", "not-sent"]
REACH_WORDS: dict[str, str] = {"itself": "as itself", "summary": "as a summary", "not-sent": "not at all"}
PREVIEW_CHARS = 200
MESSAGE_KINDS = frozenset(("message", "custom_message", "branch_summary", "compaction"))  # entries that give messages


@dataclass(frozen=True, slots=True)
class EntryRow:
    index: int  # position among the transcript's entries
    where: str  # "line 12" (JSONL) or "seq 12" (SQLite)
    entry_id: str | None
    entry_type: str
    role: str | None  # the message role of a message entry
    preview: str
    reach: Reach
    why: str  # one line: what happened to it
    message_id: int | None = None  # the LCM message ingested from it
    summary_id: str | None = None  # the summary it reached the model as
    decision_key: str | None = None  # the inspector's row for what reached the model (or was dropped)
    output_index: int | None = None  # position in the assembled messages


@dataclass(slots=True)
class SideBySide:
    rows: list[EntryRow]
    counts: dict[str, int]  # reach → entries
    assembled: bool  # True: judged against an assembly run; False: against the stored context
    notes: list[str] = field(default_factory=list)


def entry_preview(entry: Mapping[str, Any]) -> tuple[str | None, str]:
    """(role, one line of text) of a transcript entry, for a list."""
    kind = entry.get("type")
    if kind == "message":
        message = entry.get("message")
        if not isinstance(message, Mapping):
            return None, ""
        role = message.get("role") if isinstance(message.get("role"), str) else None
        return role, _content_text(message.get("content"))
    if kind in ("compaction", "branch_summary"):
        return None, _one_line(str(entry.get("summary") or ""))
    if kind == "custom_message":
        return None, _content_text(entry.get("content"))
    if kind == "model_change":
        return None, f"{entry.get('provider')}/{entry.get('modelId')}"
    if kind == "thinking_level_change":
        return None, str(entry.get("thinkingLevel"))
    if kind == "label":
        return None, f"{entry.get('targetId')}: {entry.get('label')}"
    if kind == "custom":
        return None, str(entry.get("customType") or "")
    return None, ""


def message_preview(message: Any) -> tuple[str, str]:
    """(role, one line of text) of an assembled message."""
    if not isinstance(message, Mapping):
        return "", ""
    role = message.get("role")
    return (role if isinstance(role, str) else ""), _content_text(message.get("content"))


def _one_line(text: str) -> str:
    return " ".join(text.split())[:PREVIEW_CHARS]


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return _one_line(content)
    if not isinstance(content, list):
        return ""
    pieces: list[str] = []
    for block in content:
        if not isinstance(block, Mapping):
            continue
        if isinstance(block.get("text"), str):
            pieces.append(block["text"])
        elif block.get("type") == "toolCall":
            pieces.append(f"[tool call {block.get('name')}]")
        elif block.get("type") == "thinking":
            pieces.append("[thinking]")
        elif block.get("type") == "image":
            pieces.append("[image]")
        if sum(len(p) for p in pieces) > PREVIEW_CHARS:
            break
    return _one_line(" ".join(pieces))


def side_by_side(
    entries: Sequence[Mapping[str, Any]],
    wheres: Sequence[str],
    connection: sqlite3.Connection,
    conversation_id: int,
    trace: Trace | None = None,
    *,
    branch: Sequence[str] | None = None,
    live_entry_ids: Sequence[str | None] | None = None,
) -> SideBySide:
    """Every entry with how it reached the model.

    ``branch``: the entry ids on the active branch (entries off it are abandoned);
    ``live_entry_ids``: when the trace's live inputs came from this transcript, the entry
    each live input came from (parallel to them), so that appended ones count as themselves.
    """
    probe = SchemaProbe(connection)
    notes: list[str] = []
    by_entry: dict[str, int] = {}
    if probe.has("messages", "transcript_entry_id"):
        for eid, mid in probe.query(
            "SELECT transcript_entry_id, message_id FROM messages"
            " WHERE conversation_id = ? AND transcript_entry_id IS NOT NULL",
            (conversation_id,),
        ):
            if as_int(mid) is not None:
                by_entry.setdefault(as_text(eid) or "", as_int(mid) or 0)
    else:
        notes.append(
            "this LCM database has no messages.transcript_entry_id column (older lossless-claw): "
            "no transcript entry can be matched to its message"
        )
    stored = read_stored_context(probe, conversation_id)
    notes.extend(stored.notes)

    decision_at: dict[str, int] = {}
    outcomes: list[Any] = []
    reasons: list[Any] = []
    outputs: list[Any] = []
    if trace is not None:
        keys = column(trace.decisions, "key")
        decision_at = {key: i for i, key in enumerate(keys)}
        outcomes = column(trace.decisions, "outcome")
        outputs = column(trace.decisions, "output_index")
        reasons = column(trace.decisions, "reason")
    on_branch = set(branch) if branch is not None else None
    live_at = {eid: i for i, eid in enumerate(live_entry_ids or ()) if eid is not None}

    focus_key = next(
        (key for key, kind in zip(decision_at, column(trace.decisions, "kind"), strict=True) if kind == "focus"),
        None,
    ) if trace is not None else None

    def judged(key: str) -> tuple[bool, str, int | None] | None:
        """(kept, reason, output index) of the decision with this key; None without a run or such a row."""
        at = decision_at.get(key)
        if at is None:
            return None
        return outcomes[at] in KEPT_OUTCOMES, str(reasons[at] or outcomes[at]), outputs[at]

    rows: list[EntryRow] = []
    unmatched_messages = 0
    for index, entry in enumerate(entries):
        kind = str(entry.get("type") or "?")
        eid = entry.get("id") if isinstance(entry.get("id"), str) else None
        role, preview = entry_preview(entry)
        base = {"index": index, "where": wheres[index], "entry_id": eid, "entry_type": kind, "role": role,
                "preview": preview}
        mid = by_entry.get(eid) if eid is not None else None
        if mid is None:
            if eid is not None and eid in live_at and trace is not None:
                key = f"l:{live_at[eid]}"
                verdict = judged(key)
                if verdict is not None:
                    kept, reason, out = verdict
                    rows.append(EntryRow(**base, reach="itself" if kept else "not-sent",
                                         why=f"live input L{live_at[eid]}: {reason}", decision_key=key,
                                         output_index=out if kept else None))
                    continue
            if on_branch is not None and eid is not None and eid not in on_branch:
                why = "off the active branch: the host never sends it"
            elif kind == "message":
                unmatched_messages += 1
                why = "no LCM message was ingested from this entry"
            elif kind in MESSAGE_KINDS:
                why = f"a {kind} entry: no LCM message was ingested from it"
            else:
                why = f"a {kind} entry: not a message, the host sends nothing for it"
            rows.append(EntryRow(**base, reach="not-sent", why=why))
            continue
        ordinal = stored.in_context.get(mid)
        cover = stored.covered.get(mid) if ordinal is None else None
        if ordinal is not None:
            key = f"o:{ordinal}"
            verdict = judged(key)
            if trace is None:
                rows.append(EntryRow(**base, reach="itself", why=f"in the stored context (item {ordinal})",
                                     message_id=mid, decision_key=key))
            elif verdict is None:
                rows.append(EntryRow(**base, reach="not-sent", why=f"item {ordinal} did not resolve",
                                     message_id=mid, decision_key=key))
            else:
                kept, reason, out = verdict
                if kept:
                    rows.append(EntryRow(**base, reach="itself", why=f"item {ordinal}: {reason}", message_id=mid,
                                         decision_key=key, output_index=out))
                else:
                    rows.append(EntryRow(**base, reach="not-sent", why=f"item {ordinal}: {reason}", message_id=mid,
                                         decision_key=key))
            continue
        if cover is not None:
            key = f"o:{cover.ordinal}"
            verdict = judged(key)
            where = f"summary {cover.summary_id} (item {cover.ordinal})"
            if trace is None:
                rows.append(EntryRow(**base, reach="summary", why=f"covered by {where} in the stored context",
                                     message_id=mid, summary_id=cover.summary_id, decision_key=key))
            elif verdict is not None and outcomes[decision_at[key]] == "replaced-by-focus" and focus_key is not None:
                brief = judged(focus_key)
                rows.append(EntryRow(**base, reach="summary",
                                     why=f"covered by {where}, which the focus brief replaces: {verdict[1]}",
                                     message_id=mid, summary_id=cover.summary_id, decision_key=focus_key,
                                     output_index=brief[2] if brief is not None and brief[0] else None))
            elif verdict is not None and verdict[0]:
                rows.append(EntryRow(**base, reach="summary", why=f"covered by {where}: {verdict[1]}",
                                     message_id=mid, summary_id=cover.summary_id, decision_key=key,
                                     output_index=verdict[2]))
            else:
                reason = verdict[1] if verdict is not None else "it did not resolve"
                rows.append(EntryRow(**base, reach="not-sent", why=f"covered by {where}, which was dropped: {reason}",
                                     message_id=mid, summary_id=cover.summary_id, decision_key=key))
            continue
        rows.append(EntryRow(**base, reach="not-sent",
                             why=f"message {mid} is not in the context, and no summary in it covers it",
                             message_id=mid))
    if unmatched_messages and by_entry:
        have = verb(unmatched_messages, "has", "have")
        notes.append(f"{plural(unmatched_messages, 'message entry', 'message entries')} on the branch "
                     f"{have} no LCM message (not ingested yet, or ingested without an entry id)")
    counts = {reach: 0 for reach in REACH_WORDS}
    for row in rows:
        counts[row.reach] += 1
    return SideBySide(rows, counts, trace is not None, notes)


# --- finding the transcript ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class FoundTranscript:
    ref: Any | None  # ctxview.openclaw.agents.TranscriptRef, or None
    message: str  # where it was found, or plainly why none was


def state_dir_for(db_path: Path, given: Path | None = None) -> Path | None:
    """The OpenClaw state directory to search: the given one, else the database's own folder when it has agents/."""
    if given is not None:
        return given
    parent = db_path.resolve().parent
    return parent if (parent / "agents").is_dir() else None


def find_transcript(
    state_dir: Path | None,
    lcm_path: Path,
    conversation: ConversationInfo,
    env: Mapping[str, str] | None = None,
    home: Path | None = None,
) -> FoundTranscript:
    """The transcript of the session that maps to ``conversation`` (the engine's own lookup), or why there is none."""
    if state_dir is None:
        return FoundTranscript(
            None,
            f"no transcript found: no OpenClaw state directory (a folder with agents/) next to {lcm_path.name}; "
            "open it with --state-dir to compare",
        )
    from ctxview.openclaw.agents import scan_state
    from ctxview.openclaw.paths import LcmDatabase, StateDir

    state = StateDir(state_dir, "--state-dir", state_dir.is_dir(), True)
    lcm = LcmDatabase(lcm_path, "the open database", lcm_path.is_file())
    scan = scan_state(state, dict(env if env is not None else os.environ), home or Path.home(), lcm=lcm)
    cid = conversation.conversation_id
    mapped = [row for row in scan.rows if row.conversation is not None and row.conversation.conversation_id == cid]
    with_transcript = [row for row in mapped if row.session.transcript is not None]
    if with_transcript:
        session = with_transcript[0].session
        return FoundTranscript(
            session.transcript,
            f"agents/{session.agent_id} session {session.session_id} ({session.transcript.describe(state_dir)})",
        )
    if mapped:
        session = mapped[0].session
        why = "; ".join(session.notes) or "its transcript is not on disk"
        return FoundTranscript(None, f"no transcript found: session {session.session_id} of agents/"
                                     f"{session.agent_id} maps to this conversation, but {why}")
    return FoundTranscript(
        None,
        f"no transcript found: no session in {state_dir} maps to conversation {cid}"
        + (f" (session id {conversation.session_id})" if conversation.session_id else ""),
    )
