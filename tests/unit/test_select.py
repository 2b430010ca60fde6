"""Budget selection modes (spec §6)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ctxview.assembly.resolve import ResolvedItem
from ctxview.assembly.select import (
    GreedyOrder,
    SelectionOrder,
    prompt_aware_order,
    prompt_aware_order_sparse,
    select_evictable,
)


def items(*tokens: int) -> list[ResolvedItem]:
    return [
        ResolvedItem(ordinal=i, stored_message={"role": "user", "content": "x"}, tokens=t, is_message=True, text="x")
        for i, t in enumerate(tokens)
    ]


def test_full_fit_includes_empty() -> None:
    sel = select_evictable(items(3, 4), 7, scores=[0.1, 0.2])
    assert (sel.mode, sel.kept, sel.kept_tokens, sel.total) == ("full-fit", [0, 1], 7, 7)
    assert select_evictable([], 0, scores=None).mode == "full-fit"


def test_chronological_stops_at_first_miss() -> None:
    sel = select_evictable(items(1, 2, 50, 3, 4), 10, scores=None)
    assert sel.mode == "chronological"
    assert sel.kept == [3, 4] and sel.kept_tokens == 7
    assert sel.stop_index == 2
    assert sel.left_before[4] == 10 and sel.left_before[3] == 6 and sel.left_before[2] == 3
    assert sel.left_before[1] is None  # never considered


def test_prompt_aware_greedy_skips_and_ties_go_to_recent() -> None:
    sel = select_evictable(items(5, 50, 5, 5), 12, scores=[0.5, 0.9, 0.5, 0.1])
    # order: 1 (0.9), then the tie 2, 0 (more recent first), then 3
    assert sel.mode == "prompt-aware"
    assert list(sel.rank) == [3, 1, 2, 4]
    assert sel.kept == [0, 2]  # 50 does not fit, later smaller items still do; 3 no longer fits
    assert sel.kept_tokens == 10
    assert sel.left_before == [7, 12, 12, 2]


def test_explicit_order_uses_the_same_greedy_walk() -> None:
    sel = select_evictable(items(5, 5, 5), 10, scores=None, order=[2, 0, 1])
    assert sel.mode == "prompt-aware" and sel.kept == [0, 2]


@settings(max_examples=300, deadline=None)
@given(
    tokens=st.lists(st.integers(0, 40), max_size=30),
    data=st.data(),
)
def test_prepared_walk_matches_the_plain_greedy_walk(tokens: list[int], data: st.DataObject) -> None:
    evictable = items(*tokens)
    order = data.draw(st.permutations(range(len(tokens))))
    greedy = GreedyOrder(order, evictable)
    for remaining in data.draw(st.lists(st.integers(0, sum(tokens) + 5), min_size=1, max_size=4)):
        sel = select_evictable(evictable, remaining, scores=None, greedy=greedy)
        # the reference walk, item by item over the whole order
        kept, accum, rank, left = [], 0, [0] * len(tokens), [None] * len(tokens)
        for position, index in enumerate(order, start=1):
            rank[index], left[index] = position, remaining - accum
            if accum + tokens[index] <= remaining:
                kept.append(index)
                accum += tokens[index]
        assert greedy.kept_tokens(remaining) == accum == greedy.walk(remaining)[1]
        if sum(tokens) <= remaining:
            assert sel.mode == "full-fit" and sel.kept == list(range(len(tokens)))
            continue
        assert (sel.mode, sel.kept, sel.kept_tokens) == ("prompt-aware", sorted(kept), accum)
        assert list(sel.rank) == rank and list(sel.left_before) == left


@settings(max_examples=200, deadline=None)
@given(tokens=st.lists(st.integers(0, 60), max_size=1400), data=st.data())
def test_the_walk_over_several_blocks_is_the_plain_greedy_walk(tokens: list[int], data: st.DataObject) -> None:
    order = list(range(len(tokens)))  # (the walk only reads the tokens in order)
    greedy = GreedyOrder(order, items(*tokens))
    for remaining in data.draw(st.lists(st.integers(0, sum(tokens) + 5), min_size=1, max_size=4)):
        kept, accum = [], 0
        for position, count in enumerate(tokens):
            if accum + count <= remaining:
                kept.append(position)
                accum += count
        assert greedy.walk(remaining) == (kept, accum)
        assert greedy.kept_tokens(remaining) == accum


def test_long_walks_stop_exactly_where_the_plain_walk_keeps_its_last_item() -> None:
    import random

    generator = random.Random(19)
    tokens = [generator.choice([1, 2, 5, 40, 300, 2000]) for _ in range(5000)]
    tokens[4321] = 0  # a free item far down the order: the walk must still reach it
    greedy = GreedyOrder(list(range(len(tokens))), items(*tokens))
    for remaining in (0, 1, 3, 777, 20_000, 100_000, sum(tokens) - 1):
        kept, accum = [], 0
        for position, count in enumerate(tokens):
            if accum + count <= remaining:
                kept.append(position)
                accum += count
        assert greedy.walk(remaining) == (kept, accum)
        assert greedy.kept_tokens(remaining) == accum
        assert 4321 in kept


def test_prompt_aware_order_is_score_descending_newer_first() -> None:
    assert prompt_aware_order([0.5, 0.9, 0.5, 0.0, 0.1]) == [1, 2, 0, 4, 3]
    assert prompt_aware_order([]) == []
    assert prompt_aware_order_sparse({1: 0.9, 0: 0.5, 2: 0.5, 4: 0.1}, 5) == [1, 2, 0, 4, 3]
    assert prompt_aware_order_sparse({}, 3) == [2, 1, 0]


@settings(max_examples=300, deadline=None)
@given(scores=st.lists(st.one_of(st.just(0.0), st.sampled_from([0.1, 0.25, 0.5, 1.0]), st.floats(0, 1)), max_size=25))
def test_the_sparse_order_is_the_prompt_aware_order(scores: list[float]) -> None:
    positive = {i: s for i, s in enumerate(scores) if s > 0}
    assert prompt_aware_order_sparse(positive, len(scores)) == prompt_aware_order(scores)


@settings(max_examples=300, deadline=None)
@given(
    scores=st.lists(st.one_of(st.just(0.0), st.sampled_from([0.1, 0.25, 0.5, 1.0]), st.floats(0, 1)), max_size=25),
    data=st.data(),
)
def test_the_sparse_greedy_order_is_the_greedy_order_of_the_scores(scores: list[float], data: st.DataObject) -> None:
    tokens = data.draw(st.lists(st.integers(0, 40), min_size=len(scores), max_size=len(scores)))
    evictable = items(*tokens)
    positive = {i: s for i, s in enumerate(scores) if s > 0}
    dense = GreedyOrder(prompt_aware_order(scores), evictable)
    expected_rank = [0] * len(scores)
    for position, index in enumerate(dense.order, start=1):
        expected_rank[index] = position
    for item_tokens in (None, list(tokens)):
        sparse = GreedyOrder.sparse(positive, evictable, item_tokens)
        assert (sparse.order, sparse.tokens, sparse.floor) == (dense.order, dense.tokens, dense.floor)
        rank = sparse.rank(len(scores))
        assert [rank[i] for i in range(len(scores))] == expected_rank
        assert rank == expected_rank and len(rank) == len(scores)
        for remaining in (0, sum(tokens) // 2, sum(tokens)):
            assert sparse.walk(remaining) == dense.walk(remaining)


@settings(max_examples=300, deadline=None)
@given(
    tokens=st.lists(st.integers(0, 40), max_size=25),
    ranked=st.booleans(),
    data=st.data(),
)
def test_the_replayed_order_keeps_what_the_selection_keeps(
    tokens: list[int], ranked: bool, data: st.DataObject
) -> None:
    evictable = items(*tokens)
    scores = data.draw(st.lists(st.floats(0, 1), min_size=len(tokens), max_size=len(tokens))) if ranked else None
    run = select_evictable(evictable, 0, scores=scores)  # the sweep asks at the smallest budget (eviction)
    order = SelectionOrder.of(evictable, run)
    assert order.mode == run.mode and order.total == sum(tokens)
    if run.mode == "prompt-aware":
        assert order.keys == [evictable[i].key for i in prompt_aware_order(scores or [])]
    else:
        assert order.keys == [evictable[i].key for i in reversed(range(len(tokens)))]
    assert order.tokens == [tokens[int(key[2:])] for key in order.keys]
    for remaining in data.draw(st.lists(st.integers(0, sum(tokens) + 5), min_size=1, max_size=6)):
        assert order.kept_tokens(remaining) == select_evictable(evictable, remaining, scores=scores).kept_tokens
