"""The budget-sweep chart: tokens kept against the budget, drawn with Rich block characters.

The bars and the budget diagonal come from ``ctxview.sweep.chart_rows`` (the
same drawing the headless ``ctxview sweep`` prints), sized to the widget.
"""

from __future__ import annotations

from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from ctxview.sweep import SweepResult, chart_rows, y_range


class SweepPlot(Widget):
    """Tokens kept (bars) and the budget itself (dots) from the fresh-tail size to the total."""

    DEFAULT_CSS = """
    SweepPlot {
        height: 1fr;
        min-height: 8;
        & > .sweep-plot--bars { color: $accent; }
        & > .sweep-plot--budget { color: $text-muted; }
        & > .sweep-plot--axis { color: $text-muted; }
    }
    """
    COMPONENT_CLASSES = {"sweep-plot--bars", "sweep-plot--budget", "sweep-plot--axis"}  # noqa: RUF012

    result: reactive[SweepResult | None] = reactive(None, init=False, layout=False)  # None: still sweeping

    def __init__(
        self,
        marker: int | None = None,
        *,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.marker = marker  # the budget the sweep started from, drawn as a line

    def render(self) -> Text:
        result = self.result
        if result is None:
            return Text("sweeping…", style=self.get_component_rich_style("sweep-plot--axis", partial=True))
        top, floor = y_range(result)
        label_width = len(f"{top:,}")
        width = max(8, self.content_size.width - label_width - 2)
        height = max(3, self.content_size.height - 3)
        rows = chart_rows(result, width, height)
        bars = self.get_component_rich_style("sweep-plot--bars", partial=True)
        budget = self.get_component_rich_style("sweep-plot--budget", partial=True)
        axis = self.get_component_rich_style("sweep-plot--axis", partial=True)
        marker_x: int | None = None
        if self.marker is not None and result.budgets[-1] > result.budgets[0]:
            span = result.budgets[-1] - result.budgets[0]
            marker_x = round((self.marker - result.budgets[0]) / span * (width - 1))
        text = Text()
        for i, row in enumerate(rows):
            label = f"{top:,}" if i == 0 else (f"{floor:,}" if i == len(rows) - 1 else "")
            text.append(f"{label:>{label_width}} │", style=axis)
            for x, ch in enumerate(row):
                style = budget if ch == "·" else bars
                if x == marker_x and ch == " ":
                    text.append("│", style=axis)
                else:
                    text.append(ch, style=style)
            text.append("\n")
        text.append(" " * label_width + " └" + "─" * width + "\n", style=axis)
        low, high = f"{result.budgets[0]:,}", f"{result.budgets[-1]:,}"
        gap = max(1, width - len(low) - len(high))
        text.append(" " * (label_width + 2) + low + " " * gap + high, style=axis)
        text.append("\n" + " " * (label_width + 2) + "budget →  █ tokens kept by the budget pass  · the budget itself",
                    style=axis)
        if marker_x is not None:
            text.append("  │ current budget", style=axis)
        return text
