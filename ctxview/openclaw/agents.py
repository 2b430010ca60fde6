"""Agents, their sessions (JSONL and SQLite eras) and the LCM conversation each session maps to.

Listing reads only indexes (``sessions.json``, ``session_nodes``/``session_entries``,
file names), never whole transcripts, so a state directory with thousands of
sessions lists quickly.  Sessions are sorted newest first by their last
activity (``updatedAt``; a JSONL file without an index entry uses its mtime).
The LCM conversation is the one the engine itself would pick
(``ctxview.assembly.lookup.find_conversation``, under the engine line the LCM
database's tables point to).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ctxview.errors import CtxviewError
from ctxview.files import not_regular_reason, read_regular_bytes
from ctxview.jsjson import try_js_parse
from ctxview.model import ConversationInfo
from ctxview.openclaw.agent_db import AGENT_DB_RELATIVE, DEFAULT_TIMEOUT, AgentDatabase, open_agent_database
from ctxview.openclaw.config import OpenClawConfig, load_config, sessions_store_path
from ctxview.openclaw.mapping import SessionRow, map_sessions
from ctxview.openclaw.paths import LcmDatabase, StateDir, resolve_home, resolve_lcm_database

AGENT_ID = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")
DEFAULT_AGENT = "main"
SQLITE_MARKER = "sqlite:"
MAX_INDEX_BYTES = 256 * 1024 * 1024

TranscriptKind = Literal["jsonl", "sqlite"]


@dataclass(frozen=True, slots=True)
class TranscriptRef:
    """Where one session's transcript is: a ``.jsonl`` file, or rows of the agent database."""

    kind: TranscriptKind
    agent_id: str
    session_id: str
    path: Path  # the .jsonl file, or the agent database

    def describe(self, state_dir: Path | None = None) -> str:
        where = _relative(self.path, state_dir)
        return where if self.kind == "jsonl" else f"{where} (SQLite)"


@dataclass(frozen=True, slots=True)
class Agent:
    agent_id: str
    directory: Path
    era: Literal["jsonl", "sqlite"]
    database: Path | None  # the agent database when one exists
    schema_version: int | None  # its PRAGMA user_version
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class OpenClawSession:
    """One session of one agent, as the host's index (or a stray transcript file) describes it."""

    agent_id: str
    session_key: str | None  # None: a transcript no index entry names
    session_id: str
    updated_at_ms: int | None
    transcript: TranscriptRef | None  # None: no transcript was found (a note says why)
    label: str | None = None
    model: str | None = None
    status: str | None = None  # session_nodes.status / session_entries.status (SQLite era)
    archived: bool = False
    compaction_count: int | None = None
    notes: tuple[str, ...] = ()


@dataclass(slots=True)
class StateScan:
    state: StateDir
    config: OpenClawConfig
    lcm: LcmDatabase
    agents: list[Agent]
    rows: list[SessionRow]  # every session, newest first
    conversations_without_transcript: list[ConversationInfo]  # LCM conversations no listed session has
    engine_line: str | None  # "0.15" | "1.0": the rules the lookup used; None without an LCM database
    notes: list[str] = field(default_factory=list)


def _relative(path: Path, base: Path | None) -> str:
    if base is not None:
        try:
            return path.relative_to(base).as_posix()
        except ValueError:
            pass
    return str(path)


def _ms(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value == value and abs(value) < 1e16:
        return int(value)
    return None


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _model_of(entry: Mapping[str, Any]) -> str | None:
    model = entry.get("model")
    if isinstance(model, str):
        return model or None
    if isinstance(model, Mapping):
        return _str(model.get("id")) or _str(model.get("modelId")) or _str(model.get("primary"))
    return None


# --- agents ----------------------------------------------------------------------------------


def external_agent_databases(state_dir: Path, *, timeout: float = DEFAULT_TIMEOUT) -> tuple[dict[str, Path], list[str]]:
    """``state/openclaw.sqlite`` ``agent_databases``: agent id → database path, for agents kept elsewhere."""
    path = state_dir / "state" / "openclaw.sqlite"
    if not path.exists() and not path.is_symlink():
        return {}, []
    try:
        db = AgentDatabase(path, timeout=timeout, what="an OpenClaw state database")
    except CtxviewError as exc:
        return {}, [f"{exc}; external agent databases are not known"]
    with db:
        notes = list(db.notes)
        if not db.has("agent_databases", "path") or not db.has("agent_databases", "agent_id"):
            return {}, notes
        try:
            rows = db.query("SELECT agent_id, path FROM agent_databases")
        except CtxviewError as exc:
            return {}, [*notes, str(exc)]
    found: dict[str, Path] = {}
    for agent_id, raw in rows:
        if isinstance(agent_id, str) and isinstance(raw, str) and raw.strip():
            found[agent_id] = Path(raw.strip())
    return found, notes


def list_agents(state_dir: Path, *, timeout: float = DEFAULT_TIMEOUT) -> tuple[list[Agent], list[str]]:
    """Every agent under ``<state>/agents/`` (``main`` first, then by id) with its era."""
    notes: list[str] = []
    agents_dir = state_dir / "agents"
    external, external_notes = external_agent_databases(state_dir, timeout=timeout)
    notes.extend(external_notes)
    ids: list[str] = []
    if agents_dir.is_dir():
        try:
            children = sorted(agents_dir.iterdir())
        except OSError as exc:
            children = []
            notes.append(f"{agents_dir}: cannot be listed ({exc.strerror or exc})")
        for child in children:
            if not child.is_dir():
                continue
            if AGENT_ID.fullmatch(child.name) is None:
                notes.append(f"agents/{child.name}: not an agent id (lowercase a-z, 0-9, _ and -); skipped")
                continue
            ids.append(child.name)
    for agent_id in external:
        if agent_id not in ids and AGENT_ID.fullmatch(agent_id):
            ids.append(agent_id)
    if not ids:
        notes.append(f"{state_dir}: no agents (no agents/<id>/ folder)")
    ids.sort(key=lambda a: (a != DEFAULT_AGENT, a))
    return [_agent(state_dir, agent_id, external.get(agent_id), timeout) for agent_id in ids], notes


def _agent(state_dir: Path, agent_id: str, external: Path | None, timeout: float) -> Agent:
    directory = state_dir / "agents" / agent_id
    default_db = directory / AGENT_DB_RELATIVE
    notes: list[str] = []
    path = default_db
    if external is not None and not default_db.exists():
        path = external if external.is_absolute() else state_dir / external
        notes.append(f"agent database from state/openclaw.sqlite agent_databases: {path}")
    if not path.exists() and not path.is_symlink():
        if external is not None and path == (external if external.is_absolute() else state_dir / external):
            notes.append(f"the agent database {path} does not exist; its sessions cannot be read")
        return Agent(agent_id, directory, "jsonl", None, None, tuple(notes))
    db, problem = open_agent_database(path, timeout=timeout)
    if db is None:
        notes.append(f"{problem}; its sessions are read from JSONL files if there are any")
        return Agent(agent_id, directory, "jsonl", path, None, tuple(notes))
    with db:
        notes.extend(db.notes)
        era: Literal["jsonl", "sqlite"] = "sqlite" if db.sessions_in_sqlite else "jsonl"
        return Agent(agent_id, directory, era, path, db.user_version, tuple(notes))


# --- sessions, JSONL era --------------------------------------------------------------------------


def is_transcript_file_name(name: str) -> bool:
    """A live transcript: ``*.jsonl``, not a trajectory sidecar (archives end ``.jsonl.<reason>.<time>``)."""
    return name.endswith(".jsonl") and not name.endswith(".trajectory.jsonl")


def session_id_of_file(name: str) -> str:
    """``<sessionId>.jsonl`` or ``<sessionId>-topic-<topicId>.jsonl`` → the session id."""
    stem = name[: -len(".jsonl")]
    return stem.split("-topic-", 1)[0]


def read_sessions_index(path: Path) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """``sessions.json``: session key → SessionEntry; what cannot be read is a note."""
    if not path.exists() and not path.is_symlink():
        return {}, []
    problem = not_regular_reason(path)
    if problem is not None:
        return {}, [f"{path}: {problem}; not read"]
    try:
        if path.stat().st_size > MAX_INDEX_BYTES:
            return {}, [f"{path}: larger than 256 MiB; not read"]
        text = read_regular_bytes(path).decode("utf-8", "replace")
    except OSError as exc:
        return {}, [f"{path}: cannot be read ({exc.strerror or exc})"]
    ok, value = try_js_parse(text)
    if not ok or not isinstance(value, dict):
        return {}, [f"{path}: not a JSON object (damaged or half-written?); sessions are listed from file names"]
    entries: dict[str, dict[str, Any]] = {}
    bad = 0
    for key, entry in value.items():
        if isinstance(entry, dict) and isinstance(entry.get("sessionId"), str) and entry["sessionId"]:
            entries[key] = entry
        else:
            bad += 1
    notes = [f"{path}: {bad} entr{'y' if bad == 1 else 'ies'} without a sessionId skipped"] if bad else []
    return entries, notes


def jsonl_sessions(
    agent: Agent, config: OpenClawConfig, home: Path
) -> tuple[list[OpenClawSession], list[str]]:
    """Sessions of a JSONL-era agent: the ``sessions.json`` entries, then transcripts no entry names."""
    index_path, _how = sessions_store_path(config, agent.agent_id, agent.directory, home)
    sessions_dir = agent.directory / "sessions"
    entries, notes = read_sessions_index(index_path)
    files: dict[str, Path] = {}
    if sessions_dir.is_dir():
        try:
            for child in sessions_dir.iterdir():
                if is_transcript_file_name(child.name):
                    files[child.name] = child
        except OSError as exc:
            notes.append(f"{sessions_dir}: cannot be listed ({exc.strerror or exc})")
    claimed: set[str] = set()
    sessions: list[OpenClawSession] = []
    for key, entry in entries.items():
        session_id = entry["sessionId"]
        transcript, note = _jsonl_transcript(agent, sessions_dir, session_id, entry.get("sessionFile"))
        if transcript is not None:
            claimed.add(transcript.path.name)
        sessions.append(
            OpenClawSession(
                agent_id=agent.agent_id,
                session_key=key,
                session_id=session_id,
                updated_at_ms=_ms(entry.get("updatedAt")),
                transcript=transcript,
                label=_str(entry.get("label")),
                model=_model_of(entry),
                compaction_count=_ms(entry.get("compactionCount")),
                notes=(note,) if note else (),
            )
        )
    for name, path in sorted(files.items()):
        if name in claimed:
            continue
        problem = not_regular_reason(path)
        if problem is not None:
            notes.append(f"{path}: {problem}; skipped")
            continue
        session_id = session_id_of_file(name)
        try:
            mtime_ms: int | None = int(path.stat().st_mtime * 1000)
        except OSError:
            mtime_ms = None
        sessions.append(
            OpenClawSession(
                agent_id=agent.agent_id,
                session_key=None,
                session_id=session_id,
                updated_at_ms=mtime_ms,
                transcript=TranscriptRef("jsonl", agent.agent_id, session_id, path),
                notes=("no sessions.json entry names this transcript; last activity is the file's time",),
            )
        )
    return sessions, notes


def _jsonl_transcript(
    agent: Agent, sessions_dir: Path, session_id: str, session_file: Any
) -> tuple[TranscriptRef | None, str | None]:
    note: str | None = None
    if isinstance(session_file, str) and session_file.strip():
        if session_file.startswith(SQLITE_MARKER):
            note = f"sessionFile {session_file!r} names a SQLite transcript, but this agent has no SQLite sessions"
        else:
            named = Path(session_file)
            if not named.is_absolute():
                named = sessions_dir / named
            problem = not_regular_reason(named)
            if problem is None:
                return TranscriptRef("jsonl", agent.agent_id, session_id, named), None
            note = f"sessionFile {session_file} {_problem_clause(problem)}; using the default name"
    default = sessions_dir / f"{session_id}.jsonl"
    problem = not_regular_reason(default)
    if problem is None:
        return TranscriptRef("jsonl", agent.agent_id, session_id, default), note
    missing = f"no transcript: {_relative(default, agent.directory.parent.parent)} {_problem_clause(problem)}"
    return None, f"{note}; {missing}" if note else missing


def _problem_clause(problem: str) -> str:
    return "does not exist" if problem == "no such file" else problem


# --- sessions, SQLite era ------------------------------------------------------------------------


def sqlite_sessions(agent: Agent, *, timeout: float = DEFAULT_TIMEOUT) -> tuple[list[OpenClawSession], list[str]]:
    """Sessions of a SQLite-era agent: ``session_nodes`` (schema ≥ 14) or ``session_entries``, plus unindexed ones."""
    assert agent.database is not None
    db, problem = open_agent_database(agent.database, timeout=timeout)
    if db is None:
        return [], [f"{problem}; the sessions of agent {agent.agent_id} cannot be listed"]
    with db:
        try:
            return _sqlite_sessions(agent, db)
        except CtxviewError as exc:
            return [], [str(exc)]


def _sqlite_sessions(agent: Agent, db: AgentDatabase) -> tuple[list[OpenClawSession], list[str]]:
    notes = list(db.notes)
    assert agent.database is not None
    with_events = {str(sid) for (sid,) in db.query("SELECT DISTINCT session_id FROM transcript_events")}
    rows: list[tuple[Any, ...]] = []
    if db.has("session_nodes"):
        t = "session_nodes"
        rows = db.query(
            f"SELECT session_key, {db.col(t, 'current_session_id')}, {db.col(t, 'entry_json')}, "
            f"{db.col(t, 'updated_at')}, {db.col(t, 'status')}, {db.col(t, 'label')}, {db.col(t, 'archived_at')} "
            "FROM session_nodes"
        )
    elif db.has("session_entries"):
        t = "session_entries"
        rows = db.query(
            f"SELECT session_key, {db.col(t, 'session_id')}, {db.col(t, 'entry_json')}, {db.col(t, 'updated_at')}, "
            f"{db.col(t, 'status')}, NULL, NULL FROM session_entries"
        )
    else:
        notes.append(f"{db.path}: no session_nodes or session_entries table; sessions are listed without keys")
    sessions: list[OpenClawSession] = []
    seen: set[str] = set()
    for key, session_id, entry_json, updated_at, status, label, archived_at in rows:
        entry: dict[str, Any] = {}
        if isinstance(entry_json, str):
            ok, value = try_js_parse(entry_json)
            if ok and isinstance(value, dict):
                entry = value
        sid = session_id if isinstance(session_id, str) and session_id else _str(entry.get("sessionId"))
        if sid is None:
            notes.append(f"{db.path}: session {key!r} has no session id; skipped")
            continue
        seen.add(sid)
        row_notes: list[str] = []
        transcript = TranscriptRef("sqlite", agent.agent_id, sid, agent.database)
        if sid not in with_events:
            transcript = None
            row_notes.append("no transcript: the agent database holds no events for this session")
        sessions.append(
            OpenClawSession(
                agent_id=agent.agent_id,
                session_key=str(key) if key is not None else None,
                session_id=sid,
                updated_at_ms=_ms(updated_at) if _ms(updated_at) is not None else _ms(entry.get("updatedAt")),
                transcript=transcript,
                label=_str(label) or _str(entry.get("label")),
                model=_model_of(entry),
                status=_str(status),
                archived=archived_at is not None,
                compaction_count=_ms(entry.get("compactionCount")),
                notes=tuple(row_notes),
            )
        )
    for sid in sorted(with_events - seen):
        sessions.append(
            OpenClawSession(
                agent_id=agent.agent_id,
                session_key=None,
                session_id=sid,
                updated_at_ms=None,
                transcript=TranscriptRef("sqlite", agent.agent_id, sid, agent.database),
                notes=("no session index row names this transcript",),
            )
        )
    return sessions, notes


# --- the whole state directory --------------------------------------------------------------------


def list_sessions(
    agent: Agent, config: OpenClawConfig, home: Path, *, timeout: float = DEFAULT_TIMEOUT
) -> tuple[list[OpenClawSession], list[str]]:
    """One agent's sessions, newest first."""
    if agent.era == "sqlite":
        sessions, notes = sqlite_sessions(agent, timeout=timeout)
        stale = agent.directory / "sessions" / "sessions.json"
        if stale.exists():
            notes.append(f"agents/{agent.agent_id}/sessions/sessions.json is from before the SQLite move; ignored")
    else:
        sessions, notes = jsonl_sessions(agent, config, home)
    return sort_newest_first(sessions), notes


def sort_newest_first(sessions: list[OpenClawSession]) -> list[OpenClawSession]:
    """Last activity descending; sessions without one last; ties by agent, key, id."""
    return sorted(
        sessions,
        key=lambda s: (
            s.updated_at_ms is None,
            -(s.updated_at_ms or 0),
            s.agent_id,
            s.session_key or "\uffff",
            s.session_id,
        ),
    )


def scan_state(
    state: StateDir,
    env: Mapping[str, str],
    os_home: Path,
    *,
    lcm: LcmDatabase | None = None,
    config: OpenClawConfig | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> StateScan:
    """Agents, every session newest first with its LCM conversation, and conversations without a transcript."""

    home = resolve_home(env, os_home)
    config = config if config is not None else load_config(env, os_home, state)
    lcm = lcm if lcm is not None else resolve_lcm_database(env, os_home, state, config.data)
    notes: list[str] = [*config.notes, *lcm.notes]
    if not state.exists:
        notes.append(f"{state.path}: the state directory ({state.how}) does not exist")
        return StateScan(state, config, lcm, [], [], [], None, notes)
    agents, agent_notes = list_agents(state.path, timeout=timeout)
    notes.extend(agent_notes)
    sessions: list[OpenClawSession] = []
    for agent in agents:
        notes.extend(f"agent {agent.agent_id}: {n}" for n in agent.notes)
        found, found_notes = list_sessions(agent, config, home, timeout=timeout)
        sessions.extend(found)
        notes.extend(found_notes)
    mapped = map_sessions(sort_newest_first(sessions), lcm.path if lcm.exists else None)
    notes.extend(mapped.notes)
    if not lcm.exists:
        notes.append(f"no LCM database at {lcm.path} ({lcm.how}); sessions are listed without conversations")
    return StateScan(
        state, config, lcm, agents, mapped.rows, mapped.without_transcript, mapped.engine_line, notes
    )

