"""The decision constructors fill every field from what they are given, each under its own name."""

from __future__ import annotations

from ctxview.assembly.decisions import (
    RECALL_KEY,
    covered_decision,
    focus_decision,
    item_decision,
    live_decision,
    recall_decision,
    unresolved_decision,
)
from ctxview.assembly.resolve import ResolvedItem
from ctxview.model import ContextItemRow, Decision, FocusBriefRow, MessageRow, SummaryRow, TermMatch

MATCH = (TermMatch("helm", 2, 0.25),)


def message_item() -> ResolvedItem:
    return ResolvedItem(
        ordinal=7,
        stored_message={"role": "toolResult", "toolCallId": "call_9", "content": "helm ok"},
        tokens=11,
        is_message=True,
        text="helm ok",
        message_id=70,
        seq=71,
        source_role="tool",
    )


def summary_item() -> ResolvedItem:
    row = SummaryRow("sum_a", "condensed", 2, "body", latest_at="2026-01-02T00:00:00.000Z")
    return ResolvedItem(
        ordinal=3, stored_message={"role": "user", "content": "<summary/>"}, tokens=40, is_message=False, text="body",
        summary=row, summary_max_source_seq=12,
    )  # fmt: skip


def test_item_decision_puts_every_value_under_its_own_field() -> None:
    # item_decision passes its fields by position (speed): a field out of place fails here
    decision = item_decision(
        message_item(),
        label="toolResult",
        segment="evictable",
        selected=True,
        outcome="kept",
        reason="kept: because",
        score=0.25,
        matched_terms=MATCH,
        label_extra="exact",
        pair_with=("o:6",),
        tool_call_ids=("call_9",),
        output_index=4,
        synthetic_result_for=("call_x",),
    )
    assert decision == Decision(
        key="o:7",
        ordinal=7,
        live_index=None,
        kind="message",
        label="toolResult",
        role="toolResult",
        source_role="tool",
        message_id=70,
        seq=71,
        summary_id=None,
        tokens=11,
        serialized_tokens=None,
        score=0.25,
        matched_terms=MATCH,
        segment="evictable",
        selected=True,
        outcome="kept",
        reason="kept: because",
        pair_with=("o:6",),
        tool_call_ids=("call_9",),
        output_index=4,
        protected=None,
        evicted_by=None,
        covered_by=None,
        label_extra="exact",
        text="helm ok",
        synthetic_result_for=("call_x",),
        min_budget=None,
        summary_kind=None,
    )


def test_item_decision_of_a_summary_with_the_defaults() -> None:
    decision = item_decision(
        summary_item(), label="condensed d2", segment="fresh-tail", selected=True, outcome="fresh-tail", reason="r"
    )
    assert decision == Decision(
        key="o:3",
        ordinal=3,
        live_index=None,
        kind="summary",
        label="condensed d2",
        role="user",
        source_role=None,
        message_id=None,
        seq=None,
        summary_id="sum_a",
        summary_kind="condensed",
        tokens=40,
        serialized_tokens=None,
        score=None,
        matched_terms=(),
        segment="fresh-tail",
        selected=True,
        outcome="fresh-tail",
        reason="r",
        text="body",
    )


def test_focus_covered_and_unresolved_decisions() -> None:
    brief = FocusBriefRow("fb_1", "prompt", "brief text", "active")
    focus = ResolvedItem(
        ordinal=3, stored_message={"role": "user", "content": "<focus_brief/>"}, tokens=9, is_message=False,
        text="brief text", is_focus_brief=True, brief=brief, covered_ordinals=(3,),
    )  # fmt: skip
    assert focus_decision(focus, outcome="focus", reason="why", output_index=0) == Decision(
        key="f:3", ordinal=3, live_index=None, kind="focus", label="focus", role="user", source_role=None,
        message_id=None, seq=None, summary_id=None, tokens=9, serialized_tokens=None, score=None, matched_terms=(),
        segment="focus", selected=False, outcome="focus", reason="why", output_index=0, text="brief text",
    )  # fmt: skip
    assert covered_decision(summary_item(), reason="replaced") == Decision(
        key="o:3", ordinal=3, live_index=None, kind="summary", label="condensed d2", role="user", source_role=None,
        message_id=None, seq=None, summary_id="sum_a", summary_kind="condensed", tokens=40, serialized_tokens=None,
        score=None, matched_terms=(), segment="focus", selected=False, outcome="replaced-by-focus",
        reason="replaced", text="body",
    )  # fmt: skip
    row = ContextItemRow(ordinal=5, item_type="message", message_id=50, summary_id=None)
    stored = MessageRow(message_id=50, seq=51, role="assistant", content="")
    assert unresolved_decision(row, stored, segment="evictable", reason="empty") == Decision(
        key="o:5", ordinal=5, live_index=None, kind="message", label="assistant", role=None,
        source_role="assistant", message_id=50, seq=51, summary_id=None, tokens=0, serialized_tokens=None,
        score=None, matched_terms=(), segment="evictable", selected=False, outcome="unresolved", reason="empty",
    )  # fmt: skip
    missing = ContextItemRow(ordinal=6, item_type="summary", message_id=None, summary_id="gone")
    decision = unresolved_decision(missing, None, segment="fresh-tail", reason="dangling")
    assert (decision.kind, decision.label, decision.source_role, decision.seq) == ("summary", "missing", None, None)
    assert decision.summary_id == "gone"


def test_live_and_recall_decisions() -> None:
    normalized = {"role": "user", "content": "event"}
    stored = {"role": "user", "content": [{"type": "text", "text": "event"}]}
    assert live_decision(
        2, normalized, stored=stored, outcome="covered", reason="same", output_index=None, tokens=3,
        serialized_tokens=5, covered_by="o:9",
    ) == Decision(
        key="l:2", ordinal=None, live_index=2, kind="live", label="live", role="user", source_role="user",
        message_id=None, seq=None, summary_id=None, tokens=3, serialized_tokens=5, score=None, matched_terms=(),
        segment="live", selected=False, outcome="covered", reason="same", output_index=None, covered_by="o:9",
    )  # fmt: skip
    odd = live_decision(0, "not a message", stored="not a message", outcome="live-ignored", reason="r", output_index=1)
    assert (odd.role, odd.tokens, odd.serialized_tokens, odd.output_index) == (None, 0, None, 1)
    assert recall_decision("cue text", 12, outcome="recall-cue", reason="put first", output_index=0) == Decision(
        key=RECALL_KEY, ordinal=None, live_index=None, kind="recall", label="recall cue", role="user",
        source_role=None, message_id=None, seq=None, summary_id=None, tokens=12, serialized_tokens=None, score=None,
        matched_terms=(), segment="recall", selected=False, outcome="recall-cue", reason="put first",
        output_index=0, text="cue text",
    )  # fmt: skip
    assert RECALL_KEY == "r:cue"
