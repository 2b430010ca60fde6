"""The common scorer interface: spec E36–E38, the registry and ``score_items``."""

from __future__ import annotations

import builtins
import io
import json
import os
import pathlib
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxview.assembly.tokens import estimate_tokens
from ctxview.errors import InputError
from ctxview.scorers import (
    SCORER_CHOICES,
    TextCache,
    canonical_scorer,
    get_scorer,
    matched_rows,
    rank_order,
    run_scoring,
    score_items,
    scorer_options,
)
from ctxview.scorers.base import ScoreDoc, is_factor_row
from ctxview.scorers.roi import parse_citation_lines


def _doc(key: str, text: str, pool: int | None, **kw: object) -> ScoreDoc:
    role = kw.pop("role", "user")
    return ScoreDoc(key, pool if pool is not None else 50, str(kw.pop("kind", "message")), role, text,  # type: ignore[arg-type]
                    estimate_tokens(text), pool_index=pool,
                    segment="evictable" if pool is not None else "fresh-tail",
                    source_role=kw.pop("source_role", role), **kw)  # type: ignore[arg-type]  # fmt: skip


DOCS = [
    _doc("o:0", "Please load config.yaml and check the port.", 0),
    _doc("o:1", 'read_file {"path": "config.yaml"}', 1, role="assistant", tool_names=("read_file",),
         has_tool_calls=True),
    _doc("o:2", "Error: read failed: config.yaml not found " * 20, 2, role="toolResult", source_role="tool",
         tool_names=("read_file",)),
    _doc("o:3", "Earlier the deploy failed twice; fail-safe mode enabled.", 3, kind="summary",
         summary_id="sum_ab12", summary_kind="leaf"),
    _doc("o:4", "数据库迁移失败 because of config.yaml", 4),
    _doc("o:5", "I will retry.", None, role="assistant"),
]  # fmt: skip
PROMPT = "why did read_file fail on config.yaml? 数据库"
LOG = parse_citation_lines(
    [
        json.dumps(
            {
                "sections": [{"name": "user", "chars": 300}, {"name": "tool:read_file", "chars": 3000}],
                "citations": ["user"] if k % 3 else [],
            }
        )
        for k in range(12)
    ]
)
CONFIGS = [
    ("lcm", "lcm", {}),
    ("lcm", "unicode", {}),
    ("rarity", "lcm", {}),
    ("rarity", "unicode", {}),
    ("rarity-only", "lcm", {}),
    ("rarity", "lcm", {"variant": "faithful"}),
    ("roi", "lcm", {"citations": LOG}),
    ("roi", "unicode", {"citations": LOG}),
]


@pytest.mark.parametrize(("scorer", "tokenizer", "options"), CONFIGS)
def test_e36_determinism(scorer: str, tokenizer: str, options: dict[str, object]) -> None:
    first = run_scoring(DOCS, PROMPT, scorer=scorer, tokenizer=tokenizer, **options)
    second = run_scoring(DOCS, PROMPT, scorer=scorer, tokenizer=tokenizer, **options)
    assert first.results == second.results
    assert rank_order(first.results) == rank_order(second.results)
    assert first.stats() == second.stats()
    cached = TextCache()
    third = run_scoring(DOCS, PROMPT, scorer=scorer, tokenizer=tokenizer, cache=cached, **options)
    fourth = run_scoring(DOCS, PROMPT, scorer=scorer, tokenizer=tokenizer, cache=cached, **options)
    assert third.results == fourth.results == first.results


@pytest.mark.parametrize(("scorer", "tokenizer", "options"), CONFIGS)
def test_e37_rows_add_up_to_the_score(scorer: str, tokenizer: str, options: dict[str, object]) -> None:
    results = score_items(DOCS, PROMPT, scorer=scorer, tokenizer=tokenizer, **options)
    scored = [r for r in results if r.score is not None]
    assert scored
    for result in scored:
        assert sum(row.contribution for row in result.terms) == pytest.approx(result.score, abs=1e-9)
        if scorer == "roi":
            assert [row.term for row in result.terms] == ["C", "T", "R", "S"]
            assert all(is_factor_row(row) for row in result.terms) and matched_rows(result) == ()
        elif result.score == 0:
            assert result.terms == ()


_WORD = st.sampled_from(["config.yaml", "read_file", "fail", "failed", "deploy", "数据", "库", "the", "Sharding", "x"])
_TEXT = st.lists(_WORD, max_size=12).map(" ".join)


@settings(max_examples=150, deadline=None)
@given(st.lists(_TEXT, min_size=1, max_size=6), _TEXT)
def test_e37_rows_add_up_on_random_pools(texts: list[str], prompt: str) -> None:
    docs = [_doc(f"o:{i}", t, i, tool_names=("read_file",) if i % 2 else ()) for i, t in enumerate(texts)]
    for scorer, tokenizer, options in CONFIGS:
        for result in score_items(docs, prompt, scorer=scorer, tokenizer=tokenizer, **options):
            assert result.score is not None or scorer == "roi"
            if result.score is not None:
                assert sum(r.contribution for r in result.terms) == pytest.approx(result.score, abs=1e-9)


def _forbid(*_args: object, **_kwargs: object) -> object:
    raise AssertionError("score() must not do I/O or read the clock")


@pytest.mark.parametrize(("scorer", "tokenizer", "options"), CONFIGS)
def test_e38_score_does_no_io(
    scorer: str, tokenizer: str, options: dict[str, object], monkeypatch: pytest.MonkeyPatch
) -> None:
    configured = get_scorer(scorer, tokenizer=tokenizer, **options)
    prepared = configured.prepare(DOCS, PROMPT)
    expected = [prepared.score(doc) for doc in DOCS]
    for target, name in [
        (builtins, "open"),
        (io, "open"),
        (os, "open"),
        (os, "stat"),
        (pathlib.Path, "open"),
        (pathlib.Path, "read_text"),
        (time, "time"),
        (time, "monotonic"),
        (time, "perf_counter"),
        (time, "time_ns"),
    ]:
        monkeypatch.setattr(target, name, _forbid)
    again = [prepared.score(doc) for doc in DOCS]
    stats = prepared.stats()
    monkeypatch.undo()
    assert again == expected
    assert stats["scorer"] == configured.name


def test_registry_names_and_errors() -> None:
    assert SCORER_CHOICES == ("lcm", "rarity", "rarity-only", "roi")
    assert [canonical_scorer(n) for n in ("lcm", "bm25-lite", "rarity", "rarity-only", "roi", "section-roi")] == [
        "bm25-lite", "bm25-lite", "rarity", "rarity-only", "section-roi", "section-roi",
    ]  # fmt: skip
    assert get_scorer("lcm").name == "bm25-lite"
    assert get_scorer("rarity", tokenizer="unicode").tokenizer.name == "unicode"
    assert get_scorer("roi", stub_threshold=0.5).config.threshold == 0.5  # type: ignore[attr-defined]
    with pytest.raises(InputError, match="unknown scorer 'tfidf'; choose one of: lcm, rarity, rarity-only, roi"):
        get_scorer("tfidf")
    with pytest.raises(InputError, match="unknown tokenizer 'icu'"):
        score_items(DOCS, PROMPT, tokenizer="icu")
    with pytest.raises(InputError, match=r"^scorer 'lcm' has no option 'threshold'; its options: none$"):
        get_scorer("lcm", threshold=0.2)
    with pytest.raises(
        InputError,
        match=r"^scorer 'rarity' has no option 'threshold'; its options: variant, match, case_sensitive, "
        r"trim_punctuation, max_terms, slug_bonus, exclude$",
    ):
        get_scorer("rarity", threshold=0.2)
    with pytest.raises(InputError, match=r"^scorer 'rarity-only' has no option 'blend'"):
        get_scorer("rarity-only", blend=True)
    assert scorer_options("roi") == (
        "citations", "threshold", "weights", "window", "min_obs", "rate_full", "half_life", "roi_mode",
        "keywords", "protected", "trigger", "stub_only_if_smaller",
    )  # fmt: skip
    with pytest.raises(InputError, match="stub threshold must be a number from 0 to 1"):
        score_items(DOCS, PROMPT, scorer="roi", stub_threshold=-1)
    with pytest.raises(ValueError, match="keys must be unique"):
        score_items([DOCS[0], DOCS[0]], PROMPT)


def test_citations_path_is_read_before_scoring(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "crs.jsonl"
    path.write_text(
        "\n".join(
            json.dumps({"sections": [{"name": c.sections[0][0], "chars": 1}], "citations": []}) for c in LOG.cycles
        ),
        encoding="utf-8",
    )
    run = run_scoring(DOCS, PROMPT, scorer="roi", citations=str(path))
    assert run.stats()["source"] == str(path)
    assert run.stats()["cycles"] == 12
    with pytest.raises(InputError, match="citation log not found"):
        run_scoring(DOCS, PROMPT, scorer="roi", citations=tmp_path / "nope.jsonl")
    # citations are ignored by the scorers that do not use them
    assert score_items(DOCS, PROMPT, citations=tmp_path / "nope.jsonl") == score_items(DOCS, PROMPT)


def test_roi_table_rows_are_plain_dicts() -> None:
    run = run_scoring(DOCS, PROMPT, scorer="roi", citations=LOG)
    rows = run.table_rows()
    assert [row["section"] for row in rows] == ["user", "tool:read_file", "summary:leaf", "assistant"]
    tool = rows[1]
    assert (tool["category"], tool["decision"], tool["status"], tool["items"]) == ("WASTE", "stub", "scored", 2)
    assert (tool["included"], tool["cited"], tool["roi"], tool["last_cited"]) == (12, 0, 0.0, None)
    json.dumps(rows)  # plain data
    assert run_scoring(DOCS, PROMPT).table_rows() == []
    # the tool-call message is never stubbed; the tool result is
    assert run.results[1].stub is None and run.results[2].stub is not None


def test_scorers_do_not_import_textual() -> None:
    import subprocess
    import sys

    code = "import sys, ctxview.scorers; print('textual' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
