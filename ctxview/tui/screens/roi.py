"""``i``: the section-ROI table of the current run, one row per section.

It lists ``stages["scoring"]["sections"]`` as the scorer recorded them:
the WASTE / LOW / MED+ band, the score against the threshold, the four
factors C / T / R / S, how often the section was cited and included, its
items and tokens, the load-or-stub decision and the scorer's own sentence.
The view follows the inspector, which binds its ``roi`` and ``params`` to
its own: ``c`` and ``u`` propose new params through the function the view
was given (the inspector decides and re-assembles), and every table the
inspector derives from a new trace is shown here too.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from typing import Any, ClassVar

from rich import box
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import VerticalScroll
from textual.reactive import var
from textual.screen import ModalScreen
from textual.widgets import Static

from ctxview.model import Params
from ctxview.tui.actions import app_key, bindings
from ctxview.tui.scoring_view import (
    RoiTable,
    category_tone,
    is_roi,
    next_scorer,
    next_tokenizer,
    scorer_choice,
)
from ctxview.tui.view import clean_inline

ParamsEditor = Callable[[Params, str], None]  # proposes new params, naming the edit ("scorer", "tokenizer")

TONE_STYLE = {"waste": "bold red", "low": "bold yellow", "med": "bold green", "muted": "dim"}


def _factor(value: Any) -> str:
    return "—" if not isinstance(value, (int, float)) else f"{value:.2f}"


def _score(value: Any, digits: int = 3) -> str:
    return "n/a" if not isinstance(value, (int, float)) else f"{value:.{digits}f}"


def _count(value: Any) -> str:
    return f"{value:,}" if isinstance(value, int) else "—"


_NEEDS = re.compile(r"needs (\d+)")


def roi_band(row: dict[str, Any]) -> str:
    """The band, only for a section that was scored: an unscored one is loaded whatever its ratio says."""
    return str(row.get("category", "n/a")) if row.get("status") == "scored" else "—"


def roi_reason(row: dict[str, Any]) -> str:
    """Why the section is loaded or stubbed (the decision column), in words: the numbers are the other columns'."""
    decision = row.get("decision")
    if row.get("status") != "scored":
        needs = _NEEDS.search(str(row.get("reason", "")))
        of = f" of {needs[1]}" if needs else ""
        return f"not scored: {_count(row.get('included'))}{of} inclusions"
    if decision == "stub":
        return "score below the threshold"
    return "score at or above the threshold"


def off_message(scorer: str, pending: str | None = None, switch_key: str = "c") -> Text:
    """What the view says when the last run did not use the section-ROI scorer."""
    text = Text()
    text.append(f"ROI scorer is off — press {switch_key} to switch", style="bold")
    text.append(f"\n\nThe last run used the {scorer or 'lcm'} scorer. ", style="dim")
    text.append(
        "The ROI table comes from the section-ROI scorer: it groups items into sections (user, assistant, "
        "tool:<name>, summary:<kind>), rates each by how often the model cited it (C), the prompt's trigger "
        "words (T), recency (R) and size (S), and replaces the items of sections below the threshold with "
        "one-line stubs.",
        style="dim",
    )
    if pending:
        text.append(f"\n\nswitching to {pending}…", style="italic")
    return text


def roi_renderable(table: RoiTable, pending: str | None = None, switch_key: str = "c") -> RenderableType:
    """The header lines and the table of sections (``switch_key``: what switches the scorer on)."""
    if not table.active:
        return off_message(table.scorer, pending, switch_key)
    head = Text()
    head.append("section ROI", style="bold")
    if table.threshold is not None:
        head.append(f" · threshold {table.threshold:.2f}")
    head.append(f" · {len(table.rows)} section{'s' if len(table.rows) != 1 else ''}")
    head.append(f" · {table.stubbed:,} item{'s' if table.stubbed != 1 else ''} stubbed, ")
    head.append(f"{table.tokens_saved:,} tokens saved")
    source = Text(style="dim")
    if table.source == "derived" or table.source is None:
        source.append("citation log: derived from the session's own messages")
    else:
        source.append(f"citation log: {clean_inline(table.source, 200)}")
    if table.cycles is not None:
        source.append(f" · {table.cycles:,} cycles")
    if pending:
        source.append(f"   switching to {pending}…", style="italic")

    grid = Table(box=box.SIMPLE_HEAD, pad_edge=False, expand=True, header_style="bold")
    grid.add_column("section", no_wrap=True, max_width=28)
    grid.add_column("band", no_wrap=True)
    grid.add_column("score", justify="right", no_wrap=True)
    grid.add_column("decision", no_wrap=True)
    for factor in "CTRS":
        grid.add_column(factor, justify="right", no_wrap=True)
    grid.add_column("cited", justify="right", no_wrap=True)
    grid.add_column("incl", justify="right", no_wrap=True)
    grid.add_column("ROI", justify="right", no_wrap=True)
    grid.add_column("items", justify="right", no_wrap=True)
    grid.add_column("tokens", justify="right", no_wrap=True)
    grid.add_column("why", ratio=1, style="dim", no_wrap=True, overflow="ellipsis")
    for row in table.rows:
        category = roi_band(row)
        decision = str(row.get("decision", ""))
        grid.add_row(
            Text(clean_inline(str(row.get("section", "")), 60)),
            Text(category, style=TONE_STYLE[category_tone(category)]),
            _score(row.get("score")) if row.get("status") == "scored" else "—",
            Text(decision, style="bold yellow" if decision == "stub" else ""),
            *(_factor(row.get(factor)) for factor in "CTRS"),
            _count(row.get("cited")),
            _count(row.get("included")),
            _score(row.get("roi"), 2),
            _count(row.get("items")),
            _count(row.get("tokens")),
            Text(roi_reason(row)),
        )
    if not table.rows:
        return Group(head, source, Text("\nno sections: the run had no evictable items to score", style="dim"))
    return Group(head, source, grid)


class RoiScreen(ModalScreen[None]):
    """The ROI table of the current trace; ``c`` / ``u`` propose another scorer or tokenizer."""

    BINDINGS: ClassVar[list[BindingType]] = bindings("roi")

    DEFAULT_CSS = """
    RoiScreen {
        align: center middle;
        & > VerticalScroll {
            width: 96%;
            height: auto;
            max-height: 90%;
            border: round $accent;
            background: $surface;
            padding: 0 1;
        }
        & #roi-body { width: 1fr; }
    }
    """

    roi: var[RoiTable] = var(RoiTable(active=False, scorer="", rows=[]), init=False, always_update=True)
    params: var[Params] = var(Params(), init=False)  # the params the next run uses

    def __init__(self, roi: RoiTable, params: Params, edit_params: ParamsEditor) -> None:
        super().__init__()
        self.set_reactive(RoiScreen.roi, roi)
        self.set_reactive(RoiScreen.params, params)
        self.edit_params = edit_params
        self._pending: str | None = None  # the scorer asked for, until a table of it arrives

    def compose(self) -> ComposeResult:
        with VerticalScroll() as scroll:
            scroll.border_title = "section ROI"
            keys = {name: app_key(self.app, f"roi.{name}") for name in ("switch_scorer", "toggle_tokenizer", "close")}
            scroll.border_subtitle = (
                f"{keys['switch_scorer']} scorer · {keys['toggle_tokenizer']} tokenizer · {keys['close']} closes"
            )
            yield Static(roi_renderable(self.roi, switch_key=keys["switch_scorer"]), id="roi-body")

    def watch_roi(self, roi: RoiTable) -> None:
        if self._pending is not None and roi.scorer == self._pending:
            self._pending = None
        self._redraw()

    def _redraw(self) -> None:
        if self.is_attached:
            body = roi_renderable(self.roi, self._pending, app_key(self.app, "roi.switch_scorer"))
            self.query_one("#roi-body", Static).update(body)

    def action_switch_scorer(self) -> None:
        """Off: switch straight to ROI (what the message promises); on: cycle on, as ``c`` does everywhere."""
        scorer = self.params.scorer
        self.edit_params(replace(self.params, scorer=next_scorer(scorer) if is_roi(scorer) else "roi"), "scorer")
        self._pending = scorer_choice(self.params.scorer)
        self._redraw()

    def action_toggle_tokenizer(self) -> None:
        self.edit_params(replace(self.params, tokenizer=next_tokenizer(self.params.tokenizer)), "tokenizer")

    def action_close(self) -> None:
        self.dismiss(None)
