"""BM25-lite behind the scorer interface: spec E3–E7 and bit-identity with §6.2."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxview.assembly.tokens import estimate_tokens
from ctxview.model import TermMatch
from ctxview.scorers import run_scoring, score_items
from ctxview.scorers.base import ScoreDoc, ScoreResult, rank_order
from ctxview.scorers.bm25lite import bm25_score
from ctxview.scorers.tokenize import UNICODE
from tests.scorer_selection import select_ranked


def _doc(key: str, text: str, pool: int | None, tokens: int | None = None) -> ScoreDoc:
    return ScoreDoc(key, pool if pool is not None else 100, "message", "user", text,
                    estimate_tokens(text) if tokens is None else tokens, pool_index=pool,
                    segment="evictable" if pool is not None else "fresh-tail")  # fmt: skip


def _spec_score(text: str, prompt: str) -> float:
    """§6.2 transcribed: for each distinct prompt term in first-occurrence order add tf/N."""

    def tokenize(value: str) -> list[str]:
        return [p for p in re.split(r"[^a-z0-9]+", value.lower()) if len(p) > 1]

    prompt_tokens = tokenize(prompt)
    item_tokens = tokenize(text)
    if not prompt_tokens or not item_tokens:
        return 0.0
    score = 0.0
    seen: set[str] = set()
    for term in prompt_tokens:
        if term in seen:
            continue
        seen.add(term)
        tf = item_tokens.count(term)
        if tf > 0:
            score += tf / len(item_tokens)
    return score


_WORDS = st.sampled_from(["deploy", "prod", "db", "x", "Deploy", "a", "type", "text", "数据", "fail", "failed", "v1"])
_SEPS = st.sampled_from([" ", ", ", "_", "-", ".", "\n", '{"', '":"', "é", "😀"])
_PHRASE = st.lists(st.tuples(_WORDS, _SEPS), max_size=25).map(lambda parts: "".join(w + s for w, s in parts))


@settings(max_examples=400, deadline=None)
@given(_PHRASE, _PHRASE)
def test_scorer_is_bit_identical_to_the_spec_transcription(text: str, prompt: str) -> None:
    [result] = score_items([_doc("o:0", text, 0)], prompt)
    assert result.score is not None
    assert result.score.hex() == _spec_score(text, prompt).hex()
    assert bm25_score(text, prompt).hex() == _spec_score(text, prompt).hex()


@settings(max_examples=200, deadline=None)
@given(_PHRASE, _PHRASE)
def test_scorer_equals_the_assemblers_reference_score(text: str, prompt: str) -> None:
    scoring = pytest.importorskip("ctxview.assembly.scoring")
    if not hasattr(scoring, "score_text"):
        pytest.skip("the assembler's scoring module has no score_text")
    expected_score, expected_rows = scoring.score_text(text, prompt)
    [result] = score_items([_doc("o:0", text, 0)], prompt)
    assert result.score is not None
    assert result.score.hex() == expected_score.hex()
    assert result.terms == expected_rows


# --- E3–E5 ----------------------------------------------------------------------------------------


def test_e3_every_item_token_a_prompt_term_scores_one() -> None:
    assert bm25_score("hello world hello", "Hello hello world") == 1.0
    [result] = score_items([_doc("o:0", "hello world hello", 0)], "Hello hello world")
    assert result.terms == (TermMatch("hello", 2, 2 / 3), TermMatch("world", 1, 1 / 3))
    assert result.reason == "bm25-lite 1.000: hello 2/3 + world 1/3"


def test_e4_no_stemming_and_empty_items() -> None:
    assert bm25_score("failed twice", "why did it fail") == 0.0
    assert bm25_score("", "why did it fail") == 0.0
    [result] = score_items([_doc("o:0", "failed twice", 0)], "why did it fail")
    assert result.score == 0.0
    assert result.terms == ()
    assert result.reason == "bm25-lite 0: no prompt term in the item"


@settings(max_examples=300, deadline=None)
@given(_PHRASE, _PHRASE)
def test_e5_score_is_between_zero_and_one(text: str, prompt: str) -> None:
    for tokenizer in ("lcm", "unicode"):
        [result] = score_items([_doc("o:0", text, 0)], prompt, tokenizer=tokenizer)
        assert result.score is not None
        assert 0.0 <= result.score <= 1.0 + 1e-12


def _results(*scores: float) -> list[ScoreResult]:
    return [ScoreResult(s, sort_key=(-s, float(-i))) for i, s in enumerate(scores)]


def test_e6_greedy_skips_and_continues_chronological_stops() -> None:
    # chronological items A, B, C with (tokens, score) = (6, .5), (6, .4), (4, .1); budget 10
    tokens = [6, 6, 4]
    results = _results(0.5, 0.4, 0.1)
    assert rank_order(results) == [0, 1, 2]
    docs = [_doc(k, "x", i, t) for i, (k, t) in enumerate(zip(["A", "B", "C"], tokens, strict=True))]
    assert select_ranked(docs, results, 10, ranks=True) == ("prompt-aware", ["A", "C"])  # A and C, output A, C
    assert select_ranked(docs, results, 10, ranks=False) == ("chronological", ["B", "C"])  # C, B (4 + 6), stop at A
    assert select_ranked(docs, results, 16, ranks=True) == ("full-fit", ["A", "B", "C"])


def test_e7_equal_scores_keep_the_more_recent_item_first() -> None:
    docs = [_doc("old", "deploy prod", 0), _doc("mid", "nothing here", 1), _doc("new", "deploy prod", 2)]
    results = score_items(docs, "deploy")
    assert results[0].score == results[2].score == 0.5
    assert [docs[i].key for i in rank_order(results)] == ["new", "old", "mid"]


def test_e2_unsearchable_prompt_falls_back_to_chronological() -> None:
    docs = [_doc("A", "deploy", 0, 6), _doc("B", "prod", 1, 6), _doc("C", "db", 2, 4)]
    for prompt in ("a I", "数据库迁移", ""):
        run = run_scoring(docs, prompt)
        assert not run.ranks
        assert select_ranked(docs, run.results, 10, ranks=run.ranks) == ("chronological", ["B", "C"])
        assert all(r.score == 0.0 for r in run.results)
        assert run.results[0].reason == "bm25-lite 0: the prompt has no searchable term"
    cjk = run_scoring([_doc("A", "数据库迁移 done", 0, 6), _doc("B", "prod", 1, 6)], "数据库", tokenizer="unicode")
    assert cjk.ranks
    assert cjk.results[0].score == 2 / 5  # 数据, 据库 of [数据, 据库, 库迁, 迁移, done]


def test_items_outside_the_pool_are_scored_but_not_ranked() -> None:
    docs = [_doc("o:0", "deploy prod", 0), _doc("o:1", "deploy", None)]
    results = score_items(docs, "deploy")
    assert results[1].score == 1.0
    assert results[1].sort_key == ()
    assert rank_order(results) == [0]


def test_unicode_tokenizer_with_bm25() -> None:
    [result] = score_items([_doc("o:0", "café au lait", 0)], "Café", tokenizer="unicode")
    assert result.score == 1 / 3
    assert result.terms == (TermMatch("café", 1, 1 / 3),)
    assert UNICODE.tokenize("café au lait") == ["café", "au", "lait"]
