"""Appendix A: stored form, part rows, token counts and coverage signatures of live messages."""

from __future__ import annotations

from ctxview.assembly.live import (
    assistant_pairing_ids,
    build_parts,
    canonical_metadata,
    flatten,
    live_signature,
    normalize_live_message,
    result_pairing_id,
    role_class,
    stored_form,
    structured_text,
)
from ctxview.jsjson import js_stringify

# --- G1 live messages (spec §12) --------------------------------------------------------

G1_USER = {"role": "user", "content": "Please read foo.txt"}
G1_CALL = {
    "role": "assistant",
    "content": [
        {"type": "text", "text": "Reading."},
        {"type": "toolCall", "id": "call_1", "name": "read", "arguments": {"path": "foo.txt"}},
    ],
}
G1_RESULT = {
    "role": "toolResult",
    "toolCallId": "call_1",
    "toolName": "read",
    "content": [{"type": "text", "text": "file body"}],
    "isError": False,
}
G1_DONE = {"role": "assistant", "content": "Done."}


# --- A.2 -------------------------------------------------------------------------------------


def test_flatten_examples_from_the_spec() -> None:
    assert flatten([{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]) == "a\nb"
    assert flatten([{"type": "toolCall", "id": "c", "name": "x", "arguments": {}}]) == ""
    assert flatten('{"text":"hi"}') == "hi"


def test_flatten_fallbacks() -> None:
    assert flatten(None) == ""
    assert flatten([]) == ""
    assert flatten([{"type": "thinking", "thinking": "t"}, {"type": "tool_result", "output": "o"}]) == ""
    # a list with an element that yields nothing and is not a tool/reasoning block is serialized
    assert flatten([{"type": "image", "url": "u"}]) == '[{"type":"image","url":"u"}]'
    assert flatten(5) == "5"
    # blank strings are returned as they are
    assert flatten("   ") == "   "


def test_structured_text_key_priorities_and_depth() -> None:
    assert structured_text({"message": "m", "text": "t"}) == "t"
    assert structured_text({"text": "  ", "summary": "s"}) == "s"
    assert structured_text({"segments": [{"text": "a"}, "b", 3]}) == "a\nb"
    assert structured_text({"payload": {"value": "deep"}}) == "deep"
    assert structured_text({"type": "reasoning", "text": "hidden"}) is None
    assert structured_text({"type": "tool_result", "output": "o"}) is None
    assert structured_text({"type": "tool_result", "toolOutputExternalized": True, "output": "o"}) == "o"
    assert structured_text({"type": "tool_result", "toolOutputExternalized": True, "output": " "}) is None
    nested: object = "x"
    for _ in range(6):
        nested = {"content": nested}
    assert structured_text(nested) == "x"  # the string sits at depth 6, the deepest allowed
    nested = {"content": nested}
    assert structured_text(nested) is None  # depth 7 > 6


def test_structured_text_json_looking_strings() -> None:
    assert structured_text('  ["a", {"text": "b"}] ') == "a\nb"
    assert structured_text("{not json}") == "{not json}"
    assert structured_text('{"other": 1}') == '{"other": 1}'


# --- A.1 ---------------------------------------------------------------------------------------


def test_stored_form_roles_and_content() -> None:
    assert stored_form({"role": "toolResult", "content": "x"}).role == "tool"
    assert stored_form({"role": "tool", "content": "x"}).role == "tool"
    assert stored_form({"role": "system", "content": "x"}).role == "system"
    assert stored_form({"role": "custom", "content": "x"}).role == "assistant"
    bash = stored_form({"role": "bashExecution", "command": "ls", "output": "a\nb"})
    assert (bash.role, bash.content) == ("assistant", "$ ls\na\nb")
    assert stored_form({"role": "user", "output": 3}).content == "$ \n3"
    assert stored_form({"role": "user"}).content == ""


def test_stored_token_counts_match_the_g1_item_tokens() -> None:
    # §12 G1: item tokens 5, 29, 9, 8 are the estimates of the reassembled content
    assert [stored_form(m).token_count for m in (G1_USER, G1_CALL, G1_RESULT, G1_DONE)] == [5, 29, 9, 8]


def test_stored_token_count_adds_top_level_reasoning() -> None:
    message = {"role": "assistant", "content": "Done.", "reasoning_content": "abcdefgh"}
    assert stored_form(message).token_count == 8 + 2


def test_stored_token_count_without_content_key() -> None:
    assert stored_form({"role": "user", "command": "echo", "output": "hi"}).token_count == 3  # "$ echo\nhi"


# --- A.3 ---------------------------------------------------------------------------------------


def _rows(message: dict) -> list[tuple]:
    from ctxview.assembly.live import stored_content

    return [
        (
            p.part_id,
            p.part_type,
            p.ordinal,
            p.text_content,
            p.tool_call_id,
            p.tool_name,
            p.tool_input,
            p.tool_output,
            p.metadata,
        )
        for p in build_parts(message, stored_content(message))
    ]


def test_build_parts_g1_metadata() -> None:
    assert _rows(G1_USER) == [
        ("estimate-part-0", "text", 0, "Please read foo.txt", None, None, None, None, '{"originalRole":"user"}')
    ]
    call_rows = _rows(G1_CALL)
    assert call_rows[0] == (
        "estimate-part-0",
        "text",
        0,
        "Reading.",
        None,
        None,
        None,
        None,
        '{"originalRole":"assistant","rawType":"text","raw":{"type":"text","text":"Reading."}}',
    )
    assert call_rows[1] == (
        "estimate-part-1",
        "tool",
        1,
        None,
        "call_1",
        "read",
        '{"path":"foo.txt"}',
        None,
        '{"originalRole":"assistant","rawType":"toolCall","raw":{"type":"toolCall","id":"call_1","name":"read",'
        '"arguments":{"path":"foo.txt"}}}',
    )
    assert _rows(G1_RESULT) == [
        (
            "estimate-part-0",
            "text",
            0,
            "file body",
            "call_1",
            "read",
            None,
            None,
            '{"originalRole":"toolResult","toolCallId":"call_1","toolName":"read","isError":false,"rawType":"text",'
            '"raw":{"type":"text","text":"file body"}}',
        )
    ]
    assert _rows(G1_DONE)[0][-1] == '{"originalRole":"assistant"}'


def test_build_parts_identity_reasoning_and_externalization_keys() -> None:
    message = {
        "role": "assistant",
        "content": "hi",
        "provider": "p",
        "api": "a",
        "model": "m",
        "responseModel": "r",
        "reasoning_content": "why",
        "rawPayloadExternalized": False,
        "fileBlocksExternalized": True,
        "externalizedFileIds": ["f1", 2, "f2"],
        "originalByteSize": 12.5,
        "externalizationReason": "big",
    }
    assert _rows(message)[0][-1] == (
        '{"originalRole":"assistant","modelProvider":"p","modelApi":"a","modelId":"m","responseModelId":"r",'
        '"topLevelReasoningField":"reasoning_content","topLevelReasoningContent":"why",'
        '"externalizedFileIds":["f1","f2"],"fileBlocksExternalized":true,"originalByteSize":12.5,'
        '"externalizationReason":"big"}'
    )


def test_build_parts_identity_only_on_ordinal_zero_and_reasoning_only_part() -> None:
    message = {
        "role": "assistant",
        "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}],
        "provider": "p",
        "api": "a",
        "model": "m",
    }
    rows = _rows(message)
    assert '"modelProvider":"p"' in rows[0][-1]
    assert "modelProvider" not in rows[1][-1]
    only = _rows({"role": "assistant", "content": [], "reasoning_content": "r"})
    assert only == [
        (
            "estimate-part-0",
            "reasoning",
            0,
            None,
            None,
            None,
            None,
            None,
            '{"originalRole":"assistant","rawType":"reasoning_content","topLevelReasoningField":"reasoning_content",'
            '"topLevelReasoningContent":"r","topLevelReasoningOnly":true}',
        )
    ]


def test_build_parts_other_shapes() -> None:
    assert _rows({"role": "user", "command": "ls", "output": "x"})[0][1:4] == ("text", 0, "$ ls\nx")
    assert _rows({"role": "user", "command": 5, "output": "x"})[0][-1] == '{"originalRole":"user","source":"bash-exec"}'
    unknown = _rows({"role": "user", "foo": 1})
    assert unknown[0][1] == "agent" and unknown[0][3] is None
    assert unknown[0][-1] == '{"originalRole":"user","source":"unknown-message-shape","raw":{"role":"user","foo":1}}'
    odd = _rows({"role": 7, "content": {"text": "t"}})
    assert odd[0][1:4] == ("agent", 0, "t")
    assert odd[0][-1] == '{"originalRole":"unknown","source":"non-array-content","raw":{"text":"t"}}'


def test_build_parts_block_normalization() -> None:
    rows = _rows(
        {
            "role": "assistant",
            "id": "top",
            "content": [
                "plain string",
                {"type": "reasoning", "summary": [{"text": " a "}, "a", {"value": "b"}]},
                {"type": "function_call", "call_id": "fc", "name": "bash", "arguments": '{"cmd":"pwd"}'},
                {"type": "custom", "rawType": "tool_use", "id": "tu", "input": None},
                {"type": "text", "text": ""},
            ],
        }
    )
    assert rows[0][1:5] == ("agent", 0, None, "top")
    assert rows[0][-1] == '{"originalRole":"assistant","toolCallId":"top","rawType":"agent","raw":"plain string"}'
    assert rows[1][1:4] == ("reasoning", 1, "a\nb")
    assert rows[2][4:7] == ("fc", "bash", '"{\\"cmd\\":\\"pwd\\"}"')
    assert rows[3][1] == "tool" and rows[3][4] == "tu" and rows[3][6] == "null"
    assert rows[3][-1].endswith(
        '"rawType":"tool_use","raw":{"type":"tool_use","rawType":"tool_use","id":"tu","input":null}}'
    )
    assert rows[4][3] == ""


# --- A.5 ---------------------------------------------------------------------------------------


def test_g5_signatures() -> None:
    assert live_signature({"role": "user", "content": "Start the job"}) == (
        '{"kind":"canonical-text","role":"user","content":"Start the job"}'
    )
    assert live_signature({"role": "toolResult", "toolCallId": "c1", "content": [{"type": "text", "text": "x"}]}) == (
        '{"kind":"canonical-tool-text","role":"tool","content":"x","toolCallId":"c1","toolName":null}'
    )


def test_tool_text_signature_normalizes_tool_name_and_falls_back_to_pairing_id() -> None:
    unknown = {
        "role": "toolResult",
        "toolCallId": "c1",
        "toolName": "unknown",
        "content": [{"type": "text", "text": "x"}],
    }
    empty = {"role": "toolResult", "toolCallId": "c1", "toolName": "", "content": [{"type": "text", "text": "x"}]}
    named = {"role": "toolResult", "toolCallId": "c1", "toolName": "read", "content": [{"type": "text", "text": "x"}]}
    plain = {"role": "toolResult", "toolCallId": "c1", "content": [{"type": "text", "text": "x"}]}
    assert live_signature(unknown) == live_signature(empty) == live_signature(plain) != live_signature(named)
    # string content: the part has no id column, so the message's pairing id is used
    assert live_signature({"role": "tool", "tool_call_id": "c9", "content": "out"}) == (
        '{"kind":"canonical-tool-text","role":"tool","content":"out","toolCallId":"c9","toolName":null}'
    )


def test_assembled_assistant_matches_its_live_copy() -> None:
    assembled = {
        "role": "assistant",
        "content": [{"type": "text", "text": "Done."}],
        "provider": "p",
        "api": "a",
        "model": "m",
        "usage": {"input": 0, "output": 8},
    }
    assert live_signature(assembled) == live_signature(G1_DONE)
    assert live_signature(G1_DONE) == '{"kind":"canonical-text","role":"assistant","content":"Done."}'


def test_sentinel_reasoning_is_ignored_for_canonical_text() -> None:
    legacy = {"role": "assistant", "content": [{"type": "text", "text": "answer"}]}
    upgraded = {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "reasoning", "thinkingSignature": "reasoning_content"},
            {"type": "text", "text": "answer"},
        ],
        "provider": "moonshot",
        "api": "openai-completions",
        "model": "kimi",
    }
    assert live_signature(upgraded) == live_signature(legacy)


def test_lossless_signature_strips_identity_and_replayable_signatures() -> None:
    call = {"type": "toolCall", "id": "c1", "name": "read", "arguments": {}}
    bare = {"role": "assistant", "content": [{"type": "text", "text": "a"}, call]}
    with_identity = {**bare, "provider": "p", "api": "x", "model": "m"}
    assert live_signature(bare) == live_signature(with_identity)
    assert live_signature(bare).startswith('{"role":"assistant","content":"a","parts":[{"partType":"text"')
    signed = {"role": "assistant", "content": [{"type": "thinking", "thinking": "t", "thinkingSignature": "s1"}, call]}
    unsigned = {"role": "assistant", "content": [{"type": "thinking", "thinking": "t"}, call]}
    assert live_signature(signed) == live_signature(unsigned)
    openai_sig = '{"type":"reasoning","id":"rs_1"}'
    openai = {
        "role": "assistant",
        "content": [{"type": "thinking", "thinking": "t", "thinkingSignature": openai_sig}, call],
    }
    assert live_signature(openai) != live_signature(unsigned)
    empty_thinking = {
        "role": "assistant",
        "content": [{"type": "thinking", "thinking": "", "thinkingSignature": "s"}, call],
    }
    assert '"thinkingSignature\\":\\"s\\"' in live_signature(empty_thinking)


def test_canonical_metadata_keeps_text_without_identity_byte_for_byte() -> None:
    text = '{"originalRole": "user"}'
    assert canonical_metadata(text) == text
    assert canonical_metadata('{"originalRole":"a","modelId":"m","x":1}') == '{"originalRole":"a","x":1}'
    assert canonical_metadata("not json") == "not json"
    assert canonical_metadata(None) is None


# --- §9.4, §9.7, §9.8 --------------------------------------------------------------------------


def test_normalize_projects_system_and_tool_roles() -> None:
    system = {"role": "system", "content": "be brief", "timestamp": 1}
    projected = normalize_live_message(system)
    assert projected == {"role": "user", "content": "be brief", "timestamp": 1}
    assert list(projected) == ["role", "content", "timestamp"]
    tool = {"role": "tool", "toolCallId": "c1", "content": "x", "timestamp": 5}
    assert js_stringify(normalize_live_message(tool)) == (
        '{"role":"toolResult","toolCallId":"c1","content":[{"type":"text","text":"x"}],"timestamp":5}'
    )
    user = {"role": "user", "content": "hi"}
    assert normalize_live_message(user) is user
    no_content = normalize_live_message({"role": "system"})
    assert no_content == {"role": "user", "content": ""}


def test_pairing_ids_stop_at_an_empty_string() -> None:
    message = {
        "role": "assistant",
        "content": [
            {"type": "toolCall", "toolCallId": "", "id": "ignored"},
            {"type": "tool_call", "id": "t1"},
            {"type": "functionCall", "call_id": "f1", "id": "later"},
            {"type": "text", "id": "not-a-call"},
        ],
    }
    assert assistant_pairing_ids(message) == ["t1", "f1"]
    assert assistant_pairing_ids({"role": "user", "content": message["content"]}) == []
    result = {"role": "toolResult", "toolCallId": "", "content": [{"type": "tool_result", "tool_use_id": "r1"}]}
    assert result_pairing_id(result) == "r1"
    assert result_pairing_id({"role": "tool", "id": "x"}) == "x"
    assert result_pairing_id({"role": "user", "toolCallId": "x"}) is None


def test_role_class() -> None:
    assert [role_class({"role": r}) for r in ("tool", "toolResult", "user", "system", "assistant", "other")] == [
        "toolResult",
        "toolResult",
        "user",
        "user",
        "assistant",
        "assistant",
    ]
    assert role_class("not a message") == "assistant"
