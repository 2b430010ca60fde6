"""Rarity-weighted exact match with a slug bonus ("rarity" mode, scorers.md B).

A port of threadnote PR #49's recall ranking to context items: the prompt's
distinctive words (≥ 4 characters, not stopwords, identifiers first, at most
4) are matched literally in each pool item; each match is worth ``1/df``
over the pool, times 4 when the word is a whole token of the item's slug
(summary id, tool name, file name, …).  That strength is added to the
reference score, so one rare identifier outranks many common words, and an
item that only shares common words sinks.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ctxview.errors import InputError
from ctxview.model import TermMatch
from ctxview.scorers.base import RARITY_NOTE, ScoreDoc, ScoreResult, TextCache, fmt_score
from ctxview.scorers.bm25lite import bm25_counts, prompt_terms
from ctxview.scorers.tokenize import LCM, Tokenizer, get_tokenizer, is_cjk

__all__ = [
    "EXCLUDE_PRESETS",
    "MATCH_MODES",
    "MAX_TERMS",
    "MIN_TERM_LENGTH",
    "SLUG_BONUS",
    "STOPWORDS",
    "IgnoredWord",
    "PreparedRarity",
    "RarityInput",
    "RarityOutcome",
    "RarityRow",
    "RarityScorer",
    "RarityTerm",
    "TermExtraction",
    "doc_slugs",
    "document_frequency",
    "exact_recall_terms",
    "extract_terms",
    "label_text",
    "low_confidence",
    "make_rarity",
    "rank_rarity",
    "rarity_order",
    "slug_names_term",
    "uri_slug",
]

# B.1.1: threadnote's stopwords after PR #49 (46 words).
STOPWORDS: frozenset[str] = frozenset(
    {
        "about", "after", "agent", "anything", "been", "branch", "case", "current", "does", "durable",
        "find", "feature", "features", "from", "handoff", "have", "into", "issue", "issues", "knowledge",
        "latest", "memory", "memories", "project", "recall", "repo", "repository", "related", "search",
        "stored", "than", "that", "them", "then", "they", "this", "the", "were", "what", "when", "which",
        "while", "with", "workspace", "worktree", "your",
    }
)  # fmt: skip
MIN_TERM_LENGTH = 4
MAX_TERMS = 4
SLUG_BONUS = 4.0  # RECALL_EXACT_SLUG_BONUS
MATCH_MODES = ("slug-or-body", "body-only")
# B.1.3: summary sidecars and agent-artifact pack machinery.
EXCLUDE_PRESETS: dict[str, tuple[str, ...]] = {
    "threadnote": (r"\.(?:overview|abstract)\.md(?:#|$)", r"/agent-artifacts/packs/"),
}

_ASCII_RUN = re.compile(r"[A-Za-z0-9_.-]+")
_RUN_PUNCT = "_.-"
_EXTENSION = re.compile(r"\.[A-Za-z0-9]+$")


# --- terms (B.1.1, B.2) -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RarityTerm:
    term: str  # as written in the prompt (display form)
    key: str  # lowercase form the matches use
    priority: int


@dataclass(frozen=True, slots=True)
class IgnoredWord:
    word: str
    reason: str  # too short | stopword | over the cap


@dataclass(frozen=True, slots=True)
class TermExtraction:
    terms: tuple[RarityTerm, ...]  # priority order, at most ``max_terms``
    ignored: tuple[IgnoredWord, ...]


def _runs(prompt: str, unicode_letters: bool) -> list[str]:
    if not unicode_letters:
        return _ASCII_RUN.findall(prompt)
    runs: list[str] = []
    current: list[str] = []
    for ch in prompt:
        if (
            ch in _RUN_PUNCT
            or (ch.isascii() and ch.isalnum())
            or (not ch.isascii() and unicodedata.category(ch)[0] in "LNM" and not is_cjk(ch))
        ):
            current.append(ch)
        elif current:
            runs.append("".join(current))
            current = []
    if current:
        runs.append("".join(current))
    return runs


def _priority(word: str, unicode_letters: bool) -> int:
    if unicode_letters:
        upper = any(ch.isupper() for ch in word)
        marked = any(ch.isdigit() or ch in _RUN_PUNCT for ch in word)
    else:
        upper = any("A" <= ch <= "Z" for ch in word)
        marked = any(("0" <= ch <= "9") or ch in _RUN_PUNCT for ch in word)
    return len(word) + (8 if upper else 0) + (6 if marked else 0)


def extract_terms(
    prompt: str | None,
    *,
    trim_punctuation: bool = True,
    max_terms: int = MAX_TERMS,
    unicode_letters: bool = False,
) -> TermExtraction:
    """The prompt's rarity terms, by priority (B.1.1; ``trim_punctuation`` is the B.2 deviation).

    Runs of ``[A-Za-z0-9_.-]`` (with ``unicode_letters``: also letters, digits
    and marks of non-CJK scripts) of ≥ 4 characters that are not stopwords;
    the first occurrence of each lowercase form keeps its case.  Priority is
    the length, +8 with an uppercase letter, +6 with a digit, ``_``, ``.`` or
    ``-``; the sort is stable and keeps the first ``max_terms``.
    """
    if not isinstance(prompt, str):
        return TermExtraction((), ())
    if unicode_letters:
        prompt = unicodedata.normalize("NFKC", prompt)
    candidates: list[RarityTerm] = []
    ignored: list[IgnoredWord] = []
    seen: set[str] = set()
    ignored_seen: set[str] = set()

    def ignore(word: str, reason: str) -> None:
        low = word.lower()
        if low not in ignored_seen:
            ignored_seen.add(low)
            ignored.append(IgnoredWord(word, reason))

    for run in _runs(prompt, unicode_letters):
        word = run.strip(_RUN_PUNCT) if trim_punctuation else run
        if not word:
            continue
        if len(word) < MIN_TERM_LENGTH:
            ignore(word, "too short")
            continue
        key = word.lower()
        if key in STOPWORDS:
            ignore(word, "stopword")
            continue
        if key in seen:
            continue
        seen.add(key)
        candidates.append(RarityTerm(word, key, _priority(word, unicode_letters)))
    ordered = sorted(candidates, key=lambda t: -t.priority)  # stable: ties keep prompt order
    kept = tuple(ordered[: max(0, max_terms)])
    for term in ordered[max(0, max_terms) :]:
        ignore(term.term, "over the cap")
    return TermExtraction(kept, tuple(ignored))


def exact_recall_terms(query: str) -> list[str]:
    """threadnote's ``exactRecallTerms`` exactly (no trimming): T1–T4 of B.1.11."""
    return [t.term for t in extract_terms(query, trim_punctuation=False).terms]


# --- slugs (B.1.4, B.1.5, B.2) ------------------------------------------------------------


def uri_slug(value: str) -> str:
    """Anchor stripped, one extension stripped, last path segment, lowercased."""
    text = value.split("#", 1)[0]
    text = _EXTENSION.sub("", text)
    return text[text.rfind("/") + 1 :].lower()


def slug_names_term(slug: str, term: str) -> bool:
    """The lowercase term occurs in the slug bounded by non-``[a-z0-9]`` or the edges."""
    key = term.lower()
    if not key:
        return False
    return _slug_pattern(key).search(slug) is not None


def _slug_pattern(key: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![a-z0-9]){re.escape(key)}(?![a-z0-9])")


def doc_slugs(doc: ScoreDoc) -> tuple[str, ...]:
    """The item's slugs in B.2 table order, lowercased, file-like ones normalised."""
    raw: list[str] = []
    if doc.summary_id:
        raw.append(doc.summary_id.lower())
    raw.extend(name.lower() for name in doc.tool_names if name)
    raw.extend(uri_slug(name) for name in doc.file_names if name)
    raw.extend(uri_slug(path) for path in doc.patch_files if path)
    for value in (doc.subtask_agent, doc.brief_id, doc.live_source):
        if value:
            raw.append(value.lower())
    raw.extend(tag.lower() for tag in doc.section_tags if tag)
    return tuple(dict.fromkeys(slug for slug in raw if slug))


def _source_paths(doc: ScoreDoc) -> list[str]:
    paths = [p for p in (*doc.file_names, *doc.patch_files) if p]
    return paths + [uri_slug(p) for p in paths]


# --- the ranking core (B.1.6–B.1.8 as adapted in B.2) ------------------------------------


@dataclass(frozen=True, slots=True)
class RarityRow:
    term: str  # lowercase key
    df: int
    multiplier: float
    slug: str | None  # the first slug that names the term
    contribution: float


@dataclass(frozen=True, slots=True)
class RarityInput:
    """One item for the ranking core: its slugs, the terms it matched, its base score."""

    key: str
    slugs: tuple[str, ...]
    matched: tuple[str, ...]  # matched terms in term priority order
    base: float = 0.0
    pool_index: int = 0
    excluded: bool = False


@dataclass(frozen=True, slots=True)
class RarityOutcome:
    key: str
    rows: tuple[RarityRow, ...]
    strength: float
    base: float
    score: float
    label: str
    pool_index: int

    @property
    def sort_key(self) -> tuple[float, float, float]:
        return (-self.score, -self.base, float(-self.pool_index))


def document_frequency(matched_sets: Iterable[Iterable[str]]) -> dict[str, int]:
    """df(t): how many entries matched ``t`` (lowercased, once per entry)."""
    df: dict[str, int] = {}
    for matched in matched_sets:
        for term in dict.fromkeys(t.lower() for t in matched):
            df[term] = df.get(term, 0) + 1
    return df


def _rows(
    matched: Sequence[str], slugs: Sequence[str], df: dict[str, int], slug_bonus: float
) -> tuple[tuple[RarityRow, ...], float]:
    rows: list[RarityRow] = []
    strength = 0.0
    for term in dict.fromkeys(t.lower() for t in matched):
        slug = next((s for s in slugs if slug_names_term(s, term)), None)
        multiplier = slug_bonus if slug is not None else 1.0
        frequency = df.get(term, 1) or 1  # missing df is defensive only (B.1.7)
        contribution = (1.0 / frequency) * multiplier
        strength += contribution
        rows.append(RarityRow(term, frequency, multiplier, slug, contribution))
    return tuple(rows), strength


def _label(has_matches: bool, base: float, excluded: bool) -> str:
    if excluded:
        return "excluded"
    if not has_matches:
        return ""
    return "exact" if base > 0 else "keyword-only"


def rank_rarity(
    inputs: Sequence[RarityInput], *, slug_bonus: float = SLUG_BONUS, blend: bool = True
) -> list[RarityOutcome]:
    """df over the non-excluded inputs, then strength and score per input (input order)."""
    df = document_frequency(i.matched for i in inputs if not i.excluded)
    outcomes: list[RarityOutcome] = []
    for item in inputs:
        if item.excluded:
            rows: tuple[RarityRow, ...] = ()
            strength = 0.0
        else:
            rows, strength = _rows(item.matched, item.slugs, df, slug_bonus)
        score = strength + item.base if blend else strength
        label = _label(bool(rows), item.base, item.excluded)
        outcomes.append(RarityOutcome(item.key, rows, strength, item.base, score, label, item.pool_index))
    return outcomes


def rarity_order(outcomes: Sequence[RarityOutcome]) -> list[str]:
    """Keys best first: score, then base, then the more recent item."""
    return [o.key for o in sorted(outcomes, key=lambda o: o.sort_key)]


# --- the scorer ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Match:
    term: RarityTerm
    count: int  # occurrences in the body
    body: bool
    slug: str | None


@dataclass(frozen=True, slots=True)
class RarityScorer:
    """Configured rarity scorer; ``blend=False`` is the ``rarity-only`` variant."""

    tokenizer: Tokenizer = LCM
    blend: bool = True
    match: str = "slug-or-body"
    case_sensitive: bool = False
    trim_punctuation: bool = True
    max_terms: int = MAX_TERMS
    slug_bonus: float = SLUG_BONUS
    exclude: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.match not in MATCH_MODES:
            raise InputError(f"unknown rarity match mode {self.match!r}; choose one of: {', '.join(MATCH_MODES)}")
        for pattern in self.exclude:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise InputError(f"bad exclude pattern {pattern!r}: {exc}") from exc

    @property
    def name(self) -> str:
        return "rarity" if self.blend else "rarity-only"

    def prepare(
        self, docs: Sequence[ScoreDoc], prompt: str | None, *, cache: TextCache | None = None
    ) -> PreparedRarity:
        cache = cache or TextCache()
        extraction = extract_terms(
            prompt,
            trim_punctuation=self.trim_punctuation,
            max_terms=self.max_terms,
            unicode_letters=self.tokenizer.unicode_letters,
        )
        patterns = tuple(re.compile(p) for p in self.exclude)
        slug_patterns = {t.key: _slug_pattern(t.key) for t in extraction.terms}
        excluded: set[str] = set()
        matches: dict[str, tuple[_Match, ...]] = {}
        pool_size = 0
        for doc in docs:
            if doc.pool_index is None:
                continue
            pool_size += 1
            if patterns and any(p.search(path) for path in _source_paths(doc) for p in patterns):
                excluded.add(doc.key)
            matches[doc.key] = _match_doc(doc, extraction.terms, self, cache, slug_patterns)
        df = document_frequency((m.term.key for m in found) for key, found in matches.items() if key not in excluded)
        return PreparedRarity(
            scorer=self,
            tokenizer=self.tokenizer,
            extraction=extraction,
            base_terms=prompt_terms(prompt, self.tokenizer),
            df=df,
            matches=matches,
            excluded=frozenset(excluded),
            pool_size=pool_size,
            cache=cache,
        )


def _match_doc(
    doc: ScoreDoc,
    terms: Sequence[RarityTerm],
    scorer: RarityScorer,
    cache: TextCache,
    patterns: dict[str, re.Pattern[str]] | None = None,
) -> tuple[_Match, ...]:
    if not terms:
        return ()
    slugs = doc_slugs(doc)
    if scorer.case_sensitive:
        body_text = scorer.tokenizer.normalize(doc.text)
    else:
        body_text = cache.folded(scorer.tokenizer, doc.text)
    found: list[_Match] = []
    for term in terms:
        needle = term.term if scorer.case_sensitive else term.key
        count = body_text.count(needle) if needle else 0
        slug: str | None = None
        if slugs:
            pattern = patterns.get(term.key) if patterns is not None else None
            if pattern is None:
                pattern = _slug_pattern(term.key)
            slug = next((s for s in slugs if pattern.search(s) is not None), None)
        if count > 0 or (slug is not None and scorer.match == "slug-or-body"):
            found.append(_Match(term, count, count > 0, slug))
    return tuple(found)


@dataclass(frozen=True, slots=True)
class PreparedRarity:
    scorer: RarityScorer
    tokenizer: Tokenizer
    extraction: TermExtraction
    base_terms: tuple[str, ...]  # A's distinct prompt terms
    df: dict[str, int]
    matches: dict[str, tuple[_Match, ...]]
    excluded: frozenset[str]
    pool_size: int
    cache: TextCache = field(default_factory=TextCache, compare=False)

    @property
    def name(self) -> str:
        return self.scorer.name

    @property
    def ranks(self) -> bool:
        """Rank when the prompt has rarity terms or is searchable by A (B.2 fallbacks)."""
        return bool(self.extraction.terms) or bool(self.base_terms)

    def score(self, doc: ScoreDoc) -> ScoreResult:
        counts, total = self.cache.term_counts(self.tokenizer, doc.text) if self.base_terms else ({}, 0)
        base, base_rows = bm25_counts(counts, total, self.base_terms)
        if doc.pool_index is None:
            return ScoreResult(score=None, reason="protected / not scored", base=base)
        found = self.matches.get(doc.key)
        if found is None:  # a pool doc that prepare() did not see: match it now, df stays fixed
            found = _match_doc(doc, self.extraction.terms, self.scorer, self.cache)
        excluded = doc.key in self.excluded
        rows: list[TermMatch] = []
        strength = 0.0
        parts: list[str] = []
        if not excluded:
            for match in found:
                frequency = self.df.get(match.term.key, 1) or 1
                multiplier = self.scorer.slug_bonus if match.slug is not None else 1.0
                weight = 1.0 / frequency
                contribution = weight * multiplier
                strength += contribution
                where = _where(match)
                rows.append(TermMatch(match.term.term, match.count, contribution, weight, f"{RARITY_NOTE} {where}"))
                part = f"{match.term.term} 1/{frequency}"
                if multiplier != 1.0:
                    part += f"×{multiplier:g}"
                if where != "body":
                    part += f" {where}"
                parts.append(part)
        score = strength + base if self.scorer.blend else strength
        terms = (*rows, *base_rows) if self.scorer.blend else tuple(rows)
        label = _label(bool(rows), base, excluded)
        return ScoreResult(
            score=score,
            terms=terms,
            label=label,
            reason=_reason(self.name, score, strength, base, parts, label, blend=self.scorer.blend),
            sort_key=(-score, -base, float(-doc.pool_index)),
            base=base,
            strength=strength,
        )

    def stats(self) -> dict[str, Any]:
        return {
            "scorer": self.name,
            "tokenizer": self.tokenizer.name,
            "terms": [{"term": t.term, "key": t.key, "priority": t.priority} for t in self.extraction.terms],
            "ignored": [{"word": w.word, "reason": w.reason} for w in self.extraction.ignored],
            "df": dict(self.df),
            "pool_size": self.pool_size,
            "excluded": sorted(self.excluded),
            "base_terms": list(self.base_terms),
            "searchable": bool(self.base_terms),
            "match": self.scorer.match,
            "case_sensitive": self.scorer.case_sensitive,
        }


def _where(match: _Match) -> str:
    if match.slug is None:
        return "body"
    return f"body+slug:{match.slug}" if match.body else f"slug:{match.slug}"


def _reason(name: str, score: float, strength: float, base: float, parts: list[str], label: str, *, blend: bool) -> str:
    detail = f" [{', '.join(parts)}]" if parts else ""
    strength_text = fmt_score(strength) if strength else "0"
    if blend:
        text = f"{name} {fmt_score(score)} = {strength_text}{detail} + bm25 {fmt_score(base)}"
    else:
        text = f"{name} {fmt_score(score)}{detail} (bm25 {fmt_score(base)} not added)"
    return f"{text} ({label})" if label else text


def label_text(result: ScoreResult) -> str:
    """``exact: t1, t2`` / ``keyword-only: t1, t2`` / ``excluded`` / ""."""
    if result.label == "excluded":
        return "excluded"
    if result.label not in ("exact", "keyword-only"):
        return ""
    names = [row.term for row in result.terms if row.note.startswith(RARITY_NOTE)]
    return f"{result.label}: {', '.join(names)}"


def low_confidence(kept: Iterable[ScoreResult]) -> bool:
    """B.2 run flag over the kept evictable items: all have base 0 and one has strength > 0."""
    results = [r for r in kept if r.score is not None]
    if not results:
        return False
    if any((r.base or 0.0) > 0 for r in results):
        return False
    return any((r.strength or 0.0) > 0 for r in results)


def make_rarity(
    tokenizer: str | Tokenizer = "lcm",
    *,
    variant: str = "ctxview",
    blend: bool = True,
    match: str | None = None,
    case_sensitive: bool | None = None,
    trim_punctuation: bool | None = None,
    max_terms: int = MAX_TERMS,
    slug_bonus: float = SLUG_BONUS,
    exclude: str | Sequence[str] | None = None,
) -> RarityScorer:
    """Build a rarity scorer; ``variant="faithful"`` is threadnote's body-only, case-sensitive form."""
    if variant not in ("ctxview", "faithful"):
        raise InputError(f"unknown rarity variant {variant!r}; choose ctxview or faithful")
    faithful = variant == "faithful"
    if isinstance(exclude, str):
        patterns = EXCLUDE_PRESETS.get(exclude)
        if patterns is None:
            raise InputError(f"unknown exclude preset {exclude!r}; choose one of: {', '.join(EXCLUDE_PRESETS)}")
    else:
        patterns = tuple(exclude or ())
    return RarityScorer(
        tokenizer=get_tokenizer(tokenizer),
        blend=blend,
        match=match if match is not None else ("body-only" if faithful else "slug-or-body"),
        case_sensitive=case_sensitive if case_sensitive is not None else faithful,
        trim_punctuation=trim_punctuation if trim_punctuation is not None else not faithful,
        max_terms=max_terms,
        slug_bonus=slug_bonus,
        exclude=patterns,
    )
