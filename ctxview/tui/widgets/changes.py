"""One line that says what the last edit changed: ``+5 now kept · 2 newly evicted``.

The rows themselves are marked in the items table (▲ now kept, ▼ no longer
kept, • other change); this line counts them and names the edit.  Bound to
the inspector's ``assembly``, which carries the diff, the edit and the timing.
"""

from __future__ import annotations

from typing import ClassVar

from rich.style import Style
from rich.text import Text
from textual.reactive import var
from textual.widgets import Static

from ctxview.model import KEPT_OUTCOMES, count_text
from ctxview.report import fallback_text
from ctxview.tui.actions import app_key
from ctxview.tui.state import Assembly
from ctxview.tui.view import clean_inline, note_headline

_MARKERS = {1: "▲", -1: "▼", 0: "•"}


class ChangesLine(Static):
    """Counts of outcome changes after the last edit, plus the run's timing."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {"changes-line--up", "changes-line--down", "changes-line--muted"}

    DEFAULT_CSS = """
    ChangesLine {
        height: 1;
        padding: 0 1;
        & > .changes-line--up { color: $text-success; text-style: bold; }
        & > .changes-line--down { color: $text-error; text-style: bold; }
        & > .changes-line--muted { color: $text-muted; }
    }
    """

    assembly: var[Assembly | None] = var(None, init=False)
    busy: var[bool] = var(False, init=False)  # a re-assembly is under way (set by the inspector)

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._line = Text()

    def watch_busy(self, busy: bool) -> None:
        if busy:
            line = Text("assembling… ", style="bold")
            line.append_text(self._line)
            line.stylize(self.get_component_rich_style("changes-line--muted", partial=True), 13)
            self.update(line, layout=False)
        else:
            self.update(self._line, layout=False)

    def watch_assembly(self, assembly: Assembly | None) -> None:
        if assembly is None:
            return
        trace, diff = assembly.trace, assembly.diff
        muted = self.get_component_rich_style("changes-line--muted", partial=True)
        line = Text()
        if assembly.first:
            line.append("assembled", style="bold")
        else:
            line.append(f"after {clean_inline(assembly.edit, 40)}: ", style="bold")
            parts = diff.parts()
            if not parts:
                line.append("no outcome changed", style=muted)
            styles = {
                1: self.get_component_rich_style("changes-line--up", partial=True),
                -1: self.get_component_rich_style("changes-line--down", partial=True),
                0: Style(),
            }
            for n, (direction, words) in enumerate(parts):
                if n:
                    line.append(" · ")
                line.append(f"{_MARKERS[direction]} {words}", style=styles[direction])
        counts = assembly.counts if assembly.counts is not None else trace.outcome_counts()
        kept = sum(n for outcome, n in counts.items() if outcome in KEPT_OUTCOMES and outcome != "appended")
        evicted = counts.get("evicted", 0) + counts.get("evicted-for-live", 0)
        line.append(f"   │ {kept:,} kept · {evicted:,} evicted", style=muted)
        if counts.get("appended"):
            line.append(f" · {counts['appended']:,} live appended", style=muted)
        line.append(f" · {count_text(len(trace.messages), 'message')} sent", style=muted)
        if assembly.elapsed is not None:
            line.append(f" · {assembly.elapsed * 1000:,.0f} ms", style=muted)
        if trace.summary.engine_outcome.startswith("live-fallback"):
            line.append("   FALLBACK: ", style=self.get_component_rich_style("changes-line--down", partial=True))
            line.append(clean_inline(f"{fallback_text(trace)}; the live transcript is sent instead", 140))
        elif trace.warnings:
            # the engine's log lines are notes, not alarms: named here, read in full with the notes key
            key = app_key(self.app, "inspector.notes")
            many = len(trace.warnings)
            line.append(f"   note{'s' if many > 1 else ''} ({key}): ", style=muted)
            line.append(note_headline(trace.warnings[0]) + (f" (+{many - 1})" if many > 1 else ""), style=muted)
        self._line = line
        self.update(line, layout=False)  # one line of fixed height: no re-layout of the screen per edit
