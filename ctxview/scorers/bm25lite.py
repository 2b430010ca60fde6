"""The reference BM25-lite score (spec §6.2, scorers.md A) behind the scorer interface.

For each distinct prompt term, in first-occurrence order, add ``tf / N``
(``N`` = all item terms).  The float is summed in exactly that order, so with
the ``lcm`` tokenizer it is bit-identical to the reference and to the
assembler's own §6.2 path.  The other scorers reuse this as their "base".
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ctxview.assembly.scoring import score_counts
from ctxview.model import TermMatch
from ctxview.scorers.base import ScoreDoc, ScoreResult, TextCache, fmt_score
from ctxview.scorers.tokenize import LCM, Tokenizer

__all__ = ["Bm25LiteScorer", "PreparedBm25Lite", "bm25_counts", "bm25_reason", "bm25_score", "prompt_terms"]


def prompt_terms(prompt: str | None, tokenizer: Tokenizer = LCM) -> tuple[str, ...]:
    """The distinct terms of a prompt in first-occurrence order; () when it is not a string."""
    if not isinstance(prompt, str):
        return ()
    return tuple(dict.fromkeys(tokenizer.tokenize(prompt)))


# The reference summation (§6.2) lives in the assembler; every scorer reuses that one piece of code.
bm25_counts = score_counts


def bm25_score(text: str, prompt: str | None, tokenizer: Tokenizer = LCM) -> float:
    """``scoreRelevance(text, prompt)``: 0 when either side has no terms."""
    terms = prompt_terms(prompt, tokenizer)
    if not terms:
        return 0.0
    item_terms = tokenizer.tokenize(text)
    return bm25_counts(Counter(item_terms), len(item_terms), terms)[0]


def bm25_reason(score: float, rows: Sequence[TermMatch], total: int, *, searchable: bool) -> str:
    """``bm25-lite 0.429: read 1/7 + config 1/7 + yaml 1/7``."""
    if not searchable:
        return "bm25-lite 0: the prompt has no searchable term"
    if not rows:
        return "bm25-lite 0: no prompt term in the item"
    parts = " + ".join(f"{row.term} {row.count}/{total}" for row in rows)
    return f"bm25-lite {fmt_score(score)}: {parts}"


@dataclass(frozen=True, slots=True)
class Bm25LiteScorer:
    """The default scorer: the reference score, unchanged."""

    tokenizer: Tokenizer = LCM
    name: str = "bm25-lite"

    def prepare(
        self, docs: Sequence[ScoreDoc], prompt: str | None, *, cache: TextCache | None = None
    ) -> PreparedBm25Lite:
        return PreparedBm25Lite(self.tokenizer, prompt_terms(prompt, self.tokenizer), cache or TextCache())


@dataclass(frozen=True, slots=True)
class PreparedBm25Lite:
    tokenizer: Tokenizer
    terms: tuple[str, ...]
    cache: TextCache = field(default_factory=TextCache, compare=False)
    name: str = "bm25-lite"

    @property
    def ranks(self) -> bool:
        return bool(self.terms)

    def score(self, doc: ScoreDoc) -> ScoreResult:
        counts, total = self.cache.term_counts(self.tokenizer, doc.text) if self.terms else (Counter(), 0)
        score, rows = bm25_counts(counts, total, self.terms)
        key: tuple[float, ...] = () if doc.pool_index is None else (-score, float(-doc.pool_index))
        return ScoreResult(
            score=score,
            terms=rows,
            reason=bm25_reason(score, rows, total, searchable=bool(self.terms)),
            sort_key=key,
            base=score,
        )

    def stats(self) -> dict[str, Any]:
        return {
            "scorer": self.name,
            "tokenizer": self.tokenizer.name,
            "prompt_terms": list(self.terms),
            "searchable": bool(self.terms),
        }
