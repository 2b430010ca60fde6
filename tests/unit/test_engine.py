"""§9.2 orchestration: G3, the §11.6 / §11.7 statements, fallbacks and the trace records."""

from __future__ import annotations

from typing import Any

import pytest

from ctxview.assembly import engine as engine_module
from ctxview.assembly.engine import reconcile, resolve_budget
from ctxview.assembly.render import assistant_usage
from ctxview.assembly.rules import RULES_0_15, EngineRules
from ctxview.assembly.tokens import estimate_tokens, serialized_message_tokens
from ctxview.jserrors import JSRangeError
from ctxview.jsjson import h16

BEGIN = "<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>"
END = "<<<END_OPENCLAW_INTERNAL_CONTEXT>>>"
G3_VOLATILE = (
    "[Inter-session message] sourceSession=agent:main:subagent:x sourceTool=subagent_announce\n"
    f"{BEGIN}\n[Internal task completion event]\nChild result: done.\n{END}"
)
TS = "[Sun 2026-06-21 13:19 GMT+3]"


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def assistant(text: str, *calls: str) -> dict[str, Any]:
    content: list[Any] = [{"type": "text", "text": text}]
    content += [{"type": "toolCall", "id": c, "name": "read", "arguments": {"path": c}} for c in calls]
    return {"role": "assistant", "content": content, "usage": assistant_usage(estimate_tokens(text))}


def result(call_id: str, text: str) -> dict[str, Any]:
    return {
        "role": "toolResult",
        "content": [{"type": "text", "text": text}],
        "toolCallId": call_id,
        "toolName": "read",
    }


def call(
    assembled: list[Any],
    live: list[Any] | None,
    budget: Any,
    *,
    protected: list[int] | None = None,
    estimate: int = 0,
    prompt: str | None = None,
    tools: list[str] | None = None,
    items: int | None = None,
    summaries: bool = True,
    found: bool = True,
    cap: int | None = None,
    rules: EngineRules = RULES_0_15,
) -> engine_module.EngineResult:
    keys = [f"o:{i}" for i in range(len(assembled))]
    hashes = [h16([assembled[i]]) for i in (protected or [])]
    return reconcile(
        assembled,
        keys,
        estimate,
        hashes,
        live_messages=live,
        token_budget=budget,
        prompt=prompt,
        available_tools=tools,
        context_item_count=len(assembled) if items is None else items,
        has_summary_items=summaries,
        lookup_miss=None if found else "no active conversation has session id 'x'",
        max_assembly_token_budget=cap,
        rules=rules,
    )


# --- G3 ---------------------------------------------------------------------------------------------


def g3() -> tuple[list[Any], list[Any]]:
    body = "Old stuff " * 20
    summary = user(
        "\n".join(
            [
                '<summary id="sum_old" kind="leaf" depth="0" descendant_count="0" trust="untrusted">',
                "  <content>",
                body,
                "  </content>",
                "</summary>",
            ]
        )
    )
    start = user("Start the job")
    started = {"role": "assistant", "content": [{"type": "text", "text": "Started."}], "usage": assistant_usage(9)}
    live = [user("Start the job"), {"role": "assistant", "content": [{"type": "text", "text": "Started."}]}]
    return [summary, start, started], [*live, user(G3_VOLATILE)]


def test_g3_sizes() -> None:
    assembled, live = g3()
    assert estimate_tokens(assembled[0]["content"]) == 80
    assert [serialized_message_tokens(m) for m in assembled] == [91, 11, 53]
    assert serialized_message_tokens(live[2]) == 62


def test_g3_roomy_budget_appends_the_volatile_input() -> None:
    assembled, live = g3()
    result = call(assembled, live, 10000, protected=[1, 2], estimate=93)
    assert result.messages == [*assembled, live[2]]
    assert result.message_keys == ["o:0", "o:1", "o:2", "l:2"]
    assert result.estimated_tokens == 217
    assert result.engine_outcome == "assembled"
    stage = result.stages["volatileAppend"]
    assert stage == {
        "volatileLiveIndexes": [2],
        "protectedAssembledIndexes": [1, 2],
        "inputMessageCount": 3,
        "inputEstimatedTokens": 93,
        "appendedMessages": 1,
        "appendedTokens": 62,
        "evictedMessages": 0,
        "evictedTokens": 0,
        "overBudget": False,
        "estimatedTokens": 217,
        "messages": None,
        "messagesSameAs": "final",
    }
    assert result.stages["serializedClamp"]["clamped"] is False
    assert result.warnings == []  # not over budget and nothing evicted: debug level only
    outcomes = [(d.key, d.outcome) for d in result.live_decisions]
    assert outcomes == [("l:0", "live-ignored"), ("l:1", "live-ignored"), ("l:2", "appended")]
    assert result.live_decisions[2].output_index == 3
    assert result.live_decisions[2].serialized_tokens == 62


def test_g3_tight_budget_evicts_the_summary_then_clamps() -> None:
    assembled, live = g3()
    result = call(assembled, live, 120, protected=[1, 2], estimate=93)
    stage = result.stages["volatileAppend"]
    assert (stage["estimatedTokens"], stage["evictedMessages"], stage["evictedTokens"], stage["overBudget"]) == (
        126,
        1,
        80,
        True,
    )
    assert stage["messagesSameAs"] is None
    assert stage["messages"] == [assembled[1], assembled[2], live[2]]
    clamp = result.stages["serializedClamp"]
    assert (clamp["serializedTokensBefore"], clamp["serializedTokens"], clamp["clamped"]) == (126, 62, True)
    assert result.messages == [live[2]]
    assert result.estimated_tokens == 62
    assert result.message_keys == ["l:2"]
    updates = result.item_updates
    assert updates["o:0"]["outcome"] == "evicted-for-live"
    assert updates["o:0"]["evicted_by"] == "l:2"
    assert result.clamp_outcomes == {"o:1": "clamped", "o:2": "clamped"}
    assert result.clamp_reasons["clamped"].startswith("cut by the serialized clamp: 126 serialized tokens")
    assert updates["o:1"]["protected"] == "fresh tail"
    assert len(result.warnings) == 2
    assert result.warnings[0].startswith("[lcm] assemble: appended unpersisted volatile live input appendedMessages=1")
    assert result.warnings[1].endswith("evictedMessages=2 tokenBudget=120 clamped=true overBudget=false")


# --- §11.6 ------------------------------------------------------------------------------------------


def test_retry_marker_input_is_appended() -> None:
    # §11.6 #45
    assembled = [user("q"), assistant("a")]
    retry = user("please\n[Retry after the previous model attempt failed or timed out]")
    result = call(assembled, [user("q"), retry], 100000)
    assert result.messages[-1] is retry


def test_webchat_decorated_current_turn_is_appended_next_to_the_bare_row() -> None:
    # §11.6 #47
    assembled = [user("earlier"), assistant("a"), user("B")]
    decorated = user(f"<relevant-memories>m</relevant-memories>\n{TS} B")
    result = call(assembled, [user("earlier"), {"role": "assistant", "content": "a"}, decorated], 100000)
    assert result.messages == [*assembled, decorated]
    assert result.stages["volatileAppend"]["volatileLiveIndexes"] == []  # structural, not marker-volatile
    assert result.warnings == []
    assert "decorated current turn" in result.live_decisions[2].reason


def test_timestamped_copy_already_stored_is_covered() -> None:
    # §11.6 #48
    assembled = [user("x"), assistant("a"), user("B"), user(f"{TS} B")]
    result = call(assembled, [user(f"{TS} B")], 100000)
    assert result.messages == assembled
    assert result.live_decisions[0].outcome == "covered"
    assert result.live_decisions[0].covered_by == "o:3"


def test_structural_fail_closed_cases() -> None:
    # §11.6 #49
    assembled = [user("first"), assistant("a"), user("ok")]
    unrelated = call(assembled, [user("here is some unrelated preamble text\nok")], 100000)
    assert unrelated.messages == assembled
    older = call(assembled, [user("<relevant-memories>m</relevant-memories>\nmore\nfirst")], 100000)
    assert older.messages == assembled
    nomatch = call(assembled, [user("<relevant-memories>m</relevant-memories>\nsomething else")], 100000)
    assert nomatch.messages == assembled
    newest = user("here is more context\n<relevant-memories>m</relevant-memories>\nok")
    matched = call(assembled, [newest], 100000)
    assert matched.messages == [*assembled, newest]


def test_metadata_decorated_faces() -> None:
    # §11.6 #50
    fence = "```"

    def face(message_id: str, body: str) -> str:
        return (
            f'Conversation info (untrusted metadata):\n{fence}json\n{{"message_id": "{message_id}"}}\n{fence}\n\n{body}'
        )

    assembled = [user("x"), assistant("a"), user(face("1", "hello"))]
    live = user(face("2", "<relevant-memories>m</relevant-memories>\nhello"))
    assert call(assembled, [live], 100000).messages == [*assembled, live]
    for other in ("hello!", "hello "):
        different = user(face("2", f"<relevant-memories>m</relevant-memories>\n{other}"))
        assert call(assembled, [different], 100000).messages == assembled


def test_large_volatile_input_survives_over_budget() -> None:
    # §11.6 #52
    assembled = [user("q"), assistant("a")]
    big = user(f"{BEGIN}\n[Internal task completion event]\n{'x' * 2000}\n{END}")
    unbounded = sum(serialized_message_tokens(m) for m in (*assembled, big))
    result = call(assembled, [big], unbounded // 2, protected=[0, 1])
    assert result.stages["volatileAppend"]["overBudget"] is True
    assert big in result.messages
    assert any("overBudget=true" in w for w in result.warnings)


# --- §11.7 and the fallbacks ------------------------------------------------------------------------------


def test_coverage_trails_live_falls_back_to_the_live_list() -> None:
    # §11.7 #53
    live = [user("one"), assistant("two"), user("three")]
    result = call([user("one")], live, 100000, items=1, summaries=False)
    assert result.messages == live and result.messages is not live
    assert result.engine_outcome == "live-fallback:coverage-trails-live"
    assert result.estimated_tokens > 0
    assert result.message_keys == ["l:0", "l:1", "l:2"]
    assert result.stages["volatileAppend"] is None
    assert result.item_updates["o:0"]["outcome"] == "evicted-for-live"


def test_no_user_turn_falls_back() -> None:
    # §11.7 #54
    assembled = [assistant("a", "c1"), result("c1", "r")]
    result_ = call(assembled, [user("hi")], 100000)
    assert result_.engine_outcome == "live-fallback:no-user-turns"
    assert result_.messages == [user("hi")]


def test_trailing_assistant_is_not_a_fallback() -> None:
    # §11.7 #55
    assembled = [user("q"), assistant("a")]
    result = call(assembled, [user("q")], 100000)
    assert result.engine_outcome == "assembled"
    assert result.messages == assembled


def test_heavy_live_tool_results_are_clamped() -> None:
    # §11.7 #56 (through the bounded fallback, where live tool payloads reach the clamp)
    live: list[Any] = [user("start")]
    for i in range(6):
        live += [assistant(f"step {i}", f"c{i}"), result(f"c{i}", "x" * 4000)]
    live.append(assistant("finished"))
    result_ = call([user("start")], live, 2000, items=1, summaries=False)
    assert result_.estimated_tokens <= 2000
    assert any(m["role"] == "user" for m in result_.messages)
    assert result_.messages[-1]["role"] != "assistant"


def test_small_context() -> None:
    # §11.7 #57
    result = call([user("hello there")], [user("hello there")], 50000)
    assert len(result.messages) == 1
    assert 0 < result.estimated_tokens < 1000


def test_budget_resolution_and_cap() -> None:
    # §9.1 and §11.7 #58
    assert resolve_budget(1234.9) == 1234
    assert resolve_budget(0) == resolve_budget(-5) == resolve_budget(float("nan")) == resolve_budget(None) == 128000
    assert resolve_budget(200000, 5000) == 5000
    assert resolve_budget(None, 3000) == 3000
    assembled = [user("x" * 4000), assistant("y" * 4000), user("z" * 4000), assistant("w" * 4000)]
    capped = call(assembled, [], 200000, cap=5000)
    assert 0 < capped.estimated_tokens <= 5000
    default_capped = call(assembled, [], None, cap=3000)
    assert 0 < default_capped.estimated_tokens <= 3000
    ten = [user(f"m{i}") if i % 2 == 0 else assistant(f"m{i}") for i in range(10)]
    assert len(call(ten, [], 100000).messages) == 10


def test_no_conversation_and_empty_context() -> None:
    live = [user("q"), assistant("partial")]
    missing = call([], live, 1000, found=False)
    assert missing.messages == [user("q")]
    assert missing.estimated_tokens == 0
    assert missing.engine_outcome == "live-fallback:safe-fallback"
    assert missing.fallback_why == "no active conversation has session id 'x'"
    assert [d.outcome for d in missing.live_decisions] == ["appended", "live-dropped"]
    kept = call([], live, 1000, found=False, prompt="go", tools=[])
    assert kept.messages == live  # hostSeparate keeps a substantive trailing assistant
    empty = call([], live, 1000, items=0)
    assert empty.engine_outcome == "live-fallback:no-context-items"
    assert empty.messages == [user("q")]
    assert empty.estimated_tokens == serialized_message_tokens(user("q"))
    assert call([], [user("q")], 1000, items=3).engine_outcome == "live-fallback:empty-assembled-output"


def test_exception_falls_back_to_the_bounded_live_list(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("kaput")

    monkeypatch.setattr(engine_module, "append_volatile_inputs", boom)
    result = call([user("q"), assistant("a")], [user("q")], 1000)
    assert result.engine_outcome == "live-fallback:assemble-error"
    assert result.messages == [user("q")]
    assert "kaput" in result.warnings[0]


@pytest.mark.parametrize(
    ("entry", "shown"),
    [(None, "null"), ("hello", "hello"), (5, "5"), (True, "true"), (1.5e300, "1.5e+300")],
)
def test_a_live_entry_that_is_not_an_object_makes_the_engine_throw(entry: Any, shown: str) -> None:
    # the volatile step reads `"content" in m` of every live entry: JS throws a TypeError, the engine
    # catches it and sends the bounded live transcript
    live = [entry, user("go")]
    result = call([user("go"), assistant("ok")], live, 100000)
    assert result.engine_outcome == (
        f"live-fallback:assemble-error:TypeError: Cannot use 'in' operator to search for 'content' in {shown}"
    )
    assert result.messages == live


def test_a_live_entry_without_a_role_is_an_assistant_message() -> None:
    # objects (arrays too) never throw: a missing role reads as the stored role "assistant"
    live = [{"content": "x"}, user("go")]
    result = call([user("go"), assistant("ok")], live, 100000)
    assert result.engine_outcome == "assembled"
    assert result.messages == [user("go"), assistant("ok")]


def test_an_assembler_error_falls_back_after_the_earlier_checks() -> None:
    error = JSRangeError("Invalid time value")
    live = [user("what changed?")]
    keys: list[str | None] = []
    thrown = reconcile(
        [], keys, 0, [], live_messages=live, token_budget=100000, prompt=None, available_tools=None,
        context_item_count=2, has_summary_items=True, assembler_error=error,
    )
    assert thrown.engine_outcome == "live-fallback:assemble-error:RangeError: Invalid time value"
    assert thrown.messages == live
    assert thrown.estimated_tokens == serialized_message_tokens(live[0])
    # a conversation that trails the live window falls back for that reason first (the engine checks it earlier)
    trailing = reconcile(
        [], keys, 0, [], live_messages=[user("a"), user("b"), user("c")], token_budget=100000, prompt=None,
        available_tools=None, context_item_count=2, has_summary_items=False, assembler_error=error,
    )
    assert trailing.engine_outcome == "live-fallback:coverage-trails-live"


def test_empty_live_window_keeps_the_assembled_list() -> None:
    assembled = [user("q"), assistant("a")]
    result = call(assembled, None, 100000, estimate=7)
    assert result.messages == assembled
    assert result.stages["volatileAppend"]["estimatedTokens"] == 7
    assert result.stages["promptRecall"] == {
        "cueBuilt": False,
        "cueIncluded": False,
        "cueDroppedForVolatile": False,
        "cueDroppedForClamp": False,
        "cueTokenCount": None,
        "cueMessage": None,
    }


# --- trace records -------------------------------------------------------------------------------------


def test_eviction_names_the_forcing_input_and_pairs() -> None:
    assembled = [user("old"), assistant("reading", "c1"), result("c1", "x" * 2000), user("q"), assistant("a")]
    first, second = (
        user(f"{BEGIN}\n[Internal task completion event]\none\n{END}"),
        user("[Retry after the previous model attempt failed or timed out]"),
    )
    budget = sum(serialized_message_tokens(m) for m in (assembled[0], *assembled[3:], first, second)) + 5
    result_ = call(assembled, [first, second], budget, protected=[3, 4])
    for key in ("o:1", "o:2"):
        update = result_.item_updates[key]
        assert update["outcome"] == "evicted-for-live"
        assert update["evicted_by"] == "l:0"
        assert "with 1 other input" in update["reason"]
    assert "tool partner item 2" in result_.item_updates["o:1"]["reason"]
    assert "o:0" not in [k for k, u in result_.item_updates.items() if u.get("outcome")]
    assert result_.protected_pairs == []
    protected = call(assembled, [first], 100000, protected=[2])
    assert protected.protected_pairs == [("o:1", "o:2", "fresh tail")]
    assert protected.item_updates["o:1"]["protected"] == "tool partner of item 2"


def test_one_pair_index_per_run_for_the_volatile_and_result_steps(monkeypatch: Any) -> None:
    """The result step reads the pair index the volatile step built for the same list (built once, not twice)."""
    from dataclasses import replace as with_budget

    from ctxview.pipeline import SessionAssembler
    from ctxview.samples import DEMO_PARAMS, ensure_demo_db
    from ctxview.store import LcmStore

    with LcmStore(ensure_demo_db()) as store:
        assembler = SessionAssembler(store.load_session(1))
    before = assembler.run(DEMO_PARAMS)
    built: list[int] = []
    original = engine_module.PairIndex.build

    def counting(messages: Any, memo: Any = None) -> Any:
        built.append(len(messages))
        return original(messages, memo)

    monkeypatch.setattr(engine_module.PairIndex, "build", counting)
    for budget in (DEMO_PARAMS.token_budget, 900, 40_000):
        built.clear()
        trace = assembler.run(with_budget(DEMO_PARAMS, token_budget=budget))
        assert len(built) == 1, budget
        assert trace.summary.engine_outcome == "assembled"
    monkeypatch.undo()
    again = assembler.run(DEMO_PARAMS)
    assert again.summary == before.summary and again.messages == before.messages
    assert list(again.decisions) == list(before.decisions)
