"""The engine's rarer paths end to end (session database → SessionAssembler → trace), one behaviour each.

Each test writes a small LCM database, runs the whole pipeline as the CLI and the TUI do, and checks
what the model would receive, the engine's outcome and what the trace says about it.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from ctxview.assembly.tokens import serialized_message_tokens
from ctxview.model import Params
from ctxview.pipeline import SessionAssembler
from ctxview.samples.schema import LCM_FTS_TABLES
from tests.lcmdb import LcmDbWriter, load_session

BASE = Params(token_budget=100_000, fresh_tail_count=8)


def run(path: Path, **changes: Any) -> Any:
    return SessionAssembler(load_session(path)).run(replace(BASE, **changes))


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def test_a_session_id_that_matches_no_conversation_sends_the_live_window(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    with LcmDbWriter(path, session_id="agent-main") as db:
        db.user("stored question")
        db.assistant("stored answer")
    live = [user("live only"), {"role": "assistant", "content": [{"type": "text", "text": "prefill"}]}]
    missed = run(path, session_id="some-other-session", live_messages=tuple(live))
    assert missed.summary.engine_outcome == "live-fallback:safe-fallback"
    assert missed.messages == [live[0]]  # trailing assistant prefill stripped, nothing clamped
    assert missed.summary.final_tokens == 0
    assert missed.summary.fallback_why == "no active conversation has session id 'some-other-session'"
    found = run(path, session_id=" agent-main ", live_messages=tuple(live))
    assert found.summary.engine_outcome == "assembled"
    assert [m["content"] for m in found.messages][:1] == ["stored question"]


def test_the_prompt_recall_cue_quotes_an_evicted_upper_snake_key_first(tmp_path: Path) -> None:
    path = tmp_path / "r.db"
    with LcmDbWriter(path) as db:
        db.user("Set RETRY_LIMIT to 7 for the payment worker. That fixed the flaky deploy.")
        db.assistant("Noted " + "and more " * 200)
        db.user("what next?")
        db.assistant("done")
        db.conn.execute(LCM_FTS_TABLES[0])
        db.conn.execute("INSERT INTO messages_fts(rowid, content) SELECT message_id, content FROM messages")
    trace = run(path, token_budget=300, fresh_tail_count=2, prompt="what was RETRY_LIMIT again?")
    first = trace.messages[0]
    assert first["role"] == "user"
    assert first["content"].startswith("<lossless_claw_prompt_recall>\n")
    assert (
        '- user matched RETRY_LIMIT: "Set RETRY_LIMIT to 7 for the payment worker."' in first["content"]
    )
    cue = trace.by_key()["r:cue"]
    assert (cue.kind, cue.outcome, cue.output_index, cue.item_id) == ("recall", "recall-cue", 0, "R")
    assert cue.reason == "recall cue: RETRY_LIMIT was evicted (ordinal 0); put first"
    assert trace.summary.recall_tokens == cue.tokens  # its own segment of the budget bar
    record = trace.stages["promptRecall"]
    assert (record["cueBuilt"], record["cueIncluded"], record["cueTokenCount"]) == (True, True, cue.tokens)
    # where the serialized clamp has to cut, the cue goes first (it is enrichment, not context)
    tight = run(path, token_budget=120, fresh_tail_count=2, prompt="what was RETRY_LIMIT again?")
    assert tight.messages[0]["content"] == "what next?"
    assert tight.by_key()["r:cue"].outcome == "recall-dropped"
    assert tight.stages["promptRecall"]["cueDroppedForClamp"] is True
    # a key the kept context already mentions needs no cue
    covered = run(path, token_budget=100_000, fresh_tail_count=2, prompt="what was RETRY_LIMIT again?")
    assert "r:cue" not in covered.by_key() and covered.stages["promptRecall"]["cueBuilt"] is False


def test_pending_compaction_near_the_budget_degrades_to_the_live_window(tmp_path: Path) -> None:
    path = tmp_path / "d.db"
    with LcmDbWriter(path) as db:
        db.message("user", "first", [], token_count=60)
        db.message("assistant", "reply", [], token_count=30)
        db.conn.execute("INSERT INTO conversation_compaction_maintenance (conversation_id, pending) VALUES (1, 1)")
    live = [{"role": "system", "content": "rules"}, user("old " * 100), user("second")]
    near = run(path, token_budget=100, live_messages=tuple(live))  # 90 > floor(0.75 × 100), not over 100
    assert near.summary.engine_outcome == "live-fallback:degraded:near-budget"
    assert near.messages == [live[0], live[2]]  # the system prefix always, then the newest that fit
    assert near.summary.final_tokens == sum(serialized_message_tokens(m) for m in near.messages)
    over = run(path, token_budget=80, live_messages=tuple(live))  # 90 > 80: the engine would compact first
    assert over.summary.engine_outcome == "live-fallback:degraded:emergency-debt-exhausted"
    assert over.notes and "compaction" in over.notes[0]
    roomy = run(path, token_budget=1000, live_messages=tuple(live))
    assert roomy.summary.engine_outcome != "live-fallback:degraded:near-budget"


def test_a_fork_bounded_conversation_appends_its_live_suffix_on_0_15_only(tmp_path: Path) -> None:
    path = tmp_path / "f.db"
    with LcmDbWriter(path) as db:
        db.user("first")
        db.assistant("reply")
        db.conn.execute(
            "INSERT INTO conversation_bootstrap_state (conversation_id, session_file_path, last_seen_size,"
            " last_seen_mtime_ms, last_processed_offset, fork_bounded, fork_source_message_count)"
            " VALUES (1, '/x', 0, 0, 0, 1, 2)"
        )
    stored = load_session(path)
    live = (user("first"), {"role": "assistant", "content": [{"type": "text", "text": "reply"}]}, user("fork only"))
    trace = SessionAssembler(stored).run(replace(BASE, live_messages=live))
    assert trace.summary.engine_outcome == "assembled"
    assert trace.messages[-1] == user("fork only")
    suffix = trace.by_key()["l:2"]
    assert (suffix.outcome, suffix.output_index) == ("appended", len(trace.messages) - 1)
    assert suffix.reason.startswith("fork live suffix")
    assert trace.stages["volatileAppend"]["protectedAssembledIndexes"][-1] == len(trace.messages) - 1
    one_zero = SessionAssembler(stored).run(replace(BASE, live_messages=live, engine_line="1.0"))
    # the 1.0 line has no fork path: a conversation trailing its live window falls back to the window
    assert one_zero.summary.engine_outcome == "live-fallback:coverage-trails-live"


def test_a_large_live_tool_result_becomes_a_file_reference_with_stubs_on(tmp_path: Path) -> None:
    path = tmp_path / "i.db"
    with LcmDbWriter(path) as db:
        db.user("read the log")
    call = {"type": "toolCall", "id": "call_1", "name": "read", "arguments": {"path": "big.log"}}
    result = {
        "role": "toolResult",
        "toolCallId": "call_1",
        "toolName": "read",
        "content": [{"type": "text", "text": "line " + "x" * 60 + "\n" * 1 + ("line " + "x" * 60 + "\n") * 1700}],
    }
    live = (user("read the log"), {"role": "assistant", "content": [call]}, result)
    plain = run(path, live_messages=live)
    assert plain.messages[-1] is not None and "LCM Tool Output" not in str(plain.messages)
    stubbed = run(path, live_messages=live, stub_large_tool_payloads=True)
    assert stubbed.summary.engine_outcome == "live-fallback:coverage-trails-live"
    block = stubbed.messages[-1]["content"][0]
    assert block["text"].startswith("[LCM Tool Output: file_") and block["toolOutputExternalized"] is True
    assert "replaced by a file reference" in stubbed.by_key()["l:2"].reason


def test_a_summary_date_javascript_cannot_read_makes_the_engine_fall_back(tmp_path: Path) -> None:
    path = tmp_path / "t.db"
    with LcmDbWriter(path) as db:
        db.summary("sum_bad", "- deployed", earliest_at="not a date", latest_at="2025-04-27T10:05:00.000Z")
        db.user("what changed?")
    live = (user("what changed?"),)
    trace = run(path, live_messages=live)
    assert trace.summary.engine_outcome == "live-fallback:assemble-error:RangeError: Invalid time value"
    assert trace.messages == [user("what changed?")]
    assert any("sum_bad" in note and "not a date" in note for note in trace.notes)


def test_a_params_file_budget_below_one_is_floored_to_zero(tmp_path: Path) -> None:
    # the engine floors a positive budget: 0.5 becomes 0 (not its 128,000 default, not 1)
    path = tmp_path / "b.db"
    with LcmDbWriter(path) as db:
        db.user("a")  # one token
    session = load_session(path)
    zero = SessionAssembler(session).run(replace(BASE, token_budget=0, fresh_tail_count=0))
    one = SessionAssembler(session).run(replace(BASE, token_budget=1, fresh_tail_count=0))
    assert (zero.kept_ordinals, zero.messages) == ([], [])
    assert (one.kept_ordinals, one.messages) == ([0], [user("a")])
