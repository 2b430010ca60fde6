"""Chunked §7.1–§7.4 against the whole-selection functions, on tangled tool histories.

``ChunkPlan.run`` must return exactly what ``clean_selected`` followed by
``sanitize_tool_use_result_pairing_keyed`` return for the same selection:
messages (same JSON), keys, and every record the trace explains, whatever is
selected and wherever the fresh tail starts, including duplicate ids, results
before their calls, interleaved turns, terminal assistants and ids shared by
far-apart messages.  One plan serves all the examples, so its remembered
chunk outcomes are exercised across runs as in the inspector.
"""

from __future__ import annotations

import math
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxview.assembly.incremental.chunked_repair import MIN_SPAN, ChunkPlan, SameMessages, _gives_back
from ctxview.assembly.postprocess import FRESH, clean_selected
from ctxview.assembly.resolve import ResolvedItem
from ctxview.assembly.tool_pairs import RepairLog, sanitize_tool_use_result_pairing_keyed
from ctxview.jsjson import js_stringify

IDS = ["a", "b", "c", "d", "e"]


def call(cid: str) -> dict[str, Any]:
    return {"type": "toolCall", "id": cid, "name": "read", "arguments": {}}


@st.composite
def message(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.sampled_from(["user", "assistant", "calls", "result", "blank", "terminal", "thinking"]))
    if kind == "user":
        return {"role": "user", "content": draw(st.sampled_from(["hi", " ", "go on"]))}
    if kind == "assistant":
        return {"role": "assistant", "content": draw(st.sampled_from(["ok", [{"type": "text", "text": "done"}], []]))}
    if kind == "blank":
        return {"role": "assistant", "content": [{"type": "text", "text": "  "}]}
    if kind == "thinking":
        thinking = {"type": "thinking", "thinking": "hm"}
        return {"role": "assistant", "content": [thinking, call(draw(st.sampled_from(IDS)))]}
    if kind == "result":
        return {"role": "toolResult", "toolCallId": draw(st.sampled_from(IDS)), "content": "r"}
    calls = [call(cid) for cid in draw(st.lists(st.sampled_from(IDS), min_size=1, max_size=3))]
    out: dict[str, Any] = {"role": "assistant", "content": [{"type": "text", "text": "using"}, *calls]}
    if kind == "terminal":
        out["stopReason"] = "error"
    return out


def items_of(messages: list[dict[str, Any]]) -> list[ResolvedItem]:
    return [
        ResolvedItem(ordinal=i * 2, stored_message=m, tokens=1, is_message=True, text="")
        for i, m in enumerate(messages)
    ]


def reference(items: list[ResolvedItem], kept: list[int], cut: int, all_results: dict[str, list[int]]) -> Any:
    selected = [items[p] for p in [*kept, *range(cut, len(items))]]
    orphan = items[cut].ordinal if cut < len(items) else math.inf
    cleaned = clean_selected(selected, {items[p].ordinal for p in range(cut, len(items))}, orphan, all_results)
    log = RepairLog()
    messages, keys = sanitize_tool_use_result_pairing_keyed(
        [e.message for e in cleaned.entries], [e.item.key for e in cleaned.entries], log
    )
    return cleaned, log, messages, keys


def results_index(items: list[ResolvedItem]) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for item in items:
        if item.result_id:
            out.setdefault(item.result_id, []).append(item.ordinal)
    return out


def assert_as_whole_selection(
    run: Any, items: list[ResolvedItem], kept: list[int], cut: int, all_results: dict[str, list[int]]
) -> None:
    """``run`` gives what the whole-selection functions give for the same selection: messages, keys, the
    clean-up's entries and records, and the repair's."""
    cleaned, log, messages_out, keys = reference(items, kept, cut, all_results)
    assert js_stringify(run.messages) == js_stringify(messages_out)
    assert run.keys == keys
    assert [(e.item.key, e.segment, js_stringify(e.message)) for e in run.cleaned.entries] == [
        (e.item.key, e.segment, js_stringify(e.message)) for e in cleaned.entries
    ]
    assert run.fresh_messages() == [e.message for e in cleaned.entries if e.segment == FRESH]
    ours, theirs = run.cleaned, cleaned
    assert ours.removed_tool_use_block_count == theirs.removed_tool_use_block_count
    assert ours.touched_assistant_message_count == theirs.touched_assistant_message_count
    assert ours.stripped_calls == theirs.stripped_calls
    assert ours.dropped_orphan_calls == theirs.dropped_orphan_calls
    assert ours.dropped_empty == theirs.dropped_empty
    assert sorted(run.repair.orphan_results) == sorted(log.orphan_results)
    assert sorted(run.repair.duplicate_results) == sorted(log.duplicate_results)
    assert run.repair.calls_removed == log.calls_removed
    assert run.repair.dropped_assistants == log.dropped_assistants
    assert run.repair.synthetic == log.synthetic
    assert run.repair.moved_after_results == log.moved_after_results


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), messages=st.lists(message(), min_size=1, max_size=14))
def test_chunked_run_equals_the_whole_selection(data: st.DataObject, messages: list[dict[str, Any]]) -> None:
    items = items_of(messages)
    plan = ChunkPlan.build(items)
    all_results = results_index(items)
    for _ in range(4):  # several runs over one plan: remembered chunks must not leak between selections
        cut = data.draw(st.integers(0, len(items)))
        kept = sorted(data.draw(st.sets(st.integers(0, max(0, cut - 1)), max_size=cut)) if cut else set())
        orphan = items[cut].ordinal if cut < len(items) else math.inf
        assert_as_whole_selection(plan.run(kept, cut, orphan, all_results), items, kept, cut, all_results)


def test_chunks_close_over_tool_ids() -> None:
    messages = [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": [call("a")]},
        {"role": "user", "content": "between"},
        {"role": "toolResult", "toolCallId": "a", "content": "r"},
        {"role": "assistant", "content": [call("b")]},
        {"role": "toolResult", "toolCallId": "b", "content": "r"},
        {"role": "user", "content": "next"},
        {"role": "toolResult", "toolCallId": "b", "content": "late duplicate"},
        {"role": "user", "content": "end"},
    ]
    plan = ChunkPlan.build(items_of(messages))
    assert list(zip(plan.start, plan.stop, strict=True)) == [(0, 1), (1, 4), (4, 8), (8, 9)]
    assert list(plan.chunk_of) == [0, 1, 1, 1, 2, 2, 2, 2, 3]


def test_remembered_outcomes_are_reused_objects() -> None:
    messages = [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": [{"type": "text", "text": "x"}, call("a")]},
        {"role": "toolResult", "toolCallId": "a", "content": "r"},
        {"role": "user", "content": "end"},
    ]
    items = items_of(messages)
    plan = ChunkPlan.build(items)
    first = plan.run([1], 3, items[3].ordinal, results_index(items))  # the call kept, its result evicted
    again = plan.run([1], 3, items[3].ordinal, results_index(items))
    assert first.messages[0]["content"] == [{"type": "text", "text": "x"}]  # §7.1 stripped the orphan call
    assert first.messages[0] is again.messages[0]  # the same stripped copy: the engine's memo stays warm
    assert first.cleaned.stripped_calls == {"o:2": [("a", "not-selected")]}


def whole_selection(plan: ChunkPlan, cut: int, all_results: dict[str, list[int]]) -> Any:
    items = plan.items
    orphan = items[cut].ordinal if cut < len(items) else math.inf
    return plan.run(list(range(cut)), cut, orphan, all_results)


def test_a_second_whole_selection_reuses_the_outcome_in_new_containers() -> None:
    messages = [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": [{"type": "text", "text": "x"}, call("a")]},
        {"role": "user", "content": " "},
        {"role": "toolResult", "toolCallId": "b", "content": "orphan"},
        {"role": "user", "content": "end"},
    ]
    items = items_of(messages)
    plan = ChunkPlan.build(items)
    all_results = results_index(items)
    first = whole_selection(plan, 4, all_results)
    plan._evictable_single = [None] * len(items)  # a second computation would make new stripped copies
    plan._groups.clear()
    again = whole_selection(plan, 4, all_results)
    assert again.messages is not first.messages and again.keys is not first.keys
    assert again.cleaned is not first.cleaned and again.repair is not first.repair
    assert all(a is b for a, b in zip(again.messages, first.messages, strict=True))  # (the stripped copy too)
    assert again.keys == first.keys == ["o:0", "o:2", "o:8"]
    assert again.cleaned.dropped_empty == first.cleaned.dropped_empty == {"o:4": "blank text"}
    assert again.repair.orphan_results == first.repair.orphan_results == ["o:6"]
    again.keys.append("mine")  # each run owns its lists
    assert whole_selection(plan, 4, all_results).keys == ["o:0", "o:2", "o:8"]
    other = whole_selection(plan, 4, results_index(items))  # another session's results: computed again
    assert other.messages[1] is not first.messages[1] and other.messages[1] == first.messages[1]


def test_unchanged_chunks_flags_exactly_the_chunks_given_back_as_they_were() -> None:
    messages = [
        {"role": "user", "content": "q"},  # chunk 0: unchanged
        {"role": "assistant", "content": [{"type": "text", "text": "  "}]},  # 1: blank, dropped
        {"role": "assistant", "content": [{"type": "text", "text": "x"}, call("a")]},  # 2: call and result
        {"role": "toolResult", "toolCallId": "a", "content": "r"},
        {"role": "toolResult", "toolCallId": "b", "content": "orphan"},  # 3: dropped by the repair
        {"role": "assistant", "content": "plain text"},  # 4: §7.2 makes it a text block (a copy)
        {"role": "user", "content": "more"},  # 5: unchanged
        {"role": "user", "content": "end"},  # 6: the fresh tail
    ]
    items = items_of(messages)
    plan = ChunkPlan.build(items)
    assert plan.unchanged_chunks(7, items[7].ordinal) == bytes(7)  # nothing known yet
    whole_selection(plan, 7, results_index(items))
    assert plan.whole_run() == (7, items[7].ordinal)
    assert list(plan.unchanged_chunks(7, items[7].ordinal)) == [1, 0, 1, 0, 0, 1, 1]
    # at a cut one earlier, item 6 would be in the fresh tail, where it was never run: not known
    assert list(plan.unchanged_chunks(6, items[6].ordinal)) == [1, 0, 1, 0, 0, 0, 1]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), messages=st.lists(message(), min_size=1, max_size=14))
def test_a_plan_told_the_unchanged_chunks_runs_as_one_that_was_not(
    data: st.DataObject, messages: list[dict[str, Any]]
) -> None:
    """Flags from one process's whole-selection run, given to a fresh plan (fresh message objects, as an
    unpacked render would be), change nothing of any run: the whole selection, then others."""
    cut = data.draw(st.integers(0, len(messages)))
    earlier = ChunkPlan.build(items_of(messages))
    all_results = results_index(earlier.items)  # (the same ordinals in both plans)
    whole_selection(earlier, cut, all_results)
    orphan = earlier.items[cut].ordinal if cut < len(messages) else math.inf
    flags = earlier.unchanged_chunks(cut, orphan)
    items = items_of([js_copy(m) for m in messages])
    told = ChunkPlan.build(items)
    told.min_span = data.draw(st.sampled_from([1, 2, MIN_SPAN]))  # (1: every flagged chunk through the span path)
    assert told.assume_unchanged(cut, orphan, flags)
    assert not told.assume_unchanged(cut, orphan, flags + b"\x01")  # one byte per chunk, or nothing taken
    selections = [list(range(cut))]
    for _ in range(2):
        selections.append(sorted(data.draw(st.sets(st.integers(0, max(0, cut - 1)), max_size=cut)) if cut else set()))
    for kept in selections:
        run = told.run(kept, cut, orphan, all_results)
        assert_as_whole_selection(run, items, kept, cut, all_results)
        untold = earlier.run(kept, cut, orphan, all_results)  # (the plan that cleaned every chunk up itself)
        assert run.fresh_from == untold.fresh_from
        assert js_stringify(run.fresh_messages()) == js_stringify(untold.fresh_messages())
    assert told.unchanged_chunks(cut, orphan) == flags  # what it learned is what it was told


def js_copy(message: dict[str, Any]) -> dict[str, Any]:
    import json

    copied: dict[str, Any] = json.loads(json.dumps(message))
    return copied


def test_runs_at_one_cut_learn_which_whole_chunks_come_back_unchanged() -> None:
    messages = [
        {"role": "user", "content": "q"},  # chunk 0: unchanged
        {"role": "assistant", "content": [{"type": "text", "text": "  "}]},  # 1: blank, dropped
        {"role": "assistant", "content": [{"type": "text", "text": "x"}, call("a")]},  # 2: call and result
        {"role": "toolResult", "toolCallId": "a", "content": "r"},
        {"role": "user", "content": "more"},  # 3: unchanged
        {"role": "user", "content": "end"},  # 4: the fresh tail
    ]
    items = items_of(messages)
    plan = ChunkPlan.build(items)
    all_results = results_index(items)
    plan.run([0, 1, 2], 5, items[5].ordinal, all_results)  # chunk 2 only in part (its call stripped)
    assert plan._unchanged is not None and plan._unchanged[:2] == (5, items[5].ordinal)
    assert list(plan._unchanged[2]) == [1, 0, 0, 0, 1]  # learned from the outcomes this run computed
    plan.run([0, 2, 3, 4], 5, items[5].ordinal, all_results)
    assert list(plan._unchanged[2]) == [1, 0, 1, 1, 1]
    assert bytes(plan._unchanged[2]) == plan.unchanged_chunks(5, items[5].ordinal)
    # another cut: learned afresh, from the outcomes computed at it (item 0 is not selected, item 5 was looked
    # up: not known)
    plan.run([1], 2, items[2].ordinal, all_results)
    assert list(plan._unchanged[2]) == [0, 0, 1, 1, 0]
    # a run that selects every item learns every chunk from one whole-selection pass first
    plan.run([0, 1], 2, items[2].ordinal, all_results)
    assert list(plan._unchanged[2]) == [1, 0, 1, 1, 1]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), messages=st.lists(message(), min_size=1, max_size=14))
def test_a_plan_that_learned_the_unchanged_chunks_runs_as_the_whole_selection(
    data: st.DataObject, messages: list[dict[str, Any]]
) -> None:
    """Keystroke runs at one cut: after the first, the chunks it found unchanged go through the span path
    (``min_span`` 1: every whole learned chunk), and every run still equals the whole-selection functions."""
    cut = data.draw(st.integers(0, len(messages)))
    items = items_of(messages)
    plan = ChunkPlan.build(items)
    plan.min_span = data.draw(st.sampled_from([1, 2, MIN_SPAN]))
    all_results = results_index(items)
    orphan = items[cut].ordinal if cut < len(items) else math.inf
    kept: list[int] = []
    for turn in range(5):
        if not turn or not data.draw(st.booleans()):  # (or the same items again: a copy of the last run)
            kept = sorted(data.draw(st.sets(st.integers(0, max(0, cut - 1)), max_size=cut)) if cut else set())
        assert_as_whole_selection(plan.run(kept, cut, orphan, all_results), items, kept, cut, all_results)
        learned = plan._unchanged
        assert learned is not None and learned[:2] == (cut, orphan)
        assert all(plan.unchanged_chunks(cut, orphan)[c] for c, flag in enumerate(learned[2]) if flag)


def test_a_run_that_keeps_the_same_items_as_the_last_copies_its_outcome() -> None:
    messages = [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": [{"type": "text", "text": "x"}, call("a")]},
        {"role": "toolResult", "toolCallId": "a", "content": "r"},
        {"role": "assistant", "content": [{"type": "text", "text": "  "}]},
        {"role": "user", "content": "more"},
        {"role": "user", "content": "end"},
    ]
    items = items_of(messages)
    plan = ChunkPlan.build(items)
    all_results = results_index(items)
    orphan = items[5].ordinal
    first = plan.run([1, 3, 4], 5, orphan, all_results)  # the call kept without its result, a blank message
    again = plan.run([1, 3, 4], 5, orphan, all_results)
    assert isinstance(first.messages, SameMessages) and isinstance(again.messages, SameMessages)
    assert again.messages.origin is first.messages.origin  # (the engine's memo answers the second from the first)
    assert again.messages is not first.messages and again.keys is not first.keys
    assert again.cleaned is not first.cleaned and again.repair is not first.repair
    assert all(a is b for a, b in zip(again.messages, first.messages, strict=True))
    assert again.keys == first.keys == ["o:2", "o:8", "o:10"]
    assert again.cleaned.dropped_empty == first.cleaned.dropped_empty == {"o:6": "only blank text"}
    assert again.cleaned.stripped_calls == first.cleaned.stripped_calls == {"o:2": [("a", "not-selected")]}
    again.keys.append("mine")  # each run owns its lists
    other = plan.run([0, 4], 5, orphan, all_results)  # other items: run, and tagged anew
    assert isinstance(other.messages, SameMessages) and other.messages.origin is not first.messages.origin
    assert other.keys == ["o:0", "o:8", "o:10"]
    back = plan.run([1, 3, 4], 5, orphan, all_results)  # (only the last run is remembered: run again)
    assert back.keys == ["o:2", "o:8", "o:10"] and back.messages.origin is not first.messages.origin
    assert plan.run([1, 3], 4, items[4].ordinal, all_results).keys == ["o:2", "o:8", "o:10"]  # another cut
    for kept, cut in (([1, 3, 4], 5), ([1, 3], 4), ([1, 3], 4)):
        run = plan.run(kept, cut, items[cut].ordinal, all_results)
        assert_as_whole_selection(run, items, kept, cut, all_results)
        assert run.repair.orphan_results == reference(items, kept, cut, all_results)[1].orphan_results


def chunk_by_chunk_flags(plan: ChunkPlan, cut: int, orphan: float, all_results: dict[str, list[int]]) -> list[int]:
    """Per chunk: does §7.1–§7.4 of the whole chunk alone give its items back as they were (the definition)?"""
    flags = []
    for first, end in zip(plan.start, plan.stop, strict=True):
        outcome = plan._outcome(list(range(first, end)), cut, orphan, all_results)
        flags.append(int(_gives_back(outcome, plan.items[first:end])))
    return flags


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), messages=st.lists(message(), min_size=1, max_size=16))
def test_one_whole_selection_pass_flags_exactly_the_chunks_given_back(
    data: st.DataObject, messages: list[dict[str, Any]]
) -> None:
    """Orphans, duplicates, split pairs, blank and empty messages, terminal turns, chunks across the cut: the
    flags of the one pass are those of cleaning each chunk up alone."""
    items = items_of(messages)
    plan = ChunkPlan.build(items)
    all_results = results_index(items)
    cut = data.draw(st.integers(0, len(items)))
    orphan = items[cut].ordinal if cut < len(items) else math.inf
    expected = chunk_by_chunk_flags(plan, cut, orphan, all_results)
    assert list(plan.whole_selection_flags(cut, orphan, all_results)) == expected
    split = data.draw(st.integers(0, len(plan.start)))  # (the pass over two runs of chunks, as a sweep shares it)
    head = plan.whole_selection_flags(cut, orphan, all_results, range(split))
    tail = plan.whole_selection_flags(cut, orphan, all_results, range(split, len(plan.start)))
    assert list(head + tail) == expected


def test_the_one_pass_flags_of_a_session_with_every_kind_of_repair() -> None:
    messages = [
        {"role": "user", "content": "q"},  # chunk 0: unchanged
        {"role": "assistant", "content": [{"type": "text", "text": "x"}, call("a")]},  # 1: its result comes late
        {"role": "user", "content": "between"},
        {"role": "toolResult", "toolCallId": "a", "content": "r"},  # (moved behind its call)
        {"role": "assistant", "content": [call("b"), call("b")]},  # 2: a repeated call id, no result
        {"role": "toolResult", "toolCallId": "z", "content": "orphan"},  # 3: dropped
        {"role": "assistant", "content": []},  # 4: empty
        {"role": "assistant", "content": [call("c")]},  # 5: answered twice
        {"role": "toolResult", "toolCallId": "c", "content": "one"},
        {"role": "toolResult", "toolCallId": "c", "content": "two"},
        {"role": "user", "content": "more"},  # 6: unchanged
        {"role": "assistant", "content": [{"type": "text", "text": "y"}, call("d")]},  # 7: across the cut
        {"role": "toolResult", "toolCallId": "d", "content": "r"},
        {"role": "user", "content": "end"},  # 8: unchanged
    ]
    items = items_of(messages)
    plan = ChunkPlan.build(items)
    all_results = results_index(items)
    assert list(zip(plan.start, plan.stop, strict=True)) == [
        (0, 1), (1, 4), (4, 5), (5, 6), (6, 7), (7, 10), (10, 11), (11, 13), (13, 14)
    ]
    for cut in range(len(items) + 1):
        orphan = items[cut].ordinal if cut < len(items) else math.inf
        flags = list(plan.whole_selection_flags(cut, orphan, all_results))
        assert flags == chunk_by_chunk_flags(plan, cut, orphan, all_results)
    assert list(plan.whole_selection_flags(12, items[12].ordinal, all_results)) == [1, 0, 0, 0, 0, 0, 1, 1, 1]
    # the result of the call before the cut is in the fresh tail: the call, evictable, keeps it (answered)
    assert list(plan.whole_selection_flags(14, math.inf, all_results)) == [1, 0, 0, 0, 0, 0, 1, 1, 1]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), messages=st.lists(message(), min_size=1, max_size=16))
def test_a_whole_selection_run_learned_from_one_pass_equals_the_whole_selection(
    data: st.DataObject, messages: list[dict[str, Any]]
) -> None:
    """The run that selects every item (its flags from the one pass, flagged chunks appended as spans), and
    the runs after it at the same cut, give what the whole-selection functions give."""
    items = items_of(messages)
    plan = ChunkPlan.build(items)
    plan.min_span = data.draw(st.sampled_from([1, 2, MIN_SPAN]))
    all_results = results_index(items)
    cut = data.draw(st.integers(0, len(items)))
    orphan = items[cut].ordinal if cut < len(items) else math.inf
    assert_as_whole_selection(whole_selection(plan, cut, all_results), items, list(range(cut)), cut, all_results)
    assert plan.unchanged_chunks(cut, orphan) == bytes(chunk_by_chunk_flags(plan, cut, orphan, all_results))
    kept = sorted(data.draw(st.sets(st.integers(0, max(0, cut - 1)), max_size=cut)) if cut else set())
    assert_as_whole_selection(plan.run(kept, cut, orphan, all_results), items, kept, cut, all_results)
