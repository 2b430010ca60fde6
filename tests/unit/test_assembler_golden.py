"""The assembler end to end: golden vectors G1/G2 (spec §12) and the §11.1–§11.3 statements."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from ctxview.assembly.tool_pairs import SYNTHETIC_RESULT_TEXT
from ctxview.jsjson import h16, js_stringify
from tests.lcmdb import LcmDbWriter, assemble, block_part, text_part

# --- G1 -------------------------------------------------------------------------------------------

G1_LINES = [
    '{"role":"user","content":"Please read foo.txt"}',
    '{"role":"assistant","content":[{"type":"text","text":"Reading."},{"type":"toolCall","id":"call_1","name":"read",'
    '"arguments":{"path":"foo.txt"}}],"usage":{"input":0,"output":29,"cacheRead":0,"cacheWrite":0,"totalTokens":29,'
    '"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}}}',
    '{"role":"toolResult","content":[{"type":"text","text":"file body"}],"toolCallId":"call_1","toolName":"read",'
    '"isError":false}',
    '{"role":"assistant","content":[{"type":"text","text":"Done."}],"usage":{"input":0,"output":8,"cacheRead":0,'
    '"cacheWrite":0,"totalTokens":8,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}}}',
]


def tool_result(w: LcmDbWriter, call_id: str, text: str, name: str = "read", **kw: Any) -> int:
    return w.tool_result(call_id, text, name=name, **kw)


def g1_db(path: Path) -> Path:
    with LcmDbWriter(path) as w:
        w.user("Please read foo.txt")
        w.assistant_blocks(
            [
                {"type": "text", "text": "Reading."},
                {"type": "toolCall", "id": "call_1", "name": "read", "arguments": {"path": "foo.txt"}},
            ],
            "Reading.",
        )
        tool_result(w, "call_1", "file body")
        w.assistant("Done.")
    return path


def test_g1(tmp_path: Path) -> None:
    result = assemble(g1_db(tmp_path / "g1.db"), token_budget=1000)
    assert [js_stringify(m) for m in result.messages] == G1_LINES
    assert [d.tokens for d in result.decisions] == [5, 29, 9, 8]
    assert result.estimated_tokens == 51
    debug = result.debug
    assert debug["freshTailOrdinal"] == 0
    assert debug["remainingBudget"] == 949
    assert debug["selectionMode"] == "full-fit"
    assert debug["preSanitizeEvictableHash"] == "4f53cda18c2baa0c" == h16([])
    assert debug["preSanitizeFreshTailMessageHashes"] == [
        "aa0bcc6a3d537e13",
        "6a6a6619572fc9c2",
        "199498a2be9c0e09",
        "7a009893cf9c23ad",
    ]
    assert debug["freshTailProtectionMessageHashes"] == [
        "aa0bcc6a3d537e13",
        "6a6a6619572fc9c2",
        "5f936cf548591a16",
        "199498a2be9c0e09",
        "7a009893cf9c23ad",
    ]
    assert debug["preSanitizeMessagesHash"] == debug["finalMessagesHash"] == "def71662116a797b"
    assert result.protection_hashes == debug["freshTailProtectionMessageHashes"]
    assert result.message_keys == ["o:0", "o:1", "o:2", "o:3"]
    call, res = result.decisions[1], result.decisions[2]
    assert call.pair_with == ("o:2",) and res.pair_with == ("o:1",)
    assert call.tool_call_ids == ("call_1",) == res.tool_call_ids
    assert [d.outcome for d in result.decisions] == ["fresh-tail"] * 4
    assert result.decisions[3].reason == "fresh tail: the newest raw message is always protected"
    assert result.decisions[0].reason == "fresh tail: within the last 8 raw messages"


# --- G2 -------------------------------------------------------------------------------------------


@pytest.fixture
def g2_path(tmp_path: Path) -> Path:
    path = tmp_path / "g2.db"
    with LcmDbWriter(path) as w:
        w.summary(
            "sum_a",
            "Discussed the deploy pipeline & <config> for staging.",
            earliest_at="2026-01-01T00:00:05.000Z",
            latest_at="2026-01-02T13:14:15.000Z",
        )
        w.summary(
            "sum_b", "Database migration notes.", kind="condensed", depth=1, descendant_count=3, parents=["sum_a"]
        )
        w.user("How do we deploy to prod?")
        w.assistant("Use the deploy script with the prod flag.")
        w.user("And the database?")
        w.assistant("Run migrations first.")
        w.user("Thanks")
    return path


@pytest.mark.parametrize(
    ("budget", "prompt", "mode", "estimate", "kept"),
    [
        (200, None, "full-fit", 156, [0, 1, 2, 3, 4, 5]),
        (200, "deploy prod", "full-fit", 156, [0, 1, 2, 3, 4, 5]),
        (120, None, "chronological", 94, [1, 2, 3, 4, 5]),
        (120, "deploy prod", "prompt-aware", 105, [0, 2, 3, 4, 5]),
        (90, None, "chronological", 43, [2, 3, 4, 5]),
        (90, "deploy prod", "prompt-aware", 88, [0, 2, 3]),
    ],
)
def test_g2_selection(
    g2_path: Path, budget: int, prompt: str | None, mode: str, estimate: int, kept: list[int]
) -> None:
    result = assemble(g2_path, token_budget=budget, prompt=prompt, fresh_tail_count=1)
    assert [d.tokens for d in result.decisions] == [62, 51, 7, 17, 5, 12, 2]
    assert result.selection_mode == mode
    assert result.estimated_tokens == estimate
    assert result.kept_ordinals == [*kept, 6]
    assert result.fresh_tail_ordinal == 6
    scores = [d.score for d in result.decisions[:6]]
    if prompt:
        assert scores == [1 / 7, 0.0, 2 / 6, 2 / 11, 0.0, 0.0]
        assert [m.term for m in result.decisions[3].matched_terms] == ["deploy", "prod"]
    else:
        assert scores == [None] * 6


def test_g2_reasons(g2_path: Path) -> None:
    chrono = assemble(g2_path, token_budget=90, fresh_tail_count=1)
    reasons = {d.ordinal: (d.outcome, d.reason) for d in chrono.decisions}
    assert reasons[5] == ("kept", "kept: chronological, newest-first walk fit (12 of 88 remaining)")
    assert reasons[1] == (
        "evicted",
        "evicted: chronological walk stopped here: 51 tokens did not fit in the 47 left of 88; "
        "everything older is dropped",
    )
    assert reasons[0] == (
        "evicted",
        "evicted: chronological walk stopped at ordinal 1 (did not fit); everything older is dropped",
    )
    assert reasons[6] == ("fresh-tail", "fresh tail: the newest raw message is always protected")
    aware = assemble(g2_path, token_budget=90, fresh_tail_count=1, prompt="deploy prod")
    by = {d.ordinal: d for d in aware.decisions}
    assert by[2].reason == "kept: score 0.333 ranked 1st of 6; 7 tokens fit in the 88 left of 88"
    assert by[1].reason == "evicted: score 0 ranked 6th of 6; 51 tokens did not fit in the 2 left of 88"
    assert (by[0].label, by[1].label, by[2].label, by[3].label) == ("leaf", "condensed d1", "user", "assistant")
    full = assemble(g2_path, token_budget=200, fresh_tail_count=1)
    assert (
        full.decisions[0].reason == "kept: every evictable item fits (154 tokens in the 198 left after the fresh tail)"
    )


# --- §11.1 ---------------------------------------------------------------------------------------------


def test_no_context_items(tmp_path: Path) -> None:
    path = tmp_path / "empty.db"
    LcmDbWriter(path).close()
    result = assemble(path)
    assert (result.messages, result.estimated_tokens, result.debug) == ([], 0, None)
    assert result.stats == {"rawMessageCount": 0, "summaryCount": 0, "totalContextItems": 0}
    assert result.decisions == [] and result.selection_mode == "empty"


def test_plain_messages_and_summary(tmp_path: Path) -> None:
    path = tmp_path / "p.db"
    with LcmDbWriter(path) as w:
        for i in range(5):
            (w.user if i % 2 == 0 else w.assistant)(f"Message {i}")
    result = assemble(path)
    assert [m["content"] for m in result.messages[::2]] == ["Message 0", "Message 2", "Message 4"]
    assert result.stats == {"rawMessageCount": 5, "summaryCount": 0, "totalContextItems": 5}
    path2 = tmp_path / "s.db"
    with LcmDbWriter(path2) as w:
        w.user("a")
        w.assistant("b")
        w.summary("sum_test_001", "older")
        w.user("c")
        w.assistant("d")
    result2 = assemble(path2)
    assert len(result2.messages) == 5
    assert '<summary id="sum_test_001"' in result2.messages[2]["content"]
    assert 'trust="untrusted"' in result2.messages[2]["content"]
    assert result2.stats == {"rawMessageCount": 4, "summaryCount": 1, "totalContextItems": 5}


def test_blank_and_thinking_only_assistants(tmp_path: Path) -> None:
    # §11.1 #7, #8
    path = tmp_path / "b.db"
    with LcmDbWriter(path) as w:
        w.user("question")
        w.assistant_blocks([{"type": "text", "text": ""}])
        w.assistant_blocks([{"type": "text", "text": "   \n\t  "}])
        w.assistant_blocks([{"type": "text", "text": ""}, {"type": "text", "text": "Real answer."}], "Real answer.")
        w.assistant_blocks([{"type": "thinking", "thinking": "hmm"}])
        w.assistant_blocks([{"type": "thinking", "thinking": "hmm"}, {"type": "text", "text": "Visible."}], "Visible.")
    result = assemble(path)
    assert len(result.messages) == 3
    assert result.messages[1]["content"] == [{"type": "text", "text": "Real answer."}]
    assert [b["type"] for b in result.messages[2]["content"]] == ["thinking", "text"]
    outcomes = {d.ordinal: (d.outcome, d.reason) for d in result.decisions}
    assert outcomes[1] == ("dropped-empty", "dropped: empty after clean-up (only blank text)")
    assert outcomes[4] == ("dropped-empty", "dropped: empty after clean-up (only thinking blocks)")
    assert outcomes[3][0] == "fresh-tail"


def test_openai_turn_result_moves_before_user(tmp_path: Path) -> None:
    # §11.1 #11
    path = tmp_path / "o.db"
    reasoning = {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "plan"}]}
    fc = {"type": "function_call", "call_id": "fc_1", "name": "bash", "arguments": '{"cmd":"ls"}'}
    output = {"type": "function_call_output", "call_id": "fc_1", "output": "a.txt"}
    with LcmDbWriter(path) as w:
        w.assistant_blocks([reasoning, fc])
        w.user("while it runs")
        part = block_part(output, "toolResult", part_type="tool")
        part["tool_output"] = '"a.txt"'
        w.message("tool", "a.txt", [part])
    result = assemble(path)
    assert [m["role"] for m in result.messages] == ["assistant", "toolResult", "user"]
    assert result.messages[0]["content"] == [
        reasoning,
        {"type": "function_call", "call_id": "fc_1", "name": "bash", "arguments": '{"cmd":"ls"}'},
    ]
    assert result.messages[1]["content"] == [{"type": "function_call_output", "output": "a.txt", "call_id": "fc_1"}]
    user = next(d for d in result.decisions if d.ordinal == 1)
    assert user.reason == "fresh tail: within the last 8 raw messages; moved after the tool results of item 0"


# --- §11.2 --------------------------------------------------------------------------------------------


def words(n_tokens: int, label: str) -> str:
    return (label + " " + "x" * (n_tokens * 4))[: n_tokens * 4]


def test_fresh_tail_is_never_dropped(tmp_path: Path) -> None:
    path = tmp_path / "t.db"
    with LcmDbWriter(path) as w:
        for i in range(3):
            (w.user if i % 2 == 0 else w.assistant)(words(200, f"M{i}"))
    assert len(assemble(path, token_budget=100).messages) == 3


def test_budget_with_count_four(tmp_path: Path) -> None:
    path = tmp_path / "t10.db"
    with LcmDbWriter(path) as w:
        for i in range(10):
            (w.user if i % 2 == 0 else w.assistant)(words(100, f"M{i}"))
    result = assemble(path, token_budget=150, fresh_tail_count=4)
    texts = [m["content"] if isinstance(m["content"], str) else m["content"][0]["text"] for m in result.messages]
    assert [t[:2] for t in texts[-4:]] == ["M6", "M7", "M8", "M9"]
    assert len(texts) <= 5


def test_cap_and_latest_user(tmp_path: Path) -> None:
    path = tmp_path / "cap.db"
    with LcmDbWriter(path) as w:
        for i in range(4):
            (w.user if i % 2 == 0 else w.assistant)(words(100, f"M{i}"))
    result = assemble(path, token_budget=150, fresh_tail_count=4, fresh_tail_max_tokens=110)
    assert result.kept_ordinals == [2, 3]
    path2 = tmp_path / "two.db"
    with LcmDbWriter(path2) as w:
        w.user("hello")
        w.assistant("hi")
    assert len(assemble(path2, token_budget=1, fresh_tail_count=1).messages) == 2
    path3 = tmp_path / "huge.db"
    with LcmDbWriter(path3) as w:
        w.user(words(50, "Older"))
        w.assistant(words(200, "Huge tail"))
    result3 = assemble(path3, token_budget=100, fresh_tail_count=2, fresh_tail_max_tokens=50)
    assert len(result3.messages) == 2
    assert result3.decisions[0].reason == "fresh tail: extended back to the latest user turn (ordinal 0)"


def test_overflow_diagnostics(tmp_path: Path) -> None:
    # §11.2 #23
    path = tmp_path / "d.db"
    with LcmDbWriter(path) as w:
        w.summary("sum_x", "summary text", in_context=False)
        w.context_summary("sum_x")  # ordinal 0
        w.user("first", seq=0, in_context=False)
        w.assistant("second", seq=1, in_context=False)
        dup = w.user("the repeated message", seq=2)  # ordinal 1
        w.assistant(words(300, "biggest"))  # ordinal 2
        w.user("three")  # 3
        w.assistant("four")  # 4
        w.context_message(dup)  # ordinal 5
    result = assemble(path)
    diag = result.debug["overflowDiagnostics"]
    assert diag["duplicateRefClusters"] == [
        {"key": f"message:{dup}", "kind": "message-ref", "count": 2, "tokens": 10, "ordinals": [1, 5], "seqs": [2, 2]}
    ]
    [content_cluster] = diag["duplicateMessageClusters"]
    assert content_cluster["kind"] == "message-content" and content_cluster["seqs"] == [2, 2]
    assert re.fullmatch("[0-9a-f]{16}", content_cluster["key"])
    assert diag["topMessageContributors"][0]["ordinal"] == 2
    assert diag["topSummaryContributors"] == [
        {
            "ordinal": 0,
            "tokens": result.decisions[0].tokens,
            "selected": True,
            "summaryId": "sum_x",
            "summaryKind": "leaf",
            "summaryDepth": 0,
        }
    ]
    assert "repeated" not in js_stringify(diag) and "biggest" not in js_stringify(diag)


# --- §11.3 ----------------------------------------------------------------------------------------------


def call_blocks(*ids: str, text: str | None = None) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    return blocks + [{"type": "toolCall", "id": i, "name": "read", "arguments": {"path": "kept.txt"}} for i in ids]


def reverse_db(path: Path, extra_users: int = 0, big_result: bool = False) -> Path:
    with LcmDbWriter(path) as w:
        tool_result(w, "call_tail", words(400, "result") if big_result else "early result")
        w.assistant_blocks(call_blocks("call_tail", text="tail tool call"), "tail tool call")
        w.user("next")
        for i in range(extra_users):
            w.user(f"more {i}")
    return path


def test_result_before_call(tmp_path: Path) -> None:
    # §11.3 #24, #25
    result = assemble(reverse_db(tmp_path / "r.db"), token_budget=1000, fresh_tail_count=2)
    assert [m["role"] for m in result.messages] == ["assistant", "user"]
    assert result.messages[0]["content"] == [{"type": "text", "text": "tail tool call"}]
    debug = result.debug
    assert (debug["selectionMode"], debug["freshTailOrdinal"], debug["baseFreshTailCount"]) == ("full-fit", 1, 2)
    assert (debug["freshTailCount"], debug["promotedToolResultCount"], debug["promotedOrdinals"]) == (2, 0, [])
    assert re.fullmatch("[0-9a-f]{16}", debug["finalMessagesHash"])
    assert re.fullmatch("[0-9a-f]{16}", debug["preSanitizeMessagesHash"])
    by = {d.ordinal: d for d in result.decisions}
    assert (by[0].outcome, by[0].reason) == (
        "orphan-result-dropped",
        "dropped: orphan tool result (its call is not in the context before it)",
    )
    assert (by[1].outcome, by[1].reason) == (
        "tool-calls-stripped",
        "tool calls call_tail stripped: their result comes before the call",
    )
    assert (by[0].output_index, by[1].output_index, by[2].output_index) == (None, 0, 1)
    longer = assemble(reverse_db(tmp_path / "r2.db", extra_users=2), token_budget=1000, fresh_tail_count=2)
    assert longer.messages[: len(result.messages)] == result.messages


def test_paired_result_never_rides_into_the_tail(tmp_path: Path) -> None:
    # §11.3 #26
    result = assemble(
        reverse_db(tmp_path / "h.db", big_result=True), token_budget=120, fresh_tail_count=2, fresh_tail_max_tokens=80
    )
    assert [m["role"] for m in result.messages] == ["assistant", "user"]
    assert result.messages[0]["content"] == [{"type": "text", "text": "tail tool call"}]


def test_lone_result_and_lone_call(tmp_path: Path) -> None:
    # §11.3 #27, #28
    path = tmp_path / "lone.db"
    with LcmDbWriter(path) as w:
        tool_result(w, "call_orphan", "nobody asked")
    assert assemble(path).messages == []
    path2 = tmp_path / "call.db"
    with LcmDbWriter(path2) as w:
        w.assistant_blocks(call_blocks("call_2"))
    result = assemble(path2)
    assert [m["role"] for m in result.messages] == ["assistant", "toolResult"]
    assert result.messages[1]["content"] == [{"type": "text", "text": SYNTHETIC_RESULT_TEXT}]
    assert result.message_keys == ["o:0", None]
    assert result.decisions[0].synthetic_result_for == ("call_2",)


def test_two_calls_then_two_results(tmp_path: Path) -> None:
    # §11.3 #29
    path = tmp_path / "ab.db"
    with LcmDbWriter(path) as w:
        w.user("go")
        w.assistant_blocks(call_blocks("call_a"))
        w.assistant_blocks(call_blocks("call_b"))
        tool_result(w, "call_a", "real result A")
        tool_result(w, "call_b", "real result B")
    result = assemble(path)
    text = js_stringify(result.messages)
    assert "real result A" in text and "real result B" in text and "[lossless-claw]" not in text
    assert [m["role"] for m in result.messages] == ["user", "assistant", "toolResult", "assistant", "toolResult"]


def test_cross_message_duplicate_is_protected(tmp_path: Path) -> None:
    # §11.3 #30
    path = tmp_path / "dup.db"
    with LcmDbWriter(path) as w:
        w.assistant_blocks(call_blocks("X"))
        w.assistant_blocks(call_blocks("X", "Y"))
        tool_result(w, "X", "x result")
        tool_result(w, "Y", "y result")
    result = assemble(path)
    repaired = [
        m
        for m in result.messages
        if m["role"] == "assistant" and [b.get("id") for b in m["content"] if b["type"] == "toolCall"] == ["Y"]
    ]
    assert len(repaired) == 1
    assert h16([repaired[0]]) in result.debug["freshTailProtectionMessageHashes"]
    second = next(d for d in result.decisions if d.ordinal == 1)
    assert (second.outcome, second.reason) == (
        "tool-calls-stripped",
        "tool calls X removed: duplicate of an earlier call",
    )


def test_old_call_without_result_is_stripped(tmp_path: Path) -> None:
    # §11.3 #31
    path = tmp_path / "old.db"
    with LcmDbWriter(path) as w:
        w.assistant_blocks(call_blocks("call_old"))
        for i in range(8):
            w.user(f"turn {i}")
    result = assemble(path)
    assert len(result.messages) == 8 and "call_old" not in js_stringify(result.messages)
    first = result.decisions[0]
    assert (first.outcome, first.reason) == (
        "dropped-orphan-calls",
        "dropped: every block was a tool call whose result is not selected (call_old)",
    )
    assert result.debug["removedToolUseBlockCount"] == 1 == result.debug["touchedAssistantMessageCount"]


def test_partial_strip_keeps_the_answered_call(tmp_path: Path) -> None:
    # §11.3 #32
    path = tmp_path / "partial.db"
    with LcmDbWriter(path) as w:
        w.assistant_blocks(
            [
                {"type": "text", "text": "Let me check two things."},
                {"type": "toolCall", "id": "call_kept", "name": "read", "arguments": {"path": "kept.txt"}},
                {"type": "toolCall", "id": "call_dropped", "name": "read", "arguments": {"path": "gone.txt"}},
            ],
            "Let me check two things.",
        )
        tool_result(w, "call_kept", "kept body")
        for i in range(8):
            w.user(f"turn {i}")
    result = assemble(path)
    assert result.messages[0]["content"] == [
        {"type": "text", "text": "Let me check two things."},
        {"type": "toolCall", "id": "call_kept", "name": "read", "arguments": {"path": "kept.txt"}},
    ]
    assert result.messages[1]["toolCallId"] == "call_kept"
    assert "call_dropped" not in js_stringify(result.messages[1:])
    first = result.decisions[0]
    assert (first.outcome, first.reason) == (
        "tool-calls-stripped",
        "tool calls call_dropped stripped: result not selected",
    )
    assert first.pair_with == ("o:1",)


def test_unresolved_rows_get_decisions(tmp_path: Path) -> None:
    path = tmp_path / "u.db"
    with LcmDbWriter(path) as w:
        w.user("hi")
        w.message("assistant", "  ", [])  # skipped at resolution
        w.conn.execute("PRAGMA foreign_keys=OFF")
        w.context_message(4242)
        w.user("bye")
    result = assemble(path)
    assert result.unresolved_ordinals == [1, 2]
    assert result.stats["totalContextItems"] == 2
    reasons = [(d.outcome, d.reason) for d in result.decisions if d.outcome == "unresolved"]
    assert reasons == [
        ("unresolved", "unresolved: assistant message 2 is empty (blank content, no parts)"),
        ("unresolved", "unresolved: message 4242 does not exist"),
    ]
    assert len(result.decisions) == 4


def test_resolved_items_are_reused_unchanged(tmp_path: Path) -> None:
    from ctxview.assembly.assembler import assemble_context
    from ctxview.assembly.resolve import resolve_session
    from tests.lcmdb import load_session

    session = load_session(g1_db(tmp_path / "g1.db"))
    resolved = resolve_session(session, "UTC")
    snapshot = [js_stringify(item.message) for item in resolved]
    kwargs = dict(
        prompt="read foo",
        fresh_tail_count=1,
        fresh_tail_max_tokens=None,
        prompt_aware_eviction=True,
        stub_large_tool_payloads=False,
        timezone="UTC",
        resolved=resolved,
    )
    first = assemble_context(session, token_budget=10, **kwargs)
    assemble_context(session, token_budget=1000, **kwargs)
    again = assemble_context(session, token_budget=10, **kwargs)
    assert [js_stringify(item.message) for item in resolved] == snapshot
    assert again.messages == first.messages and again.debug == first.debug


def test_text_part_for_user_with_metadata_keys(tmp_path: Path) -> None:
    # a user string part whose metadata has extra keys still collapses to the string
    path = tmp_path / "m.db"
    with LcmDbWriter(path) as w:
        w.message("user", "hello", [text_part("hello", "user", toolCallId="ignored")])
    assert assemble(path).messages == [{"role": "user", "content": "hello"}]
