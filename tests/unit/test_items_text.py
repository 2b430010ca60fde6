"""``items_text``: the streamed items' text equals the JS-exact encoder's text of their dicts, value by value."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from ctxview.jsjson import JSNumber
from ctxview.model import Decision, Params, TermMatch
from ctxview.pipeline import SessionAssembler
from ctxview.report import dumps, item_json, items_text, trace_to_json, write_trace_json
from ctxview.store import LcmStore

SAMPLES = Path(__file__).resolve().parents[2] / "sample_sessions"


def _decision(**changes: object) -> Decision:
    base = Decision(
        "o:7", 7, None, "message", "user", "user", "user", 12, 3, None, 40, None, 0.5,
        (TermMatch("deploy", 2, 0.25, 1.0, "a note"),), "evictable", True, "kept", "kept: fits",
        ("o:8",), ("call_1",), 4, "fresh tail", "l:0",
    )
    return replace(base, **changes)


UNUSUAL = {
    "plain": {},
    "no score, no terms": {"score": None, "matched_terms": ()},
    "non-ASCII and escapes": {"reason": 'é "quoted" \\ back\nline\ttab \u2028 😀', "summary_id": "sum_ü"},
    "lone surrogate": {"reason": "half \ud83d pair", "tool_call_ids": ("a\udc00",)},
    "control characters": {"reason": "\u0000\u0001\u001f\u007f"},
    "the encoder's number marker spelled": {"reason": "\u0000\u2063JSNUM:1e400\u2063\u0000"},
    "floats": {"score": 1e-7, "matched_terms": (TermMatch("x", 1, 1e21, 0.1 + 0.2),)},
    "whole-number float": {"score": 3.0},
    "non-finite score": {"score": float("inf")},
    "NaN weight": {"matched_terms": (TermMatch("x", 1, 0.5, float("nan")),)},
    "JS number": {"score": JSNumber(1e21, "1e+21")},
    "big int": {"tokens": 2**70, "message_id": -5},
    "zero and nulls": {"output_index": 0, "protected": None, "evicted_by": None},
    "focus segment": {"segment": "fresh-tail", "kind": "summary", "summary_kind": "condensed"},
}


@pytest.mark.parametrize("name", list(UNUSUAL))
def test_one_item_is_the_encoders_text(name: str) -> None:
    d = _decision(**UNUSUAL[name])
    assert "[" + items_text([d]) + "]" == dumps([item_json(d)])


def test_a_batch_with_one_unusual_value_is_the_encoders_text() -> None:
    batch = [_decision(), _decision(score=float("nan")), _decision(reason="\ud800")]
    assert "[" + items_text(batch) + "]" == dumps([item_json(d) for d in batch])


def _whole(db: Path, params: Params) -> tuple[str, str]:
    with LcmStore(db) as store:
        session = store.load_session_for(params, None)
    assembler = SessionAssembler(session)
    pieces: list[str] = []
    write_trace_json(assembler.run(params), pieces.append)
    return "".join(pieces), dumps(trace_to_json(assembler.run(params)))


@pytest.mark.parametrize("db", ["demo.db", "medium.db"])
@pytest.mark.parametrize(
    "params",
    [
        Params(prompt="database migration rollback", prompt_aware_eviction=True, token_budget=4000),
        Params(prompt=None, engine=False, token_budget=2500),
    ],
)
def test_cli_json_of_the_samples_is_the_whole_documents_text(db: str, params: Params) -> None:
    streamed, whole = _whole(SAMPLES / db, params)
    assert streamed == whole
    assert '"items":[{"ordinal":' in streamed
