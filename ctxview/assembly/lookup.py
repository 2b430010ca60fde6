"""Which conversation the engine assembles for a session (spec §9.2 step 2, 1.0 delta D4).

The engine never receives a conversation id: the host passes its session id
and session key, and the engine looks the conversation up.  When nothing
matches (or, on the 1.0 line, an isolated cron run is stale) it returns the
live transcript instead of an assembled context.  The lookup runs over the
``conversations`` rows in memory, ordered as SQLite orders them, so that the
0.15 and 1.0 rules can be compared without another query.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ctxview.assembly.rules import EngineRules
from ctxview.jsjson import js_trim
from ctxview.model import ConversationRef


@dataclass(frozen=True, slots=True)
class LookupResult:
    conversation_id: int | None  # the conversation the engine assembles; None → safe fallback
    why: str  # one sentence for notes and the trace


def is_isolated_cron_key(session_key: str | None) -> bool:
    """``agent:<id>:cron:<name>…``: at least four colon-separated parts, the first ``agent``, the third ``cron``."""
    if not isinstance(session_key, str):
        return False
    key = js_trim(session_key)
    parts = key.split(":")
    return bool(key) and len(parts) >= 4 and parts[0] == "agent" and parts[2] == "cron"


def _sqlite_order(value: Any) -> tuple[int, Any]:
    """SQLite's ORDER BY over mixed storage classes: NULL < numbers < text < blobs."""
    if value is None:
        return (0, 0)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return (1, value)
    if isinstance(value, str):
        return (2, value.encode("utf-8"))  # BINARY collation compares the bytes
    if isinstance(value, bytes):
        return (3, value)
    return (2, str(value).encode("utf-8"))


def _newest(rows: Sequence[ConversationRef], *, active_first: bool = False) -> ConversationRef | None:
    """``ORDER BY [active DESC,] created_at DESC LIMIT 1``; ties keep the scan (rowid) order."""
    best: ConversationRef | None = None
    best_key: tuple[Any, ...] | None = None
    for row in rows:
        key = (_sqlite_order(row.active), _sqlite_order(row.created_at)) if active_first else (
            _sqlite_order(row.created_at),
        )
        if best_key is None or key > best_key:
            best, best_key = row, key
    return best


def _is_active(row: ConversationRef) -> bool:
    return row.active == 1


def find_conversation(
    rows: Sequence[ConversationRef], session_id: str | None, session_key: str | None, rules: EngineRules
) -> LookupResult:
    """The engine's conversation lookup for (session id, session key) under ``rules``."""
    if rules.isolated_cron_lookup and is_isolated_cron_key(session_key):
        key = js_trim(session_key or "")
        row = _newest([r for r in rows if r.session_id == session_id], active_first=True)
        if row is None:
            return LookupResult(None, f"no conversation has session id {session_id!r}")
        stored_key = row.session_key
        if not _is_active(row) or not isinstance(stored_key, str) or js_trim(stored_key) != key:
            return LookupResult(
                None,
                f"conversation {row.conversation_id} is a stale isolated cron run for {key!r}: the engine "
                "keeps the active cron conversation and sends the live transcript",
            )
        return LookupResult(row.conversation_id, f"isolated cron run {session_id!r}")
    key = js_trim(session_key) if isinstance(session_key, str) else ""
    if key:
        row = _newest([r for r in rows if r.session_key == key and _is_active(r)])
        if row is not None:
            return LookupResult(row.conversation_id, f"the active conversation with session key {key!r}")
    sid = js_trim(session_id) if isinstance(session_id, str) else ""
    if not sid:
        return LookupResult(None, "no session id or key to look the conversation up by")
    row = _newest([r for r in rows if r.session_id == sid and _is_active(r)])
    if row is None:
        return LookupResult(None, f"no active conversation has session id {sid!r}")
    return LookupResult(row.conversation_id, f"the active conversation with session id {sid!r}")
