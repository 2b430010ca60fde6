"""Live inputs written by hand, with the markers the host really uses (spec §9.5).

A subagent announcement, an inter-session message and a retry prompt carry the
markers that make the engine treat them as volatile; a plain user turn carries
none, so the engine appends it only when it recognizes it as the decorated face
of the current turn, exactly as it would a real one.  ``kind_of`` reads the kind
back from a message, so a hand-made input can be edited as it was written.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ctxview.assembly.volatile import INTERNAL_BEGIN, INTERNAL_END, RETRY_MARKER
from ctxview.errors import InputError

# the session key a hand-made announcement names as its source (the host writes the child's key)
SUBAGENT_SOURCE = "agent:main:subagent:ctxview-what-if"
PEER_SOURCE = "agent:main:ctxview-what-if"
_INTER_SESSION = "[Inter-session message]"
_TASK_COMPLETION = "[Internal task completion event]"
_CHILD_RESULT = "Child result: "


@dataclass(frozen=True, slots=True)
class LiveKind:
    name: str  # what --add-live and the form call it
    title: str  # what a person reads


LIVE_KINDS: tuple[LiveKind, ...] = (
    LiveKind("user", "plain user turn"),
    LiveKind("subagent", "subagent completion announcement"),
    LiveKind("inter-session", "inter-session message"),
    LiveKind("retry", "retry prompt"),
)
KIND_NAMES: tuple[str, ...] = tuple(kind.name for kind in LIVE_KINDS)
_ALIASES = {"subagent-announcement": "subagent", "announcement": "subagent", "inter_session": "inter-session",
            "intersession": "inter-session", "retry-prompt": "retry"}


def live_message(kind: str, text: str) -> dict[str, Any]:
    """The live message the host would hold for ``kind`` with ``text`` as its body."""
    if kind == "user":
        content = text
    elif kind == "subagent":
        content = (
            f"{_INTER_SESSION} sourceSession={SUBAGENT_SOURCE} sourceTool=subagent_announce\n"
            f"{INTERNAL_BEGIN}\n{_TASK_COMPLETION}\n{_CHILD_RESULT}{text}\n{INTERNAL_END}"
        )
    elif kind == "inter-session":
        content = (
            f"{_INTER_SESSION} sourceSession={PEER_SOURCE} sourceTool=sessions_send\n"
            f"{INTERNAL_BEGIN}\n{text}\n{INTERNAL_END}"
        )
    elif kind == "retry":
        content = f"{RETRY_MARKER}\n{text}"
    else:
        raise InputError(f"unknown live-input kind {kind!r}: choose {', '.join(KIND_NAMES)}")
    return {"role": "user", "content": content}


def parse_add_live(spec: str) -> dict[str, Any]:
    """``KIND:TEXT`` (``--add-live``) as a live message; a bad kind or an empty text is an input error."""
    kind, colon, text = spec.partition(":")
    kind = _ALIASES.get(kind.strip().lower(), kind.strip().lower())
    if not colon or kind not in KIND_NAMES:
        raise InputError(f"--add-live {spec!r}: write KIND:TEXT with KIND one of {', '.join(KIND_NAMES)}")
    if not text.strip():
        raise InputError(f"--add-live {spec!r}: the text is empty")
    return live_message(kind, text)


def kind_of(message: Any) -> tuple[str, str] | None:
    """``(kind, text)`` of a message ``live_message`` could have written, else None (edit it as raw JSON)."""
    if not isinstance(message, dict) or message.get("role") != "user" or not isinstance(message.get("content"), str):
        return None
    content: str = message["content"]
    for kind in KIND_NAMES[1:]:
        body = _body(kind, content)
        if body is not None and live_message(kind, body) == {"role": "user", "content": content}:
            return kind, body
    if set(message) == {"role", "content"}:
        return "user", content
    return None


def _body(kind: str, content: str) -> str | None:
    if kind == "retry":
        prefix = RETRY_MARKER + "\n"
        return content[len(prefix):] if content.startswith(prefix) else None
    head, _, rest = content.partition(f"\n{INTERNAL_BEGIN}\n")
    if not rest.endswith(f"\n{INTERNAL_END}") or not head.startswith(_INTER_SESSION):
        return None
    inner = rest[: -len(INTERNAL_END) - 1]
    if kind == "subagent":
        prefix = f"{_TASK_COMPLETION}\n{_CHILD_RESULT}"
        return inner[len(prefix):] if inner.startswith(prefix) else None
    return inner


def describe_live(message: Any) -> str:
    """A one-line name for a live input: its kind's title, or its role."""
    known = kind_of(message)
    if known is not None:
        return next(k.title for k in LIVE_KINDS if k.name == known[0])
    role = message.get("role") if isinstance(message, dict) else None
    return f"{role} message" if isinstance(role, str) else "live entry"


def with_added(live: Sequence[Any] | None, added: Sequence[Any]) -> tuple[Any, ...] | None:
    """The live window with hand-made inputs appended after the host's (None stays None when nothing is added)."""
    if not added:
        return tuple(live) if live is not None else None
    return (*(live or ()), *added)
