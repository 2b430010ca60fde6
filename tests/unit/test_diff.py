"""Diffs: outcome changes per item and the first message where two assembled lists differ."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from ctxview.assembly.tokens import serialized_message_tokens
from ctxview.diff import diff_exports, diff_to_json, diff_traces, format_diff, load_export
from ctxview.errors import InputError
from ctxview.export import render, write_export
from tests.export_support import cases_dir, decision, make_trace, run_case

M0 = {"role": "user", "content": "Why did the deploy fail?"}
M1 = {"role": "assistant", "content": [{"type": "text", "text": "The migration hook timed out."}]}
M2 = {"role": "user", "content": "Roll back."}
M2B = {"role": "user", "content": "Roll back to revision 41."}


def trace_a() -> object:
    return make_trace(
        [M0, M1, M2],
        keys=["o:0", "o:1", "o:2"],
        decisions=[
            decision("o:0", "kept", tokens=8, score=2.0),
            decision("o:1", "kept", tokens=9, label="assistant"),
            decision("o:2", "fresh-tail", tokens=4),
            decision("o:3", "evicted", tokens=300, score=0.5, reason="evicted: lowest score"),
        ],
        final_tokens=60,
    )


def trace_b() -> object:
    return make_trace(
        [M0, M1, M2B, M2],
        keys=["o:0", "o:1", "o:3", "o:2"],
        decisions=[
            decision("o:0", "kept", tokens=8, score=2.0),
            decision("o:1", "kept", tokens=9, label="assistant"),
            decision("o:2", "fresh-tail", tokens=4),
            decision("o:3", "kept", tokens=300, score=0.5, reason="kept: fits the larger budget"),
            decision("l:0", "appended", tokens=6, label="live", reason="appended live input"),
        ],
        final_tokens=400,
    )


def test_identical_traces() -> None:
    result = diff_traces(trace_a(), trace_a())
    assert result.identical and result.first_difference is None and result.changes == []
    assert result.prefix_messages == 3
    assert result.prefix_tokens == sum(serialized_message_tokens(m) for m in (M0, M1, M2))
    text = format_diff(result)
    assert "assembled messages: identical (3 messages, sha256 " in text
    assert "item outcomes: no item changed outcome (4 items)" in text


def test_changed_outcomes_and_first_differing_message() -> None:
    result = diff_traces(trace_a(), trace_b())
    assert not result.identical
    assert result.first_difference == 2
    assert result.prefix_messages == 2
    assert result.prefix_tokens == serialized_message_tokens(M0) + serialized_message_tokens(M1)
    assert result.message_a == M2 and result.message_b == M2B
    assert [(c.key, c.outcome_a, c.outcome_b, c.tokens, c.reason) for c in result.changes] == [
        ("o:3", "evicted", "kept", 300, "kept: fits the larger budget"),
        ("l:0", None, "appended", 6, "appended live input"),
    ]
    text = format_diff(result)
    assert (
        f"assembled messages: the first 2 are identical (~{result.prefix_tokens:,} tokens a prompt cache can reuse); "
        "they differ from message 3 on"
    ) in text
    assert "  A[3]: user: Roll back." in text
    assert "  B[3]: user: Roll back to revision 41." in text
    assert "items that changed outcome: 2" in text
    assert (
        "     3  user              300  evicted               kept                  kept: fits the larger budget"
        in text
    )
    assert "    L0  live                6  (absent)              appended              appended live input" in text


def test_a_shorter_list_that_is_a_prefix_differs_where_it_ends() -> None:
    shorter = make_trace([M0, M1])
    result = diff_traces(shorter, trace_a())
    assert result.first_difference == 2
    assert result.message_a is None and result.message_b == M2
    assert "  A[3]: (no message: the list ends here)" in format_diff(result)


def test_different_first_message_means_no_cache_prefix() -> None:
    result = diff_traces(make_trace([M2]), make_trace([M0]))
    assert result.first_difference == 0 and result.prefix_tokens == 0
    assert "no shared prefix for a prompt cache" in format_diff(result)


def test_trace_exports_diff_like_the_traces(tmp_path: Path) -> None:
    a = write_export(render(trace_a(), "trace"), tmp_path / "a.trace.json")
    b = write_export(render(trace_b(), "trace"), tmp_path / "b.trace.json")
    from_files = diff_exports(a, b)
    direct = diff_traces(trace_a(), trace_b())
    assert from_files.first_difference == direct.first_difference == 2
    assert from_files.prefix_tokens == direct.prefix_tokens
    assert [(c.key, c.outcome_a, c.outcome_b) for c in from_files.changes] == [
        (c.key, c.outcome_a, c.outcome_b) for c in direct.changes
    ]
    assert from_files.a.kind == "trace" and from_files.a.tokens == 60 and from_files.b.tokens == 400


def test_native_and_jsonl_exports_compare_messages_only(tmp_path: Path) -> None:
    a = write_export(render(trace_a(), "native"), tmp_path / "a.json")
    b = write_export(render(trace_b(), "jsonl"), tmp_path / "b.jsonl")
    result = diff_exports(a, b)
    assert result.first_difference == 2 and result.changes == [] and not result.decisions_compared
    assert (result.a.kind, result.b.kind) == ("messages", "jsonl")
    assert f"item outcomes: not compared ({a} and {b} carry no decisions; export with --format trace)" in format_diff(
        result
    )
    # a trace export and a native export of the same run have the same messages
    t = write_export(render(trace_a(), "trace"), tmp_path / "a.trace.json")
    assert diff_exports(a, t).messages_identical


def test_openai_exports_compare_with_each_other_but_not_with_native(tmp_path: Path) -> None:
    a = write_export(render(trace_a(), "openai"), tmp_path / "a.openai.json")
    b = write_export(render(trace_b(), "openai"), tmp_path / "b.openai.json")
    assert diff_exports(a, b).first_difference == 2
    tool_trace = make_trace(
        [
            {"role": "assistant", "content": [{"type": "toolCall", "id": "c", "name": "ls", "arguments": {}}]},
            {"role": "toolResult", "toolCallId": "c", "toolName": "ls", "content": [{"type": "text", "text": "x"}]},
        ]
    )
    openai = write_export(render(tool_trace, "openai"), tmp_path / "tools.openai.json")
    native = write_export(render(tool_trace, "native"), tmp_path / "tools.json")
    with pytest.raises(InputError, match=r"holds openai messages and .* holds native messages"):
        diff_exports(openai, native)
    anthropic = write_export(render(tool_trace, "anthropic"), tmp_path / "tools.anthropic.json")
    assert load_export(anthropic).kind == "anthropic"
    with pytest.raises(InputError, match="holds anthropic messages"):
        diff_exports(anthropic, native)


def test_unusable_files_are_named(tmp_path: Path) -> None:
    md = write_export(render(trace_a(), "markdown"), tmp_path / "a.md")
    with pytest.raises(InputError, match="Markdown export"):
        load_export(md)
    params = tmp_path / "params.json"
    params.write_text('{"tokenBudget": 10}')
    with pytest.raises(InputError, match="not a ctxview export"):
        load_export(params)
    with pytest.raises(InputError, match="not found"):
        load_export(tmp_path / "nope.json")


def test_diff_json_shape() -> None:
    data = diff_to_json(diff_traces(trace_a(), trace_b(), label_a="small", label_b="large"))
    assert data["a"]["label"] == "small" and data["b"]["estimatedTokens"] == 400
    assert (data["identical"], data["firstDifference"], data["prefixMessages"]) == (False, 2, 2)
    assert data["changes"][0] == {
        "key": "o:3",
        "item": "3",
        "label": "user",
        "outcomeA": "evicted",
        "outcomeB": "kept",
        "tokens": 300,
        "scoreA": 0.5,
        "scoreB": 0.5,
        "reason": "kept: fits the larger budget",
    }


def test_two_budgets_on_a_parity_case() -> None:
    """Halving the budget of case 008 evicts items; the trace says which, and where the prefix breaks."""
    cases_dir()
    full = run_case("008")
    from ctxview.pipeline import SessionAssembler
    from ctxview.store import LcmStore

    with LcmStore(cases_dir() / "008" / "session.db") as store:
        session = store.load_session(None)
    small = SessionAssembler(session).run(replace(full.params, token_budget=full.params.token_budget // 2))
    result = diff_traces(full, small)
    by_key_full = full.by_key()
    by_key_small = small.by_key()
    expected_changes = [k for k in by_key_full if by_key_full[k].outcome != by_key_small[k].outcome]
    assert expected_changes, "a halved budget must change some outcome"
    assert [c.key for c in result.changes] == expected_changes
    first = next(
        (i for i, (x, y) in enumerate(zip(full.messages, small.messages, strict=False)) if x != y),
        min(len(full.messages), len(small.messages)),
    )
    assert result.first_difference == first
