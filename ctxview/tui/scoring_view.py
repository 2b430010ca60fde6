"""What the inspector shows about the opt-in scorers, computed from a Trace without Textual.

The scorer and tokenizer choices and their cycles (keys ``c`` and ``u``),
the short label the items table shows beside a score, the term-by-term rows
of the detail pane (their contributions add up to the score), the ROI table
of ``stages["scoring"]`` and the run's low-confidence note.  Everything here
reads what the scorer recorded in the trace; nothing scores anything.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any, Literal

from ctxview.model import Decision, Trace
from ctxview.scorers import SCORER_ALIASES
from ctxview.scorers.base import FACTOR_NOTE, RARITY_NOTE

# --- choices ----------------------------------------------------------------------------

SCORER_CYCLE: tuple[str, ...] = ("lcm", "rarity", "roi")  # what ``c`` steps through
TOKENIZER_CYCLE: tuple[str, ...] = ("lcm", "unicode")  # what ``u`` toggles

SCORER_HELP: dict[str, str] = {
    "lcm": "reference BM25-lite (the default: exactly what the reference engine does)",
    "rarity": "rarity-weighted exact match with a slug bonus, added to BM25-lite",
    "rarity-only": "rarity-weighted exact match with a slug bonus, without BM25-lite",
    "roi": "section ROI from the citation log; items below the threshold become one-line stubs",
}

TOKENIZER_HELP: dict[str, str] = {
    "lcm": "reference tokenizer: runs of a-z 0-9 only (a Chinese or Japanese prompt has no terms)",
    "unicode": "every script; Chinese, Japanese and Korean text cut into character bigrams",
}

# canonical scorer name (as the trace records it) → the name the controls use
_CHOICE_OF_CANONICAL = {"bm25-lite": "lcm", "rarity": "rarity", "rarity-only": "rarity-only", "section-roi": "roi"}


def scorer_choice(name: str) -> str:
    """The control's name for a scorer (``bm25-lite`` → ``lcm``, ``section-roi`` → ``roi``)."""
    return _CHOICE_OF_CANONICAL.get(SCORER_ALIASES.get(name, name), name)


def next_scorer(name: str) -> str:
    """The scorer after ``name`` in the ``c`` cycle: lcm → rarity → roi → lcm."""
    choice = scorer_choice(name)
    if choice == "rarity-only":
        return "roi"
    if choice not in SCORER_CYCLE:
        return SCORER_CYCLE[0]
    return SCORER_CYCLE[(SCORER_CYCLE.index(choice) + 1) % len(SCORER_CYCLE)]


def next_tokenizer(name: str) -> str:
    """The other tokenizer: lcm ↔ unicode."""
    return "unicode" if name == "lcm" else "lcm"


def scorer_options(current: str) -> list[str]:
    """The scorer selector's options: the cycle, plus the current one when it is another (rarity-only)."""
    choice = scorer_choice(current)
    return [*SCORER_CYCLE, choice] if choice not in SCORER_CYCLE else list(SCORER_CYCLE)


def is_roi(name: str) -> bool:
    return scorer_choice(name) == "roi"


def run_label(trace: Trace) -> str:
    """``rarity`` / ``roi + unicode`` / ``lcm + unicode`` for a named mode; "" for the reference mode."""
    scoring = trace.stages.get("scoring")
    if not isinstance(scoring, dict):
        return ""
    label = scorer_choice(str(scoring.get("scorer", trace.params.scorer)))
    tokenizer = str(scoring.get("tokenizer", trace.params.tokenizer))
    return f"{label} + {tokenizer}" if tokenizer != "lcm" else label


# --- the table's label column ---------------------------------------------------------------

LABEL_WIDTH = 5
_MARKERS = {"exact": "exact", "keyword-only": "kw", "excluded": "excl"}

LabelTone = Literal["exact", "keyword", "waste", "low", "med", "muted"]
_TONES: dict[str, LabelTone] = {
    "exact": "exact",
    "keyword-only": "keyword",
    "excluded": "muted",
    "WASTE": "waste",
    "LOW": "low",
    "MED+": "med",
}


def label_marker(label: str) -> str:
    """What the narrow label column shows: ``exact``, ``kw`` (keyword-only), ``excl``, or the ROI band."""
    return _MARKERS.get(label, label)[:LABEL_WIDTH]


def label_tone(label: str) -> LabelTone:
    """The colour family of a label: ROI bands red / yellow / green, rarity labels by strength."""
    return _TONES.get(label, "muted")


def has_labels(trace: Trace) -> bool:
    """True when rarity or section ROI ran, so decisions may carry labels (cheap: no scan of the rows)."""
    scoring = trace.stages.get("scoring")
    return isinstance(scoring, dict) and scorer_choice(str(scoring.get("scorer", ""))) != "lcm"


# --- term rows (detail pane) ------------------------------------------------------------------

TermKind = Literal["bm25", "rarity", "factor", "other"]


@dataclass(frozen=True, slots=True)
class TermRow:
    """One row behind a score, as the detail pane prints it."""

    term: str
    count: int | None  # None for ROI factor rows (they count nothing)
    weight: float
    contribution: float
    kind: TermKind
    note: str  # what the row is, in words: "bm25-lite", "rarity · body", "citation rate 0.6061"


def _row_kind(note: str) -> TermKind:
    if note.startswith(FACTOR_NOTE):
        return "factor"
    if note.startswith(RARITY_NOTE):
        return "rarity"
    return "bm25" if not note else "other"


def term_rows(decision: Decision) -> list[TermRow]:
    """The decision's matched-term rows in the scorer's order, with their notes spelled out."""
    rows: list[TermRow] = []
    for match in decision.matched_terms:
        kind = _row_kind(match.note)
        if kind == "factor":
            note = match.note[len(FACTOR_NOTE) :].strip()
        elif kind == "rarity":
            where = match.note[len(RARITY_NOTE) :].strip()
            note = f"rarity · {where}" if where else "rarity"
        elif kind == "bm25":
            note = "bm25-lite"
        else:
            note = match.note
        rows.append(
            TermRow(
                term=match.term,
                count=None if kind == "factor" else match.count,
                weight=match.weight,
                contribution=match.contribution,
                kind=kind,
                note=note,
            )
        )
    return rows


def term_total(decision: Decision) -> float:
    """The sum of the rows' contributions (added in row order, as the scorers add them)."""
    total = 0.0
    for match in decision.matched_terms:
        total += match.contribution
    return total


def total_matches(decision: Decision, tolerance: float = 1e-9) -> bool:
    """True when the rows add up to the recorded score."""
    if decision.score is None:
        return not decision.matched_terms
    return math.isclose(term_total(decision), decision.score, rel_tol=1e-9, abs_tol=tolerance)


_TOKEN = re.compile(r"[a-z0-9]+")


@dataclass(frozen=True, slots=True)
class Highlights:
    """What to mark in an item's text: whole tokens (BM25-lite) and substrings (rarity, CJK bigrams)."""

    tokens: frozenset[str] = field(default_factory=frozenset)
    substrings: tuple[str, ...] = ()


def highlights(decision: Decision) -> Highlights:
    """The matched terms as the scorer found them: BM25-lite by whole ``[a-z0-9]+`` token, the rest as text."""
    tokens: set[str] = set()
    substrings: list[str] = []
    for match in decision.matched_terms:
        kind = _row_kind(match.note)
        if kind == "factor" or not match.term:
            continue
        term = match.term.lower()
        if kind == "bm25" and _TOKEN.fullmatch(term):
            tokens.add(term)
        elif term not in substrings:
            substrings.append(term)
    substrings.sort(key=len, reverse=True)  # longest first, so a longer term wins an overlap
    return Highlights(frozenset(tokens), tuple(substrings))


# --- the ROI view ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RoiTable:
    """``stages["scoring"]`` of a section-ROI run, or why there is none."""

    active: bool
    scorer: str  # the control's name of the scorer that ran ("lcm" when none did)
    rows: list[dict[str, Any]]
    stubbed: int = 0
    tokens_saved: int = 0
    source: str | None = None  # where the citation log came from: "derived" (from the session) or a path
    cycles: int | None = None
    threshold: float | None = None


def roi_table(trace: Trace | None) -> RoiTable:
    if trace is None:
        return RoiTable(active=False, scorer="", rows=[])
    scoring = trace.stages.get("scoring")
    if not isinstance(scoring, dict):
        return RoiTable(active=False, scorer=scorer_choice(trace.params.scorer), rows=[])
    scorer = scorer_choice(str(scoring.get("scorer", "")))
    if scorer != "roi":
        return RoiTable(active=False, scorer=scorer, rows=[])
    stats = scoring.get("stats") if isinstance(scoring.get("stats"), dict) else {}
    rows = [row for row in scoring.get("sections", []) if isinstance(row, dict)]
    constants = stats.get("constants") if isinstance(stats.get("constants"), dict) else {}
    threshold = constants.get("threshold")
    if threshold is None and rows:
        threshold = rows[0].get("threshold")
    source = stats.get("source")
    cycles = stats.get("cycles")
    return RoiTable(
        active=True,
        scorer=scorer,
        rows=rows,
        stubbed=int(scoring.get("stubbedCount") or 0),
        tokens_saved=int(scoring.get("tokensSaved") or 0),
        source=str(source) if source is not None else None,
        cycles=int(cycles) if isinstance(cycles, int) else None,
        threshold=float(threshold) if isinstance(threshold, (int, float)) else None,
    )


def category_tone(category: str) -> LabelTone:
    return {"WASTE": "waste", "LOW": "low", "MED+": "med"}.get(category, "muted")  # type: ignore[return-value]


# --- confidence ---------------------------------------------------------------------------------


def confidence_note(trace: Trace) -> str | None:
    """The budget bar's low-confidence note for this run, if any.

    ``RunSummary.low_confidence``: the prompt was searchable but every score
    is zero, so the ranking carries no signal.  For the rarity scorer also
    the threadnote condition (scorers.md B.2): every kept evictable item has
    BM25-lite 0 and one has a rarity match, so the kept items only contain
    the prompt's words, none is relevant by term frequency.  Both are flags
    of the run summary; nothing is recomputed here.
    """
    summary = trace.summary
    scoring = trace.stages.get("scoring")
    scorer = scorer_choice(str(scoring.get("scorer", ""))) if isinstance(scoring, dict) else "lcm"
    if summary.low_confidence:
        if scorer == "roi":
            return "low confidence: every section-ROI score is 0, so selection is by recency"
        return "low confidence: the prompt matches no item, so selection is by recency"
    if summary.keyword_only:
        return "low confidence: kept items only contain the prompt's words (keyword-only), none by term frequency"
    return None


