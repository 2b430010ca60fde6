"""The user's OpenClaw setup as the front ends need it: found once, then one session at a time.

``discover`` finds the state directory and the LCM database the way OpenClaw and
lossless-claw do (or takes them as given) and lists every session.
``state_dir_for_database`` answers the reverse question for ``ctxview DB``: which
state directory's sessions this database belongs to.  ``open_session`` reads one
session's transcript and builds the host's live window; ``HostContext`` carries
both to the inspector and to ``verify``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ctxview.openclaw.agent_db import DEFAULT_TIMEOUT
from ctxview.openclaw.agents import StateScan, scan_state
from ctxview.openclaw.config import OpenClawConfig, load_config
from ctxview.openclaw.live_window import LiveWindow, build_live_window
from ctxview.openclaw.mapping import SessionRow
from ctxview.openclaw.paths import LcmDatabase, StateDir, resolve_lcm_database, resolve_state_dir
from ctxview.openclaw.transcript import Transcript, read_transcript


@dataclass(slots=True)
class Discovery:
    """The state directory, its config, the LCM database and every session found there."""

    state: StateDir
    config: OpenClawConfig
    lcm: LcmDatabase
    scan: StateScan
    env: Mapping[str, str]
    os_home: Path

    @property
    def found(self) -> bool:
        """Something to show: an agent with a session, or an LCM database."""
        return bool(self.scan.rows) or self.lcm.exists

    def where_looked(self) -> str:
        """One line: where ctxview looked, for when nothing was found."""
        return (
            f"no OpenClaw sessions found: looked for the state directory at {self.state.path} ({self.state.how}) "
            f"and for the LCM database at {self.lcm.path} ({self.lcm.how})"
        )

    def row_for_conversation(self, conversation_id: int) -> SessionRow | None:
        """The newest session that maps to the LCM conversation (None: no listed session does)."""
        for row in self.scan.rows:
            if row.conversation is not None and row.conversation.conversation_id == conversation_id:
                return row
        return None

    def row_for_session(self, wanted: str) -> tuple[SessionRow | None, str | None]:
        """The session with this id, key, or unique id prefix; else None and why."""
        rows = self.scan.rows
        exact = [r for r in rows if wanted in (r.session.session_id, r.session.session_key)]
        if exact:
            return exact[0], None
        prefixed = [r for r in rows if r.session.session_id.startswith(wanted)]
        if len(prefixed) == 1:
            return prefixed[0], None
        if prefixed:
            ids = ", ".join(r.session.session_id for r in prefixed[:5])
            return None, f"session {wanted!r} is ambiguous: {ids}"
        known = ", ".join(r.session.session_key or r.session.session_id for r in rows[:8])
        more = f" … ({len(rows)} in all)" if len(rows) > 8 else ""
        return None, f"no session {wanted!r} in {self.state.path}" + (f"; sessions: {known}{more}" if rows else "")


def discover(
    env: Mapping[str, str],
    os_home: Path,
    *,
    state_dir: str | os.PathLike[str] | None = None,
    lcm_path: Path | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> Discovery:
    """Resolve the state directory (``state_dir`` overrides the search) and the LCM database, then list sessions.

    ``lcm_path``: a database the user named; it replaces lossless-claw's own search.
    """
    state = resolve_state_dir(env, os_home, explicit=state_dir)
    config = load_config(env, os_home, state)
    if lcm_path is not None:
        path = Path(os.path.abspath(lcm_path))
        lcm = LcmDatabase(path, "given on the command line", path.is_file())
    else:
        lcm = resolve_lcm_database(env, os_home, state, config.data)
    scan = scan_state(state, env, os_home, lcm=lcm, config=config, timeout=timeout)
    return Discovery(state, config, lcm, scan, env, os_home)


def state_dir_for_database(db: Path, env: Mapping[str, str], os_home: Path) -> StateDir | None:
    """The state directory whose sessions ``db`` holds: its own directory when that has ``agents/``, else the
    state directory OpenClaw resolves when lossless-claw would open this very file there; None otherwise."""
    path = Path(os.path.abspath(db))
    if (path.parent / "agents").is_dir():
        return StateDir(path.parent, "the database's directory", True, True)
    state = resolve_state_dir(env, os_home)
    if not state.exists:
        return None
    lcm = resolve_lcm_database(env, os_home, state, load_config(env, os_home, state).data)
    try:
        same = lcm.exists and os.path.samefile(lcm.path, path)
    except OSError:
        same = False
    return state if same else None


@dataclass(slots=True)
class HostContext:
    """One session of the user's agent: where it is, its LCM conversation and the host's live window."""

    discovery: Discovery
    row: SessionRow
    transcript: Transcript | None
    window: LiveWindow | None
    notes: list[str] = field(default_factory=list)

    @property
    def conversation_id(self) -> int | None:
        return self.row.conversation.conversation_id if self.row.conversation is not None else None

    def provenance(self) -> str:
        """Where the live window came from, one line (``live window: 214 entries from agents/main …``)."""
        if self.window is not None:
            return self.window.provenance(self.discovery.state.path)
        session = self.row.session
        return f"live window: none (agents/{session.agent_id} session {session.session_id[:4]}… has no transcript)"


def open_session(discovery: Discovery, row: SessionRow, *, timeout: float = DEFAULT_TIMEOUT) -> HostContext:
    """Read the session's transcript and build the live window the host passes to ``assemble``."""
    ref = row.session.transcript
    if ref is None:
        notes = [n for n in row.session.notes if n.startswith("no transcript")] or ["the session has no transcript"]
        return HostContext(discovery, row, None, None, notes)
    transcript = read_transcript(ref, timeout=timeout)
    window = build_live_window(transcript)
    return HostContext(discovery, row, transcript, window, list(window.notes))


def host_for_database(
    db: Path,
    conversation_id: int,
    env: Mapping[str, str],
    os_home: Path,
    *,
    state_dir: str | os.PathLike[str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> tuple[HostContext | None, str]:
    """The session of ``db``'s conversation and its live window, or None and why there is none."""
    if state_dir is None:
        state = state_dir_for_database(db, env, os_home)
        if state is None:
            return None, f"no OpenClaw state directory holds {db} (give --state-dir)"
        state_dir = state.path
    discovery = discover(env, os_home, state_dir=state_dir, lcm_path=db, timeout=timeout)
    if not discovery.state.exists:
        return None, f"the state directory {discovery.state.path} does not exist"
    row = discovery.row_for_conversation(conversation_id)
    if row is None:
        return None, f"no session in {discovery.state.path} maps to conversation {conversation_id}"
    return open_session(discovery, row, timeout=timeout), ""
