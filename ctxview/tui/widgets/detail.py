"""The detail pane: everything the trace says about the selected item.

Why it is where it is (reason, protection, eviction cause), the prompt terms
behind its score, its tool-pair partner, summary provenance from the session
rows, and its full text with the matched terms highlighted.  Text is built
as ``rich.text.Text`` pieces, never markup, so stored content shows literally.
Bound to the inspector's ``selection`` and ``min_budgets``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import ClassVar

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import VerticalScroll
from textual.reactive import var
from textual.widgets import Static

from ctxview.model import Decision, DeferredParts, Session, Trace, count_text, describe_key
from ctxview.tui.actions import app_key, bindings
from ctxview.tui.scoring_view import highlights, label_marker, run_label, term_rows, term_total, total_matches
from ctxview.tui.state import MinBudgets, Selection
from ctxview.tui.view import clean_block, clean_inline, item_id, message_json, outcome_text, partner, row_class

TEXT_LIMIT = 20_000
_WORD = re.compile(r"[a-z0-9]+")

_CLASS_STYLE = {
    "kept": "green",
    "evicted": "red",
    "fresh": "cyan",
    "protected": "yellow bold",
    "appended": "magenta bold",
    "stripped": "yellow",
    "stubbed": "#4fb8c9 italic",
    "synthetic": "yellow italic",
    "dropped": "red dim",
    "live": "bright_black",
    "focus": "blue",
}


def _field(label: str, value: Text | str, style: str = "") -> Text:
    line = Text()
    line.append(f"{label:<10} ", style="bold")
    if isinstance(value, Text):
        line.append_text(value)
    else:
        line.append(clean_inline(value, 2000), style=style)
    return line


def highlight_terms(text: str, terms: set[str] | frozenset[str], substrings: Sequence[str] = ()) -> Text:
    """Literal text with the matched terms highlighted.

    ``terms`` are whole tokens as BM25-lite finds them (``[a-z0-9]+`` runs);
    ``substrings`` are found anywhere, ignoring case (rarity terms such as
    ``read_file``, and the CJK bigrams of the unicode tokenizer).
    """
    result = Text(text)
    if terms:
        for match in _WORD.finditer(text.lower()):
            if match.group() in terms:
                result.stylize("bold reverse", match.start(), match.end())
    for term in substrings:
        for match in re.finditer(re.escape(term), text, re.IGNORECASE):
            result.stylize("bold reverse", match.start(), match.end())
    return result


def _number(value: float) -> str:
    """A weight without trailing zeros: 1, 0.25, 0.0909."""
    text = f"{value:.4f}".rstrip("0").rstrip(".")
    return text or "0"


def score_rows(trace: Trace, decision: Decision) -> list[RenderableType]:
    """The score, then one row per term (count, weight, contribution, what it is) and their sum."""
    parts: list[RenderableType] = []
    if decision.score is None:
        parts.append(_field("score", "not scored", "dim"))
        return parts
    line = Text(f"{decision.score:.6f}")
    mode = run_label(trace)
    if mode:
        line.append(f"  {mode}", style="dim")
    if decision.label_extra:
        line.append(f" · {clean_inline(label_marker(decision.label_extra), 20)}", style="italic")
    parts.append(_field("score", line))
    rows = term_rows(decision)
    if rows:
        table = Table(box=None, padding=(0, 1), show_edge=False, pad_edge=False)
        table.add_column("  term", style="bold", no_wrap=True, max_width=28)
        table.add_column("count", justify="right")
        table.add_column("weight", justify="right")
        table.add_column("contribution", justify="right", min_width=12)
        table.add_column("", style="dim", ratio=1)
        for row in rows:
            table.add_row(
                Text("  " + clean_inline(row.term, 40)),
                "" if row.count is None else str(row.count),
                _number(row.weight),
                f"{row.contribution:.6f}",
                Text(clean_inline(row.note, 60)),
            )
        total = term_total(decision)
        verdict = (
            Text("= score", style="dim")
            if total_matches(decision)
            else Text(f"≠ score {decision.score:.6f}", style="bold red")
        )
        table.add_row(Text("  Σ", style="bold"), "", "", Text(f"{total:.6f}", style="bold"), verdict)
        parts.append(table)
    elif trace.summary.searchable_prompt:
        parts.append(Text("          no prompt term occurs in this item", style="dim"))
    return parts


def describe(
    trace: Trace,
    decision: Decision,
    session: Session | None,
    min_budget: str | None = None,
    partner_key: str = "p",
) -> list[RenderableType]:
    """The detail pane's content for one decision.

    ``min_budget``: from a budget sweep, when one covers the trace; ``partner_key``: the key that
    jumps to the tool-pair partner.
    """
    parts: list[RenderableType] = []
    klass = row_class(decision)
    head = Text()
    head.append(f"{item_id(decision)}  ", style="bold")
    head.append(clean_inline(decision.label, 40), style="bold")
    head.append("  ")
    head.append(f" {outcome_text(decision.outcome)} ", style=f"reverse {_CLASS_STYLE.get(klass, '')}")
    if decision.label_extra:
        head.append(f"  {clean_inline(decision.label_extra, 40)}", style="italic")
    parts.append(head)
    parts.append(_field("why", decision.reason))
    segment = decision.segment.replace("-", " ")
    state = "selected by the budget pass" if decision.selected else "not selected by the budget pass"
    if decision.live_index is not None:
        state = f"live input #{decision.live_index}"
    parts.append(_field("segment", f"{segment} · {state}"))
    if decision.protected:
        parts.append(_field("protected", decision.protected, "yellow"))
    if decision.evicted_by:
        parts.append(_field("evicted by", f"{describe_key(decision.evicted_by)} (made room for it)", "red"))
    if decision.covered_by:
        parts.append(_field("covered by", f"{describe_key(decision.covered_by)} (already in the context)"))
    tokens = f"{decision.tokens:,}"
    if decision.serialized_tokens is not None:
        tokens += f"  (serialized {decision.serialized_tokens:,})"
    if min_budget is not None:
        tokens += f"  · sent from budget {min_budget}"
    parts.append(_field("tokens", tokens))
    if decision.output_index is not None:
        parts.append(_field("position", f"message {decision.output_index:,} of {len(trace.messages):,} in the context"))

    # score and the terms behind it
    parts.extend(score_rows(trace, decision))

    # tool pair
    if decision.pair_with:
        mate = partner(trace, decision)
        line = Text()
        if mate is not None:
            line.append(f"{item_id(mate)} {clean_inline(mate.label, 30)} ({outcome_text(mate.outcome)})")
            line.append(f"  press {partner_key} to jump", style="dim")
        else:
            line.append(", ".join(decision.pair_with))
        parts.append(_field("tool pair", line))
    if decision.tool_call_ids:
        parts.append(_field("call ids", ", ".join(decision.tool_call_ids)))
    if decision.synthetic_result_for:
        parts.append(
            _field("synthetic", "result added after it for " + ", ".join(decision.synthetic_result_for), "yellow")
        )

    # provenance from the session rows
    if session is not None:
        parts.extend(_provenance(session, decision))

    text = decision.text
    if text:
        marks = highlights(decision)
        shown = text if len(text) <= TEXT_LIMIT else text[:TEXT_LIMIT]
        parts.append(Text("\n── text the scorer saw " + "─" * 20, style="dim"))
        body = highlight_terms(clean_block(shown), marks.tokens, marks.substrings)
        if len(text) > TEXT_LIMIT:
            body.append(f"\n… {len(text) - TEXT_LIMIT:,} more characters", style="dim")
        parts.append(body)
    if decision.output_index is not None and decision.output_index < len(trace.messages):
        parts.append(Text("\n── as sent to the model " + "─" * 20, style="dim"))
        parts.append(Text(clean_block(message_json(trace.messages[decision.output_index]))))
    return parts


def cache_mark() -> Text:
    """The line on the first message the last edit changed: a provider's prompt cache ends before it."""
    return _field("cache", "▶ the first message the last edit changed: the prompt cache is reused up to here",
                  "bold magenta")


def _provenance(session: Session, decision: Decision) -> list[RenderableType]:
    parts: list[RenderableType] = []
    if decision.message_id is not None:
        row = session.messages.get(decision.message_id)
        where = f"message {decision.message_id}"
        if row is not None:
            where += f" · seq {row.seq} · stored role {row.role}"
            if row.created_at:
                where += f" · {row.created_at}"
            if not isinstance(row.parts, DeferredParts) or row.parts.loaded:  # never read just for a count
                where += f" · {len(row.parts)} part{'s' if len(row.parts) != 1 else ''}"
        parts.append(_field("source", where))
    if decision.summary_id is not None:
        summary = session.summaries.get(decision.summary_id)
        parts.append(_field("summary", decision.summary_id))
        if summary is not None:
            span = " → ".join(x for x in (summary.earliest_at, summary.latest_at) if x)
            parts.append(_field("", f"{summary.kind} depth {summary.depth}" + (f" · {span}" if span else "")))
            if summary.source_message_ids:
                seqs = [session.messages[m].seq for m in summary.source_message_ids if m in session.messages]
                text = f"{len(summary.source_message_ids)} message(s): " + _short_list(summary.source_message_ids)
                if seqs:
                    text += f" (seq {min(seqs)}–{max(seqs)})"
                parts.append(_field("sources", text))
            if summary.parent_ids:
                condensed = count_text(len(summary.parent_ids), "summary", "summaries")
                condensed += ": " + _short_list(summary.parent_ids)
                parts.append(_field("condenses", condensed))
    return parts


def _short_list(values: tuple[object, ...], limit: int = 12) -> str:
    shown = ", ".join(str(v) for v in values[:limit])
    if len(values) > limit:
        shown += f", … (+{len(values) - limit})"
    return shown


class DetailPane(VerticalScroll):
    """Scrollable detail of the selected item."""

    BINDINGS: ClassVar[list[BindingType]] = bindings("detail")  # j / k scroll, as in the table

    DEFAULT_CSS = """
    DetailPane {
        background: $surface;
        padding: 0 1;
        & > Static { width: 1fr; }
    }
    """

    selection: var[Selection | None] = var(None, init=False)
    min_budgets: var[MinBudgets | None] = var(None, init=False)

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._body = Static(Text("No item selected.", style="dim"), id="detail-body")
        self.key: str | None = None

    def compose(self) -> ComposeResult:
        yield self._body

    def on_mount(self) -> None:
        self.border_title = "detail"

    def watch_selection(self) -> None:
        self._describe()

    def watch_min_budgets(self) -> None:
        if self.key is not None:
            self._describe()

    def _describe(self) -> None:
        selection = self.selection
        trace = selection.trace if selection is not None else None
        decision = selection.decision if selection is not None else None
        if trace is None or decision is None:
            self.key = None
            self._set_body(Text("No item selected.", style="dim"))
            return
        if decision.key != self.key:
            self.scroll_home(animate=False)
        self.key = decision.key
        budgets = self.min_budgets
        min_budget = budgets.of(decision.key) if budgets is not None and budgets.covers(trace.params) else None
        partner_key = app_key(self.app, "inspector.jump_partner")
        parts = describe(trace, decision, selection.session, min_budget, partner_key)
        if selection.cache_key is not None and selection.cache_key == decision.key:
            parts.insert(1, cache_mark())
        self._set_body(Group(*parts))

    def _set_body(self, content: Group | Text) -> None:
        """Swap the text; re-lay the screen out only when its height changed.

        Every keystroke re-describes the selected item, and a layout pass repaints
        the whole screen: most edits change a score or a number, not the height.
        """
        body = self._body
        body.update(content, layout=False)
        size = body.content_size
        if size.width <= 0 or body.get_content_height(self.size, self.app.size, size.width) != size.height:
            body.refresh(layout=True)
