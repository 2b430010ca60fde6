"""An inverted index of the §6.2 terms, so a prompt edit only touches items that contain its terms.

BM25-lite gives an item the score Σ tf/N over the distinct prompt terms, in
prompt order.  Items without any prompt term score exactly 0.0, and in a long
session that is nearly all of them; the index finds the others from the
postings of the prompt's terms and adds their contributions in prompt order,
so every float is bit-identical to ``score_item``.  The selection order
(score descending, newer first on ties) then needs a sort of the scored items
only (``select.prompt_aware_order_sparse``).  The index of a resolved list,
and the scores of the latest prompt, are kept in the list's cache.
"""

from __future__ import annotations

import functools
from array import array
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from ctxview.assembly.incremental.static import SessionStatic, static_of
from ctxview.assembly.resolve import ResolvedItem, ResolvedItems, tokenize
from ctxview.assembly.scoring import score_item
from ctxview.assembly.select import GreedyOrder, prompt_aware_order, prompt_aware_order_sparse
from ctxview.model import Session, TermMatch

_ZERO: tuple[float, tuple[TermMatch, ...]] = (0.0, ())
# what a term index is made of, beside its items (``TermIndex.parts``)
IndexParts = tuple["array[int]", dict[str, int], "array[int]", "array[int]", "array[int]"]


class TermIndex:
    """Postings (item position → tf) per term and the term count of every item of one resolved list.

    A 100,000-item session has millions of postings over tens of thousands of terms, most of them in a
    single item: they are kept as one run per term in two flat arrays (``_positions``, ``_tfs``), the
    runs found through ``_slot`` and ``_offsets``, at about 5 bytes a posting.
    """

    def __init__(self, items: Sequence[ResolvedItem]) -> None:
        self._items = items
        self.item_tokens = [item.tokens for item in items]  # (greedy orders copy runs of it: the same ints)
        # the greedy order of a prompt that scores no item (every item newest first), for that many items
        self.unscored_greedy: tuple[int, GreedyOrder] | None = None
        totals = array("q")
        # while building: term → (pos << 32 | tf) for a term seen once (most are), else (positions, tfs); the
        # frequencies one byte each until one does not fit (then that term's go to four bytes)
        postings: dict[str, Any] = {}
        get = postings.get
        for pos, item in enumerate(items):
            cached = item._terms
            if cached is not None:
                counts, total = cached
            else:
                terms = tokenize(item.text)
                counts, total = Counter(terms), len(terms)
            totals.append(total)
            for term, tf in counts.items():
                bucket = get(term)
                if bucket is None:
                    postings[term] = pos << 32 | tf
                elif type(bucket) is int:
                    postings[term] = _bucket(bucket >> 32, bucket & 0xFFFFFFFF, pos, tf)
                else:
                    bucket[0].append(pos)
                    try:
                        bucket[1].append(tf)
                    except OverflowError:
                        postings[term] = (bucket[0], array("I", (*bucket[1], tf)))
        self.totals = totals
        # the runs copied into arrays of their exact final size (growing them would leave copies behind)
        count = sum(1 if type(bucket) is int else len(bucket[0]) for bucket in postings.values())
        positions = array("i", (0,)) * count
        wide = any(type(bucket) is not int and bucket[1].typecode == "I" for bucket in postings.values())
        tfs = array("I" if wide else "B", (0,)) * count
        slot: dict[str, int] = {}
        offsets = array("q", (0,)) * (len(postings) + 1)
        at = 0
        k = 0
        while postings:  # (each term's arrays are let go of as they are copied)
            term, bucket = postings.popitem()
            slot[term] = k
            if type(bucket) is int:
                positions[at] = bucket >> 32
                try:
                    tfs[at] = bucket & 0xFFFFFFFF
                except OverflowError:  # (a term seen once, very often: every frequency to four bytes)
                    tfs = array("I", tfs)
                    tfs[at] = bucket & 0xFFFFFFFF
                at += 1
            else:
                end = at + len(bucket[0])
                positions[at:end] = bucket[0]
                tfs[at:end] = bucket[1] if bucket[1].typecode == tfs.typecode else array(tfs.typecode, bucket[1])
                at = end
            k += 1
            offsets[k] = at
        self._slot = slot
        self._offsets = offsets
        self._positions = positions
        self._tfs = tfs

    @classmethod
    def of_parts(cls, items: Sequence[ResolvedItem], parts: IndexParts) -> TermIndex:
        """The index of ``items`` from what ``parts`` gave of an index of items with the same texts, in the same
        order (``term_index_cache``: a warm open loads it rather than tokenizing every item again)."""
        index = cls.__new__(cls)
        index._items = items
        index.item_tokens = [item.tokens for item in items]
        index.unscored_greedy = None
        index.totals, index._slot, index._offsets, index._positions, index._tfs = parts
        return index

    def parts(self) -> IndexParts:
        """(term count per item, term → slot, slot → first posting, postings' positions, their frequencies)."""
        return self.totals, self._slot, self._offsets, self._positions, self._tfs

    def postings_of(self, term: str) -> tuple[Sequence[int], Sequence[int]]:
        """The positions of the items holding ``term`` (ascending) and its frequency in each."""
        k = self._slot.get(term)
        if k is None:
            return (), ()
        start, stop = self._offsets[k], self._offsets[k + 1]
        return self._positions[start:stop], self._tfs[start:stop]

    @functools.cached_property
    def position(self) -> dict[int, int]:
        """id(item) → position: built only for a focus brief or an evictable list that is not the prefix
        (a dict of every item is ~10 MB at 100,000 items, and the usual run never reads it)."""
        return {id(item): pos for pos, item in enumerate(self._items)}

    def positive_scores(self, terms: Sequence[str]) -> dict[int, float]:
        """Item position → score, for the items that contain at least one of ``terms`` (distinct, in order)."""
        scores: dict[int, float] = {}
        totals = self.totals
        get = scores.get
        for term in terms:
            positions, tfs = self.postings_of(term)
            for pos, tf in zip(positions, tfs, strict=True):
                scores[pos] = get(pos, 0.0) + tf / totals[pos]
        return scores


def _bucket(first: int, first_tf: int, second: int, second_tf: int) -> tuple[array[int], array[int]]:
    """The posting arrays of a term seen a second time."""
    code = "B" if first_tf < 256 and second_tf < 256 else "I"
    return array("i", (first, second)), array(code, (first_tf, second_tf))


class IndexedScores(Sequence[tuple[float, tuple[TermMatch, ...]]]):
    """``[score_item(item, terms) for item in evictable]``, with only the non-zero entries computed up front.

    ``items`` is the resolved list the index was built from and ``evictable`` its
    evictable prefix in the same order (the focus item, if any, left out);
    ``copies`` are the evictable indexes holding stub copies, scored directly.
    """

    def __init__(
        self,
        evictable: Sequence[ResolvedItem],
        terms: tuple[str, ...],
        index: TermIndex,
        items: Sequence[ResolvedItem],
        *,
        focus_position: int | None = None,
        copies: Sequence[int] = (),
    ) -> None:
        self.evictable = evictable
        self.terms = terms
        self.positive: dict[int, float] = {}  # evictable index → score > 0
        self._direct: dict[int, tuple[float, tuple[TermMatch, ...]]] = {}
        self.index = index
        self._order: list[int] | None = None
        self._greedy: GreedyOrder | None = None
        self._focus_position = focus_position
        count = len(evictable)
        copied = set(copies)
        mismatch = False
        for pos, score in index.positive_scores(terms).items():
            if focus_position is not None and pos >= focus_position:
                if pos == focus_position:
                    continue
                i = pos - 1
            else:
                i = pos
            if i < count:
                if evictable[i] is items[pos]:
                    self.positive[i] = score
                elif i not in copied:
                    mismatch = True
        self._prefix = not mismatch and not copies  # evictable = items without the focus item, in order
        if mismatch:  # evictable is not the prefix it should be: map every item (slow, still exact)
            self.positive.clear()
            by_position = index.positive_scores(terms)
            for i, item in enumerate(evictable):
                pos = index.position.get(id(item))
                if pos is not None and pos in by_position:
                    self.positive[i] = by_position[pos]
        for i in copies:
            scored = score_item(evictable[i], terms)
            self._direct[i] = scored
            self.positive.pop(i, None)
            if scored[0] > 0:
                self.positive[i] = scored[0]

    def __len__(self) -> int:
        return len(self.evictable)

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self.evictable)
        if not 0 <= i < len(self.evictable):
            raise IndexError("score index out of range")
        direct = self._direct.get(i)
        if direct is not None:
            return direct
        if i not in self.positive:
            return _ZERO
        return score_item(self.evictable[i], self.terms)

    def __iter__(self) -> Iterator[tuple[float, tuple[TermMatch, ...]]]:
        for i in range(len(self.evictable)):
            yield self[i]

    def score_list(self) -> list[float]:
        """The plain scores, 0.0 for every item without a prompt term."""
        scores = [0.0] * len(self.evictable)
        for i, score in self.positive.items():
            scores[i] = score
        return scores

    def order(self) -> list[int]:
        """The §6.2 prompt-aware order of these scores (``select.prompt_aware_order_sparse``), built once."""
        if self._order is None:
            self._order = prompt_aware_order_sparse(self.positive, len(self.evictable))
        return self._order

    def greedy(self) -> GreedyOrder:
        """``order()`` prepared for the greedy walk (built once, walked at every budget; for a prompt that
        scores no item, built once per index: typing, most prefixes of a word match nothing)."""
        if self._greedy is None:
            tokens = self._evictable_tokens()
            count = len(self.evictable)
            known = self.index.unscored_greedy  # (read once: another run may replace it)
            if not self.positive and tokens is self.index.item_tokens and known is not None and known[0] == count:
                self._greedy = known[1]  # (a greedy order is never changed once built: runs may share it)
            else:
                self._greedy = GreedyOrder.sparse(self.positive, self.evictable, tokens)
                if not self.positive and tokens is self.index.item_tokens:
                    self.index.unscored_greedy = (count, self._greedy)
            if self._order is None:
                self._order = self._greedy.order  # (the same list ``order()`` would build)
        return self._greedy

    def _evictable_tokens(self) -> Sequence[int] | None:
        """``[item.tokens for item in evictable]`` from the index's copy (None when evictable is not its prefix)."""
        if not self._prefix:
            return None
        tokens = self.index.item_tokens
        focus = self._focus_position
        if focus is not None and focus < len(self.evictable):
            tokens = tokens[:focus] + tokens[focus + 1 :]
        return tokens


def _index_key(items: Sequence[ResolvedItem]) -> str:
    """Where a resolved list's cache keeps the index of ``items`` (with the list itself: an id can be reused)."""
    return f"term-index:{id(items)}"


def _kept_index(cache: dict[str, Any] | None, items: Sequence[ResolvedItem]) -> TermIndex | None:
    hit = cache.get(_index_key(items)) if cache is not None else None
    return hit[1] if hit is not None and hit[0] is items else None  # type: ignore[no-any-return]


def indexed_scores(
    resolved: list[ResolvedItem],
    static: SessionStatic,
    evictable: list[ResolvedItem],
    terms: tuple[str, ...],
    *,
    stubbed: bool,
    build: bool = False,
) -> IndexedScores | None:
    """BM25-lite scores of the evictable items through the session's term index.

    The index is built by ``build=True`` (``SessionAssembler.prepare``) or by the second
    distinct searchable prompt on the same resolved list; before that (a one-shot CLI run,
    or budget edits and sweeps of one prompt) the answer is None and the caller scores items
    directly (``direct_scores``, remembered per prompt), which is cheaper than indexing.
    """
    items = static.overlay.items
    cache = resolved.cache if isinstance(resolved, ResolvedItems) else None
    index = _kept_index(cache, items)
    if index is None:
        if not build:
            if cache is None:
                return None
            asked: set[tuple[str, ...]] = cache.setdefault(f"term-asks:{id(items)}", set())
            asked.add(terms)  # the distinct prompts scored without the index (a budget edit is not one)
            if len(asked) < 2:
                return None
        index = TermIndex(items)
        if cache is not None:
            cache[_index_key(items)] = (items, index)
    focus = static.overlay.focus_item
    focus_position = index.position.get(id(focus)) if focus is not None else None
    if stubbed:
        copies = [i for i, item in enumerate(evictable) if item.stub_of is not None]
        return IndexedScores(evictable, terms, index, items, focus_position=focus_position, copies=copies)
    # without stubs the evictable list is the first len(evictable) non-focus items: the same prompt over
    # the same length gives the same scores, so a budget edit reuses them (and their prepared order)
    signature = (terms, len(evictable), focus_position, id(index))
    memo_key = f"scores:{id(items)}"
    hit = cache.get(memo_key) if cache is not None else None
    if hit is not None and hit[0] is items and hit[1] == signature:
        return hit[2]
    scores = IndexedScores(evictable, terms, index, items, focus_position=focus_position)
    if cache is not None:
        cache[memo_key] = (items, signature, scores)
    return scores


class DirectScores:
    """``[score_item(item, terms) for item in evictable]`` computed item by item (no index), and its greedy order."""

    __slots__ = ("_greedy", "evictable", "scored")

    def __init__(self, evictable: Sequence[ResolvedItem], terms: tuple[str, ...]) -> None:
        self.evictable = evictable
        # a term is a run of [a-z0-9] in the lowercased text, so an item whose lowercased text
        # contains none of them as a substring scores exactly 0 with no match (no tokenizing needed)
        self.scored = [
            score_item(item, terms) if any(t in lowered for t in terms) else _ZERO
            for item, lowered in zip(evictable, (item.text.lower() for item in evictable), strict=True)
        ]
        self._greedy: GreedyOrder | None = None

    def greedy(self) -> GreedyOrder:
        """The §6.2 prompt-aware order of these scores prepared for the greedy walk (built once, when first walked)."""
        if self._greedy is None:
            self._greedy = GreedyOrder(prompt_aware_order([s for s, _ in self.scored]), self.evictable)
        return self._greedy


def direct_scores(
    resolved: list[ResolvedItem],
    static: SessionStatic,
    evictable: list[ResolvedItem],
    terms: tuple[str, ...],
    *,
    stubbed: bool,
) -> DirectScores:
    """BM25-lite scores of the evictable items without the index, remembered per prompt.

    Without stubs the evictable list is the first ``len(evictable)`` non-focus items, so the
    same prompt over the same length gives the same scores and order: a budget edit or a
    sweep of one prompt reuses them (they are never modified once built).
    """
    items = static.overlay.items
    cache = resolved.cache if isinstance(resolved, ResolvedItems) and not stubbed else None
    focus = static.overlay.focus_item
    signature = (terms, len(evictable), id(focus) if focus is not None else None)
    memo_key = f"direct-scores:{id(items)}"
    hit = cache.get(memo_key) if cache is not None else None
    if hit is not None and hit[0] is items and hit[1] == signature:
        scores: DirectScores = hit[2]
        return scores
    scores = DirectScores(evictable, terms)
    if cache is not None:
        cache[memo_key] = (items, signature, scores)
    return scores


def term_index(
    session_resolved: list[ResolvedItem],
    session: Session,
    timezone: str,
    *,
    known: Callable[[Sequence[ResolvedItem]], TermIndex | None] | None = None,
    keep: Callable[[Sequence[ResolvedItem], TermIndex], Any] | None = None,
) -> TermIndex:
    """Build (or return) the term index of a resolved list now, e.g. in a background thread after loading.

    ``known(items)``: an index of these items kept elsewhere (None: none), taken instead of building one;
    ``keep(items, index)``: told of an index built here."""
    static = static_of(session, session_resolved, timezone)
    items = static.overlay.items
    cache = session_resolved.cache if isinstance(session_resolved, ResolvedItems) else None
    built = _kept_index(cache, items) is None
    if built and known is not None and cache is not None:
        found = known(items)
        if found is not None:
            cache[_index_key(items)] = (items, found)
            return found
    indexed = indexed_scores(session_resolved, static, [], (), stubbed=False, build=True)
    assert indexed is not None
    if built and keep is not None:
        keep(items, indexed.index)
    return indexed.index

