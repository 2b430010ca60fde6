"""Budget selection over the evictable items (spec §6): full-fit, prompt-aware, chronological.

Exactly one mode runs.  Besides the kept set, the walk records for every
evictable item what it saw (its rank, the budget left when it was
considered), so the trace can explain each keep or evict with numbers.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import accumulate
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


class GreedyOrder:
    """A best-first order of the evictable items, prepared once for greedy walks at any budget.

    A prompt fixes the order; every budget edit then walks it again.  With the
    tokens laid out in walk order and the smallest token count of every suffix
    known, a walk is a tight loop that stops as soon as nothing further can fit.
    """

    __slots__ = ("_rank", "floor", "order", "tokens")

    def __init__(self, order: Sequence[int], evictable: Sequence[ResolvedItem]) -> None:
        self.order = order
        self.tokens = [evictable[i].tokens for i in order]
        floor = list(accumulate(reversed(self.tokens), min))  # floor[r] = min(tokens[r:])
        floor.reverse()
        self.floor = floor
        self._rank: array[int] | None = None

    def rank(self, count: int) -> array[int]:
        """Evictable index → 1-based rank (0 for an index the order leaves out)."""
        if self._rank is None or len(self._rank) != count:
            rank = array("l", bytes(count * array("l").itemsize))
            for position, index in enumerate(self.order, start=1):
                rank[index] = position
            self._rank = rank
        return self._rank

    def walk(self, remaining: int) -> tuple[list[int], int]:
        """(ranks kept, 0-based ascending; tokens kept): keep each item that still fits, best first."""
        kept: list[int] = []
        accum = 0
        floor = self.floor
        for position, tokens in enumerate(self.tokens):
            if accum + tokens <= remaining:
                kept.append(position)
                accum += tokens
            elif remaining - accum < floor[position]:
                break  # nothing from here on fits
        return kept, accum


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
                # score descending, ties → the more recent (larger index) first; sort is stable under reverse
                order = sorted(range(n - 1, -1, -1), key=scores.__getitem__, reverse=True)
            assert order is not None
            greedy = GreedyOrder(order, evictable)
        kept_ranks, accum = greedy.walk(remaining)
        rank = greedy.rank(n)
        kept_tokens = [greedy.tokens[r] for r in kept_ranks]
        kept = sorted([greedy.order[r] for r in kept_ranks])
        return Selection(
            "prompt-aware", kept, accum, remaining, total, rank, _LeftBefore(rank, kept_ranks, kept_tokens, remaining)
        )
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
