"""Tool-id chunks and tool-pair partners against their definitions, on tangled tool histories.

``ChunkPlan.build`` cuts a list wherever no tool id spans the cut; ``ToolPartners.of``
finds an item's partners inside its chunk.  Both are checked here against the plain
definitions over the whole list: a chunk boundary after position p exactly when no id
is issued or answered both at or before p and after it; an item's partners are the
items answering each of its calls (call by call, in list order), then the items
issuing the call it answers, never itself, each key once.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxview.assembly.incremental import partners as partners_module
from ctxview.assembly.incremental.chunked_repair import ChunkPlan
from ctxview.assembly.incremental.partners import ToolPartners
from ctxview.assembly.resolve import ResolvedItem


def call(cid: str) -> dict[str, Any]:
    return {"type": "toolCall", "id": cid, "name": "read", "arguments": {}}


def history(ids: list[str]) -> st.SearchStrategy[list[dict[str, Any]]]:
    turn = st.one_of(
        st.just({"role": "user", "content": "go on"}),
        st.just({"role": "assistant", "content": "ok"}),
        st.sampled_from(ids).map(lambda cid: {"role": "toolResult", "toolCallId": cid, "content": "r"}),
        st.lists(st.sampled_from(ids), min_size=1, max_size=3).map(
            lambda cids: {"role": "assistant", "content": [{"type": "text", "text": "using"}, *map(call, cids)]}
        ),
    )
    return st.lists(turn, max_size=70)


# few ids: long tangled chunks (past the scan limit); many ids: short ones
HISTORIES = st.one_of(history(["a", "b", "c"]), history([f"t{n}" for n in range(40)]))


def items_of(messages: list[dict[str, Any]]) -> list[ResolvedItem]:
    return [
        ResolvedItem(ordinal=i * 2, stored_message=m, tokens=1, is_message=True, text="")
        for i, m in enumerate(messages)
    ]


def tool_ids(item: ResolvedItem) -> set[str]:
    return set(item.call_ids) | ({item.result_id} if item.result_id else set())


def defined_chunks(items: list[ResolvedItem]) -> list[tuple[int, int]]:
    """(start, stop) of each chunk: cut after p when no id occurs both at or before p and after it."""
    chunks: list[tuple[int, int]] = []
    begin = 0
    for p in range(len(items)):
        before = set().union(*map(tool_ids, items[: p + 1]))
        after = set().union(*map(tool_ids, items[p + 1 :]))
        if not before & after:
            chunks.append((begin, p + 1))
            begin = p + 1
    return chunks


def defined_partners(items: list[ResolvedItem], item: ResolvedItem) -> tuple[str, ...]:
    keys: list[str] = []
    for cid in item.call_ids:
        keys += [other.key for other in items if other.result_id == cid and other is not item]
    if item.result_id:
        keys += [other.key for other in items if item.result_id in other.call_ids and other is not item]
    return tuple(dict.fromkeys(keys))


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(HISTORIES)
def test_chunks_are_cut_exactly_where_no_tool_id_spans_the_cut(messages: list[dict[str, Any]]) -> None:
    items = items_of(messages)
    plan = ChunkPlan.build(items)
    chunks = defined_chunks(items)
    assert list(zip(plan.start, plan.stop, strict=True)) == chunks
    assert list(plan.chunk_of) == [n for n, (begin, end) in enumerate(chunks) for _ in range(begin, end)]


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(HISTORIES, st.integers(min_value=1, max_value=30))
def test_partners_are_those_of_the_whole_list_whatever_the_position_hint(
    messages: list[dict[str, Any]], scan_members: int
) -> None:
    items = items_of(messages)
    partners = ToolPartners(items, ChunkPlan.build(items))
    saved = partners_module.SCAN_MEMBERS
    partners_module.SCAN_MEMBERS = scan_members  # small values take the map path on short chunks too
    try:
        for position, item in enumerate(items):
            expected = defined_partners(items, item)
            assert partners.of(item, position) == expected
            assert partners.of(item) == expected  # no hint: found by identity
            assert partners.of(item, (position + 1) % len(items)) == expected  # a wrong hint is checked
    finally:
        partners_module.SCAN_MEMBERS = saved


def test_an_item_outside_the_list_has_no_partners() -> None:
    items = items_of(
        [
            {"role": "assistant", "content": [call("x")]},
            {"role": "toolResult", "toolCallId": "x", "content": "r"},
        ]
    )
    partners = ToolPartners(items, ChunkPlan.build(items))
    assert partners.of(items[0], 0) == ("o:2",)
    assert partners.of(items[1], 1) == ("o:0",)
    stranger = items_of([{"role": "toolResult", "toolCallId": "x", "content": "r"}])[0]
    assert partners.of(stranger, 1) == ()
    assert partners.of(stranger) == ()


def test_an_empty_list_has_no_chunks() -> None:
    plan = ChunkPlan.build([])
    assert (list(plan.start), list(plan.stop), list(plan.chunk_of)) == ([], [], [])
