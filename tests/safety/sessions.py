"""Hypothesis strategies for whole LCM sessions and assembly parameters.

A session is generated as a story of turns — user and system messages,
assistant text, assistant turns with one to three tool calls whose results
arrive at once, late, never, or twice, thinking-only and empty assistants,
leaf and condensed summaries, context items that point at missing rows — and
stored the way ingest stores it (``messages`` plus ``message_parts`` with the
metadata JSON, through ``tests.lcmdb``'s part builders), so the assembler
reconstructs real messages from real part rows.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

from ctxview.model import (
    ContextItemRow,
    ConversationInfo,
    MessageRow,
    Params,
    PartRow,
    Session,
    SummaryRow,
)
from tests.lcmdb import block_part, text_part

WORDS = (
    "helm rollback deploy migration index backfill invoice flaky test cache auth webhook "
    "timeout retry batch lock schema kubernetes pod alembic postgres"
).split()
CALL_TYPES = ("toolCall", "toolCall", "toolCall", "tool_use", "functionCall")

BEGIN = "<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>"
END = "<<<END_OPENCLAW_INTERNAL_CONTEXT>>>"
VOLATILE = (
    f"[Inter-session message] sourceTool=subagent_announce\n{BEGIN}\n[Internal task completion event]\n"
    f"Child result: backfill dry run finished\n{END}",
    "please continue\n[Retry after the previous model attempt failed or timed out]",
)

sentences = st.lists(st.sampled_from(WORDS), min_size=1, max_size=30).map(" ".join)


@dataclass
class Story:
    """A session being written: rows plus the context in order."""

    messages: dict[int, MessageRow] = field(default_factory=dict)
    summaries: dict[str, SummaryRow] = field(default_factory=dict)
    items: list[ContextItemRow] = field(default_factory=list)
    next_message: int = 1
    next_seq: int = 0
    next_ordinal: int = 0
    next_call: int = 0
    dangling: int = 0

    def _ordinal(self, gap: int) -> int:
        ordinal = self.next_ordinal + gap
        self.next_ordinal = ordinal + 1
        return ordinal

    def message(self, role: str, content: str, parts: list[dict[str, Any]], *, gap: int = 0) -> int:
        mid = self.next_message
        self.next_message += 1
        rows = tuple(
            PartRow(
                part_id=f"p{mid}-{n}",
                part_type=part.get("part_type", "text"),
                ordinal=n,
                text_content=part.get("text_content"),
                tool_call_id=part.get("tool_call_id"),
                tool_name=part.get("tool_name"),
                tool_input=part.get("tool_input"),
                tool_output=part.get("tool_output"),
                metadata=part.get("metadata"),
            )
            for n, part in enumerate(parts)
        )
        self.messages[mid] = MessageRow(
            message_id=mid,
            seq=self.next_seq,
            role=role,
            content=content,
            token_count=0,
            created_at="2026-01-01 00:00:00",
            parts=rows,
        )
        self.next_seq += 1
        self.items.append(ContextItemRow(self._ordinal(gap), "message", mid, None))
        return mid

    def call_id(self) -> str:
        self.next_call += 1
        return f"call_{self.next_call}"

    def tool_result(self, call_id: str, text: str, *, is_error: bool = False) -> int:
        meta = {"toolCallId": call_id, "toolName": "bash", "isError": is_error}
        part = block_part({"type": "text", "text": text}, "toolResult", **meta)
        part["tool_call_id"] = call_id
        part["tool_name"] = "bash"
        return self.message("tool", text, [part])

    def summary(self, content: str, *, condensed: bool) -> None:
        sid = f"sum_{len(self.summaries) + 1:04d}"
        self.summaries[sid] = SummaryRow(
            summary_id=sid,
            kind="condensed" if condensed else "leaf",
            depth=1 if condensed else 0,
            content=content,
            token_count=0,
            earliest_at="2026-01-01T00:00:00.000Z",
            latest_at="2026-01-01T01:00:00.000Z",
            descendant_count=2 if condensed else 0,
        )
        self.items.append(ContextItemRow(self._ordinal(0), "summary", None, sid))

    def missing(self, kind: str) -> None:
        self.dangling += 1
        if kind == "message":
            self.items.append(ContextItemRow(self._ordinal(0), "message", 10_000 + self.dangling, None))
        else:
            self.items.append(ContextItemRow(self._ordinal(0), "summary", None, f"missing_{self.dangling}"))

    def session(self) -> Session:
        info = ConversationInfo(
            conversation_id=1,
            session_id="generated",
            session_key="agent:main:main",
            title="generated",
            active=True,
            archived=False,
            created_at="2026-01-01 00:00:00",
            message_count=len(self.messages),
            context_item_count=len(self.items),
            summary_count=len(self.summaries),
            token_total=0,
        )
        return Session(
            conversation=info,
            items=list(self.items),
            messages=dict(self.messages),
            summaries=dict(self.summaries),
            source="generated",
        )


TURNS = (
    "user",
    "user",
    "assistant",
    "assistant",
    "calls",
    "calls",
    "calls",
    "system",
    "summary",
    "thinking",
    "empty",
    "orphan-result",
    "missing",
)


@st.composite
def stories(draw: st.DrawFn, max_turns: int = 18) -> Story:
    """A random but well-formed-as-ingest-writes-it session (plus deliberate damage)."""
    story = Story()
    kinds = draw(st.lists(st.sampled_from(TURNS), min_size=1, max_size=max_turns))
    pending: list[tuple[str, str]] = []  # results that arrive late, after the next turn
    for kind in kinds:
        text = draw(sentences)
        if kind == "user":
            story.message("user", text, [text_part(text, "user")], gap=draw(st.integers(0, 2)))
        elif kind == "system":
            story.message("system", text, [text_part(text, "system")])
        elif kind == "assistant":
            story.message("assistant", text, [text_part(text, "assistant")])
        elif kind == "thinking":
            block = {"type": "thinking", "thinking": text}
            story.message("assistant", "", [block_part(block, "assistant")])
        elif kind == "empty":
            story.message("assistant", "", [text_part("   ", "assistant")])
        elif kind == "summary":
            story.summary(text, condensed=draw(st.booleans()))
        elif kind == "missing":
            story.missing(draw(st.sampled_from(["message", "summary"])))
        elif kind == "orphan-result":
            story.tool_result(f"ghost_{story.next_call}", text)
        else:
            count = draw(st.integers(1, 3))
            call_type = draw(st.sampled_from(CALL_TYPES))
            blocks: list[dict[str, Any]] = [{"type": "text", "text": text}] if draw(st.booleans()) else []
            ids = [story.call_id() for _ in range(count)]
            for cid in ids:
                arguments = {"command": draw(sentences)}
                if call_type == "toolCall":
                    blocks.append({"type": "toolCall", "id": cid, "name": "bash", "arguments": arguments})
                elif call_type == "tool_use":
                    blocks.append({"type": "tool_use", "id": cid, "name": "bash", "input": arguments})
                else:
                    blocks.append({"type": "functionCall", "id": cid, "name": "bash", "arguments": arguments})
            story.message("assistant", text, [block_part(b, "assistant") for b in blocks])
            for cid in ids:
                fate = draw(st.sampled_from(["now", "now", "now", "late", "never", "twice"]))
                result = draw(sentences)
                if fate == "now":
                    story.tool_result(cid, result)
                elif fate == "twice":
                    story.tool_result(cid, result)
                    story.tool_result(cid, result + " again")
                elif fate == "late":
                    pending.append((cid, result))
            continue
        for cid, result in pending:
            story.tool_result(cid, result)
        pending.clear()
    for cid, result in pending:
        story.tool_result(cid, result)
    return story


def live_messages(draw: st.DrawFn) -> tuple[dict[str, Any], ...] | None:
    """A host live window: none, or a few user turns and volatile inputs (key order as hosts send)."""
    if not draw(st.booleans()):
        return None
    chosen = draw(
        st.lists(st.one_of(st.sampled_from(VOLATILE), sentences), min_size=0, max_size=4)
    )
    return tuple({"role": "user", "content": text, "timestamp": 1_773_314_070_000 + n} for n, text in enumerate(chosen))


@st.composite
def parameters(draw: st.DrawFn) -> Params:
    """Budgets from starved to generous, fractional and zero tails, token caps, both selection modes."""
    engine = draw(st.booleans())
    return Params(
        token_budget=draw(st.one_of(st.integers(1, 60), st.integers(60, 3_000), st.just(10**9))),
        prompt=draw(st.one_of(st.none(), sentences, st.just("?? !!"))),
        fresh_tail_count=draw(st.one_of(st.integers(0, 10), st.sampled_from([0.5, 2.5, 64]))),
        fresh_tail_max_tokens=draw(st.one_of(st.none(), st.integers(0, 400))),
        prompt_aware_eviction=draw(st.booleans()),
        live_messages=live_messages(draw) if engine else None,
        engine=engine,
    )
