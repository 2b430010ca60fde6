"""How an opt-in scorer enters §6 selection: the ``Ranker`` protocol and the ``Ranking`` it returns.

The reference ranks the evictable items by BM25-lite (``select.py``); with an
opt-in scorer the pipeline hands the assembler a ``Ranker`` instead.  The
assembly owns this protocol and knows nothing of the scorers behind it (their
package implements it in ``ranker.py``), so the layers stay one way: the
scorers depend on the assembly, never the reverse.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from ctxview.assembly.resolve import ResolvedItem
from ctxview.model import TermMatch


@dataclass(slots=True)
class Ranking:
    """What a ranker decided about the evictable items of one run (every list parallel to ``items``)."""

    name: str  # the scorer's name, as the reasons cite it ("rarity: …")
    items: list[ResolvedItem]  # the evictable list, stub copies swapped in where the ranker stubs
    scored: list[tuple[float | None, tuple[TermMatch, ...]]]  # score (None = not scored) and its term rows
    order: list[int] | None  # evictable indexes best first for the greedy walk; None → the ranker does not rank
    labels: list[str]  # "exact" / "keyword-only" / ROI band / ""
    notes: list[str]  # the ranker's one-line explanation, added to the selection reason
    stubbed_count: int
    tokens_saved: int

    @property
    def low_confidence(self) -> bool:
        """Every evictable item scored zero: the ranking carries no signal."""
        shown = [score for score, _ in self.scored if score is not None]
        return bool(shown) and all(score == 0 for score in shown)


class Ranker(Protocol):
    """Ranks (and may stub) the evictable items of a run in place of BM25-lite."""

    def rank(self, evictable: Sequence[ResolvedItem], prompt: str | None) -> Ranking: ...
