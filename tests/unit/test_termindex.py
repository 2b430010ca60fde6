"""The inverted term index gives BM25-lite scores and the selection order bit for bit as the direct path."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ctxview.assembly.incremental.termindex import IndexedScores, TermIndex
from ctxview.assembly.resolve import ResolvedItem
from ctxview.assembly.scoring import prompt_terms, score_item

VOCAB = ["db", "database", "migration", "rollback", "helm", "a", "the", "x1", "99", "Deploy", "日本語", "-", " ", "\n"]


def item(ordinal: int, text: str, *, focus: bool = False) -> ResolvedItem:
    return ResolvedItem(
        ordinal=ordinal,
        stored_message={"role": "user", "content": text},
        tokens=max(1, len(text) // 4),
        is_message=True,
        text=text,
        is_focus_brief=focus,
    )


texts = st.lists(st.lists(st.sampled_from(VOCAB), max_size=12).map(" ".join), min_size=0, max_size=30)
prompts = st.lists(st.sampled_from(VOCAB), max_size=5).map(" ".join)


@settings(max_examples=200, deadline=None)
@given(texts=texts, prompt=prompts, focus_at=st.one_of(st.none(), st.integers(0, 30)), cut=st.integers(0, 30))
def test_indexed_scores_and_order_equal_the_direct_path(
    texts: list[str], prompt: str, focus_at: int | None, cut: int
) -> None:
    items = [item(i, t) for i, t in enumerate(texts)]
    focus_position = None
    if focus_at is not None and focus_at <= len(items):
        items.insert(focus_at, item(-1, "database focus brief", focus=True))
        focus_position = focus_at
    terms = tuple(prompt_terms(prompt))
    evictable = [it for it in items[: min(cut, len(items))] if not it.is_focus_brief]
    index = TermIndex(items)
    indexed = IndexedScores(evictable, terms, index, items, focus_position=focus_position)
    # a fresh copy of every item so that score_item's per-item cache cannot hide a difference
    direct = [score_item(item(it.ordinal, it.text), terms) for it in evictable]
    assert list(indexed) == direct
    assert [indexed[i] for i in range(len(evictable))] == direct
    scores = [s for s, _ in direct]
    assert indexed.score_list() == scores
    reference = sorted(range(len(scores) - 1, -1, -1), key=scores.__getitem__, reverse=True)
    assert indexed.order() == reference


def test_ties_are_broken_towards_the_newer_item() -> None:
    items = [item(i, "database") for i in range(4)] + [item(4, "database database other")]
    indexed = IndexedScores(items, ("database",), TermIndex(items), items)
    # items 0-3 score 1.0, item 4 scores 2/3: newest first among the tied ones
    assert indexed.order() == [3, 2, 1, 0, 4]
    assert indexed.positive == {0: 1.0, 1: 1.0, 2: 1.0, 3: 1.0, 4: 2 / 3}


def test_stub_copies_are_scored_on_their_own_text() -> None:
    items = [item(0, "database rollback"), item(1, "nothing here")]
    stub = item(1, "database stub")
    stub.stub_of = items[1]
    evictable = [items[0], stub]
    indexed = IndexedScores(evictable, ("database",), TermIndex(items), items, copies=[1])
    assert indexed[1] == score_item(item(1, "database stub"), ("database",))
    assert indexed[1][0] == 0.5 == indexed[0][0] and indexed.order() == [1, 0]  # a tie: the newer first


@settings(max_examples=60, deadline=None)
@given(repeats=st.lists(st.tuples(st.sampled_from(["db", "helm", "x1", "rare"]), st.integers(1, 700)), max_size=12),
       prompt=st.lists(st.sampled_from(["db", "helm", "x1", "rare", "none"]), min_size=1, max_size=4).map(" ".join))
def test_frequencies_past_one_byte_score_as_the_direct_path(repeats: list[tuple[str, int]], prompt: str) -> None:
    """The index keeps term frequencies in one byte each until one does not fit (a term seen once or many
    times): a term repeated hundreds of times in an item scores exactly as scored directly."""
    items = [item(i, " ".join([term] * count + ["filler"])) for i, (term, count) in enumerate(repeats)]
    terms = tuple(prompt_terms(prompt))
    indexed = IndexedScores(items, terms, TermIndex(items), items)
    assert list(indexed) == [score_item(item(it.ordinal, it.text), terms) for it in items]


def test_prompts_that_score_nothing_share_one_greedy_order_equal_to_a_fresh_one() -> None:
    """Typing, most prefixes of a word match no item: their greedy order (every item newest first) is built once
    per index and item count, and equals the order built for the prompt alone."""
    from ctxview.assembly.select import GreedyOrder

    items = [item(i, text) for i, text in enumerate(["database rollback", "helm chart", "x1 99", "the helm", "a"])]
    index = TermIndex(items)
    first = IndexedScores(items[:4], ("zzz",), index, items).greedy()
    again = IndexedScores(items[:4], ("qqq", "www"), index, items).greedy()
    assert again is first
    fresh = GreedyOrder.sparse({}, items[:4], [it.tokens for it in items[:4]])
    assert (first.order, first.tokens, first.floor) == (fresh.order, fresh.tokens, fresh.floor) == (
        [3, 2, 1, 0], [items[3].tokens, items[2].tokens, items[1].tokens, items[0].tokens], first.floor
    )
    assert list(first.rank(4)) == list(fresh.rank(4)) and first.walk(5) == fresh.walk(5)
    fewer = IndexedScores(items[:3], ("zzz",), index, items).greedy()  # another item count: its own order
    assert fewer is not first and fewer.order == [2, 1, 0]
    scored = IndexedScores(items[:4], ("helm",), index, items).greedy()  # a prompt that scores items: its own
    assert scored is not first and scored.order[:2] == [3, 1]
