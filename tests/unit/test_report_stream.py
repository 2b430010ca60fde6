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


@pytest.mark.parametrize("where", ["final", "assembler"])
def test_a_text_that_spells_a_message_list_marker_falls_back_to_the_whole_document(where: str) -> None:
    trace = run_case("005")
    trace.notes.insert(0, report._MESSAGES_PLACEHOLDER.format(where))
    pieces: list[str] = []
    write_trace_json(trace, pieces.append)
    assert pieces == [dumps(trace_to_json(trace))]


def test_the_message_lists_are_spliced_in_and_the_trace_keeps_its_own() -> None:
    trace = run_case("005")
    expected = dumps(trace_to_json(trace))
    stage = trace.stage_records()["assembler"]
    messages, final = stage["messages"], trace.messages
    assert messages and final  # (both lists are spliced in this case)
    pieces: list[str] = []
    write_trace_json(trace, pieces.append)
    assert "".join(pieces) == expected
    assert "[" + ",".join(dumps(m) for m in messages) + "]" in pieces  # written as one piece of its own
    assert trace.stage_records()["assembler"]["messages"] is messages and trace.messages is final


@pytest.mark.parametrize("case", ["005", "301", "042", "000"])
def test_item_json_is_the_parity_projection_of_decision_json(case: str) -> None:
    trace = run_case(case)
    assert trace.decisions
    for d in trace.decisions:
        expected = _item_json(decision_json(d))
        assert item_json(d) == expected
        assert list(item_json(d)) == list(expected)  # the key order the JSON text keeps
        assert dumps(item_json(d)) == dumps(expected)


def _row(**changes: object) -> list[object]:
    values: dict[str, object] = {
        "key": "o:1", "ordinal": 1, "live_index": None, "kind": "message", "source_role": "user", "role": "user",
        "message_id": 7, "seq": 3, "summary_id": None, "summary_kind": None, "tokens": 12, "segment": "fresh-tail",
        "selected": True, "score": 0.25, "outcome": "kept", "reason": "kept: fits", "matched_terms": (),
        "pair_with": ("o:2",), "tool_call_ids": (), "output_index": 0, "protected": None, "evicted_by": None,
    }  # fmt: skip
    values.update(changes)
    return [values[name] for name in report.ROW_FIELDS]


class _Text(str):
    pass


@pytest.mark.parametrize(
    "changes",
    [
        {},
        {"score": None, "segment": "evictable", "outcome": "evicted"},
        {"score": 0, "tokens": 0, "output_index": None},  # an int score: JSON 0, not 0.0
        {"score": 0.0, "selected": False},
        {"score": float("nan")},  # JSON null, through the encoder itself
        {"score": float("inf"), "protected": "fresh tail", "evicted_by": "l:0"},
        {"seq": True, "message_id": None},  # a bool where an int goes: true, not 1
        {"ordinal": 2.5, "summary_id": "s1", "summary_kind": "leaf", "kind": "summary", "role": None},
        {"reason": "lone \ud800 surrogate", "source_role": "tool\u2028"},
        {"reason": _Text("a str subclass"), "pair_with": (_Text("o:3"), "o:4"), "tool_call_ids": ["c1", "c\u00e9"]},
        {"reason": "\u0000 spells the encoder's marker"},
        {"segment": "live", "outcome": "replaced-by-focus", "role": "custom-role-" + "x" * 40},
    ],
)
def test_rows_text_is_the_encoder_s_text(changes: dict[str, object]) -> None:
    rows = [_row(), _row(**changes), _row(ordinal=3)]
    assert report.rows_text(rows) == dumps([report._row_item_json(row) for row in rows])[1:-1]


# 75 to 400 items, live inputs after them; unresolved, dropped and clamped items on both sides of a split
@pytest.mark.parametrize("case", ["017", "016", "003", "049", "034"])
@pytest.mark.parametrize("split", [0, 32, 64, "all but the last chunk"])  # 0: every item written by the fork
def test_the_later_items_written_by_a_forked_process_give_the_same_text(
    case: str, split: int | str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ctxview.assembly import forked_map
    from ctxview.assembly.incremental.decision_list import CHUNK

    trace = run_case(case)
    count = trace.decisions.base_count  # type: ignore[attr-defined]
    at = (count - 1) // CHUNK * CHUNK if isinstance(split, str) else split
    assert 0 <= at < count
    monkeypatch.setattr(report, "FORK_ITEMS_FROM", 1)
    monkeypatch.setattr(report, "_STREAM_BATCH", 5)  # (several batches on each side of the split)
    monkeypatch.setattr(report, "_fork_split", lambda _count: at)
    monkeypatch.setattr(forked_map, "fork_helps", lambda _count: True)
    forks: list[int] = []
    real = forked_map.ForkedText.__init__

    def counted(self: forked_map.ForkedText, make: object) -> None:
        forks.append(at)
        real(self, make)  # type: ignore[arg-type]

    monkeypatch.setattr(forked_map.ForkedText, "__init__", counted)
    pieces: list[str] = []
    write_trace_json(trace, pieces.append, fork=True)
    assert forks == [at]
    assert "".join(pieces) == dumps(trace_to_json(run_case(case)))


def test_a_failed_forked_process_leaves_its_items_to_this_one(monkeypatch: pytest.MonkeyPatch) -> None:
    from ctxview.assembly import forked_map

    trace = run_case("017")
    monkeypatch.setattr(report, "FORK_ITEMS_FROM", 1)
    monkeypatch.setattr(report, "_fork_split", lambda _count: 64)
    monkeypatch.setattr(forked_map, "fork_helps", lambda _count: True)
    failed: list[bool] = []

    def fail(self: forked_map.ForkedText, write: object, skip: int = 0) -> bool:
        self.cancel()
        failed.append(True)
        return False

    monkeypatch.setattr(forked_map.ForkedText, "write_to", fail)
    pieces: list[str] = []
    write_trace_json(trace, pieces.append, fork=True)
    assert failed == [True]
    assert "".join(pieces) == dumps(trace_to_json(run_case("017")))


def test_no_fork_for_a_short_trace(monkeypatch: pytest.MonkeyPatch) -> None:
    from ctxview.assembly import forked_map

    monkeypatch.setattr(forked_map, "fork_helps", lambda _count: True)
    trace = run_case("005")
    assert trace.decisions.base_count < report.FORK_ITEMS_FROM  # type: ignore[attr-defined]
    monkeypatch.setattr(forked_map.ForkedText, "__init__", lambda *_args: pytest.fail("forked"))
    pieces: list[str] = []
    write_trace_json(trace, pieces.append, fork=True)
    assert "".join(pieces) == dumps(trace_to_json(run_case("005")))


def test_the_split_leaves_this_process_the_items_the_rest_of_the_document_does_not_outweigh() -> None:
    from ctxview.assembly.incremental.decision_list import CHUNK

    assert report._fork_split(4_500) == 0  # (the rest of the document costs more than the items)
    for count, share in ((10_000, (0.15, 0.3)), (100_000, (0.35, 0.45))):
        split = report._fork_split(count)
        assert split % CHUNK == 0
        assert share[0] < split / count < share[1]
