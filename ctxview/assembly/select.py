"""Budget selection over the evictable items (spec §6): full-fit, prompt-aware, chronological.

Exactly one mode runs.  Besides the kept set, the walk records for every
evictable item what it saw (its rank, the budget left when it was
considered), so the trace can explain each keep or evict with numbers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ctxview.assembly.resolve import ResolvedItem


@dataclass(slots=True)
class Selection:
    mode: str  # full-fit | prompt-aware | chronological
    kept: list[int]  # indexes into the evictable list, ascending (= ordinal order)
    kept_tokens: int  # §6 evictableTokens
    remaining: int
    total: int  # evictTotal
    rank: list[int] = field(default_factory=list)  # prompt-aware: index → 1-based rank
    left_before: list[int | None] = field(default_factory=list)  # budget left when the item was considered
    stop_index: int | None = None  # chronological: the first item that did not fit


def select_evictable(
    evictable: Sequence[ResolvedItem],
    remaining: int,
    *,
    scores: Sequence[float] | None,
    order: Sequence[int] | None = None,
) -> Selection:
    """Choose the evictable items to keep; ``scores`` given ⇔ prompt-aware mode applies.

    ``scores`` must be None unless ``promptAwareEviction`` is on and the prompt is searchable.
    ``order`` (evictable indexes, best first) lets an opt-in scorer rank instead of BM25-lite;
    the greedy walk over it is the reference's.
    """
    total = sum(item.tokens for item in evictable)
    if total <= remaining:
        return Selection("full-fit", list(range(len(evictable))), total, remaining, total)
    n = len(evictable)
    if scores is not None or order is not None:
        if scores is not None:
            # score descending, ties → the more recent (larger index) first; sort is stable under reverse
            order = sorted(range(n - 1, -1, -1), key=scores.__getitem__, reverse=True)
        assert order is not None
        sel = Selection("prompt-aware", [], 0, remaining, total, [0] * n, [None] * n)
        rank_of = sel.rank
        left = sel.left_before
        accum = 0
        kept: list[int] = []
        for rank, index in enumerate(order, start=1):
            tokens = evictable[index].tokens
            rank_of[index] = rank
            left[index] = remaining - accum
            if accum + tokens <= remaining:
                kept.append(index)
                accum += tokens
        kept.sort()
        sel.kept = kept
        sel.kept_tokens = accum
        return sel
    sel = Selection("chronological", [], 0, remaining, total, [], [None] * n)
    accum = 0
    kept_rev: list[int] = []
    for index in range(n - 1, -1, -1):
        tokens = evictable[index].tokens
        sel.left_before[index] = remaining - accum
        if accum + tokens <= remaining:
            kept_rev.append(index)
            accum += tokens
        else:
            sel.stop_index = index
            break
    kept_rev.reverse()
    sel.kept = kept_rev
    sel.kept_tokens = accum
    return sel
