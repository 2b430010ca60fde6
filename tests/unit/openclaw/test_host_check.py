"""Verify: the newest recorded turn re-assembled and compared (the record is a real engine's output, case 024)."""

from __future__ import annotations

from datetime import UTC
from pathlib import Path

import pytest

from ctxview.host_check import check_turn
from ctxview.openclaw.host import discover, open_session
from tests.openclaw_case_fixture import CASE_BUDGET, CASE_SESSION_ID, build_case_state
from tests.openclaw_fixtures import tree

NO_HOME = Path("/nonexistent-home")


def check(root: Path):
    found = discover({}, NO_HOME, state_dir=root)
    row = next(r for r in found.scan.rows if r.session.session_id == CASE_SESSION_ID)
    return check_turn(open_session(found, row), zone=UTC)


@pytest.mark.parametrize("variant", ["match", "sqlite"])
def test_a_trajectory_record_matches_at_a_range_holding_the_engines_budget(tmp_path, variant):
    root = build_case_state(tmp_path / "state", variant)
    before = tree(root)
    result = check(root)
    assert result.status == "matches" and result.exit_code == 0
    (low, high), = result.budget_ranges
    assert low <= CASE_BUDGET <= high  # the budget the engine really ran with
    assert result.summary == (
        f"matches what your agent sent (turn at 23:02, 4 messages) at token budgets {low:,}–{high:,}"
    )
    source = "transcript" if variant == "match" else "SQLite transcript"
    assert result.details[1] == f"live window: 3 entries from agents/main session agen…, {source}, up to entry 00000003"
    assert result.details[2].startswith("the host's budget is not known exactly (≈ 179,995: ")
    assert result.details[2].endswith("; the estimate is outside it")
    assert tree(root) == before  # nothing written under the state directory


def test_a_cache_trace_with_the_context_window_in_the_config_matches_at_that_budget(tmp_path):
    result = check(build_case_state(tmp_path / "state", "cache-trace"))
    assert (result.status, result.budget_ranges) == ("matches", [])
    assert result.report() == "\n".join([
        "matches what your agent sent (turn at 23:02, 4 messages)",
        f"record: cache-trace, {tmp_path / 'state/logs/cache-trace.jsonl'} lines 1 and 2",
        "live window: the 3 messages of the cache trace's session:limited line",
        "token budget 1,171, from the host configuration: a cache trace beside JSONL transcripts and no trajectory: "
        "read as a 2026.4 build; context window 1,171 from models.providers.anthropic.models[claude-sonnet-4-5]; "
        "tokenBudget = the context window = 1,171",
    ])


def test_a_mismatch_names_the_first_differing_message_with_both_sides(tmp_path):
    result = check(build_case_state(tmp_path / "state", "differs"))
    assert (result.status, result.exit_code, result.budget_ranges) == ("differs", 1, [])
    assert result.summary == (
        "differs from what your agent sent (turn at 23:02, 4 messages; ctxview has 4) at message 3: content differs "
        "at character 140: '…/search is 85 ms (was 13…' in the record, '…/search is 84 ms (was 13…' in ctxview's"
    )
    diff = result.verification.difference
    assert "85 ms" in diff.recorded["content"] and "84 ms" in diff.assembled["content"]
    assert result.details[-2].startswith('message 3 in the record:  {"role":"user","content":"<<<BEGIN_OPENCLAW')
    assert result.details[-1].startswith('message 3 in ctxview\'s:   {"role":"user","content":"<<<BEGIN_OPENCLAW')


def test_a_record_older_than_the_last_compaction_is_not_a_mismatch(tmp_path):
    result = check(build_case_state(tmp_path / "state", "stale"))
    assert (result.status, result.exit_code) == ("stale", 2)
    assert result.summary == (
        "cannot compare the turn at 23:02: the record is older than the last compaction (entry compact1 at "
        "2026-04-12T23:03:00.000Z): the history it was assembled from has been rewritten"
    )


def test_a_truncated_record_is_reported_as_truncated(tmp_path):
    result = check(build_case_state(tmp_path / "state", "truncated"))
    assert (result.status, result.exit_code) == ("lossy", 2)
    assert result.summary == (
        "cannot compare the turn at 23:02: the record is truncated (the whole event was too large "
        "(400,000 bytes > 262,144 bytes) and its data was dropped)"
    )


def test_sessions_without_a_conversation_or_a_record(state_tree):
    found = discover({}, NO_HOME, state_dir=state_tree.root)
    by_key = {r.session.session_key: r for r in found.scan.rows}
    ops = check_turn(open_session(found, by_key["agent:ops:main"]), zone=UTC)
    assert (ops.status, ops.summary) == (
        "no-record", "nothing to verify: no LCM conversation: no active conversation has session id "
        "'0a5e0a5e-2222-4333-8444-555566667777'")
    cron = check_turn(open_session(found, by_key["agent:main:cron:nightly"]), zone=UTC)
    assert cron.summary == (
        "nothing to verify: OpenClaw recorded no turn of this session (no trajectory record, and the cache trace "
        "is off or has none)"
    )
