"""Budget selection over scorer documents through the assembly's own §6 walk.

What the assembler does with an opt-in scorer's ranking, without a session:
the pool documents become the evictable items (a stub's tokens standing in
for the item's), the scorer's order (its sort keys) is the walk order, and
``ctxview.assembly.select.select_evictable`` decides.
"""

from __future__ import annotations

from collections.abc import Sequence

from ctxview.assembly.resolve import ResolvedItem
from ctxview.assembly.select import select_evictable
from ctxview.scorers.base import ScoreDoc, ScoreResult


def select_ranked(
    docs: Sequence[ScoreDoc], results: Sequence[ScoreResult], remaining: int, *, ranks: bool
) -> tuple[str, list[str]]:
    """(selection mode, kept keys in pool order) of the pool documents at ``remaining`` tokens."""
    pool = sorted((i for i, d in enumerate(docs) if d.pool_index is not None), key=lambda i: docs[i].pool_index or 0)
    evictable = [
        ResolvedItem(
            ordinal=position,
            stored_message={"role": "user", "content": docs[i].text},
            tokens=results[i].stub_tokens if results[i].stub_tokens is not None else docs[i].tokens,
            is_message=True,
            text=docs[i].text,
        )
        for position, i in enumerate(pool)
    ]
    # best first by the scorer's sort key, as ScorerRanker.rank orders the evictable items
    order = sorted(range(len(pool)), key=lambda j: results[pool[j]].sort_key) if ranks else None
    selection = select_evictable(evictable, remaining, scores=None, order=order)
    return selection.mode, [docs[pool[j]].key for j in selection.kept]
