"""The scorer interface (scorers.md D): what a scorer reads, what it returns, how it ranks.

A scorer is prepared once per assembly run over every item (corpus
statistics such as document frequency, the citation log, the prompt's
terms) and then scores one item at a time without I/O.  Every result
carries the rows that add up to its score, so each view can say why.
The assembler stays in charge of selection: it only reads ``sort_key``,
``stub`` and ``stub_tokens`` from the results.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from ctxview.model import TermMatch
from ctxview.scorers.tokenize import Tokenizer

__all__ = [
    "FACTOR_NOTE",
    "RARITY_NOTE",
    "PreparedScorer",
    "ScoreDoc",
    "ScoreResult",
    "Scorer",
    "TextCache",
    "fmt_score",
    "is_factor_row",
    "matched_rows",
    "rank_order",
]

# TermMatch.note prefixes that tell the kinds of rows apart (tf rows have note "").
RARITY_NOTE = "rarity"
FACTOR_NOTE = "factor"


@dataclass(frozen=True, slots=True)
class ScoreDoc:
    """One context item (or live input) as every scorer sees it.

    ``text`` is exactly the text the reference scorer reads (§6.2: message
    content, or the JSON of its block list; a summary's raw content; a focus
    brief's content).  ``pool_index`` is the position in the evictable list
    (higher = more recent); ``None`` means the item is not in the scoring pool
    (fresh tail, focus brief, live input).
    """

    key: str  # decision key, e.g. "o:12"
    ordinal: int
    kind: str  # message | summary | focus | live
    role: str | None  # role as emitted: user | assistant | toolResult | …
    text: str
    tokens: int  # the assembler's item estimate
    pool_index: int | None = None
    segment: str = "evictable"  # evictable | fresh-tail | focus | live
    source_role: str | None = None  # DB role of a message: system | user | assistant | tool
    seq: int | None = None
    created_at: str | None = None
    # slug sources (scorers.md B.2 table); raw values, the scorers normalise them
    summary_id: str | None = None
    summary_kind: str | None = None  # leaf | condensed
    tool_names: tuple[str, ...] = ()  # tool calls issued or answered, in part order
    file_names: tuple[str, ...] = ()
    patch_files: tuple[str, ...] = ()
    subtask_agent: str | None = None
    brief_id: str | None = None
    live_source: str | None = None
    section_tags: tuple[str, ...] = ()  # kuro-style section: tag name and name="…" value
    has_tool_calls: bool = False  # assistant message issuing tool calls (never stubbed)

    @property
    def in_pool(self) -> bool:
        return self.pool_index is not None


@dataclass(frozen=True, slots=True)
class ScoreResult:
    """A scorer's verdict on one item.

    ``score`` None means "not scored" (shown as "—" with ``reason``); 0.0 is a
    real score.  The ``contribution`` of the rows in ``terms`` adds up to
    ``score`` (within 1e-9).  ``sort_key`` ascending puts the best item first;
    it is empty for items outside the pool.  ``stub``/``stub_tokens`` are set
    when the section-ROI scorer replaces the item's payload.
    """

    score: float | None
    terms: tuple[TermMatch, ...] = ()
    label: str = ""  # "" | exact | keyword-only | excluded | WASTE | LOW | MED+ | n/a
    reason: str = ""
    sort_key: tuple[float, ...] = ()
    base: float | None = None  # the reference (BM25-lite) score that selection falls back on
    strength: float | None = None  # rarity: Σ 1/df × slug bonus
    section: str | None = None  # section-roi: the item's section key
    stub: str | None = None  # section-roi: the text that replaces the item's text
    stub_tokens: int | None = None  # LCM estimate of ``stub``

    @property
    def stubbed(self) -> bool:
        return self.stub is not None


class PreparedScorer(Protocol):
    """A scorer bound to one run's items and prompt; ``score`` is pure."""

    name: str
    tokenizer: Tokenizer

    @property
    def ranks(self) -> bool:
        """Whether selection should use ``sort_key`` (prompt-aware) rather than recency."""
        ...

    def score(self, doc: ScoreDoc) -> ScoreResult: ...

    def stats(self) -> dict[str, Any]:
        """The run's corpus statistics, plain data for the trace and the UI."""
        ...


class Scorer(Protocol):
    """A configured scorer; ``prepare`` does the per-run work once."""

    name: str
    tokenizer: Tokenizer

    def prepare(
        self, docs: Sequence[ScoreDoc], prompt: str | None, *, cache: TextCache | None = None
    ) -> PreparedScorer: ...


@dataclass(slots=True)
class TextCache:
    """Per-session cache of what does not depend on the prompt: term counts, folded texts.

    Keyed by (tokenizer name, text), so one cache serves every re-run while
    the user edits the prompt or the budget.
    """

    _counts: dict[tuple[str, str], tuple[Counter[str], int]] = field(default_factory=dict)
    _folded: dict[tuple[str, str], str] = field(default_factory=dict)

    def term_counts(self, tokenizer: Tokenizer, text: str) -> tuple[Counter[str], int]:
        key = (tokenizer.name, text)
        hit = self._counts.get(key)
        if hit is None:
            terms = tokenizer.tokenize(text)
            hit = (Counter(terms), len(terms))
            self._counts[key] = hit
        return hit

    def folded(self, tokenizer: Tokenizer, text: str) -> str:
        key = (tokenizer.name, text)
        hit = self._folded.get(key)
        if hit is None:
            hit = tokenizer.fold(text)
            self._folded[key] = hit
        return hit


def is_factor_row(row: TermMatch) -> bool:
    return row.note.startswith(FACTOR_NOTE)


def matched_rows(result: ScoreResult) -> tuple[TermMatch, ...]:
    """The rows that name matched terms (``Decision.matched_terms``): all but factor rows."""
    return tuple(row for row in result.terms if not is_factor_row(row))


def fmt_score(value: float) -> str:
    """Three decimals, as the one-line reasons show scores."""
    return f"{value:.3f}"


# --- ranking ------------------------------------------------------------------------------


def rank_order(results: Sequence[ScoreResult]) -> list[int]:
    """Indexes of the ranked results (non-empty ``sort_key``), best first (stable)."""
    ranked = [i for i, r in enumerate(results) if r.sort_key]
    return sorted(ranked, key=lambda i: results[i].sort_key)


def as_plain(value: Any) -> Any:
    """Mappings and sequences as plain dicts and lists (for ``stats()`` output)."""
    if isinstance(value, Mapping):
        return {str(k): as_plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [as_plain(v) for v in value]
    return value
