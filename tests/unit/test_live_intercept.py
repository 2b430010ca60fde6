"""§9.2 step 3: large live tool results become ``[LCM Tool Output: …]`` references.

Summaries, file ids, byte sizes and reference texts come from Node
(tests/unit/data/gen_live_intercept_vectors.mjs); the block and message shapes
below are written out in the engine's key order.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ctxview.assembly.live_intercept import (
    DEFAULT_LARGE_FILE_TOKEN_THRESHOLD,
    BlockRewrite,
    LiveInterceptError,
    ToolCallInput,
    build_tool_call_input_map,
    intercept_large_live_tool_results,
    live_tool_output_file_id,
    text_exploration_summary,
)
from ctxview.assembly.stubs import format_en_us
from ctxview.jsjson import js_parse, js_stringify
from tests.parity.corpus import case_dir

DATA = Path(__file__).parent / "data" / "live_intercept_vectors.json"
VECTORS: dict[str, Any] = json.loads(DATA.read_text(encoding="utf-8"))
PAYLOADS: dict[str, dict[str, Any]] = VECTORS["payloads"]
HUNDRED_K = ("x" * 99 + "\n") * 1000  # 100,000 ASCII characters = 25,000 tokens


def payload(name: str) -> dict[str, Any]:
    entry = dict(PAYLOADS[name])
    if entry["content"] is None:
        entry["content"] = HUNDRED_K
    return entry


def sorted_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def text_block(vector: str, /, **after: Any) -> dict[str, Any]:
    """A replaced plain-text block, keys in the engine's order; ``after`` = call id / error / name keys."""
    v = payload(vector)
    block: dict[str, Any] = {
        "type": "text",
        "text": v["reference"],
        "rawType": "tool_result",
        "externalizedFileId": v["fileId"],
        "originalByteSize": v["bytes"],
        "toolOutputExternalized": True,
        "externalizationReason": "large_tool_result",
    }
    block.update(after)
    return block


def tool_result(call_id: str, content: Any, name: str = "exec", **extra: Any) -> dict[str, Any]:
    return {"role": "toolResult", "toolCallId": call_id, "toolName": name, "content": content, **extra}


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def run(live: list[Any], threshold: int = 10, **kwargs: Any) -> Any:
    return intercept_large_live_tool_results(live, conversation_id=7, token_threshold=threshold, **kwargs)


# --- Node cross-checks ---------------------------------------------------------------------------


@pytest.mark.parametrize("vector", VECTORS["summaries"], ids=[v["name"] for v in VECTORS["summaries"]])
def test_text_exploration_summary_matches_node(vector: dict[str, Any]) -> None:
    assert text_exploration_summary(vector["content"], vector["fileName"]) == vector["summary"]


@pytest.mark.parametrize("name", sorted(PAYLOADS))
def test_file_id_matches_node(name: str) -> None:
    v = payload(name)
    assert live_tool_output_file_id(v["conversationId"], v["toolName"], v["callId"], v["content"]) == v["fileId"]


@pytest.mark.parametrize(("number", "text_form"), VECTORS["locale"])
def test_byte_counts_use_en_us_grouping(number: int, text_form: str) -> None:
    assert format_en_us(number) == text_form


def test_summary_keeps_a_lone_surrogate_where_js_cuts_a_pair() -> None:
    head = next(v for v in VECTORS["summaries"] if v["name"] == "emoji_cut_head")
    summary = text_exploration_summary(head["content"], "exec.txt")
    assert f"Opening excerpt: {'a' * 499}\ud83d.\n" in summary
    assert "\\ud83d" in js_stringify(summary)


# --- the parity example ------------------------------------------------------------------------


def test_case_306_third_live_message_is_rewritten_exactly() -> None:
    params = js_parse((case_dir("306") / "params.json").read_text(encoding="utf-8"))
    expected = json.loads((case_dir("306") / "expected.json").read_text(encoding="utf-8"))
    live = params["liveMessages"]

    result = intercept_large_live_tool_results(live, conversation_id=params["conversationId"])

    assert result.indexes == [2]
    assert result.messages is not live
    assert result.messages[0] is live[0] and result.messages[1] is live[1]
    # the case falls back to the live window, which fits the budget: final messages = rewritten window
    assert [sorted_json(m) for m in result.messages] == [sorted_json(m) for m in expected["messages"]]
    want = expected["messages"][2]["content"][0]
    in_engine_order = {
        "role": "toolResult",
        "toolCallId": "call_1",
        "toolName": "read",
        "content": [
            {
                "type": "text",
                "text": want["text"],
                "rawType": "tool_result",
                "externalizedFileId": "file_872b240e8d9d1858",
                "originalByteSize": 112200,
                "toolOutputExternalized": True,
                "externalizationReason": "large_tool_result",
                "tool_use_id": "call_1",
                "name": "read",
            }
        ],
    }
    assert js_stringify(result.messages[2]) == js_stringify(in_engine_order)
    (message,) = result.intercepted
    assert message.blocks == (
        BlockRewrite(0, "externalized", "read", "call_1", 28050, file_id="file_872b240e8d9d1858", byte_size=112200),
    )
    assert message.file_ids == ["file_872b240e8d9d1858"]
    assert message.describe() == "replaced by a file reference, 112,200 bytes"
    assert want["text"].startswith("[LCM Tool Output: file_872b240e8d9d1858 | tool=read | 112,200 bytes]\n")


# --- the threshold ---------------------------------------------------------------------------------


def test_default_threshold_is_reached_at_exactly_25000_tokens() -> None:
    v = payload("at_default_threshold")
    live = [{"role": "user", "content": "go"}, tool_result("call_a", [text(HUNDRED_K)], name="bash")]
    result = intercept_large_live_tool_results(live, conversation_id=1)
    assert DEFAULT_LARGE_FILE_TOKEN_THRESHOLD == 25_000
    assert result.indexes == [1]
    assert result.messages[1]["content"] == [text_block("at_default_threshold", tool_use_id="call_a", name="bash")]
    assert result.intercepted[0].describe() == "replaced by a file reference, 100,000 bytes"
    assert v["bytes"] == 100_000


def test_one_token_below_the_default_threshold_is_left_alone() -> None:
    live = [tool_result("call_a", [text(HUNDRED_K[:-4])], name="bash")]
    result = intercept_large_live_tool_results(live, conversation_id=1)
    assert result.intercepted == ()
    assert result.messages is live


def test_configured_threshold_is_inclusive() -> None:
    content = payload("small_plain")["content"]  # 40 ASCII characters = 10 tokens
    below = run([tool_result("c1", [text(content)])], threshold=11)
    at = run([tool_result("c1", [text(content)])], threshold=10)
    assert below.intercepted == ()
    assert at.messages[0]["content"] == [text_block("small_plain", tool_use_id="c1", name="exec")]


def test_threshold_below_one_counts_as_one() -> None:
    assert run([tool_result("c1", [text("")])], threshold=0).intercepted == ()
    assert run([tool_result("c1", [text("")])], threshold=-5).intercepted == ()
    assert run([tool_result("c1", [text("a")])], threshold=0).indexes == [0]


# --- message shapes ---------------------------------------------------------------------------------


def test_string_content_becomes_one_block_and_keys_keep_their_order() -> None:
    message = {
        "role": "tool",
        "content": payload("string_content")["content"],
        "toolCallId": "c1",
        "toolName": "exec",
        "timestamp": 5,
    }
    result = run([message])
    rewritten = result.messages[0]
    assert list(rewritten) == ["role", "content", "toolCallId", "toolName", "timestamp"]
    assert rewritten["content"] == [text_block("string_content", tool_use_id="c1", name="exec")]
    assert message["content"] == payload("string_content")["content"]  # the host's message is not mutated


def test_several_blocks_and_several_messages() -> None:
    image = {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}
    short = text("ok")
    first = tool_result(
        "c1", [text(payload("small_plain")["content"]), image, short, text(payload("second_block")["content"])]
    )
    second = tool_result("c2", [text(payload("other_message")["content"])], name="grep")
    user = {"role": "user", "content": "x" * 400}
    result = run([first, user, second])

    assert result.indexes == [0, 2]
    assert result.messages[1] is user
    content = result.messages[0]["content"]
    assert content[0] == text_block("small_plain", tool_use_id="c1", name="exec")
    assert content[1] is image and content[2] is short
    assert content[3] == text_block("second_block", tool_use_id="c1", name="exec")
    assert [b.block_index for b in result.intercepted[0].blocks] == [0, 3]
    assert result.messages[2]["content"] == [text_block("other_message", tool_use_id="c2", name="grep")]
    assert (
        result.intercepted[0].describe()
        == "replaced by a file reference, 40 bytes; replaced by a file reference, 39 bytes"
    )


def test_function_call_output_block() -> None:
    v = payload("function_call_output")
    block = {"type": "function_call_output", "call_id": "fc_1", "output": v["content"], "status": "done"}
    result = run([{"role": "toolResult", "content": [block]}])
    assert js_stringify(result.messages[0]["content"][0]) == js_stringify(
        {
            "type": "function_call_output",
            "output": v["reference"],
            "externalizedFileId": v["fileId"],
            "originalByteSize": v["bytes"],
            "toolOutputExternalized": True,
            "externalizationReason": "large_tool_result",
            "call_id": "fc_1",
            "name": "tool-result",
        }
    )


def test_tool_result_block_with_nested_text_and_error_flags() -> None:
    v = payload("tool_result_nested")
    block = {
        "type": "tool_result",
        "tool_use_id": "tu_1",
        "name": "search",
        "content": [
            text("first hit text here"),
            {"type": "thinking", "thinking": "hidden"},
            text("second hit text here"),
        ],
        "is_error": True,
        "isError": False,
    }
    message = {"role": "toolResult", "toolCallId": "other", "toolName": "exec", "isError": False, "content": [block]}
    result = run([message])
    assert js_stringify(result.messages[0]["content"][0]) == js_stringify(
        {
            "type": "tool_result",
            "output": v["reference"],
            "externalizedFileId": v["fileId"],
            "originalByteSize": v["bytes"],
            "toolOutputExternalized": True,
            "externalizationReason": "large_tool_result",
            "tool_use_id": "tu_1",
            "is_error": True,
            "name": "search",
        }
    )


def test_block_camel_case_error_then_message_error_flag() -> None:
    content = payload("small_plain")["content"]
    camel = run([tool_result("c1", [{**text(content), "isError": True}], isError=False)])
    top = run([tool_result("c1", [text(content)], is_error=False)])
    assert camel.messages[0]["content"][0] == text_block("small_plain", tool_use_id="c1", isError=True, name="exec")
    assert top.messages[0]["content"][0] == text_block("small_plain", tool_use_id="c1", isError=False, name="exec")
    not_bool = run([tool_result("c1", [{**text(content), "is_error": "yes"}], isError=1)])
    assert not_bool.messages[0]["content"][0] == text_block("small_plain", tool_use_id="c1", name="exec")


def test_json_text_is_externalized_as_the_text_inside_it() -> None:
    inner = payload("json_text")["content"]
    result = run([tool_result("c1", [text(json.dumps({"text": inner, "meta": 1}))])])
    assert result.messages[0]["content"] == [text_block("json_text", tool_use_id="c1", name="exec")]


def test_missing_and_empty_identifiers() -> None:
    no_id = run([{"role": "toolResult", "toolName": "exec", "content": [text(payload("no_call_id")["content"])]}])
    assert no_id.messages[0]["content"] == [text_block("no_call_id", name="exec")]
    assert no_id.intercepted[0].blocks[0].call_id is None
    # an empty block-level id stops the lookup: the message's toolCallId is not used
    empty_id = run([tool_result("c1", [{**text(payload("no_call_id")["content"]), "tool_use_id": ""}])])
    assert empty_id.messages[0]["content"] == [text_block("no_call_id", name="exec")]
    # an empty tool name is kept as it is: "tool=unknown" in the reference, no "name" key
    nameless = run([tool_result("c1", [text(payload("empty_tool_name")["content"])], name="")])
    assert nameless.messages[0]["content"] == [text_block("empty_tool_name", tool_use_id="c1")]
    assert "| tool=unknown |" in payload("empty_tool_name")["reference"]
    assert "Text exploration summary (.txt):" in payload("empty_tool_name")["reference"]


def test_unicode_payload_sizes_and_id() -> None:
    v = payload("unicode_payload")
    assert v["bytes"] == 34  # "héllo " 7, emoji 4, 缓存 6, lone surrogate 3 (as U+FFFD), the rest 14
    result = run([tool_result("c1", [text(v["content"])])], threshold=5)
    assert result.messages[0]["content"] == [text_block("unicode_payload", tool_use_id="c1", name="exec")]


# --- what is left alone ---------------------------------------------------------------------------------


def test_untouched_shapes() -> None:
    big = "y" * 400
    live: list[Any] = [
        "a string message",
        17,
        [tool_result("c1", big)],
        {"role": "user", "content": big},
        {"role": "assistant", "content": [text(big)]},
        {"role": "system", "content": big},
        {"role": "toolResult", "toolCallId": "c1"},
        tool_result("c1", {"text": big}),
        tool_result("c1", 42),
        tool_result("c1", [None, 3, "loose string " + big, [text(big)], {"type": "text", "text": 5}]),
        tool_result("c1", [{"type": "thinking", "thinking": big}, {"type": "image", "data": big}]),
        tool_result("c1", [{"type": "tool_result", "tool_use_id": "c1"}, {"type": "toolResult", "output": None}]),
        tool_result("c1", [{"type": "tool_result", "content": "   "}, text("")]),
        tool_result("c1", [text(big)], name="lcm_describe"),
        tool_result("c1", [{"type": "text", "text": big, "name": "lcm_describe"}], name="exec"),
        tool_result(
            "c1", [text(f"  [Tool image: shot.png (image/png, 9 bytes) | {big} | LCM file: file_0123456789abcdef]\n")]
        ),
    ]
    result = run(live)
    assert result.intercepted == ()
    assert result.messages is live


def test_a_null_live_message_fails_the_whole_step() -> None:
    with pytest.raises(LiveInterceptError) as caught:
        run([tool_result("c1", [text("y" * 400)]), None])
    assert caught.value.index == 1
    assert caught.value.js_error == "TypeError: Cannot read properties of null (reading 'role')"  # as Node 24 words it
    # after the last user message the call map is built first and meets the null there
    with pytest.raises(LiveInterceptError) as in_map:
        run([{"role": "user", "content": "q"}, None, tool_result("c1", [text("y" * 400)])])
    assert in_map.value.index == 1


def test_an_empty_window_and_a_tuple_window() -> None:
    empty: list[Any] = []
    assert run(empty).messages is empty
    window = (tool_result("c1", [text(payload("small_plain")["content"])]),)
    assert run(window).indexes == [0]


# --- current turn vs older turns ------------------------------------------------------------------------


def assistant_call(call_id: str, name: str, arguments: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": [{"type": "toolCall", "id": call_id, "name": name, "arguments": arguments}]}


def test_current_turn_call_name_replaces_the_result_name() -> None:
    content = payload("renamed_current_turn")["content"]
    live = [
        {"role": "user", "content": "fetch"},
        assistant_call("c9", "fetch_logs", {"since": "1h"}),
        tool_result("c9", [text(content)], name="exec"),
    ]
    result = run(live)
    assert result.messages[2]["content"] == [text_block("renamed_current_turn", tool_use_id="c9", name="fetch_logs")]
    assert result.intercepted[0].blocks[0].tool_name == "fetch_logs"


def test_older_turn_results_keep_their_own_name() -> None:
    content = payload("not_renamed_older_turn")["content"]
    live = [
        assistant_call("c9", "fetch_logs", {"since": "1h"}),
        tool_result("c9", [text(content)], name="exec"),
        {"role": "user", "content": "again"},
        assistant_call("c9", "fetch_logs", {"since": "2h"}),  # the current turn reuses the id
        tool_result("c9", [text(content)], name="exec"),
    ]
    result = run(live)
    assert result.indexes == [1, 4]
    assert result.messages[1]["content"] == [text_block("not_renamed_older_turn", tool_use_id="c9", name="exec")]
    assert result.messages[4]["content"] == [text_block("renamed_current_turn", tool_use_id="c9", name="fetch_logs")]


def test_without_any_user_message_no_call_is_looked_up() -> None:
    content = payload("not_renamed_older_turn")["content"]
    live = [assistant_call("c9", "fetch_logs", {"since": "1h"}), tool_result("c9", [text(content)], name="exec")]
    assert run(live).messages[1]["content"] == [text_block("not_renamed_older_turn", tool_use_id="c9", name="exec")]


def test_renaming_to_lcm_describe_does_not_skip_but_the_own_name_does() -> None:
    content = payload("small_plain")["content"]
    live = [
        {"role": "user", "content": "q"},
        assistant_call("c1", "exec", {}),
        tool_result("c1", [text(content)], name="lcm_describe"),
    ]
    assert run(live).intercepted == ()


class FakeHost:
    def __init__(self, files: dict[str, str]) -> None:
        self.files = files
        self.asked: list[str] = []

    def read(self, path: str) -> str | None:
        self.asked.append(path)
        return self.files.get(path)


def read_turn(marker: str, path: str, *, older: bool = False) -> list[Any]:
    truncated = f"line 1\n{marker} 2000 more lines]"
    turn = [assistant_call("r1", "read", {"path": path}), tool_result("r1", [text(truncated)], name="read")]
    return [*turn, {"role": "user", "content": "next"}] if older else [{"role": "user", "content": "read it"}, *turn]


@pytest.mark.parametrize("marker", ["[Truncated:", "[read OUTPUT capped at"])
def test_truncated_current_turn_read_is_replaced_by_the_host_file(marker: str) -> None:
    whole = payload("read_recovered_big")["content"]
    host = FakeHost({"/srv/app/config.txt": whole})
    result = run(read_turn(marker, "/srv/app/config.txt"), read_file=host.read)
    assert host.asked == ["/srv/app/config.txt"]
    assert result.messages[2]["content"] == [text_block("read_recovered_big", tool_use_id="r1", name="read")]


def test_recovered_read_below_the_threshold_replaces_only_the_text() -> None:
    host = FakeHost({"/srv/small.txt": "tiny"})
    live = read_turn("[Truncated:", "/srv/small.txt")
    result = run(live, threshold=1000, read_file=host.read)
    assert result.messages[2] == {**live[2], "content": [{"type": "text", "text": "tiny"}]}
    assert result.intercepted[0].blocks == (BlockRewrite(0, "read-recovered", "read", "r1", 1),)
    assert result.intercepted[0].describe() == "read output recovered from the host file"


def test_recovered_read_in_a_result_block_sets_output_or_content() -> None:
    host = FakeHost({"/f": "tiny"})
    call = assistant_call("r1", "read", {"path": "/f"})
    with_content = {"type": "tool_result", "tool_use_id": "r1", "content": "x [Truncated: y]"}
    bare_output = {"type": "tool_result", "tool_use_id": "r1", "output": "x [Truncated: y]", "content": "ignored"}
    live = [{"role": "user", "content": "q"}, call, tool_result("r1", [with_content, bare_output], name="read")]
    content = run(live, threshold=1000, read_file=host.read).messages[2]["content"]
    assert js_stringify(content) == js_stringify(
        [
            {"type": "tool_result", "tool_use_id": "r1", "content": "tiny"},
            {"type": "tool_result", "tool_use_id": "r1", "output": "tiny", "content": "ignored"},
        ]
    )


@pytest.mark.parametrize(
    ("case", "expect_asked"),
    [("older turn", False), ("relative path", False), ("no marker", False), ("missing file", True)],
)
def test_read_recovery_does_not_apply(case: str, expect_asked: bool) -> None:
    host = FakeHost({})
    if case == "older turn":
        live = read_turn("[Truncated:", "/srv/x", older=True)
    elif case == "relative path":
        live = read_turn("[Truncated:", "srv/x")
    elif case == "no marker":
        live = read_turn("[Cut:", "/srv/x")
    else:
        live = read_turn("[Truncated:", "/srv/x")
    result = run(live, threshold=1000, read_file=host.read)
    assert result.intercepted == ()
    assert host.asked == (["/srv/x"] if expect_asked else [])


# --- the call map -------------------------------------------------------------------------------------------


def test_tool_call_input_map() -> None:
    messages: list[Any] = [
        "not a message",
        {"role": "user", "content": [{"type": "toolCall", "id": "u1", "arguments": {}}]},
        {
            "role": "assistant",
            "content": [
                {"type": "toolCall", "id": "a", "name": "read", "arguments": '{"path": "/x"}'},
                {"type": "tool_use", "id": "b", "name": "bash", "input": {"cmd": "ls"}, "arguments": {"no": 1}},
                {"type": "functionCall", "call_id": "c", "arguments": "not json"},
                {"type": "function_call", "id": "d", "name": 5, "arguments": "[1, 2]"},
                {"type": "toolCall", "id": "", "name": "empty", "arguments": {}},
                {"type": "text", "id": "e", "text": "x"},
                {"type": "toolCall", "id": "dup", "name": "one", "arguments": {}},
                {"type": "toolCall", "toolCallId": "g", "id": "ignored", "arguments": {"k": 1}},
            ],
        },
        {"role": "assistant", "content": [{"type": "tool_call", "id": "dup", "name": "two", "arguments": {}}]},
        {"role": "assistant", "content": [{"type": "tool_call", "id": "dup", "name": "three", "arguments": {}}]},
        {"role": "assistant", "content": "text only"},
    ]
    assert build_tool_call_input_map(messages) == {
        "a": ToolCallInput("read", {"path": "/x"}),
        "b": ToolCallInput("bash", {"cmd": "ls"}),
        "g": ToolCallInput(None, {"k": 1}),
    }


def test_a_call_first_seen_without_arguments_still_makes_its_id_ambiguous() -> None:
    messages = [
        {"role": "assistant", "content": [{"type": "toolCall", "id": "x", "name": "first"}]},
        {"role": "assistant", "content": [{"type": "toolCall", "id": "x", "name": "second", "arguments": {}}]},
    ]
    assert build_tool_call_input_map(messages) == {}
