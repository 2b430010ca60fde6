"""One line that says what the last edit changed: ``+3 kept, −2 evicted``.

The rows themselves are marked in the items table (▲ now kept, ▼ no longer
kept, • other change); this line counts them and names the edit.  Bound to
the inspector's ``assembly``, which carries the diff, the edit and the timing.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.reactive import var
from textual.widgets import Static

from ctxview.model import KEPT_OUTCOMES, count_text
from ctxview.report import fallback_text
from ctxview.tui.state import Assembly
from ctxview.tui.view import clean_inline


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
            if not diff.changed:
                line.append("no outcome changed", style=muted)
            else:
                up = self.get_component_rich_style("changes-line--up", partial=True)
                down = self.get_component_rich_style("changes-line--down", partial=True)
                line.append(f"▲ +{diff.gained} kept", style=up)
                line.append(", ")
                line.append(f"▼ −{diff.lost} evicted", style=down)
                if diff.other:
                    line.append(f", • {diff.other} other")
        counts = trace.outcome_counts()
        kept = sum(n for outcome, n in counts.items() if outcome in KEPT_OUTCOMES and outcome != "appended")
        evicted = counts.get("evicted", 0) + counts.get("evicted-for-live", 0)
        line.append(f"   │ {kept:,} kept · {evicted:,} evicted", style=muted)
        if counts.get("appended"):
            line.append(f" · {counts['appended']} live appended", style=muted)
        line.append(f" · {count_text(len(trace.messages), 'message')} sent", style=muted)
        if assembly.elapsed is not None:
            line.append(f" · {assembly.elapsed * 1000:.0f} ms", style=muted)
        if trace.summary.engine_outcome.startswith("live-fallback"):
            line.append("   FALLBACK: ", style=self.get_component_rich_style("changes-line--down", partial=True))
            line.append(clean_inline(f"{fallback_text(trace)}; the live transcript is sent instead", 140))
        else:
            for warning in trace.warnings[:1]:
                line.append("   warning: ", style="bold italic")
                line.append(clean_inline(warning, 100), style="italic")
        self.update(line, layout=False)  # one line of fixed height: no re-layout of the screen per edit
