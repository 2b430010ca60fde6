"""``write_trace_json``: the streamed CLI JSON is the very text of ``dumps(trace_to_json(trace))``."""

from __future__ import annotations

import pytest

import ctxview.report as report
from ctxview.report import _item_json, decision_json, dumps, item_json, trace_to_json, write_trace_json
from tests.export_support import run_case


@pytest.mark.parametrize("case", ["005", "301", "000", "042"])  # live inputs; a focus brief; plain ones
@pytest.mark.parametrize("batch", [1, 3, 2048])
def test_streamed_text_equals_the_whole_document(case: str, batch: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(report, "_STREAM_BATCH", batch)
    expected = dumps(trace_to_json(run_case(case)))
    pieces: list[str] = []
    write_trace_json(run_case(case), pieces.append)
    assert "".join(pieces) == expected
    if batch == 1:  # one piece per item at least: the items really were written one batch at a time
        assert len(pieces) >= len(trace_to_json(run_case(case))["trace"]["items"])


def test_streaming_keeps_no_decision_it_built() -> None:
    trace = run_case("005")
    write_trace_json(trace, lambda _text: None)
    built = getattr(trace.decisions, "built", None)
    assert built is not None and built < trace.decisions.base_count  # type: ignore[attr-defined]


@pytest.mark.parametrize("where", ["before the items", "after the items"])
def test_a_text_that_spells_the_marker_falls_back_to_the_whole_document(where: str) -> None:
    trace = run_case("005")
    if where == "before the items":
        trace.summary.engine_rules_why = report._ITEMS_PLACEHOLDER  # "engineRules" precedes "trace"
    else:
        trace.notes.insert(0, report._ITEMS_PLACEHOLDER)
    pieces: list[str] = []
    write_trace_json(trace, pieces.append)
    assert pieces == [dumps(trace_to_json(trace))]


@pytest.mark.parametrize("case", ["005", "301", "042", "000"])
def test_item_json_is_the_parity_projection_of_decision_json(case: str) -> None:
    trace = run_case(case)
    assert trace.decisions
    for d in trace.decisions:
        expected = _item_json(decision_json(d))
        assert item_json(d) == expected
        assert list(item_json(d)) == list(expected)  # the key order the JSON text keeps
        assert dumps(item_json(d)) == dumps(expected)
