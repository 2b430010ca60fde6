"""``w``: the budget sweep — tokens kept against the budget, and each item's smallest budget.

The sweep runs in a thread worker with the inspector's assembler (under its
run lock, so one thread uses the assembler at a time).  When it is done the
inspector fills ``Decision.min_budget`` and shows the min-budget column in
the items table for as long as only the budget changes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from rich.table import Table
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import Footer, Header, Static

from ctxview.model import Params
from ctxview.sweep import SweepResult, default_budgets, sweep
from ctxview.tui.widgets.sweep_plot import SweepPlot

if TYPE_CHECKING:
    from ctxview.tui.screens.inspector import InspectorScreen


def runs_table(result: SweepResult) -> Table:
    """The exact runs: budget, tokens kept by the pass, tokens sent, items kept."""
    table = Table(box=None, pad_edge=False, header_style="bold")
    for name in ("budget", "kept", "final", "items kept"):
        table.add_column(name, justify="right")
    for budget, kept, final, items in zip(
        result.budgets, result.kept_tokens, result.final_tokens, result.kept_items, strict=True
    ):
        if final is not None and items is not None:
            table.add_row(f"{budget:,}", f"{kept:,}", f"{final:,}", f"{items:,}")
    return table


class SweepScreen(Screen[None]):
    """The sweep of the inspector's current parameters over every budget."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,b,w", "close", "Back", id="sweep.close"),
        Binding("r", "rerun", "Re-run", id="sweep.rerun"),
    ]

    DEFAULT_CSS = """
    SweepScreen #sweep-body { padding: 0 1; }
    SweepScreen #sweep-notes { height: auto; color: $text-muted; }
    SweepScreen #sweep-runs { height: auto; max-height: 14; }
    """

    def __init__(self, inspector: InspectorScreen) -> None:
        super().__init__()
        self.inspector = inspector
        self.result: SweepResult | None = None

    def compose(self) -> ComposeResult:
        yield Header(icon="◧")
        with Vertical(id="sweep-body"):
            yield SweepPlot(id="sweep-plot")
            yield Static("", id="sweep-runs")
            yield Static("", id="sweep-notes")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.sub_title = "budget sweep"
        self.action_rerun()

    def action_rerun(self) -> None:
        inspector = self.inspector
        if inspector.assembler is None:
            self.query_one("#sweep-notes", Static).update("nothing loaded yet")
            return
        self.query_one("#sweep-notes", Static).update("sweeping…")
        self._sweep(inspector.params)

    @work(thread=True, exclusive=True, group="sweep", exit_on_error=False)
    def _sweep(self, params: Params) -> None:
        inspector = self.inspector
        assembler = inspector.assembler
        if assembler is None:
            return
        try:
            with inspector.run_lock:
                result = sweep(assembler, params, default_budgets(assembler, params))
        except Exception as exc:  # keep the inspector usable; say what failed
            self.app.call_from_thread(self._failed, str(exc))
            return
        self.app.call_from_thread(self._done, result, params)

    def _failed(self, message: str) -> None:
        self.query_one("#sweep-notes", Static).update(Text(f"sweep failed: {message}"))

    def _done(self, result: SweepResult, params: Params) -> None:
        self.result = result
        self.query_one(SweepPlot).show(result, params.token_budget)
        self.query_one("#sweep-runs", Static).update(runs_table(result))
        notes = [*result.notes, f"{result.exact_runs} exact runs in {result.elapsed:.2f} s"]
        self.query_one("#sweep-notes", Static).update(Text("\n".join(notes)))
        self.inspector.sweep_done(result, params)

    def action_close(self) -> None:
        self.app.pop_screen()
