"""§10.5 deferred-compaction degrade and §10.6 fork-bounded paths (ctxview/assembly/fallbacks.py).

Most cases size messages with a fake estimator (``n`` on the message) so every
number below follows from the rule by hand.  Parity cases 304 and 305 and the
vectors in data/fallback_vectors.json (inputs from scripts/fallback_vectors,
results from the reference engine's own functions on Node 24) use the real
serialized estimate.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ctxview.assembly.fallbacks import (
    DEFAULT_BOOTSTRAP_MAX_TOKENS,
    DegradeDecision,
    LogLine,
    MaintenanceState,
    append_fork_live_suffix,
    deferred_degrade_decision,
    degraded_live_result,
    degraded_log_line,
    fork_live_fallback,
    fork_suffix_log_level,
    format_session_label,
    parse_utc_timestamp_ms,
    resolve_bootstrap_max_tokens,
    resolve_fork_live_suffix,
    trim_to_budget,
)
from ctxview.assembly.live import stored_token_count
from ctxview.jsjson import js_parse, js_stringify
from ctxview.store import LcmStore
from tests.parity.corpus import case_dir

VECTORS = Path(__file__).with_name("data") / "fallback_vectors.json"


def size(message: Any) -> int:
    return message["n"]


def m(role: str, content: Any, n: int, **extra: Any) -> dict[str, Any]:
    return {"role": role, "content": content, "n": n, **extra}


def case(case_id: str) -> tuple[dict[str, Any], dict[str, Any]]:
    folder = case_dir(case_id)
    return js_parse((folder / "params.json").read_text()), js_parse((folder / "expected.json").read_text())


def read_case_db(case_id: str) -> tuple[Any, dict[str, Any] | None, dict[str, Any] | None]:
    """What the store reads for the engine: the stored context tokens, the maintenance and bootstrap rows."""
    with LcmStore(case_dir(case_id) / "session.db") as store:
        session = store.load_session(1)
    return session.stored_context_tokens, session.maintenance, session.bootstrap_state


# --- the gate -----------------------------------------------------------------------------------------

PENDING = MaintenanceState(pending=True, running=False, projected_token_count=None)


def gate(tokens: Any, budget: int = 100, state: Any = PENDING, **kw: Any) -> DegradeDecision:
    return deferred_degrade_decision(tokens, state, budget, conversation_id=7, session_label="session=s", **kw)


def test_no_debt_no_degrade_and_no_log() -> None:
    for state in (None, MaintenanceState(False, False, None), {"pending": 0, "running": 0}):
        decision = gate(10_000, state=state)
        assert (decision.reason, decision.debt_active, decision.would_drain_first, decision.log_lines) == (
            None,
            False,
            False,
            (),
        )


def test_below_the_threshold_the_debt_is_left_pending() -> None:
    decision = gate(75)  # threshold floor(0.75 × 100) = 75, not exceeded
    assert decision.reason is None and decision.debt_active and not decision.would_drain_first
    assert decision.pressure_threshold == 75
    assert decision.log_lines == (
        LogLine(
            "debug",
            "[lcm] assemble: deferred compaction debt left pending conversation=7 session=s "
            "storedContextTokens=75 projectedTokenCount=null tokenBudget=100 reason=not-over-budget",
        ),
    )


def test_near_budget_from_above_the_threshold_up_to_the_budget() -> None:
    for tokens in (76, 100):
        decision = gate(tokens)
        assert (decision.reason, decision.would_drain_first, decision.log_lines) == ("near-budget", False, ())
        assert decision.engine_outcome == "live-fallback:degraded:near-budget"
    assert gate(76, budget=101).pressure_threshold == 75  # floor(75.75)


def test_over_the_budget_the_engine_drains_first_and_ctxview_assumes_the_outcome() -> None:
    draining = LogLine(
        "warn",
        "[lcm] assemble: emergency deferred compaction debt draining pre-assembly conversation=7 session=s "
        "storedContextTokens=101 projectedTokenCount=null tokenBudget=100 reason=over-budget",
    )
    exhausted = gate(101)
    assert (exhausted.reason, exhausted.would_drain_first, exhausted.drain_assumption) == (
        "emergency-debt-exhausted",
        True,
        "exhausted",
    )
    assert exhausted.log_lines == (draining,)
    assert exhausted.note is not None and "LLM call ctxview cannot make" in exhausted.note
    assert "finds nothing to compact" in exhausted.note and "(101 tokens) exceeds the budget (100)" in exhausted.note
    pending = gate(101, drain="still-pending")
    assert (pending.reason, pending.engine_outcome) == (
        "emergency-debt-still-pending",
        "live-fallback:degraded:emergency-debt-still-pending",
    )
    cleared = gate(101, drain="cleared")
    assert (cleared.reason, cleared.would_drain_first, cleared.engine_outcome) == (None, True, None)
    assert cleared.note is not None and "shown is the database as it is now" in cleared.note


def test_retries_used_up_and_backoff_running_skip_the_drain() -> None:
    row = {"pending": 1, "running": 0, "retry_attempts": 3, "next_attempt_after": "2026-01-01 00:00:10"}
    ten_seconds_in = parse_utc_timestamp_ms("2026-01-01 00:00:00")
    assert ten_seconds_in is not None
    skipped = gate(500, state=row, drain="cleared", now_ms=ten_seconds_in)
    assert (skipped.reason, skipped.drain_skipped_by_backoff, skipped.drain_assumption) == (
        "emergency-debt-still-pending",
        True,
        "still-pending",
    )
    assert skipped.note is not None and "skips it" in skipped.note
    assert not gate(
        500, state={**row, "retry_attempts": 2}, drain="cleared", now_ms=ten_seconds_in
    ).drain_skipped_by_backoff
    assert not gate(500, state=row, drain="cleared", now_ms=ten_seconds_in + 10_000).drain_skipped_by_backoff
    assert not gate(500, state=row, drain="cleared").drain_skipped_by_backoff  # no clock given


def test_row_values_read_like_the_store() -> None:
    assert MaintenanceState.from_row({"pending": 1.0, "running": 0}).debt_active  # REAL 1 is === 1
    for odd in (2, "1", True, None):
        assert not MaintenanceState.from_row({"pending": odd, "running": 0}).debt_active
    assert MaintenanceState.from_row({"pending": 0, "running": 1}).debt_active
    projected = [MaintenanceState.from_row({"projected_token_count": v}).projected_token_count for v in (12.7, -1, "5")]
    assert projected == [12, None, None]
    retries = [MaintenanceState.from_row({"retry_attempts": v}).retry_attempts for v in (2.9, -4, "7", None)]
    assert retries == [2, 0, 0, 0]
    line = gate(76.5, state={"pending": 1, "projected_token_count": 40}).log_lines
    assert line == ()
    left = gate(60.5, state={"pending": 1, "projected_token_count": 40}).log_lines[0].text
    assert "storedContextTokens=60.5 projectedTokenCount=40 tokenBudget=100" in left


def test_session_label() -> None:
    assert format_session_label("abc") == "session=abc"
    assert format_session_label("abc", "  agent:main  ") == "session=abc sessionKey=agent:main"
    assert format_session_label("abc", "   ") == "session=abc"


# Node 24 ``parseUtcTimestamp(value).getTime()`` (None for NaN)
JS_TIMESTAMPS = {
    "2026-11-24 17:43:45": 1795542225000,
    "2026-11-24T17:43:45.123Z": 1795542225123,
    "2026-11-24 17:43:45.5": 1795542225500,
    "2026-11-24T17:43:45+02:00": 1795535025000,
    "2026-11-24T17:43:45-05:30": 1795562025000,
    "2026-11-24": 1795478400000,
    " 2026-11-24 17:43 ": 1795542180000,
    "2026-11-24 17:43:45.123456": 1795542225123,
    "2026-02-30 00:00:00": 1772409600000,
    "2026-04-31T00:00:00Z": 1777593600000,
    "2026-11-24 24:00:00": 1795564800000,
    "2026-11-24T24:00:00+01:00": 1795561200000,
    "2026-02-32T00:00:00Z": None,
    "2026-13-01T00:00:00Z": None,
    "2026-11-24T24:30:00Z": None,
    "2026-11-24T23:60:00Z": None,
    "2026-11-00T00:00:00Z": None,
    "garbage": None,
}


def test_timestamps_parse_like_javascript() -> None:
    assert {text: parse_utc_timestamp_ms(text) for text in JS_TIMESTAMPS} == JS_TIMESTAMPS
    assert parse_utc_timestamp_ms(None) is None


# --- case 304: the drain finds nothing to compact ---------------------------------------------------------------


def test_case_304_degraded_after_an_exhausted_drain() -> None:
    params, expected = case("304")
    stored, row, fork = read_case_db("304")
    assert (stored, fork) == (129, None)  # 60 + 67 + 2: three raw messages
    budget = params["tokenBudget"]
    label = format_session_label(params["sessionId"])
    decision = deferred_degrade_decision(stored, row, budget, conversation_id=1, session_label=label)
    assert decision.engine_outcome == expected["engineOutcome"]
    result = degraded_live_result(params["liveMessages"], budget, preserve_substantive_tail=False)
    assert result.messages == expected["messages"]
    assert result.estimated_tokens == expected["estimatedTokens"] == 15
    assert result.prompt_authority == "preassembly_may_overflow"
    lines = [line.text for line in decision.log_lines] + [
        degraded_log_line(decision, result, conversation_id=1, session_label=label).text
    ]
    # the reference also logged the compaction's own lines in between (summarizer errors, the wedge verdict)
    assert lines == [expected["warnings"][0], expected["warnings"][-1]]


# --- the degraded live result -------------------------------------------------------------------------


def degrade(live: list[Any], budget: int, preserve: bool = False) -> Any:
    return degraded_live_result(live, budget, preserve_substantive_tail=preserve, tokens_of=size)


def test_degraded_keeps_the_system_prefix_and_the_newest_messages_that_fit() -> None:
    live = [
        m("system", "rules", 10),
        m("DEVELOPER", "more rules", 5),
        m("user", "q1", 30),
        m("assistant", "a1", 20),
        m("user", "q2", 25),
        m("assistant", "a2", 40),
        m("user", "q3", 15),
    ]
    result = degrade(live, 100)  # 85 left after the 15-token prefix: 15 + 40 + 25 = 80 fit, + 20 would not
    assert result.live_indexes == [0, 1, 4, 5, 6]
    assert result.messages == [live[i] for i in (0, 1, 4, 5, 6)]
    assert (result.prefix_tokens, result.remaining_budget, result.estimated_tokens) == (15, 85, 95)
    assert [result.live_fates[i].outcome for i in range(7)] == [
        "kept-prefix",
        "kept-prefix",
        "dropped-budget",
        "dropped-budget",
        "kept",
        "kept",
        "kept",
    ]
    assert result.live_fates[3].reason == (
        "older than the newest live messages fitting the 85 tokens left after the 15-token system prefix"
    )


def test_degraded_stops_at_the_first_message_that_does_not_fit() -> None:
    live = [m("user", "small", 1), m("user", "big", 50), m("user", "last", 10)]
    result = degrade(live, 30)  # 10 fits, 50 does not: the 1-token message before it is not considered
    assert result.live_indexes == [2] and result.estimated_tokens == 10


def test_degraded_prefix_is_only_the_leading_run() -> None:
    live = [m("user", "q", 5), m("system", "late rule", 5), m("user", "q2", 5)]
    result = degrade(live, 100)
    assert (result.prefix_indexes, result.live_indexes) == ([], [0, 1, 2])


def test_degraded_single_oversized_message_is_kept_alone() -> None:
    live = [m("system", "rules", 10), m("user", "q1", 5), m("user", "huge", 500)]
    result = degrade(live, 100)
    assert (result.live_indexes, result.last_resort, result.estimated_tokens) == ([0, 2], True, 510)
    assert result.live_fates[1].outcome == "dropped-budget"
    assert result.live_fates[2].reason.startswith("newest live message, kept alone: nothing fits the 90 tokens left")


def test_degraded_with_no_budget_left_after_the_prefix() -> None:
    live = [m("system", "long rules", 150), m("user", "q1", 5), m("user", "q2", 7)]
    result = degrade(live, 100)  # remaining max(0, 100 - 150) = 0: the last message comes back whatever its size
    assert (result.remaining_budget, result.live_indexes, result.last_resort) == (0, [0, 2], False)
    assert result.estimated_tokens == 157
    assert result.live_fates[2].reason == (
        "newest live message, kept alone: no budget left (0 tokens left after the 150-token system prefix)"
    )


def test_degraded_strips_the_trailing_prefill_first() -> None:
    answer = m("assistant", [{"type": "text", "text": "done"}], 5)
    blank = m("assistant", "", 5)
    live = [m("user", "q", 5), answer, blank]
    off = degrade(live, 100)
    assert off.live_indexes == [0]
    assert (off.live_fates[1].outcome, off.live_fates[2].outcome) == ("dropped-prefill", "dropped-prefill")
    on = degrade(live, 100, preserve=True)  # the blank one goes, the substantive reply stays
    assert on.live_indexes == [0, 1] and on.live_fates[2].outcome == "dropped-prefill"


def test_degraded_only_prefix_and_empty() -> None:
    live = [m("system", "a", 3), m("developer", "b", 4)]
    result = degrade(live, 1)
    assert (result.live_indexes, result.estimated_tokens, result.tail_indexes) == ([0, 1], 7, [])
    empty = degrade([], 100)
    assert (empty.messages, empty.estimated_tokens) == ([], 0)
    assert degrade([m("assistant", "", 1)], 100).messages == []


def test_degraded_null_in_the_prefix_scan_raises_like_the_engine() -> None:
    with pytest.raises(TypeError, match=r"^Cannot read properties of null \(reading 'role'\)$"):
        degrade([None, m("user", "q", 1)], 100)


def test_trim_to_budget() -> None:
    messages = [m("user", "a", 4), m("user", "b", 3), m("assistant", "c", 2)]
    sizes = [4, 3, 2]
    trimmed = trim_to_budget(messages, 5.9, preserve_substantive_tail=False, sizes=sizes)
    assert (trimmed.budget, trimmed.fitted, trimmed.kept, trimmed.oversized) == (5, [1, 2], [1], False)
    lone = trim_to_budget(messages[:1], 3, preserve_substantive_tail=False, sizes=sizes[:1])
    assert (lone.kept, lone.oversized) == ([], True)
    zero = trim_to_budget(messages[:2], float("nan"), preserve_substantive_tail=False, sizes=sizes[:2])
    assert (zero.budget, zero.kept) == (0, [1])


# --- the fork live suffix -----------------------------------------------------------------------------


def test_fork_anchor_is_the_newest_match_inside_the_parent_window() -> None:
    a, b, c, d = (m("user", t, 1) for t in ("a", "b", "c", "d"))
    assembled = [dict(a), dict(c)]
    unbounded = resolve_fork_live_suffix(assembled, [a, b, c, d], 0)
    assert (unbounded.rule, unbounded.anchor_live_index, unbounded.anchor_assembled_index) == ("anchor", 2, 1)
    assert unbounded.messages == [d] and unbounded.live_indexes == [3]
    windowed = resolve_fork_live_suffix(assembled, [a, b, c, d], 2)  # c is past the parent window
    assert (windowed.anchor_live_index, windowed.live_indexes, windowed.search_end) == (0, [1, 2, 3], 2)


def test_fork_anchor_matches_by_signature_not_by_object() -> None:
    live = [{"role": "assistant", "content": [{"type": "text", "text": "same"}], "usage": {"output": 0}}]
    assembled = [{"role": "assistant", "content": [{"type": "text", "text": "same"}], "usage": {"output": 9}}]
    assert resolve_fork_live_suffix(assembled, live, 0).anchor_live_index == 0
    newest = resolve_fork_live_suffix([dict(live[0]), m("user", "x", 1), dict(live[0])], live, 0)
    assert newest.anchor_assembled_index == 2


def test_fork_without_anchor() -> None:
    live = [m("user", t, 1) for t in ("p", "q", "r")]
    count = resolve_fork_live_suffix([], live, 2)
    assert (count.rule, count.live_indexes) == ("fork-source-count", [2])
    short = resolve_fork_live_suffix([], live, 5)
    assert (short.rule, short.live_indexes) == ("short-live-window", [0, 1, 2])
    none = resolve_fork_live_suffix([], live, 0)
    assert (none.rule, none.messages, none.start) == ("none", [], 3)
    assert none.describe(0).startswith("no live message matches")


def test_fork_suffix_holds_normalized_live_messages() -> None:
    system = {"role": "system", "content": "note", "timestamp": 5}
    suffix = resolve_fork_live_suffix([], [system], 3)
    assert suffix.messages == [{"role": "user", "content": "note", "timestamp": 5}]
    anchored = resolve_fork_live_suffix([{"role": "user", "content": "note"}], [system, m("user", "z", 1)], 0)
    assert anchored.anchor_live_index == 0  # the projected system message matches a stored user row


def test_fork_suffix_rejects_values_without_a_stored_form() -> None:
    with pytest.raises(TypeError, match=r"^Cannot use 'in' operator to search for 'content' in hello$"):
        resolve_fork_live_suffix([], [m("user", "q", 1), "hello"], 0)
    with pytest.raises(TypeError, match=r"in null$"):
        resolve_fork_live_suffix([], [None], 0)


# --- appending the fork suffix ------------------------------------------------------------------------------


def test_case_305_fork_suffix_after_the_anchor() -> None:
    params, expected = case("305")
    _, row, fork = read_case_db("305")
    assert (row, fork["fork_bounded"], fork["fork_source_message_count"]) == (None, 1, 2)
    assembler = expected["stages"]["assembler"]
    result = append_fork_live_suffix(
        assembler["messages"],
        assembler["estimatedTokens"],
        params["liveMessages"],
        fork["fork_source_message_count"],
        params["tokenBudget"],
        preserve_substantive_tail=False,
        conversation_id=1,
        session_label=format_session_label(params["sessionId"]),
    )
    assert result.messages == expected["messages"]
    assert result.estimated_tokens == expected["estimatedTokens"] == 108
    assert result.estimated_tokens == expected["stages"]["volatileAppend"]["estimatedTokens"]
    assert result.protected_indexes == [3]  # with the fresh tail 0-2: volatileAppend's [0, 1, 2, 3]
    assert result.sources == [("a", 0), ("a", 1), ("a", 2), ("l", 2)]
    assert (result.suffix.anchor_live_index, result.suffix.anchor_assembled_index) == (1, 1)
    assert result.prefill_stripped_live == [3]  # the trailing live assistant reply
    assert result.log_line == LogLine(
        "debug",
        "[lcm] assemble: appended fork-bounded live suffix conversation=1 session=agent-main-min appendedMessages=1 "
        "appendedTokens=18 evictedMessages=0 evictedTokens=0 overBudget=false",
    )
    assert expected["warnings"] == []  # debug level: not a warning


def test_case_305_with_ctxview_assembling_the_database() -> None:
    from ctxview.params_io import build_params, default_params, read_params_file
    from ctxview.pipeline import SessionAssembler

    fields, conversation = read_params_file(case_dir("305") / "params.json")
    params = build_params(default_params(), fields, from_file=True)
    with LcmStore(case_dir("305") / "session.db") as store:
        assembled = SessionAssembler(store.load_session(conversation)).assemble(params, params.effective_budget)
    _, expected = case("305")
    result = append_fork_live_suffix(
        assembled.messages,
        assembled.estimated_tokens,
        list(params.live_messages or ()),
        2,
        params.effective_budget,
        preserve_substantive_tail=False,
    )
    assert js_stringify(result.messages) == js_stringify(
        [assembled.messages[0], assembled.messages[1], assembled.messages[2], params.live_messages[2]]
    )
    assert result.messages == expected["messages"] and result.estimated_tokens == 108


def fork_append(assembled: list[Any], live: list[Any], budget: int, count: int = 0, preserve: bool = False) -> Any:
    return append_fork_live_suffix(
        assembled, 999, live, count, budget, preserve_substantive_tail=preserve, tokens_of=size
    )


ANCHOR = m("user", "anchor", 1)


def test_fork_append_evicts_assembled_messages_from_the_front() -> None:
    assembled = [m("user", "aaaaaaaa", 10), m("assistant", "b", 10), m("user", "c", 10), dict(ANCHOR)]
    suffix = m("user", "new", 5)
    result = fork_append(assembled, [ANCHOR, suffix], 26)  # 36 > 26: drop 10 → 26 fits
    assert result.evicted_assembled == [0] and result.evicted_live == []
    assert result.messages == [assembled[1], assembled[2], assembled[3], suffix]
    assert (result.estimated_tokens, result.evicted_messages, result.over_budget) == (26, 1, False)
    assert result.evicted_tokens == stored_token_count(assembled[0]) == 2  # A.4 of "aaaaaaaa"
    assert (result.appended_messages, result.appended_tokens, result.protected_indexes) == (1, 5, [3])
    assert result.sources == [("a", 1), ("a", 2), ("a", 3), ("l", 1)]
    assert result.assembled_fates[0].outcome == "evicted" and 1 not in result.assembled_fates
    assert result.log_line is not None and result.log_line.level == "warn"
    assert result.log_line.text.endswith(
        "appendedMessages=1 appendedTokens=5 evictedMessages=1 evictedTokens=2 overBudget=false"
    )


def test_fork_append_evicts_the_suffix_front_once_the_context_is_gone() -> None:
    assembled = [m("user", "ctx", 4), dict(ANCHOR)]
    live = [ANCHOR, m("user", "s1", 6), m("assistant", "s2", 5), m("user", "s3", 3)]
    result = fork_append(assembled, live, 9)  # 19 → 15 → 14 (anchor gone) → 8 (s1 gone)
    assert (result.evicted_assembled, result.evicted_live) == ([0, 1], [1])
    assert result.messages == [live[2], live[3]] and result.protected_indexes == [0, 1]
    assert (result.estimated_tokens, result.evicted_messages, result.appended_messages) == (8, 3, 2)
    assert result.live_fates[1].outcome == "evicted" and result.live_fates[2].outcome == "appended"


def test_fork_append_can_evict_everything() -> None:
    result = fork_append([dict(ANCHOR)], [ANCHOR, m("user", "s1", 5), m("user", "s2", 4)], 3)
    assert (result.messages, result.estimated_tokens, result.over_budget) == ([], 0, False)
    assert (result.appended_messages, result.evicted_messages, result.log_line) == (0, 3, None)


def test_fork_append_strips_the_suffix_prefill() -> None:
    reply = m("assistant", "real reply", 2)
    live = [ANCHOR, m("user", "q", 1), reply]
    off = fork_append([dict(ANCHOR)], live, 100)
    assert off.messages == [ANCHOR, live[1]] and off.prefill_stripped_live == [2]
    assert off.live_fates[2].outcome == "dropped-prefill"
    on = fork_append([dict(ANCHOR)], live, 100, preserve=True)
    assert on.messages == [ANCHOR, live[1], reply] and on.protected_indexes == [1, 2]
    assert on.log_line is not None and on.log_line.level == "debug"


def test_fork_append_without_a_suffix_returns_the_assembly_as_it_is() -> None:
    assembled = [dict(ANCHOR)]
    result = fork_append(assembled, [ANCHOR], 500)
    assert (result.messages, result.estimated_tokens, result.over_budget) == (assembled, 999, True)
    assert (result.protected_indexes, result.sources, result.log_line) == ([], [("a", 0)], None)
    assert result.live_fates[0].outcome == "not-appended"


def test_fork_suffix_log_level() -> None:
    assert [fork_suffix_log_level(e, o) for e, o in ((0, False), (1, False), (0, True))] == ["debug", "warn", "warn"]


# --- the fork-bounded fallback -----------------------------------------------------------------------------


def fallback(live: list[Any], count: int, budget: int, cap: int = DEFAULT_BOOTSTRAP_MAX_TOKENS, **kw: Any) -> Any:
    return fork_live_fallback(
        live, count, budget, preserve_substantive_tail=False, bootstrap_max_tokens=cap, tokens_of=size, **kw
    )


def test_fork_fallback_trims_the_suffix_to_the_smaller_of_budget_and_cap() -> None:
    live = [m("user", "parent", 1), m("user", "f1", 30), m("assistant", "f2", 20), m("user", "f3", 25)]
    result = fallback(live, 1, 1000, cap=50)  # suffix live[1:]; 25 + 20 = 45 ≤ 50 < 75
    assert (result.from_suffix, result.trim_budget, result.live_indexes) == (True, 50, [2, 3])
    assert (result.estimated_tokens, result.oversized) == (45, False)
    assert [result.live_fates[i].outcome for i in range(4)] == ["not-in-suffix", "dropped-budget", "kept", "kept"]
    assert fallback(live, 1, 40, cap=6000).live_indexes == [3]  # now the budget binds


def test_fork_fallback_without_a_suffix_uses_the_raw_live_list() -> None:
    live = [{"role": "system", "content": "rules", "n": 2}, m("user", "q", 3)]
    result = fallback(live, 2, 100)  # the parent window is the whole list: nothing after it
    assert (result.from_suffix, result.messages) == (False, live)  # not normalized: system stays system
    normalized = fallback(live, 5, 100)  # shorter than the window: the normalized live list itself
    assert normalized.from_suffix and normalized.messages[0]["role"] == "user"


def test_fork_fallback_sends_nothing_for_an_oversized_newest_message() -> None:
    live = [m("user", "q", 3), m("user", "huge", 80)]
    result = fallback(live, 0, 50)
    assert (result.messages, result.estimated_tokens, result.oversized) == ([], 0, True)
    assert (result.live_fates[0].outcome, result.live_fates[1].outcome) == ("dropped-budget", "dropped-oversized")


def test_fork_fallback_log_lines() -> None:
    live = [m("user", "q", 3)]
    texts = {
        trigger: fallback(live, 0, 50, trigger=trigger, conversation_id=4, session_label="session=x").log_line
        for trigger in ("no-context-items", "empty-assembled-output", "no-user-turns")
    }
    assert texts == {
        "no-context-items": LogLine(
            "debug",
            "[lcm] assemble: no context items for fork-bounded bootstrap; using bounded live suffix conversation=4 "
            "session=x outputMessages=1",
        ),
        "empty-assembled-output": LogLine(
            "debug",
            "[lcm] assemble: empty assembled output for fork-bounded bootstrap; using bounded live suffix "
            "conversation=4 session=x outputMessages=1 tokenBudget=50",
        ),
        "no-user-turns": LogLine(
            "debug",
            "[lcm] assemble: fork-bounded context has no user turns; using bounded live suffix conversation=4 "
            "session=x outputMessages=1",
        ),
    }
    assert fallback(live, 0, 50).log_line is None


def test_bootstrap_cap() -> None:
    assert resolve_bootstrap_max_tokens() == DEFAULT_BOOTSTRAP_MAX_TOKENS == 6000
    assert resolve_bootstrap_max_tokens(9000.5) == 9000
    assert resolve_bootstrap_max_tokens(0, 50_000) == 15_000
    assert resolve_bootstrap_max_tokens(None, 10_000) == 6000
    assert resolve_bootstrap_max_tokens(-1, None) == 12_000  # no usable leaf chunk: 30 % of 40000


# --- the reference engine's own functions on random inputs ------------------------------------------------------


def vectors(kind: str) -> list[dict[str, Any]]:
    return js_parse(VECTORS.read_text())[kind]


def check(expected: dict[str, Any], run: Any) -> None:
    if "error" in expected:
        with pytest.raises(TypeError) as raised:
            run()
        assert f"TypeError: {raised.value}" == expected["error"]
    else:
        assert js_stringify(run()) == js_stringify(expected)


def test_vectors_degraded() -> None:
    def run(c: dict[str, Any]) -> dict[str, Any]:
        r = degraded_live_result(c["live"], c["budget"], preserve_substantive_tail=c["preserve"])
        return {"messages": r.messages, "estimatedTokens": r.estimated_tokens, "promptAuthority": r.prompt_authority}

    cases = vectors("degraded")
    assert len(cases) == 37
    for c in cases:
        check(c["expected"], lambda c=c: run(c))


def test_vectors_fork_append() -> None:
    def run(c: dict[str, Any]) -> dict[str, Any]:
        r = append_fork_live_suffix(
            c["assembled"],
            c["assembledEstimate"],
            c["live"],
            c["forkCount"],
            c["budget"],
            preserve_substantive_tail=c["preserve"],
        )
        return {
            "messages": r.messages,
            "estimatedTokens": r.estimated_tokens,
            "appendedMessages": r.appended_messages,
            "appendedTokens": r.appended_tokens,
            "evictedMessages": r.evicted_messages,
            "evictedTokens": r.evicted_tokens,
            "overBudget": r.over_budget,
            "protectedIndexes": r.protected_indexes,
            "logLevel": r.log_level,
        }

    cases = vectors("forkAppend")
    assert len(cases) == 36
    for c in cases:
        check(c["expected"], lambda c=c: run(c))


def test_vectors_fork_fallback() -> None:
    def run(c: dict[str, Any]) -> dict[str, Any]:
        r = fork_live_fallback(
            c["live"],
            c["forkCount"],
            c["budget"],
            bootstrap_max_tokens=c["bootstrapMax"],
            preserve_substantive_tail=c["preserve"],
        )
        return {"messages": r.messages, "estimatedTokens": r.estimated_tokens}

    cases = vectors("forkFallback")
    assert len(cases) == 36
    for c in cases:
        check(c["expected"], lambda c=c: run(c))
