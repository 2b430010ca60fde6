"""The 1.0 engine line's rules (delta D1–D5) next to the 0.15 line's, and their detection."""

from __future__ import annotations

from typing import Any

import pytest

from ctxview.assembly.clamp import clamp_to_serialized_budget
from ctxview.assembly.engine import reconcile
from ctxview.assembly.lookup import find_conversation, is_isolated_cron_key
from ctxview.assembly.rules import RULES_0_15, RULES_1_0, detect_line, rules_for
from ctxview.assembly.tokens import (
    serialized_message_tokens,
    serialized_message_tokens_1_0,
    tool_result_boundary_tokens,
)
from ctxview.jsjson import h16
from ctxview.model import ConversationRef


def usage(tokens: int) -> dict[str, Any]:
    cost = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}
    return {"input": 0, "output": tokens, "cacheRead": 0, "cacheWrite": 0, "totalTokens": tokens, "cost": cost}


# the four messages of golden vector G1 (spec §12)
G1 = [
    {"role": "user", "content": "Please read foo.txt"},
    {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "Reading."},
            {"type": "toolCall", "id": "call_1", "name": "read", "arguments": {"path": "foo.txt"}},
        ],
        "usage": usage(29),
    },
    {
        "role": "toolResult",
        "content": [{"type": "text", "text": "file body"}],
        "toolCallId": "call_1",
        "toolName": "read",
        "isError": False,
    },
    {"role": "assistant", "content": [{"type": "text", "text": "Done."}], "usage": usage(8)},
]
G3_VOLATILE = {
    "role": "user",
    "content": "[Inter-session message] sourceSession=agent:main:subagent:x sourceTool=subagent_announce\n"
    "<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>\n[Internal task completion event]\nChild result: done.\n"
    "<<<END_OPENCLAW_INTERNAL_CONTEXT>>>",
}


@pytest.mark.parametrize(
    ("message", "old", "new"),
    [
        (G1[2], 31, 33),
        (
            {
                "role": "toolResult",
                "content": [{"type": "text", "text": "x" * 400}],
                "toolCallId": "c",
                "toolName": "exec",
            },
            124,
            266,
        ),
        ({"role": "toolResult", "content": "plain string result"}, 14, 27),
        ({"role": "tool", "content": [{"type": "image", "data": "A1" * 3000, "mimeType": "image/png"}],
          "toolName": "read"}, 1630, 3657),
        ({"role": "toolResult", "content": [], "toolName": None}, 13, 15),
        ({"role": "toolResult", "toolName": "exec", "content": "x" * 20000}, 5013, 12018),
        ({"role": "toolResult", "toolCallId": "call_x", "toolName": "unknown",
          "content": [{"type": "text", "text": "[lossless-claw] missing tool result in session history; inserted "
                       "synthetic error result for transcript repair."}], "isError": True}, 57, 94),
        ({"role": "user", "content": "hi"}, 8, 8),
        (G1[1], 73, 73),
    ],
)
def test_tool_results_weigh_their_boundary_estimate_on_1_0(message: dict[str, Any], old: int, new: int) -> None:
    # the worked values of delta §4.3
    assert serialized_message_tokens(message) == old
    assert serialized_message_tokens_1_0(message) == new


def test_boundary_estimate_reads_tool_name_with_nullish_fallthrough() -> None:
    base = {"role": "toolResult", "content": []}
    assert tool_result_boundary_tokens({**base, "toolName": None, "tool_name": "read"}) == 18  # null falls through
    assert tool_result_boundary_tokens({**base, "toolName": "", "tool_name": "read"}) == 17  # "" does not
    assert tool_result_boundary_tokens({"type": "toolResult", "content": "ab"}) == 17
    assert tool_result_boundary_tokens({"role": "assistant", "content": "ab"}) == 0
    assert tool_result_boundary_tokens(["role", "toolResult"]) == 0


@pytest.mark.parametrize(
    ("budget", "old", "new"),
    [
        (200, (False, 168, 4), (False, 170, 4)),
        (190, (False, 168, 4), (False, 170, 4)),
        (180, (False, 168, 4), (True, 118, 3)),
        (170, (False, 168, 4), (True, 12, 1)),
        (150, (True, 12, 1), (True, 12, 1)),
        (60, (True, 12, 1), (True, 12, 1)),
    ],
)
def test_g6_clamp_fires_at_ninety_percent_on_1_0(budget: int, old: tuple[Any, ...], new: tuple[Any, ...]) -> None:
    for rules, (clamped, tokens, count) in ((RULES_0_15, old), (RULES_1_0, new)):
        result = clamp_to_serialized_budget(
            G1,
            budget,
            preserve=False,
            tokens_of=rules.serialized_tokens(),
            trigger_at_target=rules.clamp_triggers_at_target,
        )
        assert (result.clamped, result.tokens, len(result.messages)) == (clamped, tokens, count), rules.line
    g6_180 = clamp_to_serialized_budget(
        G1, 180, preserve=False, tokens_of=serialized_message_tokens_1_0, trigger_at_target=True
    )
    if budget == 180:
        assert g6_180.messages == G1[:3] and g6_180.evicted == 1 and g6_180.over_budget is False


def _g7(budget: int, rules: Any) -> Any:
    keys: list[str | None] = [f"o:{i}" for i in range(4)]
    return reconcile(
        G1, keys, 51, [h16([G1[3]])], live_messages=[G3_VOLATILE], token_budget=budget, prompt=None,
        available_tools=None, context_item_count=4, has_summary_items=True, rules=rules,
    )


def test_g7_volatile_append_with_a_tool_pair() -> None:
    for rules, total in ((RULES_0_15, 230), (RULES_1_0, 232)):
        roomy = _g7(1000, rules)
        assert (len(roomy.messages), roomy.estimated_tokens, roomy.stages["serializedClamp"]["clamped"]) == (
            5, total, False
        )
    old = _g7(231, RULES_0_15)
    assert (old.stages["volatileAppend"]["evictedMessages"], old.estimated_tokens) == (0, 230)
    new = _g7(231, RULES_1_0)
    append = new.stages["volatileAppend"]
    assert (append["evictedMessages"], append["evictedTokens"], append["estimatedTokens"]) == (1, 5, 220)
    assert new.messages == [G1[3], G3_VOLATILE]
    assert (new.estimated_tokens, new.stages["serializedClamp"]["evictedMessages"]) == (114, 2)
    for budget in (200, 150):
        for rules in (RULES_0_15, RULES_1_0):
            tight = _g7(budget, rules)
            assert tight.messages == [G1[0], G1[3], G3_VOLATILE]
            assert tight.estimated_tokens == 126
            append = tight.stages["volatileAppend"]
            assert (append["evictedMessages"], append["evictedTokens"]) == (2, 38)


def test_detection_from_tables() -> None:
    assert detect_line({"messages", "context_items"}).rules is RULES_0_15
    fresh = detect_line({"messages", "message_transcript_anchor_trust", "conversation_transcript_epochs"})
    assert fresh.rules is RULES_1_0
    assert fresh.why == "the database has 1.0 tables (message_transcript_anchor_trust, conversation_transcript_epochs)"
    upgraded = detect_line({"conversation_transcript_epochs", "conversation_bootstrap_state"})
    assert upgraded.rules is RULES_1_0 and upgraded.why.endswith("(a 0.x database upgraded by 1.0)")
    assert rules_for("1.0") is rules_for("1") is rules_for("v1.0.0-beta.4") is RULES_1_0
    assert rules_for("0.15") is rules_for("0.15.3") is RULES_0_15
    with pytest.raises(ValueError, match="unknown engine line"):
        rules_for("2.0")


def ref(cid: int, session_id: Any, key: Any, active: Any, created: Any) -> ConversationRef:
    return ConversationRef(cid, session_id, key, active, created)


def test_lookup_by_key_then_session_id() -> None:
    rows = [
        ref(1, "s1", None, 1, "2026-01-01 00:00:00"),
        ref(2, "s1", None, 1, "2026-01-02 00:00:00"),
        ref(3, "s2", "agent:main:main", 1, "2026-01-01 00:00:00"),
        ref(4, "s3", None, 0, "2026-01-09 00:00:00"),
    ]
    for rules in (RULES_0_15, RULES_1_0):
        assert find_conversation(rows, " s1 ", None, rules).conversation_id == 2  # trimmed, newest active
        assert find_conversation(rows, "zzz", " agent:main:main ", rules).conversation_id == 3
        assert find_conversation(rows, "s1", "agent:other", rules).conversation_id == 2  # key misses: by id
        missing = find_conversation(rows, "s3", None, rules)  # only an archived row
        assert missing.conversation_id is None and missing.why == "no active conversation has session id 's3'"


def test_isolated_cron_keys_are_looked_up_by_session_id_on_1_0() -> None:
    key = "agent:main:cron:nightly"
    assert is_isolated_cron_key(f"  {key} ") and not is_isolated_cron_key("agent:main:cron")
    rows = [ref(1, "run-old", key, 0, "2026-01-01 00:00:00"), ref(2, "run-new", key, 1, "2026-01-02 00:00:00")]
    stale = find_conversation(rows, "run-old", key, RULES_1_0)
    assert stale.conversation_id is None and "stale isolated cron run" in stale.why
    assert find_conversation(rows, "run-new", key, RULES_1_0).conversation_id == 2
    # the 0.15 line finds the active conversation by key, whatever the run
    assert find_conversation(rows, "run-old", key, RULES_0_15).conversation_id == 2
    # a NULL stored key never matches on 1.0
    assert find_conversation([ref(5, "r", None, 1, "x")], "r", key, RULES_1_0).conversation_id is None
