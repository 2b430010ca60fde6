"""The host's side of the inspector: which OpenClaw session a conversation belongs to, its live window, the check.

No Textual here: ``HostSource`` is what the app hands the inspector (the session
picked, or nothing when a database was opened by path), ``resolve`` runs in the
inspector's load worker, and the ``*_line`` functions word what the screen shows.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ctxview.errors import CtxviewError

if TYPE_CHECKING:
    from ctxview.host_check import HostCheck
    from ctxview.model import Params, Trace
    from ctxview.openclaw.host import Discovery, HostContext
    from ctxview.openclaw.mapping import SessionRow
    from ctxview.pipeline import SessionAssembler


@dataclass(frozen=True, slots=True)
class HostSource:
    """Where to find the host's session of the conversation the inspector opens."""

    discovery: Discovery | None  # the state directory scanned at start (None: ``ctxview DB``)
    row: SessionRow | None  # the session chosen in the session picker
    state_dir: str | None  # ``--state-dir``

    def resolve(self, db_path: Path, conversation_id: int) -> tuple[HostContext | None, str]:
        """The session and its live window (worker thread), or None and why there is none."""
        from ctxview.openclaw.host import host_for_database, open_session

        try:
            if self.discovery is not None:
                row = self.row
                if row is None or row.conversation is None or row.conversation.conversation_id != conversation_id:
                    row = self.discovery.row_for_conversation(conversation_id)
                if row is None:
                    return None, f"no session in {self.discovery.state.path} maps to conversation {conversation_id}"
                return open_session(self.discovery, row), ""
            return host_for_database(db_path, conversation_id, os.environ, Path.home(), state_dir=self.state_dir)
        except CtxviewError as exc:
            return None, str(exc)


def window_line(host: HostContext | None, why: str, on: bool, key: str) -> str:
    """The line under the header: where the live window comes from, and the key that switches it."""
    if host is None:
        return f"live window: none ({why})" if why else "live window: none"
    if host.window is None:
        return host.provenance()
    if not on:
        return f"live window: off ({key} uses the {len(host.window.messages)} entries of the transcript again)"
    return f"{host.provenance()} ({key} switches it off)"


def check_line(check: HostCheck | None, running: bool) -> str:
    """The verify badge, or what it is doing."""
    if running:
        return "checking against what your agent sent…"
    if check is None:
        return ""
    return check.badge() if check.status in ("matches", "differs") else check.summary


class LockedAssembler:
    """A session assembler whose every run holds the inspector's run lock (one thread uses it at a time).

    The check runs dozens of assemblies; holding the lock for each one alone lets the user's edits
    re-assemble in between instead of waiting for the whole check.
    """

    def __init__(self, inner: SessionAssembler, lock: threading.Lock) -> None:
        self._inner = inner
        self._lock = lock

    def run(self, params: Params) -> Trace:
        with self._lock:
            return self._inner.run(params)

    def assemble(self, params: Params, token_budget: int) -> Any:
        with self._lock:
            return self._inner.assemble(params, token_budget)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)
