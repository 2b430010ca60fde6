"""Records of what a turn sent, and comparing them with a re-assembly (exact where the record is, lossy where not)."""

from __future__ import annotations

import dataclasses
from datetime import UTC
from pathlib import Path

from ctxview.openclaw.agents import TranscriptRef
from ctxview.openclaw.config import parse_json5
from ctxview.openclaw.live_window import build_live_window
from ctxview.openclaw.records import describe_losses, load_trajectory_sqlite, newest_turn, record_staleness
from ctxview.openclaw.transcript import read_transcript
from ctxview.openclaw.verify import compare_messages, derive_token_budget, find_matching_budgets
from tests.openclaw_fixtures import (
    CACHE_COMPILED,
    CACHE_LIMITED,
    CODER_COMPILED,
    CONFIG_JSON5,
    MAIN_COMPILED,
    SID_CODER,
    SID_MAIN,
    SID_REVIEW,
    T0,
    assistant,
    user,
)

NO_HOME = Path("/nonexistent-home")


def coder_ref(root: Path) -> TranscriptRef:
    return TranscriptRef("sqlite", "coder", SID_CODER, root / "agents" / "coder" / "agent" / "openclaw-agent.sqlite")


def main_ref(root: Path) -> TranscriptRef:
    return TranscriptRef("jsonl", "main", SID_MAIN, root / "agents" / "main" / "sessions" / f"{SID_MAIN}.jsonl")


def test_newest_sqlite_turn_trajectory_and_cache_trace(state_tree):
    records = newest_turn(coder_ref(state_tree.root), state_tree.root, {}, NO_HOME)
    trajectory = records.trajectory
    assert trajectory.source.endswith("openclaw-agent.sqlite trajectory_runtime_events seq 3")
    assert (trajectory.prompt, trajectory.transcript_leaf_id, trajectory.run_id) == ("Thanks", "e6", "run-1")
    assert (trajectory.messages, trajectory.message_count, trajectory.losses) == (CODER_COMPILED, 5, [])
    assert trajectory.time == "2026-04-12T09:00:07.800Z" and trajectory.time_ms == T0 + 7800
    cache = records.cache_trace
    assert cache.source == f"{state_tree.root / 'logs' / 'cache-trace.jsonl'} lines 3 and 5"
    assert (cache.run_id, cache.prompt, cache.live_messages, cache.messages) == (
        "run-b",
        "Thanks",
        CACHE_LIMITED,
        CACHE_COMPILED,
    )
    assert records.best is trajectory  # same time: the trajectory names the leaf
    # the trajectory matches the live window at its leaf, re-assembled here as the identity
    window = build_live_window(read_transcript(coder_ref(state_tree.root)), trajectory.transcript_leaf_id)
    verdict = compare_messages(trajectory.messages, window.messages, time_ms=trajectory.time_ms, zone=UTC)
    assert verdict.summary() == "matches what your agent sent (turn at 09:00, 5 messages)"
    # the cache trace's compiled messages differ in the last message's text
    mismatch = compare_messages(cache.messages, window.messages, time_ms=cache.time_ms, zone=UTC)
    assert mismatch.summary() == (
        "differs from what your agent sent (turn at 09:00, 5 messages; ctxview has 5) at message 4: "
        "content[0].text differs at character 0: 'A different …' in the record, 'Here is the …' in ctxview's"
    )
    assert (mismatch.difference.recorded, mismatch.difference.assembled) == (CACHE_COMPILED[4], CODER_COMPILED[4])


def test_newest_jsonl_turn_from_the_sidecar_and_its_staleness(state_tree):
    records = newest_turn(main_ref(state_tree.root), state_tree.root, {}, NO_HOME)
    assert records.cache_trace is None
    trajectory = records.trajectory
    assert trajectory.source.endswith(f"{SID_MAIN}.trajectory.jsonl line 2")
    assert (trajectory.messages, trajectory.transcript_leaf_id) == (MAIN_COMPILED, "e5f6a7b8")
    transcript = read_transcript(main_ref(state_tree.root))
    assert record_staleness(trajectory, transcript) == []
    older = dataclasses.replace(trajectory, transcript_leaf_id="a1b2c3d4", time_ms=T0 + 3000)
    assert record_staleness(older, transcript) == [
        "the record is older than the last compaction (entry d4e5f6a7 at 2026-04-12T10:00:00.000Z): "
        "the history it was assembled from has been rewritten"
    ]
    gone = dataclasses.replace(trajectory, transcript_leaf_id="99999999")
    assert record_staleness(gone, transcript) == [
        "the record's transcript leaf 99999999 is not in the transcript (rewritten or archived)"
    ]


def test_an_event_dropped_for_size_is_reported_not_compared(state_tree):
    db = coder_ref(state_tree.root).path
    record, notes = load_trajectory_sqlite(db, SID_REVIEW)
    assert record is not None and notes == []
    assert (record.messages, record.verifiable) == (None, False)
    assert record.losses == ["the whole event was too large (300,000 bytes > 262,144 bytes) and its data was dropped"]


def test_lossy_records_match_where_they_are_lossy_and_say_so():
    image = {"type": "image", "data": "QUJD" * 100, "mimeType": "image/png"}
    actual = [
        {"role": "user", "content": [{"type": "text", "text": "key sk-abcdefghijklmnopqrstuvwxyz please"}, image],
         "timestamp": 1},
        {"role": "toolResult", "toolCallId": "c", "toolName": "exec", "content": "x" * 40000, "isError": False,
         "apiKey": "k", "timestamp": 2},
    ]
    recorded = [
        {"role": "user", "content": [{"type": "text", "text": "key sk-abc…wxyz please"},
                                     {"type": "image", "data": "<redacted>", "mimeType": "image/png", "bytes": 300}],
         "timestamp": 1},
        {"role": "toolResult", "toolCallId": "c", "toolName": "exec",
         "content": {"truncated": True, "reason": "trajectory-field-size-limit", "originalChars": 40000},
         "isError": False, "timestamp": 2},
    ]
    assert describe_losses(recorded) == [
        "1 value cut (a string longer than 32,768 characters)",
        "1 value redacted (image data)",
    ]
    verdict = compare_messages(recorded, actual)
    assert verdict.matches
    assert verdict.lossy == (
        "content[0].text had a secret masked by the record",
        "content[1].data was redacted by the record",
        "content was cut by the record (trajectory-field-size-limit)",
        "apiKey was deleted by the record's secret filter",
    )


def test_a_cut_message_list_compares_its_prefix_and_the_count():
    messages = [user(f"m{i}", i) for i in range(70)]
    marker = {"truncated": True, "reason": "trajectory-array-size-limit", "originalLength": 70, "limitItems": 64}
    recorded = [*messages[:64], marker]
    ok = compare_messages(recorded, messages)
    assert ok.matches and ok.recorded_count == 70
    assert ok.lossy == ("only the first 64 of 70 messages were recorded and compared",)
    short = compare_messages(recorded, messages[:68])
    fewer = "ctxview has 2 fewer messages"
    assert (short.matches, short.difference.index, short.difference.reason) == (False, 68, fewer)
    longer = compare_messages(messages[:3], messages[:4])
    assert (longer.difference.index, longer.difference.reason, longer.difference.recorded) == (
        3,
        "ctxview has 1 more message",
        None,
    )


def test_role_type_and_key_order_differences():
    a = assistant("x", 1)
    reordered = {k: a[k] for k in reversed(list(a))}
    assert compare_messages([a], [reordered]).difference.reason.startswith("the message has its keys in another order")
    assert compare_messages([a], [user("x", 1)]).difference.reason == (
        "role 'assistant' in the record, 'user' in ctxview's"
    )
    number = {**a, "timestamp": "1"}
    reason = compare_messages([a], [number]).difference.reason
    assert reason == "timestamp is a number in the record, a string in ctxview's"


def test_token_budget_from_the_config():
    config = parse_json5(CONFIG_JSON5)
    old = derive_token_budget(config, provider="anthropic", model_id="claude-sonnet-4-5", generation="2026.4")
    assert (old.budget, old.exact) == (150000, True)
    assert old.steps == (
        "context window 200,000 from models.providers.anthropic.models[claude-sonnet-4-5]",
        "capped at 150,000 by agents.defaults.contextTokens",
        "tokenBudget = the context window = 150,000",
    )
    new = derive_token_budget(
        config, provider="anthropic", model_id="claude-sonnet-4-5", generation="newer", system_prompt="ab" * 10,
        prompt="cd",
    )
    assert (new.context_window, new.reserve, new.prompt_estimate, new.budget, new.exact) == (
        150000, 20000, 6, 129994, False
    )
    unknown = derive_token_budget({}, provider="openai", model_id="gpt-x", generation="2026.4")
    assert (unknown.budget, unknown.exact) == (200000, False)


def test_budget_search_finds_the_matching_run_with_few_assemblies():
    items = [user(f"m{i}", i) for i in range(40)]

    def assemble_at(budget: int) -> list:
        kept = min(40, budget // 100)
        if 2550 <= budget < 2600:  # not monotone: a large item displaces two small ones here
            kept -= 1
        return items[40 - kept :] if kept else []

    calls: list[int] = []

    def counted(budget: int) -> list:
        calls.append(budget)
        return assemble_at(budget)

    search = find_matching_budgets(counted, items[15:], low=1, high=1_000_000)
    assert search.ranges == [(2500, 2549)]
    assert search.calls == len(set(calls)) and search.calls <= 80
    monotone = find_matching_budgets(lambda b: items[40 - min(40, b // 100) :] if b >= 100 else [], items[15:])
    assert monotone.ranges == [(2500, 2599)]
    nowhere = find_matching_budgets(assemble_at, [user("other", 0)], low=1, high=10_000)
    assert nowhere.ranges == [] and nowhere.closest is not None
