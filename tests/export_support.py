"""Shared by the export and diff tests: hand-built traces, parity runs, and API structure checks.

The structure checks state the rules the APIs enforce on requests (the SDK
types do not check them): every tool call answered exactly once right after
it, ids that match, no empty or blank blocks, alternating Anthropic roles.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Any

import pytest

from ctxview.jsjson import is_blank, js_parse
from ctxview.model import Decision, Params, RunSummary, Trace
from tests.parity.corpus import case_dir, case_ids

REPO_ROOT = Path(__file__).resolve().parents[1]
DEMO_DB = REPO_ROOT / "sample_sessions" / "demo.db"
DEMO_LIVE = REPO_ROOT / "sample_sessions" / "demo-live.json"

SYNTHETIC = (
    "[lossless-claw] missing tool result in session history; inserted synthetic error result for transcript repair."
)

# Cases chosen with a script over expected.json: tool pairs with synthetic results and an
# appended live input (008, 012, 029, 046, 052), many pairs and three live appends (030),
# a synthetic result whose call was clamped away (004), a real result whose call was clamped away (031).
TOOL_CASES = ("004", "008", "012", "029", "030", "031", "046", "052")


def cases_dir() -> Path:
    """The 0.15 line's parity cases, unpacked from the corpus packed in the repository."""
    return case_dir("000").parent


def all_case_ids() -> list[str]:
    return case_ids("0.15")


def expected(case: str) -> dict[str, Any]:
    return js_parse((cases_dir() / case / "expected.json").read_text(encoding="utf-8"))


def run_case(case: str) -> Trace:
    """Assemble a parity case with the real pipeline, as ``assemble --params`` does."""
    from ctxview.params_io import build_params, default_params, read_params_file
    from ctxview.pipeline import SessionAssembler
    from ctxview.store import LcmStore

    directory = cases_dir() / case
    fields, conversation = read_params_file(directory / "params.json")
    params = build_params(default_params(), fields, source="params.json", from_file=True)
    with LcmStore(directory / "session.db") as store:
        session = store.load_session(conversation)
    return SessionAssembler(session).run(params)


def decision(
    key: str,
    outcome: str,
    *,
    tokens: int = 10,
    score: float | None = None,
    kind: str = "message",
    label: str = "user",
    reason: str = "",
    segment: str = "evictable",
) -> Decision:
    ordinal = int(key[2:]) if key.startswith("o:") else None
    live = int(key[2:]) if key.startswith("l:") else None
    return Decision(
        key=key,
        ordinal=ordinal,
        live_index=live,
        kind=kind if live is None else "live",
        label=label,
        role=label if label in ("user", "assistant", "toolResult") else "user",
        source_role=None,
        message_id=None,
        seq=None,
        summary_id=None,
        tokens=tokens,
        serialized_tokens=None,
        score=score,
        matched_terms=(),
        segment=segment,  # type: ignore[arg-type]
        selected=outcome in ("kept", "fresh-tail"),
        outcome=outcome,  # type: ignore[arg-type]
        reason=reason or f"{outcome} by hand",
    )


def make_trace(
    messages: list[Any],
    *,
    keys: list[str | None] | None = None,
    decisions: list[Decision] | None = None,
    params: Params | None = None,
    final_tokens: int = 100,
    assembler_tokens: int = 90,
) -> Trace:
    """A trace built by hand, for format tests that must not depend on the assembler."""
    summary = RunSummary(
        selection_mode="prompt-aware",
        fresh_tail_ordinal=3,
        token_budget=4000,
        effective_budget=4000,
        reserved_tokens=0,
        tail_tokens=40,
        focus_tokens=0,
        evictable_total_tokens=500,
        kept_evictable_tokens=50,
        remaining_budget=3960,
        assembler_tokens=assembler_tokens,
        final_tokens=final_tokens,
    )
    return Trace(
        params=params or Params(token_budget=4000, prompt="deploy", fresh_tail_count=8),
        conversation_id=1,
        summary=summary,
        decisions=decisions or [],
        messages=messages,
        message_keys=keys if keys is not None else [None] * len(messages),
        assembler_messages=messages,
        kept_ordinals=[],
        unresolved_ordinals=[],
        context_ordinals=[],
        stages={},
    )


# --- request structure rules ----------------------------------------------------------------

_OPENAI_KEYS = {
    "system": {"role", "content"},
    "user": {"role", "content"},
    "assistant": {"role", "content", "tool_calls"},
    "tool": {"role", "tool_call_id", "content"},
}


def check_openai(messages: list[dict[str, Any]]) -> None:
    """Chat Completions rules: each call answered by exactly one tool message right after its turn."""
    seen_ids: set[str] = set()
    index = 0
    while index < len(messages):
        message = messages[index]
        role = message["role"]
        assert set(message) <= _OPENAI_KEYS[role], message
        assert role != "tool", f"tool message {index} does not follow an assistant turn with its call"
        if role in ("system", "user"):
            _check_openai_content(message["content"], allow_images=role == "user")
        if role == "assistant":
            calls = message.get("tool_calls") or []
            assert message["content"] is not None or calls, f"empty assistant message {index}"
            if message["content"] is not None:
                _check_openai_content(message["content"], allow_images=False)
            ids = []
            for call in calls:
                assert set(call) == {"id", "type", "function"} and call["type"] == "function"
                assert isinstance(call["function"]["name"], str) and call["function"]["name"]
                assert isinstance(call["function"]["arguments"], str)
                assert 0 < len(call["id"]) <= 40, call["id"]
                assert call["id"] not in seen_ids, f"duplicate tool call id {call['id']}"
                seen_ids.add(call["id"])
                ids.append(call["id"])
            answers = messages[index + 1 : index + 1 + len(ids)]
            assert [a["role"] for a in answers] == ["tool"] * len(ids), f"calls of message {index} not answered"
            assert [a["tool_call_id"] for a in answers] == ids
            for answer in answers:
                assert isinstance(answer["content"], (str, list))
                if isinstance(answer["content"], list):
                    _check_openai_content(answer["content"], allow_images=False)
            index += 1 + len(ids)
            continue
        index += 1


def _check_openai_content(content: Any, *, allow_images: bool) -> None:
    if isinstance(content, str):
        assert not is_blank(content)
        return
    assert isinstance(content, list) and content
    for part in content:
        if part["type"] == "text":
            assert not is_blank(part["text"])
        else:
            assert allow_images and part["type"] == "image_url", part
            assert part["image_url"]["url"]


_ANTHROPIC_ID = re.compile(r"^[A-Za-z0-9_-]+$")


def check_anthropic(body: dict[str, Any]) -> None:
    """Messages API rules: roles alternate, no empty or blank blocks, tool_use answered in the next turn."""
    assert set(body) <= {"system", "messages"}
    if "system" in body:
        assert isinstance(body["system"], str) and not is_blank(body["system"])
    messages = body["messages"]
    seen_ids: set[str] = set()
    for index, message in enumerate(messages):
        assert set(message) == {"role", "content"}
        assert message["role"] in ("user", "assistant")
        if index:
            assert message["role"] != messages[index - 1]["role"], f"roles do not alternate at {index}"
        blocks = _blocks(message["content"])
        assert blocks, f"empty message {index}"
        for block in blocks:
            _check_anthropic_block(block, message["role"])
        calls = [b["id"] for b in blocks if b["type"] == "tool_use"]
        for call_id in calls:
            assert _ANTHROPIC_ID.match(call_id), call_id
            assert call_id not in seen_ids, f"duplicate tool_use id {call_id}"
            seen_ids.add(call_id)
        results = [b for b in blocks if b["type"] == "tool_result"]
        if results:
            assert message["role"] == "user"
            previous = _blocks(messages[index - 1]["content"]) if index else []
            asked = [b["id"] for b in previous if b["type"] == "tool_use"]
            assert [r["tool_use_id"] for r in results] == asked, f"results of turn {index} do not match the calls"
            assert [b["type"] for b in blocks[: len(results)]] == ["tool_result"] * len(results), "results not first"
        if calls:
            assert index + 1 < len(messages), "tool_use in the last turn is not answered"
            following = [b for b in _blocks(messages[index + 1]["content"]) if b["type"] == "tool_result"]
            assert [r["tool_use_id"] for r in following] == calls
    if messages and messages[-1]["role"] == "assistant":
        last = _blocks(messages[-1]["content"])[-1]
        if last["type"] == "text":
            assert last["text"] == last["text"].rstrip(), "final assistant text ends with whitespace"


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        assert not is_blank(content)
        return [{"type": "text", "text": content}]
    assert isinstance(content, list)
    return content


def _check_anthropic_block(block: dict[str, Any], role: str) -> None:
    kind = block["type"]
    if kind == "text":
        assert set(block) == {"type", "text"} and not is_blank(block["text"])
    elif kind == "tool_use":
        assert role == "assistant" and set(block) == {"type", "id", "name", "input"}
        assert isinstance(block["input"], dict) and block["name"]
    elif kind == "tool_result":
        assert role == "user" and set(block) <= {"type", "tool_use_id", "content", "is_error"}
        assert isinstance(block["is_error"], bool)
        if "content" in block:
            assert block["content"], "empty tool_result content list"
            for inner in block["content"]:
                assert inner["type"] in ("text", "image")
                if inner["type"] == "text":
                    assert not is_blank(inner["text"])
    elif kind == "thinking":
        assert role == "assistant" and block["signature"] and set(block) == {"type", "thinking", "signature"}
    elif kind == "redacted_thinking":
        assert role == "assistant" and block["data"]
    elif kind == "image":
        assert role == "user" and block["source"]["type"] in ("base64", "url")
    else:
        raise AssertionError(f"unexpected block type {kind}")


# --- SDK request types (test-only dependencies) -------------------------------------------------


def _materialize(value: Any) -> Any:
    """Pydantic validates ``Iterable`` fields lazily: walk them so every element is checked."""
    if isinstance(value, dict):
        return {k: _materialize(v) for k, v in value.items()}
    if isinstance(value, (str, bytes)):
        return value
    if isinstance(value, (list, tuple)) or hasattr(value, "__iter__"):
        return [_materialize(v) for v in value]
    return value


@functools.cache
def _adapter(name: str) -> Any:
    """Adapters are kept alive: their lazy iterators fail once the adapter is collected."""
    from pydantic import TypeAdapter

    if name == "openai":
        from openai.types.chat import ChatCompletionMessageParam

        return TypeAdapter(list[ChatCompletionMessageParam])
    from anthropic.types.message_create_params import MessageCreateParamsNonStreaming

    return TypeAdapter(MessageCreateParamsNonStreaming)


def validate_with_openai_sdk(messages: list[dict[str, Any]]) -> None:
    """The SDK's request type accepts the messages; extra keys would be dropped, so equality catches them."""
    pytest.importorskip("openai", reason="the openai SDK is a test-only dependency (pip install openai)")
    validated = _materialize(_adapter("openai").validate_python(messages))
    assert validated == messages


def validate_with_anthropic_sdk(body: dict[str, Any]) -> None:
    pytest.importorskip("anthropic", reason="the anthropic SDK is a test-only dependency (pip install anthropic)")
    request = {"model": "claude-sonnet-4-5", "max_tokens": 1024, **body}
    validated = _materialize(_adapter("anthropic").validate_python(request))
    assert validated == request
