"""The §10.5 emergency compaction drain, replayed (ctxview/assembly/drain.py) and wired into the engine step.

Each session is written with ``LcmDbWriter``; the numbers asserted here (passes, token counts, pressures,
outcomes, the compacted context's messages) were checked against the reference engine run locally with no
summary model (lossless-claw 0.15.3 and 1.0.0-beta.4), whose emergency truncation summaries these are.  The
engine's new summary ids are random, so the compacted contexts are compared with ctxview's placeholder ids.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from ctxview.assembly.drain import DrainPrediction, drained_session, predict_drain
from ctxview.assembly.fallbacks import deferred_degrade_decision, degraded_live_result, degraded_log_line
from ctxview.assembly.pending_plan import PendingPlan, SnapshotItem, plan_pending_summaries
from ctxview.jsjson import js_parse
from ctxview.model import Params
from ctxview.pipeline import SessionAssembler
from tests.lcmdb import LcmDbWriter, load_session

T0 = "2026-01-01 00:00:00"


def at(minute: int) -> str:
    return f"2026-01-01 00:{minute:02d}:00"


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


# --- the sessions (also written by the oracle check that produced the numbers below) -----------------------


def three_messages(path: Path) -> None:
    """Three raw messages (129 stored tokens) with threshold debt: all compactable once the fresh tail is 0."""
    with LcmDbWriter(path, session_id="drain-a") as db:
        db.message("user", "How do I rotate the deploy cache?", [], token_count=60, created_at=at(0))
        db.message(
            "assistant", "Rotate it with helm upgrade --set cache.rotate=true.", [], token_count=67, created_at=at(1)
        )
        db.message("user", "thanks", [], token_count=2, created_at=at(2))
        db.maintenance(reason="threshold", token_budget=6000)


def capped_tail(path: Path) -> None:
    """Six messages; a fresh-tail token cap of 20 leaves the first four outside the tail."""
    with LcmDbWriter(path, session_id="drain-b") as db:
        for minute, (role, text, tokens) in enumerate(
            [
                ("user", "Which image tag broke the canary?", 30),
                ("assistant", "Tag 1.4.2: its readiness probe points at the old port.", 40),
                ("user", "Can you patch the probe?", 25),
                ("assistant", "Patched the probe to port 8080 and redeployed.", 35),
                ("user", "ok", 10),
                ("assistant", "Canary is healthy now.", 15),
            ]
        ):
            db.message(role, text, [], token_count=tokens, created_at=at(minute))
        db.maintenance(reason="threshold")


def large_tool_output(path: Path) -> None:
    """A tool result of 3000 stored tokens before a short fresh tail: one leaf pass brings it under target."""
    with LcmDbWriter(path, session_id="drain-c") as db:
        db.message("user", "run the test suite", [], token_count=5, created_at=at(0))
        db.message("assistant", "Running the suite now.", [], token_count=6, created_at=at(1))
        lines = "\n".join(f"test_case_{i:04d} ... ok" for i in range(500))
        db.message("tool", lines, [], token_count=3000, created_at=at(2))
        db.message("assistant", "All 500 tests passed.", [], token_count=6, created_at=at(3))
        db.message("user", "great, ship it", [], token_count=4, created_at=at(4))
        db.message("assistant", "Shipping.", [], token_count=3, created_at=at(5))
        db.maintenance(reason="threshold", token_budget=2000)


def ready_leaves(path: Path) -> None:
    """Eight leaf summaries of 300 stored tokens ahead of a protected tail: one condensed pass folds them."""
    with LcmDbWriter(path, session_id="drain-d") as db:
        for i in range(8):
            body = f"Leaf {i}: the team discussed rollout step {i} of the migration and agreed on the plan."
            first, last = f"2025-12-0{1 + i} 00:00:00", f"2025-12-0{1 + i} 01:00:00"  # what the engine backfills
            sources = [
                db.message(r, body, [], token_count=150, created_at=c, in_context=False)
                for r, c in (("user", first), ("assistant", last))
            ]
            db.summary(
                f"sum_leaf{i:012d}", body, token_count=300, earliest_at=first, latest_at=last, created_at=T0,
                source_messages=sources,
            )  # fmt: skip
        db.message("user", "where are we?", [], token_count=4, created_at=at(0))
        db.message("assistant", "Step 8 is next.", [], token_count=5, created_at=at(1))
        db.maintenance(reason="threshold")


def everything_fresh(path: Path) -> None:
    """Two raw messages, both inside the fresh tail: nothing can be compacted."""
    with LcmDbWriter(path, session_id="drain-e") as db:
        db.message("user", "first", [], token_count=60, created_at=at(0))
        db.message("assistant", "reply", [], token_count=30, created_at=at(1))
        db.maintenance(reason="threshold")


def big_raw_runs(path: Path, runs: int) -> None:
    """``runs`` raw messages of 20000 stored tokens each: every one is a 1.0 pending leaf of its own."""
    with LcmDbWriter(path, session_id="drain-f") as db:
        for i in range(runs):
            db.message(
                "tool" if i % 2 else "user", f"chunk {i} " + "payload " * 40, [], token_count=20_000, created_at=at(i)
            )
        db.message("user", "and now?", [], token_count=3, created_at=at(30))
        db.message("assistant", "Done.", [], token_count=2, created_at=at(31))
        db.maintenance(reason="threshold")


def with_senders(path: Path) -> None:
    """``three_messages`` with sender metadata on the user turns (0.15 labels the speaker in the leaf source)."""
    with LcmDbWriter(path, session_id="drain-g") as db:
        ana = '{"senderName":"Ana","senderId":"u1","x":"y"}'
        db.message(
            "user", "How do I rotate the deploy cache?", [], token_count=60, created_at=at(0), sender_metadata=ana
        )
        db.message(
            "assistant", "Rotate it with helm upgrade --set cache.rotate=true.", [], token_count=67, created_at=at(1)
        )
        db.message("user", "thanks", [], token_count=2, created_at=at(2), sender_metadata='{"senderUsername":"ana"}')
        db.maintenance(reason="threshold", token_budget=6000)


def unreadable_date(path: Path) -> None:
    """A message dated "not a date" inside the chunk: the engine's compaction throws (RangeError)."""
    with LcmDbWriter(path, session_id="drain-h") as db:
        db.message("user", "How do I rotate the deploy cache?", [], token_count=60, created_at=at(0))
        db.message("assistant", "Rotate it.", [], token_count=67, created_at="not a date")
        db.message("user", "thanks", [], token_count=2, created_at=at(2))
        db.maintenance(reason="threshold")


def persisted_tail(path: Path, threshold: float = 0.75) -> None:
    """``capped_tail`` whose debt row carries its own fresh tail (1), honoured while its threshold matches."""
    with LcmDbWriter(path, session_id="drain-b") as db:
        for minute, (role, text, tokens) in enumerate(
            [
                ("user", "Which image tag broke the canary?", 30),
                ("assistant", "Tag 1.4.2: its readiness probe points at the old port.", 40),
                ("user", "Can you patch the probe?", 25),
                ("assistant", "Patched the probe to port 8080 and redeployed.", 35),
                ("user", "ok", 10),
                ("assistant", "Canary is healthy now.", 15),
            ]
        ):
            db.message(role, text, [], token_count=tokens, created_at=at(minute))
        db.maintenance(
            reason="threshold",
            context_threshold=threshold,
            context_threshold_source="global",
            context_fresh_tail_count=1,
        )


def summary_then_small_run(path: Path) -> None:
    """A summary, a small raw message, then four summaries of 600 tokens: 1.0 plans a condensed node it cannot
    publish (the publishable prefix stops at the raw message), so its drain only clears the debt."""
    with LcmDbWriter(path, session_id="drain-j") as db:
        source = db.message("user", "kickoff notes", [], token_count=10, created_at=at(0), in_context=False)
        db.summary(
            "sum_first00000000000", "Kickoff: scope agreed.", token_count=100, earliest_at=at(0), latest_at=at(0),
            created_at=T0, source_messages=[source],
        )  # fmt: skip
        db.message("user", "Also check the quota.", [], token_count=50, created_at=at(1))
        for i in range(4):
            body = f"Sprint {i}: reviewed the quota dashboards and the alert rules, nothing blocking."
            first = db.message("assistant", body, [], token_count=300, created_at=at(2 + i), in_context=False)
            db.summary(f"sum_sprint{i:010d}", body, token_count=600, earliest_at=at(2 + i), latest_at=at(2 + i),
                       created_at=T0, source_messages=[first])  # fmt: skip
        db.message("user", "status?", [], token_count=4, created_at=at(10))
        db.message("assistant", "All green.", [], token_count=6, created_at=at(11))
        db.maintenance(reason="threshold")


# --- helpers ----------------------------------------------------------------------------------------------


def predict(path: Path, budget: int, **kw: Any) -> DrainPrediction | None:
    settings = {"fresh_tail_count": 8, "fresh_tail_max_tokens": None, "timezone": "UTC", "line": "0.15", **kw}
    return predict_drain(load_session(path), budget, **settings)


def run(path: Path, **params: Any) -> Any:
    return SessionAssembler(load_session(path)).run(replace(Params(fresh_tail_count=8), **params))


EXPECTED = js_parse((Path(__file__).with_name("data") / "drain_expected.json").read_text(encoding="utf-8"))

# scenario → (session, run parameters); each ran on both engine lines against the reference engine
SCENARIOS: dict[str, tuple[Callable[[Path], None], dict[str, Any]]] = {
    "A": (three_messages, {"token_budget": 37, "fresh_tail_count": 0, "live_messages": (user("thanks"),)}),
    "A-ny": (three_messages, {"token_budget": 37, "fresh_tail_count": 0, "timezone": "America/New_York"}),
    "Acl": (three_messages, {"token_budget": 128, "fresh_tail_count": 1}),
    "B": (capped_tail, {"token_budget": 100, "fresh_tail_count": 8, "fresh_tail_max_tokens": 20}),
    "C": (large_tool_output, {"token_budget": 2500, "fresh_tail_count": 2}),
    "D": (ready_leaves, {"token_budget": 2000, "fresh_tail_count": 8}),
    "E": (everything_fresh, {"token_budget": 80, "fresh_tail_count": 8, "live_messages": (user("x"),)}),
    "F2": (lambda p: big_raw_runs(p, 2), {"token_budget": 10_000, "fresh_tail_count": 2}),
    "F11": (lambda p: big_raw_runs(p, 11), {"token_budget": 10_000, "fresh_tail_count": 2}),
    "G": (with_senders, {"token_budget": 37, "fresh_tail_count": 0}),
    "Gcl": (with_senders, {"token_budget": 128, "fresh_tail_count": 1}),
    "H": (unreadable_date, {"token_budget": 37, "fresh_tail_count": 0}),
    "I": (persisted_tail, {"token_budget": 100, "fresh_tail_count": 8}),
    "Ist": (lambda p: persisted_tail(p, 0.5), {"token_budget": 100, "fresh_tail_count": 8}),
    "J": (summary_then_small_run, {"token_budget": 2000, "fresh_tail_count": 2}),
}


def scenario(tmp_path: Path, name: str) -> tuple[Path, dict[str, Any]]:
    build, params = SCENARIOS[name]
    path = tmp_path / f"{name}.db"
    if not path.exists():
        build(path)
    return path, params


def prediction(tmp_path: Path, name: str, line: str = "0.15") -> DrainPrediction:
    path, params = scenario(tmp_path, name)
    found = predict(
        path,
        params["token_budget"],
        fresh_tail_count=params["fresh_tail_count"],
        fresh_tail_max_tokens=params.get("fresh_tail_max_tokens"),
        timezone=params.get("timezone", "UTC"),
        line=line,
    )
    assert found is not None
    return found


def passes(found: DrainPrediction) -> list[tuple[Any, ...]]:
    return [(p.kind, p.level, p.tokens_before, p.tokens_after, p.sources, p.token_count) for p in found.passes]


@pytest.mark.parametrize("line", ["0.15", "1.0"])
@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_what_the_model_receives_matches_the_reference_engine(tmp_path: Path, name: str, line: str) -> None:
    path, params = scenario(tmp_path, name)
    trace = run(path, engine_line=line, **params)
    expected = EXPECTED[f"{name}-{line}"]
    assert trace.summary.engine_outcome == expected["engineOutcome"]
    assert trace.summary.final_tokens == expected["estimatedTokens"]
    assert trace.messages == expected["messages"]
    degraded = [w for w in trace.warnings if "degraded live fallback" in w]
    if expected["storedContextTokensAfter"] is None:
        assert degraded == []
    else:  # the engine re-reads the stored context after its drain and logs it
        assert len(degraded) == 1 and f"storedContextTokens={expected['storedContextTokensAfter']} " in degraded[0]


def test_three_messages_without_a_fresh_tail_are_summarized_but_stay_over_the_threshold(tmp_path: Path) -> None:
    found = prediction(tmp_path, "A")
    assert (found.outcome, found.pressure_before, found.pressure_after, found.pressure_threshold) == (
        "still-pending",
        129,
        55,
        27,
    )
    assert (found.compaction_target, found.debt_pending_after, found.exhausted) == (27, True, False)
    # the emergency summary of 48 source tokens is longer than its source: the compaction's own truncation
    assert passes(found) == [("leaf", "fallback", 129, 55, (1, 2, 3), 55)]
    summary = found.new_summaries["sum_emergency0000001"]
    assert summary.content == (
        "[2026-01-01 00:00 UTC | user]\nHow do I rotate the deploy cache?\n\n"
        "[2026-01-01 00:01 UTC | assistant]\nRotate it with helm upgrade --set cache.rotate=true.\n\n"
        "[2026-01-01 00:02 UTC | user]\nthanks\n[Truncated from 48 tokens]"
    )
    assert (summary.earliest_at, summary.latest_at, summary.max_source_seq) == (
        "2026-01-01T00:00:00.000Z",
        "2026-01-01T00:02:00.000Z",
        2,
    )
    assert found.log_lines[0].text == (
        "[lcm] LCM compaction leaf pass (fallback): 129 -> 55 conversation=1 summary=sum_emergency0000001"
    )
    note = found.note(37)
    assert "it compacts 3 messages into 1 leaf summary" in note and "still over 27" in note
    # the headers are dated in the run's zone, with ICU's short zone name
    eastern = prediction(tmp_path, "A-ny").new_summaries["sum_emergency0000001"].content
    assert eastern.startswith("[2025-12-31 19:00 EST | user]\n")


def test_a_fresh_tail_token_cap_exposes_older_messages(tmp_path: Path) -> None:
    found = prediction(tmp_path, "B")
    assert (found.outcome, found.pressure_before, found.pressure_after) == ("still-pending", 155, 105)
    assert passes(found) == [("leaf", "fallback", 155, 105, (1, 2, 3, 4), 80)]
    # the debt row's own fresh tail (1, the newest user turn kept whole) does the same while its threshold matches
    assert passes(prediction(tmp_path, "I")) == passes(found)
    stale = prediction(tmp_path, "Ist")  # a persisted 0.5 is stale against the config's 0.75: the run's tail of 8
    assert (stale.outcome, stale.passes, stale.exhausted, stale.debt_pending_after) == ("exhausted", (), True, False)


def test_a_large_tool_output_is_truncated_and_the_engine_assembles_the_compacted_context(tmp_path: Path) -> None:
    for line in ("0.15", "1.0"):
        found = prediction(tmp_path, "C", line)
        assert (found.outcome, found.pressure_after, found.compaction_target, found.debt_pending_after) == (
            "cleared",
            519,
            1500,  # 0.75 × the debt's own budget (2000)
            False,
        )
        assert passes(found) == [("leaf", "normal", 3024, 519, (1, 2, 3, 4), 512)]
        assert [(i.ordinal, i.item_type, i.message_id, i.summary_id) for i in found.items] == [
            (0, "summary", None, "sum_emergency0000001"),
            (1, "message", 5, None),
            (2, "message", 6, None),
        ]
        content = found.new_summaries["sum_emergency0000001"].content
        cut = "\ntest_case_0082 ... ok\ntest_case_0083 ... ok\nt\n"  # 497 tokens of source, then the marker
        assert content.endswith(cut + "[LCM fallback summary; truncated for context management]")


def test_the_drained_session_is_what_the_engine_assembles_next(tmp_path: Path) -> None:
    path, params = scenario(tmp_path, "C")
    session = load_session(path)
    found = predict_drain(session, 2500, fresh_tail_count=2, fresh_tail_max_tokens=None, timezone="UTC")
    assert found is not None
    drained = drained_session(session, found)
    assert [(i.ordinal, i.summary_id or i.message_id) for i in drained.items] == [
        (0, "sum_emergency0000001"),
        (1, 5),
        (2, 6),
    ]
    assert drained.stored_context_tokens == 519 and drained.conversation.context_item_count == 3
    assert drained.maintenance is not None and (drained.maintenance["pending"], drained.maintenance["running"]) == (
        0,
        0,
    )
    assert session.items[0].message_id == 1 and len(session.summaries) == 0  # the loaded session is left alone
    assert session.cache_identity is not None and drained.cache_identity is None  # no render cache of a made-up state
    trace = run(path, **params)
    assert trace.summary.engine_outcome == "assembled"
    assert trace.notes[0].startswith("A compaction is pending and the stored context (3024 tokens) exceeds the budget")
    assert "placeholder ids (sum_emergency0000001)" in trace.notes[0]
    assert any(w.startswith("[lcm] assemble: emergency deferred compaction debt draining") for w in trace.warnings)
    assert (trace.by_key()["o:0"].summary_id, trace.by_key()["o:0"].outcome) == ("sum_emergency0000001", "kept")


def test_eight_leaf_summaries_are_condensed(tmp_path: Path) -> None:
    found = prediction(tmp_path, "D")
    leaves = tuple(f"sum_leaf{i:012d}" for i in range(8))
    assert passes(found) == [("condensed", "fallback", 2409, 276, leaves, 267)]
    condensed = found.new_summaries["sum_emergency0000001"]
    assert (condensed.kind, condensed.depth, condensed.descendant_count, condensed.parent_ids) == (
        "condensed",
        1,
        8,
        leaves,
    )
    assert (condensed.earliest_at, condensed.latest_at) == ("2025-12-01T00:00:00.000Z", "2025-12-08T01:00:00.000Z")
    # 1.0 plans the same fold as a pending condensed node and publishes it
    pending = prediction(tmp_path, "D", "1.0")
    assert [(p.kind, p.level, p.sources) for p in pending.passes] == [("condensed", "pending", leaves)]
    assert (pending.outcome, pending.pressure_after) == ("cleared", 191)


def test_nothing_outside_the_fresh_tail_exhausts_the_debt(tmp_path: Path) -> None:
    for line in ("0.15", "1.0"):
        found = prediction(tmp_path, "E", line)
        assert (found.outcome, found.exhausted, found.passes, found.pressure_after) == ("exhausted", True, (), 90)
        assert found.note(80).endswith(
            "it finds nothing to compact, clears the debt and sends the degraded live fallback."
        )


def test_leaf_chunks_of_the_chunk_size_and_the_1_0_pending_plan(tmp_path: Path) -> None:
    legacy = prediction(tmp_path, "F2")
    assert [(p.kind, p.level, p.tokens_before, p.tokens_after, p.sources) for p in legacy.passes] == [
        ("leaf", "fallback", 40_005, 20_101, (1,)),
        ("leaf", "fallback", 20_101, 197, (2,)),
    ]
    pending = prediction(tmp_path, "F2", "1.0")  # two raw runs of 20000 tokens: two pending leaves, published together
    assert [(p.kind, p.level, p.sources) for p in pending.passes] == [
        ("leaf", "pending", (1,)),
        ("leaf", "pending", (2,)),
    ]
    assert (pending.outcome, pending.pressure_after, pending.debt_pending_after) == ("cleared", 215, False)
    # eleven such runs are more than one drain prepares: 1.0 leaves everything as it was
    crowded = prediction(tmp_path, "F11", "1.0")
    assert (crowded.outcome, crowded.passes, crowded.pressure_after) == ("still-pending", (), 220_005)
    assert crowded.why == "the pending-summary plan (11 summaries) is not published in one drain"
    assert prediction(tmp_path, "F11").outcome == "cleared"  # 0.15: eleven leaf passes, then under target


def test_sender_labels_count_on_0_15_only(tmp_path: Path) -> None:
    labelled = prediction(tmp_path, "G")
    # the running count drops the label's tokens with the messages; the stored summary keeps the labels
    assert (labelled.passes[0].tokens_after, labelled.pressure_after) == (55, 86)
    assert labelled.new_summaries["sum_emergency0000001"].content.startswith(
        '[2026-01-01 00:00 UTC | user | speaker (untrusted metadata): {"senderId":"u1","senderName":"Ana"}]\n'
    )
    plain = prediction(tmp_path, "G", "1.0")
    assert plain.pressure_after == 55 and plain.new_summaries["sum_emergency0000001"].content.startswith(
        "[2026-01-01 00:00 UTC | user]\n"
    )


def test_an_unreadable_message_date_makes_the_compaction_fail(tmp_path: Path) -> None:
    for line in ("0.15", "1.0"):
        found = prediction(tmp_path, "H", line)
        assert (found.outcome, found.passes, found.pressure_after, found.debt_pending_after) == (
            "still-pending",
            (),
            129,
            True,
        )
        assert "created_at JavaScript cannot read" in found.why
        assert found.maintenance_after is not None and found.maintenance_after["retry_attempts"] == 1


def test_a_1_0_plan_that_publishes_nothing_new_just_clears_the_debt(tmp_path: Path) -> None:
    found = prediction(tmp_path, "J", "1.0")
    assert (found.outcome, found.passes, found.pressure_after, found.debt_pending_after) == ("cleared", (), 2560, False)
    legacy = prediction(tmp_path, "J")  # 0.15 summarizes the raw message, then condenses the five summaries
    assert [(p.kind, p.level, p.tokens_before, p.tokens_after) for p in legacy.passes] == [
        ("leaf", "fallback", 2560, 2530),
        ("condensed", "fallback", 2530, 192),
    ]


def test_no_drain_below_the_budget_or_without_debt(tmp_path: Path) -> None:
    path, _ = scenario(tmp_path, "A")
    assert predict(path, 129, fresh_tail_count=0) is None  # 129 is not over 129
    assert predict(path, 128, fresh_tail_count=0) is not None
    with LcmDbWriter(tmp_path / "quiet.db") as db:
        db.message("user", "hello", [], token_count=500)
    assert predict(tmp_path / "quiet.db", 10) is None


def test_an_active_1_0_pending_batch_is_not_replayed(tmp_path: Path) -> None:
    path, params = scenario(tmp_path, "C")
    with sqlite3.connect(path) as conn:
        conn.execute(
            "CREATE TABLE pending_compaction_batches (batch_id TEXT PRIMARY KEY, conversation_id INTEGER, status TEXT)"
        )
        conn.execute("INSERT INTO pending_compaction_batches VALUES ('pcb_1', 1, 'ready')")
    found = predict(path, 2500, fresh_tail_count=2, line="1.0")
    assert found is not None and (found.outcome, found.assumption) == ("unknown", "exhausted")
    trace = run(path, engine_line="1.0", **params)
    assert trace.summary.engine_outcome == "live-fallback:degraded:emergency-debt-exhausted"
    assert "ctxview cannot replay it here (a pending summary batch is in progress" in trace.notes[0]
    assert predict(path, 2500, fresh_tail_count=2).outcome == "cleared"  # 0.15 has no pending summaries


# --- the 1.0 planner and the gate's log line -------------------------------------------------------------------


def msg(ordinal: int, tokens: int, role: str = "user") -> SnapshotItem:
    return SnapshotItem(ordinal, "message", tokens, role=role, message_id=100 + ordinal)


def summ(ordinal: int, tokens: int, depth: int = 0) -> SnapshotItem:
    return SnapshotItem(ordinal, "summary", tokens, depth=depth, summary_id=f"sum_{ordinal}")


def test_the_pending_planner() -> None:
    def plan(items: list[SnapshotItem], tail: int = 1) -> PendingPlan:
        return plan_pending_summaries(
            items, fresh_tail_count=tail, fresh_tail_max_tokens=None, leaf_chunk_tokens=20_000
        )

    assert plan([msg(0, 50), msg(1, 5)], tail=8).outcome == "nothing-compactable"
    assert plan([msg(0, 50), msg(1, 5)]).outcome == "nothing-planned"  # a raw run under the chunk size
    # a run of 25000 tokens is a leaf; the smaller run before it is bridged; the summary between is kept
    bridged = plan([msg(0, 100), summ(1, 300), msg(2, 25_000), msg(3, 100)])
    assert bridged.outcome == "planned"
    assert [(n.kind, n.start, n.end, n.existing, n.message_ids) for n in bridged.frontier] == [
        ("leaf", 0, 0, False, (100,)),
        ("leaf", 1, 1, True, ()),
        ("leaf", 2, 2, False, (102,)),
    ]
    assert (bridged.start, bridged.end, bridged.compactable_end, len(bridged.nodes)) == (0, 2, 2, 2)
    # four adjacent summaries of 2000+ tokens fold into a condensed node, published ahead of the raw message
    folded = plan([*(summ(i, 600) for i in range(4)), msg(4, 10), msg(5, 3)])
    assert [(n.kind, n.depth, n.start, n.end, len(n.children)) for n in folded.frontier] == [("condensed", 1, 0, 3, 4)]
    assert (folded.end, folded.compactable_end) == (3, 4)  # the raw message is left for later: work remains
    # when the publishable prefix is only existing summaries, nothing new would be published
    stuck = plan([summ(0, 100), msg(1, 50), *(summ(2 + i, 600) for i in range(4)), msg(6, 3)])
    assert (stuck.outcome, len(stuck.nodes)) == ("nothing-to-publish", 1)


def test_the_degraded_line_reports_the_context_the_drain_left() -> None:
    decision = deferred_degrade_decision(
        129,
        {"pending": 1},
        37,
        conversation_id=1,
        drain="still-pending",
        drained_context_tokens=55,
        drain_note="replayed",
    )
    assert (decision.reason, decision.drained_context_tokens, decision.note) == (
        "emergency-debt-still-pending",
        55,
        "replayed",
    )
    result = degraded_live_result([user("thanks")], 37, preserve_substantive_tail=False)
    assert degraded_log_line(decision, result, conversation_id=1).text == (
        "[lcm] assemble: degraded live fallback conversation=1 reason=emergency-debt-still-pending "
        "storedContextTokens=55 projectedTokenCount=null tokenBudget=37 pressureThreshold=27 outputMessages=1 "
        "estimatedTokens=9"
    )
    assert "storedContextTokens=129 " in deferred_degrade_decision(129, {"pending": 1}, 37).log_lines[0].text
