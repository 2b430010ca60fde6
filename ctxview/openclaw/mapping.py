"""Which LCM conversation each OpenClaw session maps to (spec §7), and which conversations have no transcript.

The lookup is the engine's own (``find_conversation``): the newest active row by
session key, else the active row by session id — under the engine line the LCM
database's tables point to (1.0 looks isolated cron runs up by session id).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ctxview.assembly.lookup import find_conversation
from ctxview.assembly.rules import detect_line
from ctxview.errors import CtxviewError
from ctxview.model import ConversationInfo

if TYPE_CHECKING:
    from ctxview.openclaw.agents import OpenClawSession


@dataclass(frozen=True, slots=True)
class SessionRow:
    """A session and the LCM conversation the engine assembles for it."""

    session: OpenClawSession
    conversation: ConversationInfo | None
    why: str  # the lookup's sentence, e.g. "the active conversation with session key 'agent:main:main'"


@dataclass(slots=True)
class Mapping:
    rows: list[SessionRow]
    without_transcript: list[ConversationInfo]  # conversations no session maps to or shares a session id with
    engine_line: str | None
    notes: list[str] = field(default_factory=list)


def map_sessions(sessions: Sequence[OpenClawSession], lcm_path: Path | None) -> Mapping:
    """Each session with its conversation (or why it has none), in the order given."""
    from ctxview.store import LcmStore

    if lcm_path is None:
        return Mapping([SessionRow(s, None, "no LCM database") for s in sessions], [], None)
    try:
        with LcmStore(lcm_path) as store:
            refs = store.conversation_refs()
            infos = {c.conversation_id: c for c in store.list_conversations()}
            detected = detect_line(store.tables())
            notes = [f"{lcm_path}: {w}" for w in store.warnings]
    except CtxviewError as exc:
        why = f"the LCM database cannot be read ({exc})"
        return Mapping([SessionRow(s, None, why) for s in sessions], [], None, [str(exc)])
    rows: list[SessionRow] = []
    used: set[int] = set()
    for session in sessions:
        found = find_conversation(refs, session.session_id, session.session_key, detected.rules)
        info = infos.get(found.conversation_id) if found.conversation_id is not None else None
        if info is not None:
            used.add(info.conversation_id)
            rows.append(SessionRow(session, info, found.why))
        else:
            rows.append(SessionRow(session, None, f"no LCM conversation: {found.why}"))
    session_ids = {s.session_id for s in sessions if s.transcript is not None}
    without = [
        c for cid, c in infos.items() if cid not in used and (c.session_id is None or c.session_id not in session_ids)
    ]
    return Mapping(rows, without, detected.rules.line, notes)
