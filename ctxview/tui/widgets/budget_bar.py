"""The budget bar: where the token budget went, as a stacked bar with numbers.

What is sent, split by where it came from (fresh tail and focus, kept evictable
items, appended live inputs, the recall cue: ``view.sent_parts``, which add up to
the tokens sent), then the reserved host costs and what is left.  Items the
engine evicted to make room for live inputs are named after the bar: they are
not sent.  Bound to the inspector's ``assembly``: each run repaints it.
"""

from __future__ import annotations

from typing import ClassVar

from rich.style import Style
from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from ctxview.model import Trace
from ctxview.tui.scoring_view import confidence_note, run_label
from ctxview.tui.state import Assembly
from ctxview.tui.view import sent_parts

SEGMENTS: tuple[tuple[str, str], ...] = (
    ("tail", "fresh tail"),
    ("kept", "kept"),
    ("live", "live"),
    ("recall", "recall cue"),
    ("reserved", "reserved"),
    ("free", "free"),
)


def budget_parts(trace: Trace, sent: dict[str, int] | None = None) -> list[tuple[str, int]]:
    """Token counts per bar segment, in bar order: what is sent (``view.sent_parts``, which sum to the
    trace's final tokens), the reserved host costs, and what the budget has left."""
    s = trace.summary
    used = dict(sent if sent is not None else sent_parts(trace))
    used["reserved"] = s.reserved_tokens
    free = max(0, s.token_budget - sum(used.values()))
    return [*used.items(), ("free", free)]


class BudgetBar(Widget):
    """Two lines: the stacked bar, then the legend with numbers and notes."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "budget-bar--tail",
        "budget-bar--kept",
        "budget-bar--live",
        "budget-bar--recall",
        "budget-bar--reserved",
        "budget-bar--free",
        "budget-bar--over",
        "budget-bar--note",
        "budget-bar--label",
    }

    DEFAULT_CSS = """
    BudgetBar {
        height: 2;
        padding: 0 1;
        & > .budget-bar--tail { color: $accent; }
        & > .budget-bar--kept { color: $success; }
        & > .budget-bar--live { color: $text-secondary; }
        & > .budget-bar--recall { color: $secondary; }
        & > .budget-bar--reserved { color: $warning; }
        & > .budget-bar--free { color: $panel-lighten-2; }
        & > .budget-bar--over { color: $text-error; text-style: bold; }
        & > .budget-bar--note { color: $text-warning; text-style: italic; }
        & > .budget-bar--label { color: $text-muted; }
    }
    """

    assembly: reactive[Assembly | None] = reactive(None, init=False, layout=False)
    waiting: reactive[str] = reactive("", init=False, layout=False)  # the budget and session, before the first run

    @property
    def trace(self) -> Trace | None:
        return self.assembly.trace if self.assembly is not None else None

    def _style(self, name: str) -> Style:
        return self.get_component_rich_style(f"budget-bar--{name}", partial=True)

    def render(self) -> Text:
        width = max(10, self.content_size.width)
        trace = self.trace
        if trace is None:
            if not self.waiting:
                return Text("budget: waiting for the first assembly…", style=self._style("label"))
            legend = Text(self.waiting, style=self._style("label"))
            legend.truncate(width, overflow="ellipsis")
            return Text("\n").join([Text("░" * width, style=self._style("free")), legend])
        s = trace.summary
        parts = budget_parts(trace, self.assembly.sent if self.assembly is not None else None)
        total = max(s.token_budget, sum(n for _, n in parts), 1)
        bar = Text()
        cells_left = width
        for index, (name, tokens) in enumerate(parts):
            cells = round(tokens * width / total) if index < len(parts) - 1 else cells_left
            if tokens > 0 and cells == 0 and cells_left > 0:
                cells = 1
            cells = max(0, min(cells, cells_left))
            cells_left -= cells
            bar.append(("░" if name == "free" else "█") * cells, style=self._style(name))
        legend = Text()
        sent = sum(n for name, n in parts if name not in ("reserved", "free"))
        unit = " (serialized)" if trace.params.engine and trace.messages else ""
        legend.append(f"sent {sent:,} tok{unit} = ", style="bold")
        shown = dict(parts)
        first = True
        for name, label in SEGMENTS:
            if name in ("reserved", "free"):
                continue
            tokens = shown[name]
            if name in ("live", "recall") and tokens == 0:
                continue
            if not first:
                legend.append("+ ")
            first = False
            legend.append("█ ", style=self._style(name))
            legend.append(f"{label} {tokens:,} ")
        if s.evicted_for_live_tokens:
            legend.append(f"· evicted for live {s.evicted_for_live_tokens:,} (not sent) ", style=self._style("over"))
        if shown["reserved"]:
            legend.append("· █ ", style=self._style("reserved"))
            legend.append(f"reserved {shown['reserved']:,} ")
        legend.append("· ░ ", style=self._style("free"))
        legend.append(f"free {shown['free']:,}  ")
        legend.append(f"│ budget {s.token_budget:,}", style="bold")
        if s.reserved_tokens:
            legend.append(f" (effective {s.effective_budget:,})")
        mode = run_label(trace)  # a named scorer or tokenizer: say so before the text gets cut
        if mode:
            legend.append(f" · scorer {mode}", style="bold")
        legend.append(f" · {s.selection_mode}", style=self._style("label"))
        if s.over_budget:
            legend.append("  OVER BUDGET", style=self._style("over"))
        if s.clamped:
            legend.append("  clamped", style=self._style("over"))
        note = confidence_note(trace)  # all scores zero; for rarity also keyword-only kept items
        if note:
            legend.append(f"  {note}", style=self._style("note"))
        legend.truncate(width, overflow="ellipsis")
        return Text("\n").join([bar, legend])
