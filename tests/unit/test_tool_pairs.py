"""Pairing repair (spec §7.4, §11.4) and fresh-tail protection hashes (§7.5)."""

from __future__ import annotations

from typing import Any

from ctxview.assembly.tool_pairs import (
    SYNTHETIC_RESULT_TEXT,
    RepairLog,
    fresh_tail_protection_hashes,
    is_synthetic_result,
    normalize_reasoning,
    sanitize_tool_use_result_pairing,
    sanitize_tool_use_result_pairing_keyed,
    synthetic_result,
)
from ctxview.jsjson import h16


def call(*ids: str, text: str | None = None, **extra: Any) -> dict[str, Any]:
    content: list[Any] = [{"type": "text", "text": text}] if text else []
    content += [{"type": "toolCall", "id": i, "name": f"tool_{i}", "arguments": {}} for i in ids]
    return {"role": "assistant", "content": content, **extra}


def result(call_id: str, text: str = "ok", *, error: bool = False) -> dict[str, Any]:
    return {"role": "toolResult", "toolCallId": call_id, "content": [{"type": "text", "text": text}], "isError": error}


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def shape(messages: list[Any]) -> list[str]:
    """Compact picture: A(x,y) for assistants, R(x) for results, U(text) for users."""
    out = []
    for m in messages:
        if m["role"] == "assistant":
            ids = [b.get("id") or b.get("call_id") for b in m["content"] if isinstance(b, dict) and "name" in b]
            out.append(f"A({','.join(ids)})")
        elif m["role"] == "toolResult":
            out.append(f"{'S' if is_synthetic_result(m) else 'R'}({m['toolCallId']})")
        else:
            out.append(f"U({m['content']})")
    return out


def test_normalize_reasoning() -> None:
    # §11.4 #33
    fc = {"type": "function_call", "call_id": "fc_1", "name": "bash", "arguments": "{}"}
    reasoning = {"type": "reasoning", "id": "rs_1"}
    msg = {"role": "assistant", "content": [fc, reasoning], "usage": {}}
    normalized = normalize_reasoning(msg)
    assert normalized["content"] == [reasoning, fc]
    assert list(normalized) == ["role", "content", "usage"]
    two = {"role": "assistant", "content": [fc, reasoning, {**fc, "call_id": "fc_2"}]}
    assert normalize_reasoning(two) is two
    with_text = {"role": "assistant", "content": [fc, reasoning, {"type": "text", "text": "x"}]}
    assert normalize_reasoning(with_text) is with_text
    out = sanitize_tool_use_result_pairing([msg, result("fc_1")])
    assert out[0]["content"] == [reasoning, fc]


def test_synthetic_result_exact() -> None:
    # §11.4 #34
    msgs = [{"role": "assistant", "content": [{"type": "toolCall", "id": "call_missing", "name": "update_plan"}]}]
    first = sanitize_tool_use_result_pairing(msgs)
    assert first[1] == {
        "role": "toolResult",
        "toolCallId": "call_missing",
        "toolName": "update_plan",
        "content": [{"type": "text", "text": SYNTHETIC_RESULT_TEXT}],
        "isError": True,
    }
    assert list(first[1]) == ["role", "toolCallId", "toolName", "content", "isError"]
    assert sanitize_tool_use_result_pairing(msgs) == first
    assert synthetic_result("x")["toolName"] == "unknown"
    assert synthetic_result("x", "")["toolName"] == ""


def test_user_turns_move_after_results() -> None:
    # §11.4 #35, #11.1 #11
    out = sanitize_tool_use_result_pairing([call("call_bridge"), call(text="tool progress"), result("call_bridge")])
    assert shape(out) == ["A(call_bridge)", "R(call_bridge)", "A()"]
    out2 = sanitize_tool_use_result_pairing([call("fc_1"), user("next"), result("fc_1")])
    assert shape(out2) == ["A(fc_1)", "R(fc_1)", "U(next)"]


def test_synthetic_replaced_by_real() -> None:
    # §11.4 #36
    real = result("call_real", "real")
    synth = synthetic_result("call_real", "tool")
    assert sanitize_tool_use_result_pairing([call("call_real"), synth, real]) == [call("call_real"), real]
    assert sanitize_tool_use_result_pairing([call("call_real"), real, synth]) == [call("call_real"), real]
    real_error = result("call_real", "[lossless-claw] missing tool result — but a real error", error=True)
    later = result("call_real", "later")
    assert not is_synthetic_result(real_error)
    assert sanitize_tool_use_result_pairing([call("call_real"), real_error, later]) == [call("call_real"), real_error]


def test_results_follow_their_own_call() -> None:
    # §11.4 #37
    out = sanitize_tool_use_result_pairing([call("A"), call("B"), result("A"), result("B")])
    assert shape(out) == ["A(A)", "R(A)", "A(B)", "R(B)"]


def test_duplicate_call_ids() -> None:
    # §11.4 #38, #39
    out = sanitize_tool_use_result_pairing([call("X"), result("X"), call("X", "Y"), result("X", "dup"), result("Y")])
    assert shape(out) == ["A(X)", "R(X)", "A(Y)", "R(Y)"]
    out2 = sanitize_tool_use_result_pairing([call("X"), call("X", "Y"), result("X"), result("Y")])
    assert shape(out2) == ["A(X)", "R(X)", "A(Y)", "R(Y)"]
    out3 = sanitize_tool_use_result_pairing([call("X"), call("X", "Y"), call("Y"), result("X"), result("Y")])
    assert shape(out3) == ["A(X)", "R(X)", "A(Y)", "R(Y)"]


def test_terminal_turns_lose_their_calls() -> None:
    # §11.4 #40
    out = sanitize_tool_use_result_pairing([call("X", stopReason="aborted"), call("X"), result("X")])
    assert shape(out) == ["A(X)", "R(X)"]
    out2 = sanitize_tool_use_result_pairing([call("X", stop_reason="error"), call("X"), result("X")])
    assert shape(out2) == ["A(X)", "R(X)"]
    out3 = sanitize_tool_use_result_pairing([call("X"), call("Y", stopReason="aborted"), result("X")])
    assert shape(out3) == ["A(X)", "R(X)"]
    out4 = sanitize_tool_use_result_pairing(
        [call("A"), call("X", stopReason="aborted"), result("A"), call("X"), result("X")]
    )
    assert shape(out4) == ["A(A)", "R(A)", "A(X)", "R(X)"]
    # a terminal turn with text keeps its text but no calls, and gets no synthetic result
    out5 = sanitize_tool_use_result_pairing([call("Z", text="partial", stopReason="error")])
    assert out5 == [{"role": "assistant", "content": [{"type": "text", "text": "partial"}], "stopReason": "error"}]


def test_duplicate_only_turns_are_removed() -> None:
    # §11.4 #41
    reasoning_dup = {"role": "assistant", "content": [{"type": "thinking", "thinking": "t"}] + call("X")["content"]}
    assert shape(sanitize_tool_use_result_pairing([call("X"), result("X"), reasoning_dup])) == ["A(X)", "R(X)"]
    assert shape(sanitize_tool_use_result_pairing([call("X"), call("X"), result("X")])) == ["A(X)", "R(X)"]
    assert shape(sanitize_tool_use_result_pairing([call("X"), result("X", "first"), result("X", "dup")])) == [
        "A(X)",
        "R(X)",
    ]


def test_orphans_and_other_roles() -> None:
    out = sanitize_tool_use_result_pairing([result("early"), call("early"), result("early"), "raw", None, user("u")])
    assert out[:2] == [call("early"), result("early")]
    assert out[2:] == ["raw", None, user("u")]
    # a result for another call inside a span is an orphan
    assert shape(sanitize_tool_use_result_pairing([call("A"), result("B"), result("A")])) == ["A(A)", "R(A)"]


def test_mixed_duplicate_look_ahead() -> None:
    # the next assistant repeats X and adds Y: X's delayed result is found past it
    msgs = [call("X"), call("X", "Y"), result("Y"), result("X")]
    assert shape(sanitize_tool_use_result_pairing(msgs)) == ["A(X)", "R(X)", "A(Y)", "R(Y)"]
    # past the next call-bearing assistant the look-ahead stops, but the "later" scan still finds them
    msgs2 = [call("X"), call("X", "Y"), call("Z"), result("X"), result("Y"), result("Z")]
    out2 = sanitize_tool_use_result_pairing(msgs2)
    assert shape(out2) == ["A(X)", "R(X)", "A(Y)", "R(Y)", "A(Z)", "R(Z)"]
    # a duplicate met by the look-ahead is dropped (and logged) once its id has a result
    log = RepairLog()
    msgs3 = [call("X"), result("X"), call("X", "Y"), result("X", "again"), result("Y")]
    out3, keys3 = sanitize_tool_use_result_pairing_keyed(msgs3, ["a0", "r1", "a2", "r3", "r4"], log)
    assert shape(out3) == ["A(X)", "R(X)", "A(Y)", "R(Y)"]
    assert keys3 == ["a0", "r1", "a2", "r4"]
    assert log.duplicate_results == ["r3"]
    assert log.calls_removed == {"a2": [("X", "duplicate")]}


def test_later_results_and_synthetic_replacement() -> None:
    # a result after the next call-bearing assistant is still used ("later" results)
    msgs = [call("X"), call("Y"), result("Y"), result("X")]
    assert shape(sanitize_tool_use_result_pairing(msgs)) == ["A(X)", "R(X)", "A(Y)", "R(Y)"]
    # a synthetic in the span is replaced by a later real result
    synth = synthetic_result("X", "t")
    msgs2 = [call("X"), synth, call("Y"), result("Y"), result("X", "real")]
    out2 = sanitize_tool_use_result_pairing(msgs2)
    assert shape(out2) == ["A(X)", "R(X)", "A(Y)", "R(Y)"]
    assert out2[1]["content"][0]["text"] == "real"


def test_keyed_variant_and_log() -> None:
    msgs = [result("orphan"), call("A", "B"), user("between"), result("A"), result("A", "dup"), call("A")]
    log = RepairLog()
    out, keys = sanitize_tool_use_result_pairing_keyed(msgs, ["r0", "a1", "u2", "r3", "r4", "a5"], log)
    assert shape(out) == ["A(A,B)", "R(A)", "S(B)", "U(between)"]
    assert keys == ["a1", "r3", None, "u2"]
    assert log.orphan_results == ["r0"]
    assert log.duplicate_results == ["r4"]
    assert log.synthetic == {"a1": ["B"]}
    assert log.calls_removed == {"a5": [("A", "duplicate")]}
    assert log.dropped_assistants == {"a5": "duplicate"}
    assert log.moved_after_results == {"u2": "a1"}


def test_input_messages_are_not_modified() -> None:
    fc = {"type": "function_call", "call_id": "f", "name": "n"}
    first = {"role": "assistant", "content": [fc, {"type": "reasoning"}]}
    second = {"role": "assistant", "content": [fc]}
    before = [repr(first), repr(second)]
    sanitize_tool_use_result_pairing([first, second])
    assert [repr(first), repr(second)] == before


def test_protection_hashes_g1() -> None:
    # §12 G1: list A adds the synthetic result of the lone call; list B adds nothing new
    messages = [
        {"role": "user", "content": "Please read foo.txt"},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Reading."},
                {"type": "toolCall", "id": "call_1", "name": "read", "arguments": {"path": "foo.txt"}},
            ],
            "usage": {
                "input": 0,
                "output": 29,
                "cacheRead": 0,
                "cacheWrite": 0,
                "totalTokens": 29,
                "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
            },
        },
        {
            "role": "toolResult",
            "content": [{"type": "text", "text": "file body"}],
            "toolCallId": "call_1",
            "toolName": "read",
            "isError": False,
        },
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "Done."}],
            "usage": {
                "input": 0,
                "output": 8,
                "cacheRead": 0,
                "cacheWrite": 0,
                "totalTokens": 8,
                "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
            },
        },
    ]
    out, keys = sanitize_tool_use_result_pairing_keyed(messages, ["o:0", "o:1", "o:2", "o:3"])
    hashes = fresh_tail_protection_hashes(messages, out, keys, lambda k: k is not None)
    assert hashes == [
        "aa0bcc6a3d537e13",
        "6a6a6619572fc9c2",
        "5f936cf548591a16",
        "199498a2be9c0e09",
        "7a009893cf9c23ad",
    ]
    assert h16(out) == "def71662116a797b"
