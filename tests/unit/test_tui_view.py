"""The inspector's pure view logic: cleaning, cells, row layout, outcome diffs, control parsing."""

from __future__ import annotations

import pytest

from ctxview.errors import InputError
from ctxview.model import Decision, Params, RunSummary, Trace
from ctxview.tui.view import (
    OutcomeDiff,
    clean_block,
    clean_inline,
    diff_outcomes,
    format_score,
    item_id,
    layout_rows,
    message_preview,
    outcome_text,
    parse_budget_text,
    parse_count_text,
    parse_whole_text,
    partner,
    row_class,
    step_budget,
)


def decision(ordinal: int | None, tokens: int, outcome: str, *, score: float | None = None, segment: str = "evictable",
             live_index: int | None = None, pair_with: tuple[str, ...] = (), protected: str | None = None) -> Decision:
    key = f"o:{ordinal}" if ordinal is not None else f"l:{live_index}"
    return Decision(
        key=key, ordinal=ordinal, live_index=live_index, kind="message", label="user", role="user",
        source_role="user", message_id=ordinal, seq=ordinal, summary_id=None, tokens=tokens,
        serialized_tokens=None, score=score, matched_terms=(), segment=segment,  # type: ignore[arg-type]
        selected=outcome in ("kept", "fresh-tail"), outcome=outcome,  # type: ignore[arg-type]
        reason="r", pair_with=pair_with, protected=protected,
    )


def trace(decisions: list[Decision], *, budget: int, tail_ordinal: int | None) -> Trace:
    summary = RunSummary(
        selection_mode="prompt-aware", fresh_tail_ordinal=tail_ordinal, token_budget=budget, effective_budget=budget,
        reserved_tokens=0, tail_tokens=0, focus_tokens=0, evictable_total_tokens=0, kept_evictable_tokens=0,
        remaining_budget=0, assembler_tokens=0, final_tokens=0,
    )
    return Trace(Params(token_budget=budget), 1, summary, decisions, [], [], [], [], [], [], {})


def test_clean_inline_shows_markup_literally_and_removes_escapes():
    raw = "[bold red]x[/] \x1b[31mred\x1b[0m\ttab\nline\x07bell\x00"
    assert clean_inline(raw) == "[bold red]x[/] red tab ⏎ line�bell�"


def test_clean_inline_removes_osc_and_bidi_overrides():
    assert clean_inline("a\x1b]0;title\x07b\u202ec") == "ab�c"


def test_clean_block_keeps_newlines_expands_tabs():
    assert clean_block("a\r\nb\tc\x1b[2J") == "a\nb   c"


def test_cells():
    assert outcome_text("tool-calls-stripped") == "tool calls stripped"
    assert format_score(None) == ""
    assert format_score(0.125) == "0.1250"
    assert format_score(0.0) == "0.0000"
    assert item_id(decision(7, 1, "kept")) == "7"
    assert item_id(decision(None, 1, "appended", live_index=2, segment="live")) == "L2"


def test_row_class_protected_pair_and_synthetic():
    assert row_class(decision(1, 1, "kept")) == "kept"
    assert row_class(decision(1, 1, "kept", pair_with=("o:2",), protected="tool partner of o:2")) == "protected"
    assert row_class(decision(1, 1, "fresh-tail", pair_with=("o:2",), protected="fresh tail")) == "fresh"
    assert row_class(decision(1, 1, "evicted-for-live")) == "evicted"
    d = decision(1, 1, "kept")
    d.synthetic_result_for = ("call_1",)
    assert row_class(d) == "synthetic"
    assert row_class(decision(None, 1, "appended", live_index=0, segment="live")) == "appended"


def test_layout_ordinal_places_the_budget_line_at_the_chronological_cut():
    ds = [
        decision(0, 50, "evicted"),
        decision(1, 30, "kept"),
        decision(2, 40, "kept"),
        decision(3, 20, "fresh-tail", segment="fresh-tail"),
        decision(None, 5, "appended", live_index=0, segment="live"),
    ]
    chronological = trace(ds, budget=100, tail_ordinal=3)
    chronological.summary.selection_mode = "chronological"
    layout = layout_rows(chronological, "ordinal")
    # the newest-first walk kept 2 and 1 and stopped at 0: the line sits right below ordinal 0
    kinds = [layout.separators[-i - 1].kind if i < 0 else i for i in layout.lines]
    assert kinds == [0, "budget", 1, 2, "fresh-tail", 3, "live", 4]
    assert layout.row_count == 5
    assert layout.line_of[3] == 5
    assert layout.separators[0].text == "budget 100 — the newest-first walk stopped here: the items above are evicted"


def test_layout_ordinal_has_no_budget_line_for_prompt_aware_selection():
    ds = [
        decision(0, 50, "kept"),
        decision(1, 30, "evicted"),
        decision(2, 40, "kept"),
        decision(3, 20, "fresh-tail", segment="fresh-tail"),
    ]
    layout = layout_rows(trace(ds, budget=100, tail_ordinal=3), "ordinal")  # prompt-aware: it cuts by score
    kinds = [layout.separators[-i - 1].kind if i < 0 else i for i in layout.lines]
    assert kinds == [0, 1, 2, "fresh-tail", 3]


def test_layout_score_is_selection_priority():
    ds = [
        decision(0, 10, "kept", score=0.5),
        decision(1, 10, "evicted", score=0.2),
        decision(2, 10, "kept", score=0.5),
        decision(3, 10, "kept", score=0.1),
        decision(4, 10, "fresh-tail", score=0.0, segment="fresh-tail"),
    ]
    ds[1].selected = False
    layout = layout_rows(trace(ds, budget=100, tail_ordinal=4), "score")
    kinds = [layout.separators[-i - 1].kind if i < 0 else i for i in layout.lines]
    # ties → newer first; the budget line before the first evictable item that was not selected
    assert kinds == ["fresh-tail", 4, "evictable", 2, 0, "budget", 1, 3]


def test_layout_tokens_has_no_separators():
    ds = [decision(0, 5, "kept"), decision(1, 50, "kept"), decision(2, 50, "evicted")]
    layout = layout_rows(trace(ds, budget=100, tail_ordinal=None), "tokens")
    assert layout.lines == [1, 2, 0]
    assert layout.separators == []


def test_diff_outcomes_counts_kept_and_lost():
    before = trace([decision(0, 1, "kept"), decision(1, 1, "evicted"), decision(2, 1, "kept")], budget=9,
                   tail_ordinal=None)
    after = trace([decision(0, 1, "evicted"), decision(1, 1, "kept"), decision(2, 1, "stubbed")], budget=9,
                  tail_ordinal=None)
    diff = diff_outcomes(before, after)
    assert diff.changed == {"o:0": ("kept", "evicted"), "o:1": ("evicted", "kept"), "o:2": ("kept", "stubbed")}
    assert (diff.gained, diff.lost, diff.other) == (1, 1, 1)
    assert diff.direction("o:0") == -1 and diff.direction("o:1") == 1 and diff.direction("o:2") == 0
    assert diff.text() == "+1 now kept · 1 newly evicted · 1 other change"
    assert diff_outcomes(None, after).changed == {}


def test_the_change_line_has_separators_and_no_zero_counts():
    diff = OutcomeDiff(changed={f"o:{i}": ("evicted", "kept") for i in range(1_200)}, gained=1_200)
    assert diff.text() == "+1,200 now kept"
    assert diff.parts() == [(1, "+1,200 now kept")]
    assert OutcomeDiff().text() == "no outcome changed"


def test_partner_follows_pair_with():
    a = decision(0, 1, "kept", pair_with=("o:1",))
    b = decision(1, 1, "kept", pair_with=("o:0",))
    t = trace([a, b], budget=9, tail_ordinal=None)
    assert partner(t, a) is b
    assert partner(t, decision(2, 1, "kept")) is None


def test_message_preview_tool_calls_and_results():
    call = {"role": "assistant", "content": [{"type": "text", "text": "ok"},
                                             {"type": "toolCall", "id": "c1", "name": "bash",
                                              "arguments": {"cmd": "ls"}}]}
    assert message_preview(call) == 'ok → bash({"cmd": "ls"})'
    assert message_preview({"role": "user", "content": "[red]hi[/]\nthere"}) == "[red]hi[/] ⏎ there"


def test_parse_controls():
    assert parse_budget_text("2,000") == 2000
    assert parse_budget_text("8k") == 8000
    assert parse_budget_text("1.5m") == 1_500_000
    for bad in ("", "abc", "-5", "0", "1.5"):
        with pytest.raises(InputError):
            parse_budget_text(bad)
    assert parse_count_text("8", "tail") == 8
    assert parse_count_text("2.5", "tail") == 2.5
    with pytest.raises(InputError, match="tail must be a number ≥ 0"):
        parse_count_text("-1", "tail")
    assert parse_whole_text("300", "reserved") == 300
    with pytest.raises(InputError):
        parse_whole_text("1.5", "reserved")


def test_step_budget():
    assert step_budget(2000, 1) == 2200
    assert step_budget(2000, -1) == 1800
    assert step_budget(5, -1) == 4
    assert step_budget(1, -1) == 1
    assert step_budget(2000, 1, big=True) == 4000
    assert step_budget(2000, -1, big=True) == 1000


def test_view_logic_does_not_import_textual():
    import subprocess
    import sys

    code = (
        "import sys, ctxview.tui, ctxview.tui.view, ctxview.tui.state, ctxview.tui.columns, ctxview.tui.scoring_view; "
        "print('textual' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_layout_ordinal_with_live_inputs_between_items_and_out_of_order():
    ds = [
        decision(2, 10, "kept"),
        decision(None, 5, "appended", live_index=0, segment="live"),
        decision(0, 10, "evicted"),
        decision(3, 10, "fresh-tail", segment="fresh-tail"),
        decision(1, 10, "kept"),
    ]
    layout = layout_rows(trace(ds, budget=100, tail_ordinal=3), "ordinal")
    kinds = [layout.separators[-i - 1].kind if i < 0 else i for i in layout.lines]
    assert kinds == [2, 4, 0, "fresh-tail", 3, "live", 1]
    assert layout.row_count == 5
    assert [layout.line_of_index(i) for i in range(5)] == [layout.line_of[i] for i in range(5)] == [2, 6, 0, 4, 1]
    assert layout.index_of_key == {"o:2": 0, "l:0": 1, "o:0": 2, "o:3": 3, "o:1": 4}


def test_layout_ordinal_a_missing_ordinal_sorts_first_and_the_tail_line_skips_it():
    ds = [decision(1, 10, "kept"), decision(2, 10, "fresh-tail", segment="fresh-tail"), decision(0, 10, "kept")]
    ds[2].ordinal = None
    layout = layout_rows(trace(ds, budget=100, tail_ordinal=0), "ordinal")
    kinds = [layout.separators[-i - 1].kind if i < 0 else i for i in layout.lines]
    assert kinds == [2, "fresh-tail", 0, 1]  # ordinal ≥ 0, but the item without one is not in the tail


def test_layout_of_the_next_trace_shares_the_key_index_and_line_index_of_the_same_items():
    ds = [decision(0, 50, "evicted"), decision(1, 30, "kept"), decision(2, 20, "fresh-tail", segment="fresh-tail")]
    first = layout_rows(trace(ds, budget=100, tail_ordinal=2), "ordinal")
    assert first.line_of == {0: 0, 1: 1, 2: 3}
    again = [decision(0, 50, "kept"), decision(1, 30, "evicted"), decision(2, 20, "fresh-tail", segment="fresh-tail")]
    edited = trace(again, budget=100, tail_ordinal=2)
    edited.summary.tail_tokens = 20
    second = layout_rows(edited, "ordinal", first)
    assert second.index_of_key is first.index_of_key and second.line_of is first.line_of
    assert second.lines is first.lines and [s.text for s in second.separators] == [
        "fresh tail — ordinal ≥ 2, always kept (20 tokens)"
    ]
    moved = layout_rows(trace(again, budget=100, tail_ordinal=1), "ordinal", first)  # the tail line moved up
    assert moved.index_of_key is first.index_of_key and moved.line_of == {0: 0, 1: 2, 2: 3}
    other = [decision(0, 50, "kept"), decision(5, 30, "evicted")]
    third = layout_rows(trace(other, budget=100, tail_ordinal=None), "ordinal", first)
    assert third.index_of_key == {"o:0": 0, "o:5": 1} and third.line_of == {0: 0, 1: 1}
