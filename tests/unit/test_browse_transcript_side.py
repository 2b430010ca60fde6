"""The transcript beside the assembled context: each entry reached the model as itself, as a summary, or not."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from ctxview.browse.transcript_side import SideBySide, find_transcript, side_by_side, state_dir_for
from ctxview.model import Params, Trace
from ctxview.openclaw.live_window import build_live_window
from ctxview.openclaw.transcript import Transcript, read_transcript
from ctxview.pipeline import SessionAssembler
from ctxview.store import LcmStore
from tests.browse_fixtures import SID, BrowseState, build_browse_state


@pytest.fixture(scope="module")
def state(tmp_path_factory: pytest.TempPathFactory) -> BrowseState:
    return build_browse_state(tmp_path_factory.mktemp("side") / "state")


def _transcript(state: BrowseState) -> Transcript:
    with LcmStore(state.lcm) as store:
        conversation = store.list_conversations()[0]
    found = find_transcript(state.root, state.lcm, conversation, env={}, home=state.root.parent)
    assert found.ref is not None
    return read_transcript(found.ref)


def _trace(db: Path, params: Params) -> Trace:
    with LcmStore(db) as store:
        session = store.load_session(1)
    return SessionAssembler(session).run(params)


def _compare(db: Path, transcript: Transcript, trace: Trace | None) -> SideBySide:
    window = build_live_window(transcript)
    wheres = [transcript.where(i) for i in range(len(transcript.entries))]
    with LcmStore(db) as store:
        return side_by_side(transcript.entries, wheres, store.connection, 1, trace, branch=window.branch)


OFF_BRANCH = ("line 8", "e0000007", "not-sent", "off the active branch: the host never sends it")
NOT_A_MESSAGE = ("line 6", "e0000005", "not-sent", "a model_change entry: not a message, the host sends nothing for it")
NOT_INGESTED = ("line 12", "e000000b", "not-sent", "no LCM message was ingested from this entry")
UNCOVERED = ("line 5", "e0000004", "not-sent", "message 4 is not in the context, and no summary in it covers it")


def test_found_where_the_engine_looks(state: BrowseState) -> None:
    with LcmStore(state.lcm) as store:
        conversation = store.list_conversations()[0]
    found = find_transcript(state.root, state.lcm, conversation, env={}, home=state.root.parent)
    assert found.message == f"agents/main session {SID} (agents/main/sessions/{SID}.jsonl)"
    assert state_dir_for(state.lcm) == state.root.resolve()


def test_no_transcript_is_said_plainly(state: BrowseState, tmp_path: Path) -> None:
    with LcmStore(state.lcm) as store:
        conversation = store.list_conversations()[0]
    lone = tmp_path / "lcm.db"
    shutil.copy(state.lcm, lone)
    assert state_dir_for(lone) is None
    assert find_transcript(None, lone, conversation).message == (
        "no transcript found: no OpenClaw state directory (a folder with agents/) next to lcm.db; "
        "open it with --state-dir to compare"
    )
    empty = tmp_path / "state"
    (empty / "agents" / "main" / "sessions").mkdir(parents=True)
    assert find_transcript(empty, lone, conversation, env={}, home=tmp_path).message == (
        f"no transcript found: no session in {empty} maps to conversation 1 (session id {SID})"
    )


def test_stored_context_without_a_run(state: BrowseState) -> None:
    result = _compare(state.lcm, _transcript(state), None)
    assert not result.assembled
    assert [(r.where, r.entry_id, r.reach, r.why) for r in result.rows] == [
        ("line 2", "e0000001", "summary", "covered by summary sum_cond (item 0) in the stored context"),
        ("line 3", "e0000002", "summary", "covered by summary sum_cond (item 0) in the stored context"),
        ("line 4", "e0000003", "summary", "covered by summary sum_leaf2 (item 1) in the stored context"),
        UNCOVERED,
        NOT_A_MESSAGE,
        ("line 7", "e0000006", "itself", "in the stored context (item 2)"),
        OFF_BRANCH,
        ("line 9", "e0000008", "itself", "in the stored context (item 3)"),
        ("line 10", "e0000009", "itself", "in the stored context (item 4)"),
        ("line 11", "e000000a", "itself", "in the stored context (item 5)"),
        NOT_INGESTED,
    ]
    assert result.counts == {"itself": 4, "summary": 3, "not-sent": 4}
    assert result.notes == [
        "1 message entry on the branch has no LCM message (not ingested yet, or ingested without an entry id)"
    ]


def test_a_focus_brief_carries_the_summaries_it_replaces(state: BrowseState) -> None:
    trace = _trace(state.lcm, Params())
    result = _compare(state.lcm, _transcript(state), trace)
    rows = {r.entry_id: r for r in result.rows}
    focus = trace.decisions[0]
    assert (focus.key, focus.kind, focus.output_index) == ("f:0", "focus", 0)
    for entry_id in ("e0000001", "e0000002", "e0000003"):
        assert (rows[entry_id].reach, rows[entry_id].decision_key, rows[entry_id].output_index) == ("summary", "f:0", 0)
    assert rows["e0000001"].why.startswith("covered by summary sum_cond (item 0), which the focus brief replaces: ")
    keys = trace.message_keys
    for entry_id, ordinal in (("e0000006", 2), ("e0000008", 3), ("e0000009", 4), ("e000000a", 5)):
        row = rows[entry_id]
        assert (row.reach, row.decision_key) == ("itself", f"o:{ordinal}")
        assert row.output_index is not None and keys[row.output_index] == f"o:{ordinal}"
    assert result.counts == {"itself": 4, "summary": 3, "not-sent": 4}


def _without_briefs(state: BrowseState, tmp_path: Path) -> Path:
    db = tmp_path / "lcm.db"
    shutil.copy(state.lcm, db)
    conn = sqlite3.connect(db)
    conn.execute("UPDATE focus_briefs SET status = 'inactive'")
    conn.commit()
    conn.close()
    return db


def test_kept_summaries_and_evicted_ones(state: BrowseState, tmp_path: Path) -> None:
    db = _without_briefs(state, tmp_path)
    transcript = _transcript(state)
    kept = _compare(db, transcript, _trace(db, Params()))
    assert [(r.entry_id, r.reach, r.summary_id, r.decision_key) for r in kept.rows[:3]] == [
        ("e0000001", "summary", "sum_cond", "o:0"),
        ("e0000002", "summary", "sum_cond", "o:0"),
        ("e0000003", "summary", "sum_leaf2", "o:1"),
    ]
    # a budget the fresh tail alone fills: both summaries are evicted, the messages under them reach nothing
    tight = _trace(db, Params(token_budget=10, engine=False))
    reasons = {d.key: d.reason for d in tight.decisions}
    assert [d.outcome for d in tight.decisions][:2] == ["evicted", "evicted"]
    evicted = _compare(db, transcript, tight)
    assert [(r.entry_id, r.reach, r.why) for r in evicted.rows[:3]] == [
        ("e0000001", "not-sent", f"covered by summary sum_cond (item 0), which was dropped: {reasons['o:0']}"),
        ("e0000002", "not-sent", f"covered by summary sum_cond (item 0), which was dropped: {reasons['o:0']}"),
        ("e0000003", "not-sent", f"covered by summary sum_leaf2 (item 1), which was dropped: {reasons['o:1']}"),
    ]
    assert [(r.where, r.entry_id, r.reach, r.why) for r in evicted.rows if r.message_id is None] == [
        NOT_A_MESSAGE, OFF_BRANCH, NOT_INGESTED
    ]


def test_an_lcm_database_without_entry_ids(state: BrowseState, tmp_path: Path) -> None:
    db = tmp_path / "lcm.db"
    shutil.copy(state.lcm, db)
    conn = sqlite3.connect(db)
    conn.executescript(
        "DROP INDEX messages_conv_entry_unique_idx; ALTER TABLE messages DROP COLUMN transcript_entry_id;"
    )
    conn.close()
    result = _compare(db, _transcript(state), None)
    assert result.notes[0] == (
        "this LCM database has no messages.transcript_entry_id column (older lossless-claw): "
        "no transcript entry can be matched to its message"
    )
    assert result.counts == {"itself": 0, "summary": 0, "not-sent": 11}
