"""Rarity-weighted exact match with a slug bonus: spec E8–E22 (scorers.md B)."""

from __future__ import annotations

import pytest

from ctxview.assembly.tokens import estimate_tokens
from ctxview.errors import InputError
from ctxview.scorers import run_scoring, score_items
from ctxview.scorers.base import ScoreDoc, ScoreResult, rank_order
from ctxview.scorers.rarity import (
    STOPWORDS,
    IgnoredWord,
    RarityInput,
    doc_slugs,
    document_frequency,
    exact_recall_terms,
    extract_terms,
    label_text,
    low_confidence,
    make_rarity,
    rank_rarity,
    rarity_order,
    slug_names_term,
    uri_slug,
)
from tests.scorer_selection import select_ranked


def _doc(key: str, text: str, pool: int | None, **kw: object) -> ScoreDoc:
    kind = str(kw.pop("kind", "message"))
    role = kw.pop("role", "user")
    return ScoreDoc(key, pool if pool is not None else 99, kind, role, text, estimate_tokens(text),  # type: ignore[arg-type]
                    pool_index=pool, segment="evictable" if pool is not None else "fresh-tail", **kw)  # type: ignore[arg-type]  # fmt: skip


# the B.2 worked example
PROMPT = "why did read_file fail on config.yaml?"
WORKED = [
    _doc("1", "Please load config.yaml and check the port.", 0),
    _doc("2", 'read_file {"path": "config.yaml"}', 1, role="assistant", tool_names=("read_file",), has_tool_calls=True),
    _doc("3", "Error: read failed: config.yaml not found", 2, role="toolResult", tool_names=("read_file",)),
    _doc("4", "Earlier the deploy failed twice; fail-safe mode enabled.", 3, kind="summary", summary_id="sum_ab12"),
    _doc("5", "I will retry.", 4, role="assistant"),
]


def _order(docs: list[ScoreDoc], results: list[ScoreResult]) -> list[str]:
    return [docs[i].key for i in rank_order(results)]


# --- terms: E8–E12 --------------------------------------------------------------------------------


def test_stopword_list_is_the_46_words_of_pr_49() -> None:
    assert len(STOPWORDS) == 46
    assert {"been", "does", "from", "have", "into", "than", "that", "them", "then", "they", "were", "what",
            "when", "which", "while", "your"} <= STOPWORDS  # fmt: skip
    assert "the" in STOPWORDS


@pytest.mark.parametrize(
    ("query", "terms"),
    [
        ("coda latest handoff durable feature memory valencia-v1", ["valencia-v1", "coda"]),  # T1
        ("recall mobile-checkbox-clipped-table-cell handoff", ["mobile-checkbox-clipped-table-cell"]),  # T2
        ("what have they which does that when were", []),  # T3
        ("what does the sharding do", ["sharding"]),  # T4
    ],
)
def test_e8_threadnote_term_statements(query: str, terms: list[str]) -> None:
    assert exact_recall_terms(query) == terms


def test_e9_priority_and_cap() -> None:
    extraction = extract_terms("alpha beta gamma delta epsilon")
    assert [t.term for t in extraction.terms] == ["epsilon", "alpha", "gamma", "delta"]
    assert [t.priority for t in extraction.terms] == [7, 5, 5, 5]
    assert extraction.ignored == (IgnoredWord("beta", "over the cap"),)


def test_e10_identifier_bonuses() -> None:
    extraction = extract_terms("see sum_abc123 and PR-42 about OAuth")
    assert [(t.term, t.priority) for t in extraction.terms] == [("PR-42", 19), ("sum_abc123", 16), ("OAuth", 13)]
    assert extraction.ignored == (
        IgnoredWord("see", "too short"),
        IgnoredWord("and", "too short"),
        IgnoredWord("about", "stopword"),
    )


def test_e11_first_occurrence_keeps_its_case() -> None:
    assert [(t.term, t.key) for t in extract_terms("Sharding sharding").terms] == [("Sharding", "sharding")]


def test_e12_trailing_punctuation_faithful_and_ctxview() -> None:
    assert exact_recall_terms("about sharding.") == ["sharding."]
    assert [t.term for t in extract_terms("about sharding.").terms] == ["sharding"]
    assert [t.term for t in extract_terms("--flag_").terms] == ["flag"]


def test_unicode_letters_in_terms_only_with_the_unicode_tokenizer() -> None:
    assert [t.term for t in extract_terms("naïve Größe 数据库迁移 café").terms] == []
    unicode_terms = extract_terms("naïve Größe 数据库迁移 café", unicode_letters=True).terms
    assert [(t.term, t.priority) for t in unicode_terms] == [("Größe", 13), ("naïve", 5), ("café", 4)]


# --- E13: no rarity terms ------------------------------------------------------------------------------


def test_e13_no_rarity_terms_gives_the_default_decisions() -> None:
    assert extract_terms("go to db").terms == ()
    docs = [
        _doc("a", "go to the db now", 0),
        _doc("b", "nothing relevant at all", 1),
        _doc("c", "db db db", 2),
        _doc("d", "let us go", 3),
        _doc("e", "to be or not to be", 4),
    ]
    default = run_scoring(docs, "go to db")
    rarity = run_scoring(docs, "go to db", scorer="rarity")
    assert rarity.ranks and default.ranks
    assert [r.score for r in rarity.results] == [r.score for r in default.results]
    assert all(r.strength == 0.0 and r.label == "" for r in rarity.results)
    # c 3/3, a 3/5, then e 2/6 and d 1/3 tie (the more recent e first), b 0
    # summed term by term in prompt order: go + to + db, each 1/5 (not 3/5)
    assert [r.score for r in default.results] == [1 / 5 + 1 / 5 + 1 / 5, 0.0, 1.0, 1 / 3, 2 / 6]
    assert _order(docs, rarity.results) == _order(docs, default.results) == ["c", "a", "e", "d", "b"]
    for budget in range(0, 30):
        assert select_ranked(docs, rarity.results, budget, ranks=True) == select_ranked(
            docs, default.results, budget, ranks=True
        )


def test_rarity_terms_without_a_searchable_prompt_still_rank() -> None:
    docs = [_doc("a", "see a.b.c.d here", 0), _doc("b", "other", 1)]
    run = run_scoring(docs, "a.b.c.d", scorer="rarity")
    assert run.ranks
    assert [r.base for r in run.results] == [0.0, 0.0]
    assert [r.score for r in run.results] == [1.0, 0.0]
    assert run.results[0].label == "keyword-only"
    assert not run_scoring(docs, "a b", scorer="rarity").ranks


# --- E14: slugs ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("uri", "slug"),
    [
        ("viking://resources/x/mobile-observability-spec.md", "mobile-observability-spec"),
        ("viking://resources/agent-artifacts/packs/r.pack.json", "r.pack"),
        ("viking://x", "x"),
        ("viking://resources/a/b.md#chunk_0001", "b"),
        ("src/Config.YAML", "config"),
    ],
)
def test_e14_uri_slug(uri: str, slug: str) -> None:
    assert uri_slug(uri) == slug


@pytest.mark.parametrize(
    ("slug", "term", "names"),
    [
        ("mobile-alerting-spec", "spec", True),
        ("design-respec-notes", "spec", False),
        ("coda-valencia-v1-notes", "valencia-v1", True),
        ("read_file", "read", True),
        ("read_file", "READ_FILE", True),
        ("r.pack", "pack", True),
        ("readme", "read", False),
    ],
)
def test_e14_slug_names_term(slug: str, term: str, names: bool) -> None:
    assert slug_names_term(slug, term) is names


def test_doc_slugs_follow_the_table_order() -> None:
    doc = _doc("t", "x", 0, tool_names=("functions.read_file", "Bash"), file_names=("src/App.tsx#L3",),
               patch_files=("a/b/c.py", "a/b/c.py"), subtask_agent="Explorer")  # fmt: skip
    assert doc_slugs(doc) == ("functions.read_file", "bash", "app", "c", "explorer")
    assert doc_slugs(_doc("s", "x", 0, kind="summary", summary_id="sum_AB12")) == ("sum_ab12",)
    assert doc_slugs(_doc("f", "x", None, kind="focus", brief_id="brief_1")) == ("brief_1",)
    assert doc_slugs(_doc("u", "x", 0)) == ()


# --- E15: threadnote T5–T14 on the ranking core ----------------------------------------------------------


def _rank(*items: tuple[str, tuple[str, ...], tuple[str, ...], float]) -> dict[str, float]:
    inputs = [RarityInput(key, slugs, matched, base, pool_index=-i) for i, (key, slugs, matched, base) in
              enumerate(items)]  # fmt: skip
    return {o.key: o.score for o in rank_rarity(inputs)}


def _ranked_keys(*items: tuple[str, tuple[str, ...], tuple[str, ...], float]) -> list[str]:
    # pool_index = −position: ties keep input order, as threadnote's stable sort does
    inputs = [RarityInput(key, slugs, matched, base, pool_index=-i) for i, (key, slugs, matched, base) in
              enumerate(items)]  # fmt: skip
    return rarity_order(rank_rarity(inputs))


def test_e15_t5_no_exact_matches_keeps_the_base_order() -> None:
    items = (("a", (), (), 0.6), ("b", (), (), 0.9), ("c", (), (), 0.6))
    assert _ranked_keys(*items) == ["b", "a", "c"]
    assert all(
        o.strength == 0.0 and o.label == "" for o in rank_rarity([RarityInput(k, s, m, b) for k, s, m, b in items])
    )


def test_e15_t6_exact_terms_boost_a_lower_semantic_hit() -> None:
    assert _rank(("a", ("a",), ("release", "test"), 0.6), ("b", ("b",), (), 0.9)) == {"a": 2.6, "b": 0.9}
    assert _ranked_keys(("a", ("a",), ("release", "test"), 0.6), ("b", ("b",), (), 0.9)) == ["a", "b"]


def test_e15_t7_promoted_exact_only_hit_ranks_first() -> None:
    claude = (uri_slug("viking://resources/repos/coda/CLAUDE.md"),)
    items = (("sem", ("sem",), (), 0.9), ("claude", claude, ("conventions",), 0.0))
    assert _rank(*items) == {"sem": 0.9, "claude": 1.0}
    assert _ranked_keys(*items) == ["claude", "sem"]
    outcome = rank_rarity([RarityInput("claude", claude, ("conventions",), 0.0)])[0]
    assert (outcome.score, outcome.label) == (1.0, "keyword-only")


def test_e15_t8_two_terms_beat_one_common_term() -> None:
    items = (("m", ("m",), (), 0.5), ("r-one-term", ("r-one-term",), ("a",), 0.6),
             ("r-two-terms", ("r-two-terms",), ("a", "b"), 0.55))  # fmt: skip
    scores = _rank(*items)
    assert scores["r-two-terms"] == pytest.approx(2.05, abs=1e-12)
    assert scores["r-one-term"] == pytest.approx(1.1, abs=1e-12)
    assert _ranked_keys(*items) == ["r-two-terms", "r-one-term", "m"]  # one category: m is not lifted


def test_e15_t9_equal_strength_higher_base_wins() -> None:
    items = (("lo", ("lo",), ("a",), 0.5), ("hi", ("hi",), ("a",), 0.8))
    assert _rank(*items) == {"lo": 1.0, "hi": 1.3}
    assert _ranked_keys(*items) == ["hi", "lo"]


def test_e15_t10_labels_as_rendered() -> None:
    promoted, boosted = rank_rarity(
        [RarityInput("claude", ("claude",), ("y", "z"), 0.0), RarityInput("sem", ("sem",), ("x",), 0.62)]
    )
    assert (promoted.label, boosted.label) == ("keyword-only", "exact")
    # the same through the scorer: "yyyyy" contains the term but is not the prompt's A token
    p, s = score_items([_doc("p", "yyyyy zzzzz", 0), _doc("s", "xxxx", 1)], "yyyy zzzz xxxx", scorer="rarity")
    assert (p.base, label_text(p)) == (0.0, "keyword-only: yyyy, zzzz")
    assert (s.base, label_text(s)) == (1.0, "exact: xxxx")


def test_e15_t11_rare_term_beats_common_term() -> None:
    items = (("c1", ("c1",), ("common",), 0.5), ("c2", ("c2",), ("common",), 0.5),
             ("c3", ("c3",), ("common",), 0.5), ("r", ("r",), ("rare",), 0.5))  # fmt: skip
    assert _rank(*items)["r"] == 1.5
    assert _rank(*items)["c1"] == pytest.approx(0.5 + 1 / 3, abs=1e-12)
    assert _ranked_keys(*items)[0] == "r"


def test_e15_t12_slug_bonus() -> None:
    items = (("desktop", ("desktop-layout-review",), ("observability",), 0.0),
             ("mobile", ("mobile-observability-spec",), ("observability",), 0.0))  # fmt: skip
    assert _rank(*items) == {"desktop": 0.5, "mobile": 2.0}
    assert _ranked_keys(*items) == ["mobile", "desktop"]


def test_e15_t13_slug_token_boundary() -> None:
    items = (("respec", ("design-respec-notes",), ("spec",), 0.0),
             ("alerting", ("mobile-alerting-spec",), ("spec",), 0.0))  # fmt: skip
    assert _rank(*items) == {"respec": 0.5, "alerting": 2.0}
    assert _ranked_keys(*items) == ["alerting", "respec"]


def test_e15_t14_anti_flooding() -> None:
    promoted = [(f"p{i}", (f"p{i}",), ("common",), 0.0) for i in range(5)]
    items = (("semantic", ("semantic",), (), 0.6), *promoted)
    scores = _rank(*items)
    assert all(scores[f"p{i}"] == 0.2 for i in range(5))
    assert _ranked_keys(*items)[0] == "semantic"


# --- E16: the worked example -------------------------------------------------------------------------------


def test_e16_worked_example_ctxview_variant() -> None:
    run = run_scoring(WORKED, PROMPT, scorer="rarity")
    stats = run.stats()
    assert [(t["term"], t["priority"]) for t in stats["terms"]] == [("config.yaml", 17), ("read_file", 15), ("fail", 4)]
    assert stats["base_terms"] == ["why", "did", "read", "file", "fail", "on", "config", "yaml"]
    assert stats["df"] == {"config.yaml": 3, "read_file": 2, "fail": 2}
    expected = [  # strength, base, score
        (1 / 3, 2 / 8, 0.5833),
        (1 / 3 + 2.0, 4 / 5, 3.1333),
        (1 / 3 + 2.0 + 1 / 2, 3 / 7, 3.2619),
        (1 / 2, 1 / 9, 0.6111),
        (0.0, 0.0, 0.0),
    ]
    for result, (strength, base, score) in zip(run.results, expected, strict=True):
        assert result.strength == pytest.approx(strength, abs=1e-12)
        assert result.base == pytest.approx(base, abs=1e-12)
        assert round(result.score or 0.0, 4) == score
    assert _order(WORKED, run.results) == ["3", "2", "4", "1", "5"]
    assert _order(WORKED, score_items(WORKED, PROMPT)) == ["2", "3", "1", "4", "5"]
    assert run.results[2].reason == (
        "rarity 3.262 = 2.833 [config.yaml 1/3, read_file 1/2×4 slug:read_file, fail 1/2] + bm25 0.429 (exact)"
    )
    assert run.results[1].terms[1].note == "rarity body+slug:read_file"


def test_e16_worked_example_faithful_variant() -> None:
    run = run_scoring(WORKED, PROMPT, scorer="rarity", match="body-only")
    assert run.stats()["df"] == {"config.yaml": 3, "read_file": 1, "fail": 2}
    assert round(run.results[1].score or 0.0, 4) == 5.1333
    assert run.results[1].strength == pytest.approx(1 / 3 + 4.0, abs=1e-12)
    assert round(run.results[2].score or 0.0, 4) == 1.2619
    assert run.results[2].strength == pytest.approx(1 / 3 + 1 / 2, abs=1e-12)
    assert _order(WORKED, run.results) == ["2", "3", "4", "1", "5"]
    # the full faithful preset is also case-sensitive; this prompt's terms are lowercase in every text
    faithful = run_scoring(WORKED, PROMPT, scorer="rarity", variant="faithful")
    assert [r.score for r in faithful.results] == [r.score for r in run.results]


def test_case_sensitive_variant_misses_other_cases() -> None:
    docs = [_doc("a", "Config.YAML is here", 0), _doc("b", "config.yaml too", 1)]
    insensitive = score_items(docs, "config.yaml", scorer="rarity")
    sensitive = score_items(docs, "config.yaml", scorer="rarity", case_sensitive=True)
    assert [r.strength for r in insensitive] == [0.5, 0.5]
    assert [r.strength for r in sensitive] == [0.0, 1.0]


# --- E17–E22 ----------------------------------------------------------------------------------------------


def test_e17_a_term_in_every_pool_item() -> None:
    docs = [_doc(f"d{i}", f"the widget number {i}", i) for i in range(4)]
    docs.append(_doc("d4", "nothing", 4, tool_names=("widget",)))
    for result, doc in zip(score_items(docs, "widget", scorer="rarity"), docs, strict=True):
        assert result.strength == (4 / 5 if doc.key == "d4" else 1 / 5)
    # items outside the pool neither count nor score
    fresh = _doc("tail", "widget widget", None)
    results = score_items([*docs, fresh], "widget", scorer="rarity")
    assert results[0].strength == 1 / 5
    assert results[-1].score is None and results[-1].reason == "protected / not scored"


def test_e18_exclusion() -> None:
    docs = [
        _doc("side", "shard notes", 0, file_names=("viking://r/notes.overview.md",)),
        _doc("pack", "shard pack", 1, file_names=("viking://r/agent-artifacts/packs/p/r.pack.json",)),
        _doc("keep", "shard body", 2),
        _doc("skill", "shard skill", 3, file_names=("viking://r/agent-artifacts/skills/s/SKILL.md",)),
    ]
    excluded = run_scoring(docs, "shard", scorer="rarity", exclude="threadnote")
    assert excluded.stats()["df"] == {"shard": 2}
    assert excluded.stats()["excluded"] == ["pack", "side"]
    side = excluded.results[0]
    assert (side.strength, side.label, side.base) == (0.0, "excluded", 0.5)
    assert side.score == 0.5  # stays evictable with its base
    assert excluded.results[2].strength == 1 / 2
    partial = run_scoring(docs, "shard", scorer="rarity", exclude=[r"/agent-artifacts/packs/"])
    assert partial.stats()["df"] == {"shard": 3}
    plain = run_scoring(docs, "shard", scorer="rarity")
    assert plain.stats()["df"] == {"shard": 4}


def test_bad_rarity_options_are_input_errors() -> None:
    with pytest.raises(InputError, match="unknown exclude preset 'nope'"):
        make_rarity(exclude="nope")
    with pytest.raises(InputError, match="bad exclude pattern"):
        make_rarity(exclude=["("])
    with pytest.raises(InputError, match="unknown rarity match mode"):
        make_rarity(match="title")
    with pytest.raises(InputError, match="unknown rarity variant"):
        make_rarity(variant="loose")


def test_e19_labels() -> None:
    [failed] = score_items([_doc("f", "failed twice", 0)], "why did it fail", scorer="rarity")
    assert (failed.base, failed.label, failed.strength) == (0.0, "keyword-only", 1.0)
    assert label_text(failed) == "keyword-only: fail"
    run = run_scoring(WORKED, PROMPT, scorer="rarity")
    assert run.results[2].label == "exact"
    assert label_text(run.results[2]) == "exact: config.yaml, read_file, fail"
    assert run.results[4].label == ""


def test_e20_low_confidence() -> None:
    keyword_only = ScoreResult(1.0, base=0.0, strength=1.0)
    nothing = ScoreResult(0.0, base=0.0, strength=0.0)
    relevant = ScoreResult(0.7, base=0.2, strength=0.5)
    assert low_confidence([keyword_only, nothing]) is True
    assert low_confidence([keyword_only, relevant]) is False
    assert low_confidence([nothing]) is False
    assert low_confidence([]) is False
    [failed] = score_items([_doc("f", "failed twice", 0)], "why did it fail", scorer="rarity")
    assert low_confidence([failed]) is True


def test_e21_empty_pool() -> None:
    run = run_scoring([], PROMPT, scorer="rarity")
    assert run.results == []
    assert run.stats()["df"] == {}
    assert run.stats()["pool_size"] == 0
    only_tail = run_scoring([_doc("t", "config.yaml", None)], PROMPT, scorer="rarity")
    assert only_tail.stats()["df"] == {}
    assert only_tail.results[0].score is None


def test_e22_rows_add_up() -> None:
    for blend in ("rarity", "rarity-only"):
        for result in score_items(WORKED, PROMPT, scorer=blend):
            assert result.score is not None
            rarity_rows = [r for r in result.terms if r.note.startswith("rarity")]
            assert sum(r.contribution for r in rarity_rows) == pytest.approx(result.strength, abs=1e-9)
            assert sum(r.contribution for r in result.terms) == pytest.approx(result.score, abs=1e-9)
    only = score_items(WORKED, PROMPT, scorer="rarity-only")
    assert [round(r.score or 0, 4) for r in only] == [0.3333, 2.3333, 2.8333, 0.5, 0.0]


def test_document_frequency_counts_each_entry_once() -> None:
    assert document_frequency([["a", "A", "b"], ["a"], []]) == {"a": 2, "b": 1}
