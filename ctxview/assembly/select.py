"""Budget selection over the evictable items (spec §6): full-fit, prompt-aware, chronological.

Exactly one mode runs.  Besides the kept set, the walk records for every
evictable item what it saw (its rank, the budget left when it was
considered), so the trace can explain each keep or evict with numbers.

Every §6 rule lives here once, by name: the full fit, the prompt-aware order
(``prompt_aware_order``, and ``prompt_aware_order_sparse`` for the term
index's scores), the greedy walk (``GreedyOrder.walk``) and the chronological
walk (``select_evictable``).  ``SelectionOrder`` replays the walk of one run at
any budget (the budget sweep) with the tokens-only forms of the same walks
(``GreedyOrder.kept_tokens``, a prefix-sum bisection for the chronological
one); ``tests/unit/test_select.py`` checks each form against the walks.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import accumulate, compress
from typing import overload

from ctxview.assembly.resolve import ResolvedItem


@dataclass(slots=True)
class Selection:
    mode: str  # full-fit | prompt-aware | chronological
    kept: list[int]  # indexes into the evictable list, ascending (= ordinal order)
    kept_tokens: int  # §6 evictableTokens
    remaining: int
    total: int  # evictTotal
    rank: Sequence[int] = field(default_factory=list)  # prompt-aware: index → 1-based rank
    left_before: Sequence[int | None] = field(default_factory=list)  # budget left when the item was considered
    stop_index: int | None = None  # chronological: the first item that did not fit
    greedy: GreedyOrder | None = None  # prompt-aware: the order walked


def prompt_aware_order(scores: Sequence[float]) -> list[int]:
    """§6.2 order: evictable indexes by score descending, the more recent (larger index) first on ties."""
    return sorted(range(len(scores) - 1, -1, -1), key=scores.__getitem__, reverse=True)


def prompt_aware_order_sparse(positive: Mapping[int, float], count: int) -> list[int]:
    """``prompt_aware_order`` of ``count`` scores that are 0 except at the indexes of ``positive``.

    Only the positive scores need sorting: the zeros follow them in index-descending
    order, exactly where ``prompt_aware_order`` puts them (scores are never negative).
    The zeros are picked at C speed through a mask of the positive indexes.
    """
    ranked = sorted(positive, key=lambda i: (-positive[i], -i))
    ranked.extend(compress(range(count - 1, -1, -1), _zero_mask_newest_first(positive, count)))
    return ranked


def _zero_mask_newest_first(positive: Mapping[int, float], count: int) -> bytes:
    """1 for each index without a score, from index ``count - 1`` down to 0."""
    mask = bytearray(b"\x01") * count
    for index in positive:
        mask[index] = 0
    return bytes(mask[::-1])


class SparseRank(Sequence[int]):
    """``GreedyOrder.rank`` of a ``prompt_aware_order_sparse`` order, answered per index.

    A zero-scored index ``j`` comes after every positive one, newest first, so its
    1-based rank is ``count - j`` plus the positive indexes below it; building the
    whole array would cost a Python loop over every item on every prompt edit.
    """

    __slots__ = ("_ascending", "_count", "_positive_rank")

    def __init__(self, ranked_positive: Sequence[int], count: int) -> None:
        self._positive_rank = {index: rank for rank, index in enumerate(ranked_positive, start=1)}
        self._ascending = sorted(ranked_positive)
        self._count = count

    def __len__(self) -> int:
        return self._count

    @overload
    def __getitem__(self, index: int) -> int: ...

    @overload
    def __getitem__(self, index: slice) -> list[int]: ...

    def __getitem__(self, index: int | slice) -> int | list[int]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self._count))]
        if index < 0:
            index += self._count
        if not 0 <= index < self._count:
            raise IndexError("rank index out of range")
        rank = self._positive_rank.get(index)
        if rank is not None:
            return rank
        return self._count - index + bisect_right(self._ascending, index)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]


class GreedyOrder:
    """A best-first order of the evictable items, prepared once for §6.2 greedy walks at any budget.

    A prompt fixes the order; every budget edit then walks it again.  With the
    tokens laid out in walk order and a lower bound of the smallest token count
    of every suffix known, a walk is a tight loop that stops (at most a block
    late) once nothing further can fit.  The bound is the smallest count from the
    start of the position's block of ``_BLOCK`` items on: a per-position suffix
    minimum costs a Python call per item on every prompt edit.
    """

    __slots__ = ("_prefix", "_rank", "floor", "order", "tokens")

    _SHIFT = 9  # blocks of 512 positions

    def __init__(
        self,
        order: Sequence[int],
        evictable: Sequence[ResolvedItem],
        *,
        tokens: list[int] | None = None,
        rank: Sequence[int] | None = None,
    ) -> None:
        """``tokens`` (the items' tokens in ``order``) and ``rank`` when the caller has them cheaper."""
        self.order = order
        self.tokens = tokens if tokens is not None else [evictable[i].tokens for i in order]
        tokens_in_order = self.tokens
        size = 1 << self._SHIFT
        block_minima = [min(tokens_in_order[start : start + size]) for start in range(0, len(tokens_in_order), size)]
        floor = list(accumulate(reversed(block_minima), min))  # floor[b] = min(tokens[b * size:])
        floor.reverse()
        self.floor = floor
        self._rank: Sequence[int] | None = rank
        self._prefix: list[int] | None = None

    @classmethod
    def sparse(
        cls, positive: Mapping[int, float], evictable: Sequence[ResolvedItem], item_tokens: Sequence[int] | None
    ) -> GreedyOrder:
        """The greedy order of ``prompt_aware_order_sparse(positive, len(evictable))``.

        ``item_tokens``: ``[item.tokens for item in evictable]`` when the caller keeps it; the
        zero-scored items' tokens are then picked at C speed instead of read item by item.
        """
        count = len(evictable)
        ranked = sorted(positive, key=lambda i: (-positive[i], -i))
        zeros = _zero_mask_newest_first(positive, count)
        order = list(ranked)
        order.extend(compress(range(count - 1, -1, -1), zeros))
        if item_tokens is None:
            return cls(order, evictable, rank=SparseRank(ranked, count))
        tokens = [evictable[i].tokens for i in ranked]
        tokens.extend(compress(reversed(item_tokens[:count]), zeros))
        return cls(order, evictable, tokens=tokens, rank=SparseRank(ranked, count))

    def rank(self, count: int) -> Sequence[int]:
        """Evictable index → 1-based rank (0 for an index the order leaves out)."""
        if self._rank is None or len(self._rank) != count:
            rank = array("l", bytes(count * array("l").itemsize))
            for position, index in enumerate(self.order, start=1):
                rank[index] = position
            self._rank = rank
        return self._rank

    def walk(self, remaining: int) -> tuple[list[int], int]:
        """§6.2 walk → (ranks kept, 0-based ascending; tokens kept): keep each item that still fits, best first."""
        kept: list[int] = []
        accum = 0
        floor = self.floor
        shift = self._SHIFT
        for position, tokens in enumerate(self.tokens):
            if accum + tokens <= remaining:
                kept.append(position)
                accum += tokens
            elif remaining - accum < floor[position >> shift]:
                break  # nothing from here on fits
        return kept, accum

    def kept_tokens(self, remaining: int) -> int:
        """``walk(remaining)[1]`` without the ranks: the leading run that fits found by bisection (sweeps)."""
        if self._prefix is None:
            self._prefix = list(accumulate(self.tokens))
        prefix = self._prefix
        fits = bisect_right(prefix, remaining)  # the first ``fits`` items fit one after another
        accum = prefix[fits - 1] if fits else 0
        tokens = self.tokens
        floor = self.floor
        shift = self._SHIFT
        for position in range(fits + 1, len(tokens)):  # the item at ``fits`` did not fit
            if remaining - accum < floor[position >> shift]:
                break  # nothing from here on fits
            if accum + tokens[position] <= remaining:
                accum += tokens[position]
        return accum


class _LeftBefore(Sequence[int | None]):
    """``left_before`` of a prompt-aware walk, answered per item from the ranks it kept."""

    __slots__ = ("_kept", "_prefix", "_rank", "_remaining")

    def __init__(self, rank: Sequence[int], kept_ranks: list[int], kept_tokens: list[int], remaining: int) -> None:
        self._rank = rank
        self._kept = kept_ranks
        self._prefix = [0, *accumulate(kept_tokens)]  # tokens kept before the n-th kept rank
        self._remaining = remaining

    def __len__(self) -> int:
        return len(self._rank)

    @overload
    def __getitem__(self, index: int) -> int | None: ...

    @overload
    def __getitem__(self, index: slice) -> list[int | None]: ...

    def __getitem__(self, index: int | slice) -> int | list[int | None] | None:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        rank = self._rank[index]
        if rank == 0:
            return None  # not in the walk's order
        return self._remaining - self._prefix[bisect_left(self._kept, rank - 1)]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return repr(list(self))


def select_evictable(
    evictable: Sequence[ResolvedItem],
    remaining: int,
    *,
    scores: Sequence[float] | None,
    order: Sequence[int] | None = None,
    greedy: GreedyOrder | None = None,
    total: int | None = None,
) -> Selection:
    """Choose the evictable items to keep; ``scores`` given ⇔ prompt-aware mode applies.

    ``scores`` must be None unless ``promptAwareEviction`` is on and the prompt is searchable.
    ``order`` (evictable indexes, best first) lets an opt-in scorer rank instead of BM25-lite;
    the greedy walk over it is the reference's.  ``greedy`` is ``order`` prepared (kept
    between budget edits) and ``total`` the evictable items' tokens, when the caller knows them.
    """
    if total is None:
        total = sum(item.tokens for item in evictable)
    if total <= remaining:
        return Selection("full-fit", list(range(len(evictable))), total, remaining, total)
    n = len(evictable)
    if scores is not None or order is not None or greedy is not None:
        if greedy is None:
            if scores is not None:
                order = prompt_aware_order(scores)
            assert order is not None
            greedy = GreedyOrder(order, evictable)
        kept_ranks, accum = greedy.walk(remaining)
        rank = greedy.rank(n)
        kept_tokens = [greedy.tokens[r] for r in kept_ranks]
        kept = sorted([greedy.order[r] for r in kept_ranks])
        left_before = _LeftBefore(rank, kept_ranks, kept_tokens, remaining)
        return Selection("prompt-aware", kept, accum, remaining, total, rank, left_before, greedy=greedy)
    # §6.3 chronological walk: newest first, stop at the first item that does not fit
    left: list[int | None] = [None] * n
    stop_index: int | None = None
    accum = 0
    kept_rev: list[int] = []
    for index in range(n - 1, -1, -1):
        tokens = evictable[index].tokens
        left[index] = remaining - accum
        if accum + tokens <= remaining:
            kept_rev.append(index)
            accum += tokens
        else:
            stop_index = index
            break
    kept_rev.reverse()
    return Selection("chronological", kept_rev, accum, remaining, total, [], left, stop_index)


@dataclass(frozen=True, slots=True)
class SelectionOrder:
    """The order one run's §6 pass walks its evictable items, replayable at any budget.

    ``keys`` and ``tokens`` are the evictable items in walk order: the prompt-aware
    order when the run ranked them (``greedy``), newest first otherwise.  The budget
    sweep replays it instead of assembling at every budget.
    """

    mode: str  # the run's selection mode: full-fit | prompt-aware | chronological | empty
    keys: list[str]
    tokens: list[int]
    greedy: GreedyOrder | None = None  # prompt-aware: the prepared order the run walked
    _prefix: list[int] = field(default_factory=list, repr=False, compare=False)  # running sums of ``tokens``

    @classmethod
    def of(cls, evictable: Sequence[ResolvedItem], selection: Selection) -> SelectionOrder:
        """The walk of ``selection`` over ``evictable`` (the list it was made from)."""
        greedy = selection.greedy if selection.mode == "prompt-aware" else None
        if greedy is not None:
            order: Sequence[int] = greedy.order
            tokens = list(greedy.tokens)
        else:
            order = range(len(evictable) - 1, -1, -1)
            tokens = [evictable[i].tokens for i in order]
        keys = [evictable[i].key for i in order]
        return cls(selection.mode, keys, tokens, greedy, list(accumulate(tokens)))

    @property
    def total(self) -> int:
        """Every evictable token (§6 evictTotal)."""
        return self._prefix[-1] if self._prefix else 0

    def kept_tokens(self, remaining: int) -> int:
        """The tokens the §6 pass keeps with ``remaining`` left after the fresh tail (``Selection.kept_tokens``)."""
        if self.total <= remaining:
            return self.total  # full fit
        if self.greedy is not None:
            return self.greedy.kept_tokens(remaining)
        # the chronological walk keeps the longest newest-first run that fits: a prefix of the walk order
        index = bisect_right(self._prefix, remaining)
        return self._prefix[index - 1] if index else 0
