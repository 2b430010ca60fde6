"""``w``: the budget sweep — tokens kept against the budget, and each item's smallest budget.

The screen is given the params to sweep and a function that runs the sweep
(the inspector's, which knows whose assembler to use and how to share it);
it calls that function in a thread worker, shows the chart and the exact
runs, and when it closes hands the result back with ``dismiss``.  The
inspector keeps it as view state: the items table's min-budget column, for
as long as only the budget changes.  Nothing of it enters the trace.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import ClassVar

from rich.table import Table
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Vertical
from textual.reactive import var
from textual.screen import Screen
from textual.widgets import Header, ProgressBar, Static

from ctxview.model import Params
from ctxview.sweep import SweepCancelled, SweepProgress, SweepResult
from ctxview.tui.actions import bindings
from ctxview.tui.widgets.footer import FittingFooter
from ctxview.tui.widgets.sweep_plot import SweepPlot

Sweeper = Callable[[Params, SweepProgress], SweepResult]  # runs the sweep of these params (in a thread)


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


class SweepScreen(Screen[SweepResult | None]):
    """The sweep of one set of params over every budget; dismissed with its result (None: none yet)."""

    BINDINGS: ClassVar[list[BindingType]] = bindings("sweep")

    DEFAULT_CSS = """
    SweepScreen #sweep-body { padding: 0 1; }
    SweepScreen #sweep-notes { height: auto; color: $text-muted; }
    SweepScreen #sweep-runs { height: auto; max-height: 14; }
    SweepScreen #sweep-progress { height: 1; }
    """

    result: var[SweepResult | None] = var(None, init=False)  # the finished sweep; the plot is bound to it

    def __init__(self, params: Params, sweeper: Sweeper) -> None:
        super().__init__()
        self.params = params
        self.sweeper = sweeper
        self._cancel = threading.Event()  # set when the view closes while the sweep runs
        self.running = False

    def compose(self) -> ComposeResult:
        yield Header(icon="◧")
        with Vertical(id="sweep-body"):
            yield ProgressBar(id="sweep-progress", show_eta=False)
            yield SweepPlot(self.params.token_budget, id="sweep-plot").data_bind(SweepScreen.result)
            yield Static("", id="sweep-runs")
            yield Static("", id="sweep-notes")
        yield FittingFooter(compact=True)

    def on_mount(self) -> None:
        self.sub_title = "budget sweep"
        self.action_rerun()

    def action_rerun(self) -> None:
        if self.running:
            return
        self.running = True
        self._cancel.clear()
        bar = self.query_one("#sweep-progress", ProgressBar)
        bar.display = True
        bar.update(total=None, progress=0)
        self.query_one("#sweep-notes", Static).update("sweeping… (escape cancels)")
        self._sweep(self.params)

    def _progress(self, done: int, total: int) -> bool:
        """Worker thread: show the exact runs done; False once the view was closed."""
        if self._cancel.is_set():
            return False
        try:
            self.app.call_from_thread(self._show_progress, done, total)
        except RuntimeError:  # the app is closing
            return False
        return True

    def _show_progress(self, done: int, total: int) -> None:
        if self.is_attached:
            self.query_one("#sweep-progress", ProgressBar).update(total=total, progress=done)
            self.query_one("#sweep-notes", Static).update(f"sweeping… {done} of {total} exact runs (escape cancels)")

    @work(thread=True, exclusive=True, group="sweep", exit_on_error=False)
    def _sweep(self, params: Params) -> None:
        try:
            result = self.sweeper(params, self._progress)
        except SweepCancelled:
            return
        except Exception as exc:  # keep the inspector usable; say what failed
            self.app.call_from_thread(self._failed, str(exc))
            return
        if not self._cancel.is_set():
            self.app.call_from_thread(self._done, result)

    def _failed(self, message: str) -> None:
        self.running = False
        self.query_one("#sweep-notes", Static).update(Text(f"sweep failed: {message}"))

    def _done(self, result: SweepResult) -> None:
        self.running = False
        self.query_one("#sweep-progress", ProgressBar).display = False
        self.result = result

    def watch_result(self, result: SweepResult | None) -> None:
        if result is None:
            return
        self.query_one("#sweep-runs", Static).update(runs_table(result))
        notes = [*result.notes, f"{result.exact_runs} exact runs in {result.elapsed:.2f} s"]
        self.query_one("#sweep-notes", Static).update(Text("\n".join(notes)))

    def action_close(self) -> None:
        """Back; a sweep still running is cancelled (it stops before its next exact run)."""
        if self.running:
            self._cancel.set()
            self.running = False
            self.dismiss(None)
            return
        self.dismiss(self.result)
