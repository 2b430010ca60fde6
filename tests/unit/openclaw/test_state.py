"""Listing agents and sessions of both eras, mapped to LCM conversations; nothing is ever written."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

from ctxview.openclaw.agents import TranscriptRef, list_agents, scan_state
from ctxview.openclaw.live_window import build_live_window
from ctxview.openclaw.paths import resolve_state_dir
from ctxview.openclaw.records import newest_turn
from ctxview.openclaw.transcript import read_transcript
from tests.openclaw_fixtures import (
    SID_CODER,
    SID_CRON,
    SID_GONE,
    SID_LEGACY,
    SID_MAIN,
    SID_OPS,
    SID_REVIEW,
    SID_THREAD,
    T0,
    tree,
)

NO_HOME = Path("/nonexistent-home")


def scan(root: Path, **kw):
    return scan_state(resolve_state_dir({}, NO_HOME, explicit=root), {}, NO_HOME, **kw)


def test_agents_main_first_with_their_eras(state_tree):
    agents, notes = list_agents(state_tree.root)
    assert [(a.agent_id, a.era, a.schema_version) for a in agents] == [
        ("main", "jsonl", None),
        ("broken", "jsonl", None),
        ("coder", "sqlite", 24),
        ("legacy", "sqlite", 9),
        ("ops", "jsonl", None),
        ("remote", "jsonl", None),
    ]
    assert notes == ["agents/Not An Agent: not an agent id (lowercase a-z, 0-9, _ and -); skipped"]
    broken = agents[1]
    assert broken.notes == (
        f"{broken.database}: not a SQLite database; its sessions are read from JSONL files if there are any",
    )
    remote = agents[5]
    missing = state_tree.root / "elsewhere" / "remote.sqlite"
    assert remote.notes == (
        f"agent database from state/openclaw.sqlite agent_databases: {missing}",
        f"the agent database {missing} does not exist; its sessions cannot be read",
    )


def test_sessions_newest_first_with_transcripts_and_conversations(state_tree):
    result = scan(state_tree.root)
    root = state_tree.root
    db = "agents/coder/agent/openclaw-agent.sqlite (SQLite)"
    legacy_db = "agents/legacy/agent/openclaw-agent.sqlite (SQLite)"
    rows = [
        (
            r.session.agent_id,
            r.session.session_key,
            r.session.session_id,
            r.session.updated_at_ms,
            r.session.transcript.describe(root) if r.session.transcript else None,
            r.conversation.conversation_id if r.conversation else None,
        )
        for r in result.rows
    ]
    assert rows == [
        ("main", "agent:main:main", SID_MAIN, T0 + 3_606_000, f"agents/main/sessions/{SID_MAIN}.jsonl", 1),
        ("coder", "agent:coder:main", SID_CODER, T0 + 8000, db, 3),
        ("coder", "agent:coder:review", SID_REVIEW, T0 + 500, db, None),
        ("ops", "agent:ops:main", SID_OPS, T0 + 100, f"agents/ops/sessions/{SID_OPS}.jsonl", None),
        ("legacy", "agent:legacy:main", SID_LEGACY, T0 + 50, legacy_db, 6),
        ("main", "agent:main:cron:nightly", SID_CRON, T0 + 20, f"agents/main/sessions/{SID_CRON}.jsonl", 4),
        ("main", "agent:main:telegram:dm:99", SID_GONE, T0 + 5, None, None),
        ("main", None, SID_THREAD, T0 - 60_000, f"agents/main/sessions/{SID_THREAD}-topic-42.jsonl", None),
    ]
    by_id = {r.session.session_id: r for r in result.rows}
    assert by_id[SID_MAIN].why == "the active conversation with session key 'agent:main:main'"
    assert by_id[SID_LEGACY].why == f"the active conversation with session id '{SID_LEGACY}'"
    assert by_id[SID_OPS].why == f"no LCM conversation: no active conversation has session id '{SID_OPS}'"
    assert by_id[SID_MAIN].conversation.message_count == 2
    assert by_id[SID_MAIN].session.label == "Main" and by_id[SID_MAIN].session.compaction_count == 1
    assert by_id[SID_CODER].session.status == "active" and by_id[SID_CODER].session.label == "Coder"
    assert by_id[SID_REVIEW].session.archived is True
    assert by_id[SID_GONE].session.notes == (f"no transcript: agents/main/sessions/{SID_GONE}.jsonl does not exist",)
    assert by_id[SID_CRON].session.notes == (
        f"sessionFile /nonexistent/old-home/.openclaw/agents/main/sessions/{SID_CRON}.jsonl does not exist; "
        "using the default name",
    )
    assert by_id[SID_THREAD].session.notes == (
        "no sessions.json entry names this transcript; last activity is the file's time",
    )
    # conversation 2 is the archived generation of agent:main:main, 5 belongs to an agent that is gone
    assert [c.conversation_id for c in result.conversations_without_transcript] == [2, 5]
    assert result.engine_line == "0.15"
    assert result.lcm.how == "<state>/lcm.db" and result.lcm.exists
    assert f"{root / 'agents/main/sessions/sessions.json'}: 1 entry without a sessionId skipped" in result.notes


def test_nothing_is_created_or_changed_under_the_state_dir(fresh_state):
    root = fresh_state.root
    before = tree(root)
    result = scan(root)
    for row in result.rows:
        if row.session.transcript is not None:
            transcript = read_transcript(row.session.transcript)
            build_live_window(transcript)
            newest_turn(row.session.transcript, root, {}, NO_HOME)
    after = tree(root)
    assert sorted(after) == sorted(before)
    assert after == before
    assert not [name for name in after if name.endswith(("-wal", "-shm", "-journal"))]


def test_a_wal_without_its_shm_is_read_without_creating_the_shm(fresh_state, tmp_path):
    db = fresh_state.root / "agents" / "coder" / "agent" / "openclaw-agent.sqlite"
    work = tmp_path / "w.sqlite"
    shutil.copyfile(db, work)
    writer = sqlite3.connect(work)
    writer.execute("PRAGMA wal_autocheckpoint=0")
    writer.execute("UPDATE session_nodes SET label = 'renamed' WHERE session_key = 'agent:coder:main'")
    writer.commit()
    shutil.copyfile(f"{work}-wal", f"{db}-wal")  # a writer died: its -wal is left, its -shm is gone
    writer.close()
    before = tree(fresh_state.root)
    result = scan(fresh_state.root)
    assert tree(fresh_state.root) == before
    coder = next(r.session for r in result.rows if r.session.session_id == SID_CODER)
    # read through a private copy of the database and its -wal, elsewhere: the commit is seen, no note
    assert coder.label == "renamed"
    assert not [note for note in result.notes if "openclaw-agent.sqlite:" in note and "coder" in note]


def test_a_locked_database_is_a_note(fresh_state):
    db = fresh_state.root / "agents" / "legacy" / "agent" / "openclaw-agent.sqlite"
    writer = sqlite3.connect(db, isolation_level=None)
    writer.execute("BEGIN EXCLUSIVE")
    try:
        result = scan(fresh_state.root, timeout=0.05)
        transcript = read_transcript(TranscriptRef("sqlite", "legacy", SID_LEGACY, db), timeout=0.05)
    finally:
        writer.execute("ROLLBACK")
        writer.close()
    legacy = next(a for a in result.agents if a.agent_id == "legacy")
    locked = f"{db}: the database is locked by a writer (database is locked); try again"
    assert legacy.notes == (f"{locked}; its sessions are read from JSONL files if there are any",)
    assert [r.session.session_id for r in result.rows if r.session.agent_id == "legacy"] == []
    assert transcript.entries == [] and transcript.notes == [f"{locked}; the transcript is not read"]


def test_a_missing_state_dir_is_a_note(tmp_path):
    result = scan(tmp_path / "nope")
    assert result.rows == [] and result.agents == []
    assert result.notes[-1] == f"{tmp_path / 'nope'}: the state directory (--state-dir) does not exist"


def test_without_an_lcm_database_sessions_are_listed_without_conversations(fresh_state):
    fresh_state.lcm.unlink()
    result = scan(fresh_state.root)
    assert len(result.rows) == 8
    assert {r.why for r in result.rows} == {"no LCM database"}
    assert result.notes[-1] == (
        f"no LCM database at {fresh_state.lcm} (<state>/lcm.db); sessions are listed without conversations"
    )
