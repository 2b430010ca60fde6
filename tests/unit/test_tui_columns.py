"""The items table's column specs and the sweep's view state, without Textual."""

from __future__ import annotations

from dataclasses import replace

from ctxview.model import Decision, Params
from ctxview.tui.columns import ITEM_COLUMNS, Column, TableView, column_widths, fit, visible_columns
from ctxview.tui.state import MinBudgets
from ctxview.tui.view import OutcomeDiff


def decision(key: str = "o:3", *, reason: str = "r", evicted_by: str | None = None, label_extra: str = "") -> Decision:
    return Decision(
        key=key, ordinal=3, live_index=None, kind="message", label="tool\nResult", role="toolResult",
        source_role="toolResult", message_id=3, seq=3, summary_id=None, tokens=12345, serialized_tokens=None,
        score=0.25, matched_terms=(), segment="evictable", selected=False, outcome="evicted", reason=reason,
        evicted_by=evicted_by, label_extra=label_extra,
    )


def cells(d: Decision, view: TableView) -> dict[str, str]:
    return {column.header: column.cell(d, view) for column in visible_columns(view)}


def test_optional_columns_show_only_when_their_view_state_is_there() -> None:
    plain = TableView(OutcomeDiff())
    headers = [c.header for c in visible_columns(plain)]
    assert headers == ["", "item", "kind", "tokens", "score", "outcome", "reason"]
    swept = TableView(OutcomeDiff(), labels=True, min_budgets=MinBudgets(Params(), {}))
    headers = [c.header for c in visible_columns(swept)]
    assert headers == ["", "item", "kind", "tokens", "score", "label", "outcome", "sent from", "reason"]


def test_cells_read_the_decision_and_the_view() -> None:
    reason = (
        "evicted to make room for live input L0: the context came to 1,977 serialized tokens after this eviction "
        "(budget 2,000)"
    )
    d = decision(reason=reason, evicted_by="l:0", label_extra="keyword-only")
    diff = OutcomeDiff(changed={"o:3": ("kept", "evicted")}, lost=1)
    view = TableView(diff, labels=True, min_budgets=MinBudgets(Params(), {"o:3": "4,001–4,500"}))
    assert cells(d, view) == {
        "": "▼",
        "item": "3",
        "kind": "tool ⏎ Result",
        "tokens": "12,345",
        "score": "0.2500",
        "label": "kw",
        "outcome": "evicted",
        "sent from": "4,001–4,500",
        "reason": "for L0 · then 1,977/2,000 tok",  # the why, terse (ctxview.tui.why)
    }
    # an item the sweep never keeps, and a row the last edit did not change
    view = TableView(OutcomeDiff(), labels=True, min_budgets=MinBudgets(Params(), {"o:3": "never"}))
    assert cells(decision(), view)[""] == ""
    assert cells(decision(), view)["sent from"] == "never"


def test_the_header_marks_the_column_the_rows_are_sorted_by() -> None:
    by_header = {c.header: c for c in ITEM_COLUMNS}
    assert by_header["item"].header_text("ordinal") == "item▲"
    assert by_header["item"].header_text("score") == "item"
    assert by_header["score"].header_text("score") == "score▼"
    assert by_header["tokens"].header_text("tokens") == "tokens▼"
    assert by_header["tokens"].header_text(None) == "tokens"  # no rows yet: no mark
    assert by_header["reason"].header_text("ordinal") == "reason"


def test_widths_leave_the_rest_to_the_last_column_and_shrink_when_narrow() -> None:
    columns = visible_columns(TableView(OutcomeDiff()))  # fixed 2+6+12+7+7+21 = 55 cells, 6 gaps
    assert column_widths(columns, 120) == [2, 6, 12, 7, 7, 21, 59]
    assert column_widths(columns, 73) == [2, 6, 12, 7, 7, 21, 12]  # the reason has its 12 cells: no shrink
    # 5 cells for the reason: kind and outcome give up 7 (3 and 4), the reason gets 12
    assert column_widths(columns, 66) == [2, 6, 9, 7, 7, 17, 12]
    # shrinking stops at 8 cells, then the reason narrows, down to nothing
    assert column_widths(columns, 60) == [2, 6, 8, 7, 7, 17, 7]
    assert column_widths(columns, 40) == [2, 6, 8, 7, 7, 17, 0]


def test_a_new_spec_is_a_new_column() -> None:
    seq = Column("seq", 4, ">", lambda d, _: str(d.seq))
    columns = visible_columns(TableView(OutcomeDiff()), (*ITEM_COLUMNS[:2], seq, *ITEM_COLUMNS[2:]))
    assert [c.header for c in columns][:4] == ["", "item", "seq", "kind"]
    assert column_widths(columns, 120)[2] == 4


def test_fit_cuts_and_pads_by_alignment() -> None:
    assert fit("evicted", 4, "<") == "evic"
    assert fit("evicted", 9, "<") == "evicted  "
    assert fit("12,345", 4, ">") == ",345"
    assert fit("12", 4, ">") == "  12"
    assert fit("x", 0, "<") == ""


def test_min_budgets_cover_params_that_differ_in_the_budget_alone() -> None:
    swept = Params(token_budget=2000, prompt="helm rollback")
    budgets = MinBudgets(swept, {"o:1": 800, "o:2": None})
    assert budgets.covers(swept)
    assert budgets.covers(replace(swept, token_budget=9000))
    assert not budgets.covers(replace(swept, prompt="helm"))
    assert not budgets.covers(replace(swept, prompt_aware_eviction=True))
    assert budgets.of("o:1") == 800
    assert budgets.of("o:2") is None
    assert budgets.of("o:9") is None


def test_a_row_draws_nothing_of_a_decision_but_its_drawn_fields() -> None:
    """``DRAWN_FIELDS`` lists every field a cell or the row's style reads: the items table keeps a line whose
    decision keeps them (``ItemsTable.row_unchanged``).  Changing any other field changes no cell, row class or
    label tone; changing a drawn one changes something a row shows."""
    from dataclasses import fields

    from ctxview.model import TermMatch
    from ctxview.tui.columns import DRAWN_FIELDS
    from ctxview.tui.scoring_view import label_tone
    from ctxview.tui.view import row_class

    diff = OutcomeDiff(changed={"o:3": ("kept", "evicted"), "o:4": ("evicted", "kept")}, lost=1, gained=1)
    view = TableView(diff, labels=True, min_budgets=MinBudgets(Params(), {"o:3": "4,001–4,500", "o:4": "never"}))

    def drawn(d: Decision) -> tuple[object, ...]:
        return (cells(d, view), row_class(d), label_tone(d.label_extra))

    kept = replace(decision(label_extra="exact"), outcome="kept", protected="fresh tail", pair_with=("o:2",))
    other_values: dict[str, object] = {
        "key": "o:4", "ordinal": 4, "live_index": 1, "kind": "summary", "label": "leaf", "role": "user",
        "source_role": "user", "message_id": 9, "seq": 9, "summary_id": "s1", "tokens": 7, "serialized_tokens": 99,
        "score": 0.5, "matched_terms": (TermMatch("deploy", 2, 0.5),), "segment": "fresh-tail", "selected": True,
        "outcome": "evicted", "reason": "kept: chronological, newest-first walk fit (7 of 9 remaining)",
        "pair_with": (), "tool_call_ids": ("c1",), "output_index": 5, "protected": None, "evicted_by": "l:0",
        "covered_by": "o:1", "label_extra": "keyword-only", "text": "deploy", "synthetic_result_for": ("c1",),
        "min_budget": 100, "summary_kind": "leaf",
    }
    assert set(other_values) == {f.name for f in fields(Decision)}
    live = replace(kept, ordinal=None, live_index=0)  # (a live input: its index is its id)
    for name, value in other_values.items():
        for base in (kept, live):
            changed = replace(base, **{name: value})
            if name not in DRAWN_FIELDS:
                assert drawn(changed) == drawn(base), name
        if name in DRAWN_FIELDS:
            base = live if name == "live_index" else kept
            assert drawn(replace(base, **{name: value})) != drawn(base), name
