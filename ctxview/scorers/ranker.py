"""The opt-in scorers (rarity, section ROI, Unicode terms) as a ``Ranker`` of §6 selection.

The reference BM25-lite path never comes here: with the default scorer and
tokenizer the pipeline passes no ranker and the assembler ranks exactly as the
reference does.  A named mode replaces only the ranking of the evictable items
and, for section ROI, swaps below-threshold items for one-line stubs whose
tokens count against the budget.  The assembly owns the protocol
(``ctxview.assembly.ranking``); this module implements it.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ctxview.assembly.ranking import Ranking
from ctxview.assembly.resolve import ResolvedItem
from ctxview.assembly.tokens import estimate_tokens
from ctxview.model import Session, TermMatch
from ctxview.scorers import ScoringRun, run_scoring
from ctxview.scorers.base import ScoreDoc, ScoreResult
from ctxview.scorers.rarity import low_confidence


@dataclass(slots=True)
class ScorerRanking(Ranking):
    """A ``Ranking`` with the scoring run behind it (its statistics and ROI table go into the trace)."""

    run: ScoringRun

    def keyword_only(self, kept_keys: set[str]) -> bool:
        """Scorers.md B.2: the kept items match the prompt's words, none by term frequency."""
        if self.run.name != "rarity":
            return False
        kept = [r for item, r in zip(self.items, self.run.results, strict=True) if item.key in kept_keys]
        return low_confidence(kept)


class ScorerRanker:
    """Ranks a session's evictable items with a named scorer (a ``Ranker``); reusable across runs."""

    def __init__(
        self,
        session: Session,
        *,
        scorer: str,
        tokenizer: str,
        citations: str | os.PathLike[str] | None = None,
        stub_threshold: float | None = None,
    ) -> None:
        self.session = session
        self.scorer = scorer
        self.tokenizer = tokenizer
        self.citations = citations
        self.options: dict[str, Any] = {}
        if stub_threshold is not None and scorer in ("roi", "section-roi"):
            self.options["threshold"] = stub_threshold
        self._docs: dict[int, ScoreDoc] = {}

    def rank(self, evictable: Sequence[ResolvedItem], prompt: str | None) -> ScorerRanking:
        docs = [self._doc(item, index) for index, item in enumerate(evictable)]
        run = run_scoring(
            docs,
            prompt,
            scorer=self.scorer,
            tokenizer=self.tokenizer,
            citations=self.citations,
            session=self.session,
            **self.options,
        )
        items: list[ResolvedItem] = []
        scored: list[tuple[float | None, tuple[TermMatch, ...]]] = []
        labels: list[str] = []
        notes: list[str] = []
        stubbed = 0
        saved = 0
        for item, result in zip(evictable, run.results, strict=True):
            stub = _roi_stub(item, result)
            if stub is not None:
                stubbed += 1
                saved += max(0, item.tokens - stub.tokens)
                item = stub
            items.append(item)
            scored.append((result.score, tuple(result.terms)))
            labels.append(result.label)
            notes.append(result.reason)
        order = None
        if run.ranks:
            order = sorted(range(len(items)), key=lambda i: run.results[i].sort_key)
        return ScorerRanking(
            name=run.name,
            items=items,
            scored=scored,
            order=order,
            labels=labels,
            notes=notes,
            stubbed_count=stubbed,
            tokens_saved=saved,
            run=run,
        )

    def _doc(self, item: ResolvedItem, pool_index: int) -> ScoreDoc:
        cached = self._docs.get(id(item))
        if cached is not None and cached.pool_index == pool_index:
            return cached
        doc = score_doc(item, pool_index)
        self._docs[id(item)] = doc
        return doc


def score_doc(item: ResolvedItem, pool_index: int | None) -> ScoreDoc:
    """The scorer's view of a resolved item (slug sources from its blocks)."""
    message = item.message
    tool_names: list[str] = []
    content = message.get("content")
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and isinstance(block.get("name"), str) and block.get("name"):
                tool_names.append(block["name"])
    if isinstance(message.get("toolName"), str) and message["toolName"]:
        tool_names.append(message["toolName"])
    summary = item.summary
    return ScoreDoc(
        key=item.key,
        ordinal=item.ordinal,
        kind="focus" if item.is_focus_brief else ("message" if item.is_message else "summary"),
        role=message.get("role"),
        text=item.text,
        tokens=item.tokens,
        pool_index=pool_index,
        segment="evictable" if pool_index is not None else "fresh-tail",
        source_role=item.source_role,
        seq=item.seq,
        summary_id=summary.summary_id if summary is not None else None,
        summary_kind=summary.kind if summary is not None else None,
        tool_names=tuple(dict.fromkeys(tool_names)),
        brief_id=item.brief.brief_id if item.brief is not None else None,
        has_tool_calls=bool(item.call_ids),
    )


def _roi_stub(item: ResolvedItem, result: ScoreResult) -> ResolvedItem | None:
    """A copy of ``item`` whose content is the scorer's one-line stub (tool ids kept)."""
    if result.stub is None or item.call_ids:
        return None
    text = result.stub
    content: Any = [{"type": "text", "text": text}] if isinstance(item.message.get("content"), list) else text
    tokens = result.stub_tokens if result.stub_tokens is not None else estimate_tokens(text)
    message = dict(item.message)
    message["content"] = content
    usage = message.get("usage")
    if isinstance(usage, dict):  # an assistant's usage reports its item tokens: keep it truthful
        message["usage"] = {**usage, "output": tokens, "totalTokens": tokens}
    return ResolvedItem(
        ordinal=item.ordinal,
        stored_message=message,
        tokens=tokens,
        is_message=item.is_message,
        text=text,
        message_id=item.message_id,
        seq=item.seq,
        source_role=item.source_role,
        summary=item.summary,
        summary_max_source_seq=item.summary_max_source_seq,
        degraded=item.degraded,
        stub_of=item,
    )
