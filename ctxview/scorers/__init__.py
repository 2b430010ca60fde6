"""Opt-in relevance scorers beside the reference BM25-lite (issue 5, scorers.md).

``score_items`` is the single entry point: the assembler hands it one
``ScoreDoc`` per item and gets back one ``ScoreResult`` per item (score,
the rows that add up to it, a label, a one-line reason, the sort key the
prompt-aware walk uses and, for section ROI, the stub that replaces the
item).  ``run_scoring`` returns the same results plus the run's statistics
and the ROI table.  The default (``scorer="lcm"``, ``tokenizer="lcm"``) is
the reference score, bit for bit.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ctxview.errors import InputError
from ctxview.model import MessageRow, Session
from ctxview.scorers.base import (
    PreparedScorer,
    ScoreDoc,
    Scorer,
    ScoreResult,
    TextCache,
    matched_rows,
    rank_order,
)
from ctxview.scorers.bm25lite import Bm25LiteScorer
from ctxview.scorers.rarity import label_text, low_confidence, make_rarity
from ctxview.scorers.roi import CitationLog, PreparedRoi, derive_citation_log, make_roi, read_citation_log
from ctxview.scorers.tokenize import TOKENIZERS, get_tokenizer

__all__ = [
    "SCORER_ALIASES",
    "SCORER_CHOICES",
    "TOKENIZERS",
    "CitationLog",
    "PreparedScorer",
    "ScoreDoc",
    "ScoreResult",
    "Scorer",
    "ScoringRun",
    "TextCache",
    "canonical_scorer",
    "get_scorer",
    "get_tokenizer",
    "label_text",
    "low_confidence",
    "matched_rows",
    "rank_order",
    "run_scoring",
    "score_items",
    "scorer_options",
]

# CLI names (lcm | rarity | roi) and the spec's names, to the canonical scorer name.
SCORER_ALIASES: dict[str, str] = {
    "lcm": "bm25-lite",
    "bm25-lite": "bm25-lite",
    "bm25lite": "bm25-lite",
    "rarity": "rarity",
    "rarity-only": "rarity-only",
    "roi": "section-roi",
    "section-roi": "section-roi",
}
SCORER_CHOICES = ("lcm", "rarity", "rarity-only", "roi")


def canonical_scorer(name: str) -> str:
    canonical = SCORER_ALIASES.get(name)
    if canonical is None:
        raise InputError(f"unknown scorer {name!r}; choose one of: {', '.join(SCORER_CHOICES)}")
    return canonical


def get_scorer(name: str, *, tokenizer: str = "lcm", **options: Any) -> Scorer:
    """A configured scorer by name; options are the scorer's own (see ``make_rarity``/``make_roi``).

    ``stub_threshold`` is accepted as an alias of the ROI ``threshold``.
    Unknown names and options are InputErrors.
    """
    canonical = canonical_scorer(name)
    tok = get_tokenizer(tokenizer)
    if "stub_threshold" in options and canonical == "section-roi":
        options["threshold"] = options.pop("stub_threshold")
    allowed = scorer_options(canonical)
    unknown = sorted(set(options) - set(allowed))
    if unknown:
        listed = ", ".join(allowed) if allowed else "none"
        raise InputError(f"scorer {name!r} has no option {', '.join(map(repr, unknown))}; its options: {listed}")
    if canonical == "bm25-lite":
        return Bm25LiteScorer(tok)
    if canonical in ("rarity", "rarity-only"):
        return make_rarity(tok, blend=canonical == "rarity", **options)
    return make_roi(tok, **options)


def scorer_options(name: str) -> tuple[str, ...]:
    """The keyword options a scorer accepts (for help texts and validation)."""
    canonical = canonical_scorer(name)
    if canonical == "bm25-lite":
        return ()
    factory = make_roi if canonical == "section-roi" else make_rarity
    params = inspect.signature(factory).parameters.values()
    return tuple(p.name for p in params if p.kind is inspect.Parameter.KEYWORD_ONLY and p.name != "blend")


@dataclass(frozen=True, slots=True)
class ScoringRun:
    """One scorer run: the prepared scorer, one result per doc, and what views show about the run."""

    prepared: PreparedScorer
    results: list[ScoreResult]

    @property
    def name(self) -> str:
        return self.prepared.name

    @property
    def ranks(self) -> bool:
        return self.prepared.ranks

    def stats(self) -> dict[str, Any]:
        return self.prepared.stats()

    def table_rows(self) -> list[dict[str, Any]]:
        """The ROI table (one dict per section) for section-roi; [] for the other scorers."""
        if isinstance(self.prepared, PreparedRoi):
            return self.prepared.table_rows()
        return []


def run_scoring(
    docs: Sequence[ScoreDoc],
    prompt: str | None,
    *,
    scorer: str = "lcm",
    tokenizer: str = "lcm",
    citations: CitationLog | str | os.PathLike[str] | None = None,
    session: Session | Sequence[MessageRow] | None = None,
    cache: TextCache | None = None,
    **options: Any,
) -> ScoringRun:
    """Prepare ``scorer`` over ``docs`` once and score each doc (results parallel to ``docs``).

    ``citations`` (section-roi only): a parsed log, or a JSONL path read now;
    when None and ``session`` is given, the log is derived from the session's
    messages (C.4.3); otherwise the log is empty and nothing is stubbed.
    """
    keys = [doc.key for doc in docs]
    if len(set(keys)) != len(keys):
        raise ValueError("ScoreDoc keys must be unique within a run")
    canonical = canonical_scorer(scorer)
    if canonical == "section-roi":
        if citations is None and session is not None:
            citations = derive_citation_log(session)
        elif citations is not None and not isinstance(citations, CitationLog):
            citations = read_citation_log(citations)
        options["citations"] = citations
    configured = get_scorer(scorer, tokenizer=tokenizer, **options)
    prepared = configured.prepare(docs, prompt, cache=cache)
    return ScoringRun(prepared, [prepared.score(doc) for doc in docs])


def score_items(
    docs: Sequence[ScoreDoc],
    prompt: str | None,
    *,
    scorer: str = "lcm",
    tokenizer: str = "lcm",
    citations: CitationLog | str | os.PathLike[str] | None = None,
    session: Session | Sequence[MessageRow] | None = None,
    cache: TextCache | None = None,
    **options: Any,
) -> list[ScoreResult]:
    """One ``ScoreResult`` per doc, in doc order (see ``run_scoring``)."""
    return run_scoring(
        docs, prompt, scorer=scorer, tokenizer=tokenizer, citations=citations, session=session, cache=cache, **options
    ).results
