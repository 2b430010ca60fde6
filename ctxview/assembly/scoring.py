"""BM25-lite relevance of an item to the prompt (spec §6.2), with its explanation.

The score is Σ tf/N over the distinct prompt terms, summed in prompt order
exactly as the reference does, so the float is bit-identical; the per-term
contributions are returned so a view can say which words matched.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ctxview.assembly.resolve import ResolvedItem, tokenize
from ctxview.model import TermMatch

__all__ = ["distinct_terms", "is_searchable", "prompt_terms", "score_counts", "score_item", "score_text", "tokenize"]


def distinct_terms(terms: Sequence[str]) -> list[str]:
    """Terms in first-occurrence order, without repeats."""
    return list(dict.fromkeys(terms))


def prompt_terms(prompt: str | None) -> list[str]:
    """The distinct searchable terms of a prompt ([] when it is not a string)."""
    if not isinstance(prompt, str):
        return []
    return distinct_terms(tokenize(prompt))


def is_searchable(prompt: str | None) -> bool:
    """A prompt is searchable when it is a string with at least one term."""
    return bool(prompt_terms(prompt))


def score_counts(counts: Mapping[str, int], total: int, terms: Sequence[str]) -> tuple[float, tuple[TermMatch, ...]]:
    """Score from an item's term counts; ``terms`` are the distinct prompt terms.

    Returns the score and the matched terms (count > 0) in prompt order.
    """
    if not terms or total == 0:
        return 0.0, ()
    score = 0.0
    matches: list[TermMatch] = []
    for term in terms:
        tf = counts.get(term, 0)
        if tf > 0:
            contribution = tf / total
            score += contribution
            matches.append(TermMatch(term, tf, contribution))
    return score, tuple(matches)


_MATCHES: dict[tuple[str, int, int], TermMatch] = {}
_POSITIONS: dict[tuple[str, ...], dict[str, int]] = {}


def _positions(terms: tuple[str, ...]) -> dict[str, int]:
    """Prompt term → its index (cached for the current prompt)."""
    found = _POSITIONS.get(terms)
    if found is None:
        _POSITIONS.clear()
        found = _POSITIONS[terms] = {term: i for i, term in enumerate(terms)}
    return found


def score_item(item: ResolvedItem, terms: tuple[str, ...]) -> tuple[float, tuple[TermMatch, ...]]:
    """Score of a resolved item, cached on the item for the last prompt it was scored against."""
    cached = item._score
    if cached is not None and cached[0] == terms:
        return cached[1], cached[2]
    counts, total = item.term_counts()
    score = 0.0
    matches: tuple[TermMatch, ...] = ()
    if total:
        found: list[TermMatch] = []
        if len(terms) > 8 and len(counts) < len(terms):
            # a long prompt: visit the item's terms instead, then sum in prompt order as the reference does
            position = _positions(terms)
            ordered = sorted(position[t] for t in counts if t in position)
            walk: Sequence[str] = [terms[i] for i in ordered]
        else:
            walk = terms
        for term in walk:
            tf = counts.get(term, 0)
            if tf > 0:
                score += tf / total
                key = (term, tf, total)
                match = _MATCHES.get(key)
                if match is None:
                    if len(_MATCHES) > 200_000:
                        _MATCHES.clear()
                    match = _MATCHES[key] = TermMatch(term, tf, tf / total)
                found.append(match)
        matches = tuple(found)
    item._score = (terms, score, matches)
    return score, matches


def score_text(text: str, prompt: str) -> tuple[float, tuple[TermMatch, ...]]:
    """``scoreRelevance(text, prompt)`` with its term breakdown."""
    terms = prompt_terms(prompt)
    if not terms:
        return 0.0, ()
    item_terms = tokenize(text)
    counts: dict[str, int] = {}
    for term in item_terms:
        counts[term] = counts.get(term, 0) + 1
    return score_counts(counts, len(item_terms), terms)
