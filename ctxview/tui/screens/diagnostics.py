"""``D``: the engine's overflow diagnostics (§8) of the run on screen: why the prompt is big.

The split between raw messages and summaries, the top five message and summary
contributors with what happened to each at these settings (Enter jumps to the
item's row), and the duplicate-reference and duplicate-text clusters.  The view
follows the inspector's ``assembly``: every edit redraws it.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Vertical
from textual.reactive import var
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from ctxview.tui.actions import app_key, bindings
from ctxview.tui.state import Assembly
from ctxview.tui.view import clean_inline
from ctxview.whatif.diagnose import contributors, diagnostics_of, split_lines


def _cluster_text(title: str, rows: list[dict[str, object]]) -> Text:
    text = Text()
    text.append(f"{title}: ", style="bold")
    if not rows:
        text.append("none", style="dim")
        return text
    for row in rows:
        ordinals = ", ".join(str(o) for o in row.get("ordinals", []))  # type: ignore[attr-defined]
        text.append(f"\n  {row.get('key')}  ×{row.get('count')}  {row.get('tokens', 0):,} tokens  items {ordinals}")
    return text


class DiagnosticsScreen(ModalScreen[str | None]):
    """The §8 diagnostics; dismisses with the key of a contributor to jump to, or None."""

    BINDINGS: ClassVar[list[BindingType]] = bindings("diagnostics")

    DEFAULT_CSS = """
    DiagnosticsScreen {
        align: center middle;
        & > Vertical {
            width: 96%;
            height: auto;
            max-height: 90%;
            border: round $accent;
            background: $surface;
            padding: 0 1;
        }
        & #diag-split, & #diag-clusters { width: 1fr; height: auto; }
        & OptionList { height: auto; max-height: 14; border: none; padding: 0; }
    }
    """

    assembly: var[Assembly | None] = var(None, init=False)

    def __init__(self, assembly: Assembly | None) -> None:
        super().__init__()
        self.set_reactive(DiagnosticsScreen.assembly, assembly)

    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = "overflow diagnostics (§8)"
            box.border_subtitle = f"enter jumps to the item · {app_key(self.app, 'diagnostics.close')} closes"
            yield Static(id="diag-split")
            yield OptionList(id="diag-contributors")
            yield Static(id="diag-clusters")

    def on_mount(self) -> None:
        self._redraw()
        self.query_one(OptionList).focus()

    def watch_assembly(self) -> None:
        if self.is_attached:
            self._redraw()

    def _redraw(self) -> None:
        trace = self.assembly.trace if self.assembly is not None else None
        diag = diagnostics_of(trace) if trace is not None else None
        options = self.query_one(OptionList)
        options.clear_options()
        if trace is None or diag is None:
            self.query_one("#diag-split", Static).update(
                Text("no diagnostics: the assembler recorded none (no context items)", style="dim")
            )
            self.query_one("#diag-clusters", Static).update("")
            return
        self.query_one("#diag-split", Static).update(Text("\n".join(split_lines(diag))))
        for title, rows in (("top message contributors", diag.get("topMessageContributors", [])),
                            ("top summary contributors", diag.get("topSummaryContributors", []))):
            options.add_option(Option(Text(f"{title}  (tokens · selected by §6 · now)", style="bold"), disabled=True))
            for c in contributors(trace, rows):
                line = Text(f"  {c.row.get('ordinal', '?'):>6} {c.row.get('tokens', 0):>7,}  ")
                line.append(f"{'selected' if c.row.get('selected') else 'not sel.':<9}")
                style = "green" if c.decision is not None and c.decision.is_kept else "red"
                line.append(f"{c.outcome:<22}", style=style)
                line.append(clean_inline(c.name, 80))
                options.add_option(Option(line, id=c.key))
        clusters = _cluster_text("duplicate references", diag.get("duplicateRefClusters", []))
        clusters.append("\n")
        clusters.append_text(_cluster_text("duplicate message text", diag.get("duplicateMessageClusters", [])))
        self.query_one("#diag-clusters", Static).update(clusters)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_close(self) -> None:
        self.dismiss(None)
