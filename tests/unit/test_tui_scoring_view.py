"""The inspector's scorer view logic: choices and cycles, labels, term rows, ROI table, confidence notes."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from ctxview.model import Decision, Params, RunSummary, TermMatch, Trace
from ctxview.pipeline import SessionAssembler
from ctxview.samples import DEMO_CONVERSATION_ID, build_sample
from ctxview.store import LcmStore
from ctxview.tui.scoring_view import (
    confidence_note,
    has_labels,
    highlights,
    label_marker,
    label_tone,
    next_scorer,
    next_tokenizer,
    roi_table,
    run_label,
    scorer_choice,
    scorer_options,
    term_rows,
    term_total,
    total_matches,
)
from ctxview.tui.view import row_class
from ctxview.tui.widgets.detail import highlight_terms


def decision(key: str = "o:1", *, score: float | None, terms: tuple[TermMatch, ...] = (), outcome: str = "kept",
             segment: str = "evictable", label_extra: str = "") -> Decision:
    return Decision(
        key=key, ordinal=int(key[2:]), live_index=None, kind="message", label="user", role="user",
        source_role="user", message_id=1, seq=1, summary_id=None, tokens=10, serialized_tokens=None,
        score=score, matched_terms=terms, segment=segment, selected=outcome == "kept",  # type: ignore[arg-type]
        outcome=outcome, reason="r", label_extra=label_extra,  # type: ignore[arg-type]
    )


def trace(decisions: list[Decision], *, stages: dict | None = None, low_confidence: bool = False,
          params: Params | None = None, keyword_only: bool = False) -> Trace:
    summary = RunSummary(
        selection_mode="prompt-aware", fresh_tail_ordinal=None, token_budget=100, effective_budget=100,
        reserved_tokens=0, tail_tokens=0, focus_tokens=0, evictable_total_tokens=0, kept_evictable_tokens=0,
        remaining_budget=0, assembler_tokens=0, final_tokens=0, low_confidence=low_confidence,
        keyword_only=keyword_only,
    )
    return Trace(params or Params(), 1, summary, decisions, [], [], [], [], [], [], stages or {})


# rarity rows of the scorers.md B.2 worked example, item 3 (Error: read failed: config.yaml not found)
ITEM3 = (
    TermMatch("config.yaml", 1, 1 / 3, 1 / 3, "rarity body"),
    TermMatch("read_file", 0, 2.0, 0.5, "rarity slug:read_file"),
    TermMatch("fail", 1, 0.5, 0.5, "rarity body"),
    TermMatch("read", 1, 1 / 7, 1.0, ""),
    TermMatch("config", 1, 1 / 7, 1.0, ""),
    TermMatch("yaml", 1, 1 / 7, 1.0, ""),
)


def test_scorer_choices_and_cycles():
    assert [scorer_choice(n) for n in ("lcm", "bm25-lite", "rarity", "rarity-only", "roi", "section-roi")] == [
        "lcm", "lcm", "rarity", "rarity-only", "roi", "roi"
    ]
    assert [next_scorer(n) for n in ("lcm", "rarity", "roi", "section-roi", "bm25-lite", "rarity-only")] == [
        "rarity", "roi", "lcm", "lcm", "rarity", "roi"
    ]
    assert next_tokenizer("lcm") == "unicode" and next_tokenizer("unicode") == "lcm"
    assert scorer_options("roi") == ["lcm", "rarity", "roi"]
    assert scorer_options("rarity-only") == ["lcm", "rarity", "roi", "rarity-only"]


def test_label_markers_and_tones():
    assert [label_marker(x) for x in ("exact", "keyword-only", "excluded", "WASTE", "LOW", "MED+", "n/a", "")] == [
        "exact", "kw", "excl", "WASTE", "LOW", "MED+", "n/a", ""
    ]
    assert [label_tone(x) for x in ("exact", "keyword-only", "WASTE", "LOW", "MED+", "n/a")] == [
        "exact", "keyword", "waste", "low", "med", "muted"
    ]


def test_term_rows_spell_out_each_kind_and_add_up_to_the_score():
    d = decision(score=2.8333333333333335 + 3 / 7, terms=ITEM3)
    rows = term_rows(d)
    assert [(r.term, r.count, r.kind, r.note) for r in rows] == [
        ("config.yaml", 1, "rarity", "rarity · body"),
        ("read_file", 0, "rarity", "rarity · slug:read_file"),
        ("fail", 1, "rarity", "rarity · body"),
        ("read", 1, "bm25", "bm25-lite"),
        ("config", 1, "bm25", "bm25-lite"),
        ("yaml", 1, "bm25", "bm25-lite"),
    ]
    assert term_total(d) == pytest.approx(3.2619, abs=1e-4)  # the worked example's score for item 3
    assert total_matches(d)
    assert not total_matches(replace(d, score=3.5))
    factor = decision(score=0.5424, terms=(TermMatch("C", 0, 0.2424, 0.4, "factor citation rate 0.6061"),
                                           TermMatch("R", 0, 0.15, 0.15, "factor recency 1.0000"),
                                           TermMatch("S", 0, 0.15, 0.15, "factor size efficiency 1.0000")))
    assert [(r.term, r.count, r.kind, r.note) for r in term_rows(factor)] == [
        ("C", None, "factor", "citation rate 0.6061"),
        ("R", None, "factor", "recency 1.0000"),
        ("S", None, "factor", "size efficiency 1.0000"),
    ]
    assert total_matches(factor)


def test_highlights_mark_tokens_and_substrings_as_each_scorer_matched():
    d = decision(score=1.0, terms=(*ITEM3, TermMatch("部署", 1, 1.0, 1.0, ""),
                                   TermMatch("C", 0, 0.1, 0.4, "factor citation rate 0.2500")))
    marks = highlights(d)
    assert marks.tokens == frozenset({"read", "config", "yaml"})
    assert marks.substrings == ("config.yaml", "read_file", "fail", "部署")
    text = highlight_terms("Error: read failed: Config.YAML; 部署失败 C", marks.tokens, marks.substrings)
    marked = {text.plain[span.start:span.end] for span in text.spans}
    assert marked == {"read", "fail", "Config.YAML", "Config", "YAML", "部署"}


def test_stubbed_has_its_own_row_class():
    assert row_class(decision(score=0.0, outcome="stubbed")) == "stubbed"
    assert row_class(decision(score=0.0, outcome="tool-calls-stripped")) == "stripped"


def test_run_label_and_has_labels_follow_the_scoring_stage():
    assert run_label(trace([])) == "" and not has_labels(trace([]))
    rarity = trace([], stages={"scoring": {"scorer": "rarity", "tokenizer": "lcm"}})
    assert run_label(rarity) == "rarity" and has_labels(rarity)
    lcm_unicode = trace([], stages={"scoring": {"scorer": "bm25-lite", "tokenizer": "unicode"}})
    assert run_label(lcm_unicode) == "lcm + unicode" and not has_labels(lcm_unicode)
    roi = trace([], stages={"scoring": {"scorer": "section-roi", "tokenizer": "unicode"}})
    assert run_label(roi) == "roi + unicode" and has_labels(roi)


def test_confidence_notes():
    none = trace([decision(score=0.0)], low_confidence=True)
    assert confidence_note(none) == "low confidence: the prompt matches no item, so selection is by recency"
    roi = trace([decision(score=0.0)], low_confidence=True, stages={"scoring": {"scorer": "section-roi"}})
    assert confidence_note(roi) == "low confidence: every section-ROI score is 0, so selection is by recency"
    # B.2 (the run summary's keyword_only flag): the note names it
    rarity = trace([decision(score=0.5)], stages={"scoring": {"scorer": "rarity"}}, keyword_only=True)
    note = confidence_note(rarity)
    assert note is not None and "keyword-only" in note
    assert confidence_note(trace([decision(score=0.5)], stages={"scoring": {"scorer": "rarity"}})) is None


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> SessionAssembler:
    path = Path(tmp_path_factory.mktemp("demo")) / "demo.db"
    build_sample(path, "demo")
    with LcmStore(path) as store:
        return SessionAssembler(store.load_session(DEMO_CONVERSATION_ID))


def test_roi_table_reads_the_scoring_stage(demo: SessionAssembler):
    params = Params(token_budget=2000, prompt="helm rollback", fresh_tail_count=8, prompt_aware_eviction=True)
    off = roi_table(demo.run(params))
    assert not off.active and off.scorer == "lcm" and off.rows == []
    assert roi_table(demo.run(replace(params, scorer="rarity"))).scorer == "rarity"
    run = demo.run(replace(params, scorer="roi"))
    table = roi_table(run)
    scoring = run.stages["scoring"]
    assert table.active and table.rows == scoring["sections"]
    assert table.stubbed == scoring["stubbedCount"] and table.tokens_saved == scoring["tokensSaved"]
    assert table.threshold == 0.3 and table.source == "derived"
    assert table.cycles == scoring["stats"]["cycles"]
    assert roi_table(None).active is False
