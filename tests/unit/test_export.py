"""Export formats: exact output on hand-built messages, API rules and SDK types on parity runs."""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import replace
from pathlib import Path

import pytest

from ctxview.errors import InputError
from ctxview.export import FORMATS, render, write_export
from ctxview.export.anthropic import convert_anthropic
from ctxview.export.jsontext import pretty_js
from ctxview.export.markdown import to_markdown
from ctxview.export.native import messages_sha256, to_jsonl, to_native
from ctxview.export.openai import convert_openai
from ctxview.export.trace import trace_document
from ctxview.export.turns import CALL_TYPES, MISSING_RESULT_TEXT
from ctxview.jsjson import JSNumber, js_parse, js_stringify
from ctxview.samples import DEMO_PARAMS
from tests.export_support import (
    DEMO_DB,
    DEMO_LIVE,
    SYNTHETIC,
    TOOL_CASES,
    all_case_ids,
    check_anthropic,
    check_openai,
    decision,
    expected,
    make_trace,
    run_case,
    validate_with_anthropic_sdk,
    validate_with_openai_sdk,
)

USAGE = {
    "input": 0,
    "output": 12,
    "cacheRead": 0,
    "cacheWrite": 0,
    "totalTokens": 12,
    "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
}
SUMMARY_TEXT = (
    '<summary id="sum_1" kind="leaf" depth="0" descendant_count="0" trust="untrusted">\n'
    "  <content>\nEarlier: helm upgrade to revision 42 failed.\n  </content>\n</summary>"
)
USER = {"role": "user", "content": "Deploy failed, please roll back."}
SUMMARY = {"role": "user", "content": SUMMARY_TEXT}
CALL = {
    "role": "assistant",
    "content": [
        {"type": "thinking", "thinking": "check the history first", "thinkingSignature": "sig-abc"},
        {"type": "text", "text": "Checking the release history."},
        {
            "type": "toolCall",
            "id": "call_1",
            "name": "bash",
            "arguments": {"command": "helm history web", "timeout": 30},
        },
    ],
    "api": "anthropic-messages",
    "provider": "anthropic",
    "model": "claude-sonnet-4-5",
    "usage": USAGE,
}
RESULT = {
    "role": "toolResult",
    "content": [{"type": "text", "text": "REVISION 41 deployed\nREVISION 42 failed"}],
    "toolCallId": "call_1",
    "toolName": "bash",
    "isError": False,
}
CALL2 = {
    "role": "assistant",
    "content": [{"type": "tool_use", "id": "toolu_2", "name": "read", "input": {"path": "values.yaml"}}],
    "usage": USAGE,
}
SYNTH = {
    "role": "toolResult",
    "toolCallId": "toolu_2",
    "toolName": "read",
    "content": [{"type": "text", "text": SYNTHETIC}],
    "isError": True,
}
LIVE = {"role": "user", "content": "Roll back to 41.", "timestamp": 1737415800000}
CONVERSATION = [USER, SUMMARY, CALL, RESULT, CALL2, SYNTH, LIVE]
KEYS = ["o:0", "o:1", "o:2", "o:3", "o:4", None, "l:0"]
DECISIONS = [
    decision("o:0", "kept", tokens=9, score=1.5),
    decision("o:1", "kept", tokens=30, kind="summary", label="leaf"),
    decision("o:2", "fresh-tail", tokens=45, label="assistant", segment="fresh-tail"),
    decision("o:3", "fresh-tail", tokens=12, label="toolResult", segment="fresh-tail"),
    decision("o:4", "fresh-tail", tokens=14, label="assistant", segment="fresh-tail"),
    decision("o:5", "evicted", tokens=700, score=0.0, reason="evicted: did not fit"),
    decision("l:0", "appended", tokens=5),
]


def hand_trace() -> object:
    return make_trace(list(CONVERSATION), keys=list(KEYS), decisions=list(DECISIONS), final_tokens=321)


# --- native and jsonl -------------------------------------------------------------------------


def test_native_is_exactly_json_stringify_of_the_messages() -> None:
    messages = [
        {
            "role": "assistant",
            "content": [{"type": "toolCall", "id": "c", "name": "n", "arguments": {"x": JSNumber(1e21, "1e+21")}}],
        }
    ]
    text = to_native(make_trace(messages))
    assert (
        text == '[{"role":"assistant","content":[{"type":"toolCall","id":"c","name":"n","arguments":{"x":1e+21}}]}]\n'
    )


def test_jsonl_has_one_message_per_line_and_escapes_line_separators() -> None:
    messages = [USER, {"role": "user", "content": "a\u2028b"}]
    text = to_jsonl(make_trace(messages))
    lines = text.splitlines()
    assert lines == [
        '{"role":"user","content":"Deploy failed, please roll back."}',
        '{"role":"user","content":"a\\u2028b"}',
    ]
    assert [json.loads(line) for line in lines] == messages


def test_render_knows_every_format_and_rejects_others() -> None:
    trace = hand_trace()
    for fmt in FORMATS:
        assert render(trace, fmt).endswith("\n")
    with pytest.raises(InputError, match="unknown export format 'yaml'"):
        render(trace, "yaml")


# --- OpenAI ------------------------------------------------------------------------------------


def test_openai_exact_output() -> None:
    assert convert_openai(CONVERSATION) == [
        {"role": "user", "content": "Deploy failed, please roll back."},
        {"role": "user", "content": SUMMARY_TEXT},
        {
            "role": "assistant",
            "content": "Checking the release history.",
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "bash", "arguments": '{"command":"helm history web","timeout":30}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "REVISION 41 deployed\nREVISION 42 failed"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "toolu_2",
                    "type": "function",
                    "function": {"name": "read", "arguments": '{"path":"values.yaml"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "toolu_2", "content": SYNTHETIC},
        {"role": "user", "content": "Roll back to 41."},
    ]


def test_openai_render_is_indented_json_of_the_conversion() -> None:
    assert json.loads(render(hand_trace(), "openai")) == convert_openai(CONVERSATION)


def test_a_result_after_other_messages_is_moved_right_after_its_call() -> None:
    messages = [
        {"role": "assistant", "content": [{"type": "toolCall", "id": "x", "name": "ls", "arguments": {}}]},
        {"role": "user", "content": "meanwhile"},
        {"role": "toolResult", "toolCallId": "x", "toolName": "ls", "content": [{"type": "text", "text": "a.txt"}]},
    ]
    out = convert_openai(messages)
    assert [m["role"] for m in out] == ["assistant", "tool", "user"]
    assert out[1] == {"role": "tool", "tool_call_id": "x", "content": "a.txt"}
    body = convert_anthropic(messages)
    assert body["messages"][1] == {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": "x",
                "content": [{"type": "text", "text": "a.txt"}],
                "is_error": False,
            },
            {"type": "text", "text": "meanwhile"},
        ],
    }


def test_a_call_without_result_is_answered_with_an_error_result() -> None:
    messages = [
        USER,
        {"role": "assistant", "content": [{"type": "toolCall", "id": "z", "name": "deploy", "arguments": {}}]},
    ]
    out = convert_openai(messages)
    assert out[-1] == {"role": "tool", "tool_call_id": "z", "content": MISSING_RESULT_TEXT}
    body = convert_anthropic(messages)
    assert body["messages"][-1] == {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": "z",
                "content": [{"type": "text", "text": MISSING_RESULT_TEXT}],
                "is_error": True,
            }
        ],
    }
    check_openai(out)
    check_anthropic(body)


def test_a_result_whose_call_is_missing_becomes_user_text() -> None:
    messages = [
        USER,
        {
            "role": "toolResult",
            "toolCallId": "q",
            "toolName": "bash",
            "isError": True,
            "content": [{"type": "text", "text": "boom"}],
        },
    ]
    header = "[result of `bash` call q, whose call is not in this context] (error)"
    assert convert_openai(messages)[1] == {
        "role": "user",
        "content": [{"type": "text", "text": header}, {"type": "text", "text": "boom"}],
    }
    assert convert_anthropic(messages) == {
        "messages": [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "Deploy failed, please roll back."},
                    {"type": "text", "text": header},
                    {"type": "text", "text": "boom"},
                ],
            }
        ]
    }


def test_long_ids_are_shortened_for_openai_on_both_sides() -> None:
    raw = "toolu_lcm_3f2b8a4c-1d2e-4f5a-8b9c-0d1e2f3a4b5c"  # 46 characters, as the reference builds them
    messages = [
        {"role": "assistant", "content": [{"type": "toolCall", "id": raw, "name": "read", "arguments": {}}]},
        {"role": "toolResult", "toolCallId": raw, "toolName": "read", "content": [{"type": "text", "text": "ok"}]},
    ]
    short = raw[:27] + "_" + hashlib.sha256(raw.encode()).hexdigest()[:12]
    out = convert_openai(messages)
    assert len(short) == 40
    assert out[0]["tool_calls"][0]["id"] == short
    assert out[1]["tool_call_id"] == short
    assert convert_anthropic(messages)["messages"][0]["content"][0]["id"] == raw


def test_anthropic_ids_are_made_valid_and_unique_the_same_way_on_both_sides() -> None:
    messages = [
        {"role": "assistant", "content": [{"type": "toolCall", "id": "call|fc 1", "name": "a", "arguments": {}}]},
        {"role": "toolResult", "toolCallId": "call|fc 1", "toolName": "a", "content": [{"type": "text", "text": "1"}]},
        {"role": "assistant", "content": [{"type": "toolCall", "id": "call|fc 1", "name": "a", "arguments": {}}]},
        {"role": "toolResult", "toolCallId": "call|fc 1", "toolName": "a", "content": [{"type": "text", "text": "2"}]},
    ]
    body = convert_anthropic(messages)
    assert [m["content"][0].get("id") or m["content"][0]["tool_use_id"] for m in body["messages"]] == [
        "call_fc_1",
        "call_fc_1",
        "call_fc_1_2",
        "call_fc_1_2",
    ]
    assert [m["content"][0]["content"][0]["text"] for m in body["messages"][1::2]] == ["1", "2"]
    check_anthropic(body)
    out = convert_openai(messages)
    assert [m.get("tool_call_id") or m["tool_calls"][0]["id"] for m in out] == [
        "call|fc 1",
        "call|fc 1",
        "call|fc 1_2",
        "call|fc 1_2",
    ]
    check_openai(out)


def test_arguments_of_every_call_shape() -> None:
    messages = [
        {
            "role": "assistant",
            "content": [
                {
                    "type": "function_call",
                    "id": "fc_item",
                    "call_id": "fc_1",
                    "name": "bash",
                    "arguments": '{"cmd":"pwd"}',
                },
                {"type": "toolCall", "id": "c2", "name": "sh", "arguments": "echo hello"},
                {"type": "tool_use", "id": "c3", "name": "noop"},
                {"type": "functionCall", "id": "c4", "name": "list", "arguments": [1, 2]},
                {"type": "toolCall", "id": "c5", "name": "big", "arguments": {"n": JSNumber(1e21, "1e+21")}},
            ],
        },
        *(
            {"role": "toolResult", "toolCallId": cid, "toolName": "t", "content": [{"type": "text", "text": "ok"}]}
            for cid in ("fc_1", "c2", "c3", "c4", "c5")
        ),
    ]
    calls = convert_openai(messages)[0]["tool_calls"]
    assert [(c["id"], c["function"]["arguments"]) for c in calls] == [
        ("fc_1", '{"cmd":"pwd"}'),
        ("c2", "echo hello"),
        ("c3", "{}"),
        ("c4", "[1,2]"),
        ("c5", '{"n":1e+21}'),
    ]
    uses = convert_anthropic(messages)["messages"][0]["content"]
    assert [(u["id"], u["input"]) for u in uses] == [
        ("fc_1", {"cmd": "pwd"}),
        ("c2", {"arguments": "echo hello"}),
        ("c3", {}),
        ("c4", {"arguments": [1, 2]}),
        ("c5", {"n": 1e21}),
    ]
    check_openai(convert_openai(messages))
    check_anthropic(convert_anthropic(messages))


def test_thinking_is_dropped_for_openai_and_kept_for_anthropic_only_when_signed_by_anthropic() -> None:
    unsigned = {
        "role": "assistant",
        "content": [{"type": "thinking", "thinking": "hmm"}, {"type": "text", "text": "Answer."}],
        "provider": "anthropic",
        "api": "anthropic-messages",
        "usage": USAGE,
    }
    foreign = {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "hmm", "thinkingSignature": "x"},
            {"type": "text", "text": "Two."},
        ],
        "provider": "openai",
        "api": "openai-responses",
        "usage": USAGE,
    }
    only_reasoning = {
        "role": "assistant",
        "content": [{"type": "reasoning", "id": "rs_1", "encrypted_content": "gAAA"}],
        "usage": USAGE,
    }
    messages = [USER, CALL, RESULT, unsigned, {"role": "user", "content": "ok"}, foreign, only_reasoning, LIVE]
    openai_out = convert_openai(messages)
    assert [m["role"] for m in openai_out] == ["user", "assistant", "tool", "assistant", "user", "assistant", "user"]
    assert openai_out[3] == {"role": "assistant", "content": "Answer."}
    body = convert_anthropic(messages)
    assert body["messages"][1]["content"][0] == {
        "type": "thinking",
        "thinking": "check the history first",
        "signature": "sig-abc",
    }
    assert body["messages"][3] == {"role": "assistant", "content": "Answer."}
    assert body["messages"][5] == {"role": "assistant", "content": "Two."}
    assert body["messages"][6] == {"role": "user", "content": "Roll back to 41."}
    check_anthropic(body)


def test_consecutive_turns_are_merged_and_blank_blocks_removed() -> None:
    messages = [
        {"role": "user", "content": "one"},
        {"role": "user", "content": [{"type": "text", "text": "  "}, {"type": "text", "text": "two"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "three"}], "usage": USAGE},
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "\n"}, {"type": "text", "text": "four  \n"}],
            "usage": USAGE,
        },
    ]
    assert convert_anthropic(messages) == {
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "one"}, {"type": "text", "text": "two"}]},
            {"role": "assistant", "content": [{"type": "text", "text": "three"}, {"type": "text", "text": "four"}]},
        ]
    }
    assert convert_openai(messages) == [
        {"role": "user", "content": "one"},
        {"role": "user", "content": "two"},
        {"role": "assistant", "content": "three"},
        {"role": "assistant", "content": "four  \n"},
    ]


def test_images_map_to_each_api_and_unknown_blocks_become_json_text() -> None:
    data = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk"
    messages = [
        {
            "role": "user",
            "content": [{"type": "text", "text": "see"}, {"type": "image", "data": data, "mimeType": "image/png"}],
        },
        {
            "role": "assistant",
            "content": [{"type": "toolCall", "id": "s1", "name": "screenshot", "arguments": {}}],
            "usage": USAGE,
        },
        {
            "role": "toolResult",
            "toolCallId": "s1",
            "toolName": "screenshot",
            "content": [
                {"type": "text", "text": "captured"},
                {"type": "image", "source": {"type": "base64", "media_type": "image/jpeg", "data": data}},
            ],
        },
        {"role": "user", "content": [{"type": "file", "path": "a.txt", "size": 3}]},
    ]
    out = convert_openai(messages)
    assert out[0]["content"] == [
        {"type": "text", "text": "see"},
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{data}"}},
    ]
    assert out[2] == {
        "role": "tool",
        "tool_call_id": "s1",
        "content": [
            {"type": "text", "text": "captured"},
            {"type": "text", "text": f"[image: image/jpeg, {len(data)} base64 characters]"},
        ],
    }
    assert out[3] == {
        "role": "user",
        "content": [
            {"type": "text", "text": "[images returned by tool call s1]"},
            {"type": "image_url", "image_url": {"url": f"data:image/jpeg;base64,{data}"}},
        ],
    }
    assert out[4] == {"role": "user", "content": '{"type":"file","path":"a.txt","size":3}'}
    body = convert_anthropic(messages)
    assert body["messages"][0]["content"][1] == {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": data},
    }
    assert body["messages"][2]["content"] == [
        {
            "type": "tool_result",
            "tool_use_id": "s1",
            "content": [
                {"type": "text", "text": "captured"},
                {"type": "image", "source": {"type": "base64", "media_type": "image/jpeg", "data": data}},
            ],
            "is_error": False,
        },
        {"type": "text", "text": '{"type":"file","path":"a.txt","size":3}'},
    ]
    check_openai(out)
    check_anthropic(body)
    validate_with_openai_sdk(out)
    validate_with_anthropic_sdk(body)


def test_system_prompt_only_when_given() -> None:
    assert "system" not in convert_anthropic(CONVERSATION)
    assert convert_anthropic(CONVERSATION, system="Be brief.")["system"] == "Be brief."
    assert convert_openai(CONVERSATION, system="Be brief.")[0] == {"role": "system", "content": "Be brief."}


def test_hand_built_exports_pass_the_api_rules_and_sdk_types() -> None:
    out = convert_openai(CONVERSATION)
    body = convert_anthropic(CONVERSATION)
    check_openai(out)
    check_anthropic(body)
    validate_with_openai_sdk(out)
    validate_with_anthropic_sdk(body)


@pytest.mark.parametrize("case", all_case_ids() or ["(no cases)"])
def test_every_parity_case_converts_to_valid_requests(case: str) -> None:
    messages = expected(case)["messages"]
    out = convert_openai(messages)
    body = convert_anthropic(messages)
    check_openai(out)
    check_anthropic(body)
    calls = sum(  # (a fallback can send odd live entries: only message objects with block lists hold calls)
        1
        for m in messages
        if isinstance(m, dict) and m.get("role") == "assistant" and isinstance(m.get("content"), list)
        for b in m["content"]
        if isinstance(b, dict) and b.get("type") in CALL_TYPES
    )
    assert sum(1 for m in out if m["role"] == "tool") == calls
    assert sum(len(m.get("tool_calls", [])) for m in out) == calls


@pytest.mark.parametrize("case", all_case_ids() or ["(no cases)"])
def test_sdk_request_types_accept_every_parity_case(case: str) -> None:
    messages = expected(case)["messages"]
    validate_with_openai_sdk(convert_openai(messages))
    validate_with_anthropic_sdk(convert_anthropic(messages))


# --- the real pipeline on parity cases with tool pairs and live appends ---------------------------


@pytest.fixture(scope="module", params=TOOL_CASES)
def case_run(request: pytest.FixtureRequest) -> tuple[str, object, dict]:
    return request.param, run_case(request.param), expected(request.param)


def _sorted(value: object) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def test_native_export_equals_expected_messages(case_run: tuple[str, object, dict]) -> None:
    _, trace, exp = case_run
    assert _sorted(js_parse(render(trace, "native"))) == _sorted(exp["messages"])
    assert [js_parse(line) for line in render(trace, "jsonl").splitlines()] == js_parse(render(trace, "native"))


def test_api_exports_of_real_runs(case_run: tuple[str, object, dict]) -> None:
    case, trace, exp = case_run
    out = json.loads(render(trace, "openai"))
    body = json.loads(render(trace, "anthropic"))
    check_openai(out)
    check_anthropic(body)
    synthetic = sum(1 for m in exp["messages"] if m["role"] == "toolResult" and m["content"][0]["text"] == SYNTHETIC)
    tool_texts = [m["content"] for m in out if m["role"] == "tool"]
    if case == "031":  # the call of the only result was clamped away: the result survives as user text
        assert tool_texts == []
        assert "Requests/sec: 203.6372" in json.dumps(out)
    elif case == "004":  # a synthetic result whose call is gone
        assert tool_texts == []
    else:
        assert sum(1 for t in tool_texts if t == SYNTHETIC) == synthetic


def test_sdk_request_types_accept_real_runs(case_run: tuple[str, object, dict]) -> None:
    _, trace, _ = case_run
    validate_with_openai_sdk(json.loads(render(trace, "openai")))
    validate_with_anthropic_sdk(json.loads(render(trace, "anthropic")))


def test_markdown_states_the_traces_settings_and_totals(case_run: tuple[str, object, dict]) -> None:
    _, trace, exp = case_run
    text = render(trace, "markdown")
    s = trace.summary
    assert s.final_tokens == exp["estimatedTokens"]
    assert (
        f"- final (serialized estimate of the messages): {s.final_tokens:,} tokens in {len(exp['messages']):,} messages"
        in text
    )
    assert f"- assembler (item estimates of the kept items): {s.assembler_tokens:,} tokens" in text
    assert f"- token budget: {s.token_budget:,}" in text
    assert f"- messages sha256: `{messages_sha256(trace.messages)}`" in text
    assert text.count("\n### ") == len(exp["messages"])
    calls = sum(
        1
        for m in exp["messages"]
        if m["role"] == "assistant"
        for b in m["content"]
        if b["type"] in ("toolCall", "tool_use")
    )
    assert text.count("**Tool call**") == calls
    assert text.count("**Tool result**") == sum(1 for m in exp["messages"] if m["role"] == "toolResult")


def test_trace_export_has_every_decision_and_the_message_hash(case_run: tuple[str, object, dict]) -> None:
    _, trace, exp = case_run
    text = render(trace, "trace")
    doc = js_parse(text)
    native = render(trace, "native")
    assert doc["messagesSha256"] == hashlib.sha256(native[:-1].encode()).hexdigest()
    assert doc["estimatedTokens"] == trace.summary.final_tokens == exp["estimatedTokens"]
    assert doc["trace"]["summary"]["finalTokens"] == exp["estimatedTokens"]
    assert doc["trace"]["summary"]["assemblerTokens"] == exp["stages"]["assembler"]["estimatedTokens"]
    assert [d["key"] for d in doc["decisions"]] == [d.key for d in trace.decisions]
    for entry, d in zip(doc["decisions"], trace.decisions, strict=True):
        assert (entry["score"], entry["outcome"], entry["reason"], entry["tokens"]) == (
            d.score,
            d.outcome,
            d.reason,
            d.tokens,
        )
    assert _sorted(doc["messages"]) == _sorted(exp["messages"])
    assert doc["keptOrdinals"] == exp["keptOrdinals"]
    assert render(trace, "trace") == text  # deterministic: no timings


# --- markdown and trace details on a hand-built trace ------------------------------------------------


def test_markdown_marks_summaries_synthetic_results_and_fences_tool_payloads() -> None:
    text = to_markdown(hand_trace())
    assert '- prompt: `"deploy"`' in text
    assert "- final (serialized estimate of the messages): 321 tokens in 7 messages" in text
    assert "### 2. summary (leaf) — item 1, kept, 30 tokens\n\n```xml\n" + SUMMARY_TEXT + "\n```" in text
    assert (
        '**Tool call** `bash` (call `call_1`)\n\n```json\n{\n  "command": "helm history web",\n  "timeout": 30\n}\n```'
        in text
    )
    assert "**Tool result** of `bash` (call `call_1`)\n\n```text\nREVISION 41 deployed\nREVISION 42 failed\n```" in text
    assert "### 6. toolResult — synthetic result added by the tool-pairing repair" in text
    assert "**Tool result** of `read` (call `toolu_2`, error)" in text
    assert "### 7. user — live input 0, appended, 5 tokens" in text
    assert "> *thinking (signed):* check the history first" in text


def test_markdown_fences_json_results_and_never_breaks_on_backticks() -> None:
    messages = [
        {"role": "user", "content": "run ```rm -rf```\n# not a heading"},
        {"role": "assistant", "content": [{"type": "toolCall", "id": "j", "name": "q", "arguments": '{"a":1}'}]},
        {
            "role": "toolResult",
            "toolCallId": "j",
            "toolName": "q",
            "content": [{"type": "text", "text": '{"rows": [1, 2]}'}],
        },
    ]
    text = to_markdown(make_trace(messages))
    assert "````text\nrun ```rm -rf```\n# not a heading\n````" in text
    assert '```json\n{\n  "a": 1\n}\n```' in text
    assert '```json\n{\n  "rows": [\n    1,\n    2\n  ]\n}\n```' in text


def test_trace_document_of_a_hand_built_trace() -> None:
    trace = hand_trace()
    doc = trace_document(trace)
    assert doc["ctxview"] == {"format": "trace", "version": 1}
    assert doc["messagesSha256"] == hashlib.sha256(js_stringify(CONVERSATION).encode()).hexdigest()
    assert doc["messageKeys"] == KEYS
    assert doc["params"]["tokenBudget"] == 4000 and doc["params"]["prompt"] == "deploy"
    assert [(d["key"], d["outcome"], d["score"]) for d in doc["decisions"]] == [
        ("o:0", "kept", 1.5),
        ("o:1", "kept", None),
        ("o:2", "fresh-tail", None),
        ("o:3", "fresh-tail", None),
        ("o:4", "fresh-tail", None),
        ("o:5", "evicted", 0.0),
        ("l:0", "appended", None),
    ]
    assert doc["decisions"][5]["reason"] == "evicted: did not fit"
    assert doc["estimatedTokens"] == 321


# --- the demo sample ------------------------------------------------------------------------------


def test_every_format_on_the_demo_sample() -> None:
    if not DEMO_DB.is_file():
        pytest.skip(f"DEMO SAMPLE MISSING: {DEMO_DB} (written by `ctxview sample`)")
    from ctxview.pipeline import SessionAssembler
    from ctxview.store import LcmStore

    live = None
    if DEMO_LIVE.is_file():
        from ctxview.livefile import load_live_messages

        live = tuple(load_live_messages(str(DEMO_LIVE)))
    params = replace(DEMO_PARAMS, live_messages=live)
    with LcmStore(DEMO_DB) as store:
        session = store.load_session(None)
    trace = SessionAssembler(session).run(params)
    assert trace.messages
    assert js_parse(render(trace, "native")) == trace.messages
    out = json.loads(render(trace, "openai"))
    body = json.loads(render(trace, "anthropic"))
    check_openai(out)
    check_anthropic(body)
    assert f"{trace.summary.final_tokens:,} tokens in {len(trace.messages):,} messages" in render(trace, "markdown")
    doc = js_parse(render(trace, "trace"))
    assert doc["estimatedTokens"] == trace.summary.final_tokens
    assert len(doc["decisions"]) == len(trace.decisions)
    assert len(render(trace, "jsonl").splitlines()) == len(trace.messages)
    validate_with_openai_sdk(out)  # last: skipped when the SDKs are not installed
    validate_with_anthropic_sdk(body)


# --- writing files ----------------------------------------------------------------------------------


def test_write_export_creates_and_refuses_to_overwrite_without_force(tmp_path: Path) -> None:
    target = tmp_path / "ctx.json"
    assert write_export("one\n", target) == target
    assert target.read_text() == "one\n"
    with pytest.raises(InputError, match=r"ctx\.json exists; use --force to overwrite"):
        write_export("two\n", target)
    assert target.read_text() == "one\n"
    write_export("two\n", target, force=True)
    assert target.read_text() == "two\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ctx.json"]
    umask = os.umask(0)
    os.umask(umask)
    assert target.stat().st_mode & 0o777 == 0o666 & ~umask


def test_a_failed_write_leaves_no_partial_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "new.json"
    existing = tmp_path / "old.json"
    existing.write_text("original\n")

    def fail(*args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", fail)
    with pytest.raises(InputError, match=r"cannot write .*new\.json: No space left on device"):
        write_export("x" * 100_000, target)
    with pytest.raises(InputError, match="No space left on device"):
        write_export("replacement\n", existing, force=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old.json"]
    assert existing.read_text() == "original\n"


def test_write_export_errors_name_the_problem(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="does not exist"):
        write_export("x", tmp_path / "missing" / "out.json")
    with pytest.raises(InputError, match="is a directory"):
        write_export("x", tmp_path)


def test_pretty_js_keeps_javascript_number_text_and_escapes_lone_surrogates() -> None:
    value = {"n": [1, 2.5, JSNumber(1e21, "1e+21")], "s": "x\ud800y", "e": {}, "l": [], "t": (1,)}
    assert pretty_js(value) == (
        '{\n  "n": [\n    1,\n    2.5,\n    1e+21\n  ],\n  "s": "x\\ud800y",\n'
        '  "e": {},\n  "l": [],\n  "t": [\n    1\n  ]\n}'
    )
    assert pretty_js({"score": float("nan")}) == '{\n  "score": null\n}'  # as JSON.stringify writes NaN
