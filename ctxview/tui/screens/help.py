"""``?``: every key, what the colours and separator lines mean."""

from __future__ import annotations

from typing import ClassVar

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from ctxview.export.formats import format_list

KEYS: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = (
    (
        "Anywhere",
        (
            ("?", "this help"),
            ("q", "quit"),
            ("s", "save a screenshot (SVG) in the current directory"),
            ("ctrl+p", "command palette: every action by name"),
            ("tab / shift+tab", "move between the panes and controls"),
        ),
    ),
    (
        "Conversation picker",
        (
            ("enter", "open the conversation under the cursor (or click it)"),
            ("j / k, ↑ / ↓", "move"),
            ("r", "re-read the database"),
        ),
    ),
    (
        "Inspector — editing",
        (
            ("/", "type the prompt (the table follows as you type)"),
            ("escape / enter", "back to the items table"),
            ("+ / -", "token budget ±10 %"),
            ("> / <", "token budget ×2 / ÷2 (big steps; terminals do not send shift with + reliably)"),
            ("0", "reset the budget to the one the inspector opened with"),
            ("t", "prompt-aware eviction on/off"),
            ("l", "engine step (live inputs, serialized clamp) on/off"),
            ("E", "engine rules: lossless-claw 0.15 ↔ 1.0 (what changes after an upgrade)"),
            ("c", "cycle the scorer: lcm → rarity → roi (or pick one in the scorer selector)"),
            ("u", "tokenizer lcm ↔ unicode (unicode finds Chinese, Japanese and Korean terms)"),
        ),
    ),
    (
        "Inspector — reading",
        (
            ("j / k, ↑ / ↓", "move in the items table (or the assembled context)"),
            ("pgup / pgdn", "page"),
            ("g / G, home / end", "first / last row"),
            ("click", "select a row"),
            ("o", "cycle the sort: ordinal → score → tokens"),
            ("p", "jump to the tool-pair partner (tool call ↔ tool result)"),
            ("d", "show / hide the detail and assembled panes on a small terminal"),
            ("i", "the section-ROI table: every section's band, factors, citations and decision"),
            ("w", "budget sweep: tokens kept vs budget; fills the items table's min-budget column"),
            ("e", "export dialog: a format, a file, or the clipboard"),
            ("r", "re-read the session from the database (keeps the parameters)"),
            ("b / backspace", "back to the conversation picker"),
        ),
    ),
    (
        "ROI view (i)",
        (
            ("c", "scorer off: switch to roi; on: cycle to the next scorer"),
            ("u", "tokenizer lcm ↔ unicode"),
            ("escape / i", "close"),
        ),
    ),
    (
        "Export dialog (e)",
        (
            ("↑ / ↓", f"choose the format: {format_list()}"),
            ("enter", "write the file (asks before replacing an existing one)"),
            ("ctrl+y", "copy the export to the clipboard (OSC 52: only where the terminal supports it)"),
            ("escape", "cancel"),
        ),
    ),
)

LEGEND: tuple[tuple[str, str, str], ...] = (
    ("kept", "green", "evictable item chosen by the budget pass"),
    ("fresh tail", "cyan", "one of the newest messages, always kept"),
    ("protected", "yellow bold", "kept and protected as half of a tool call/result pair"),
    ("appended", "magenta bold", "live input appended by the engine step"),
    ("stripped", "yellow", "kept, but tool calls removed"),
    ("stubbed", "#4fb8c9 italic", "kept as a one-line stub (section ROI below its threshold, or a large tool payload)"),
    ("synthetic", "yellow italic", "kept; a synthetic tool result was added after it"),
    ("evicted", "red", "not selected — the budget ran out (or made room for a live input)"),
    ("dropped", "red dim", "selected but removed in clean-up, or unresolved"),
    ("covered / ignored", "bright_black", "live input already in the context, or not a candidate"),
)

LABELS: tuple[tuple[str, str, str], ...] = (
    ("exact", "green", "rarity: the item has the prompt's words and a BM25-lite score"),
    ("kw", "yellow", "rarity: keyword-only — a substring or a tool/file name matched, BM25-lite is 0"),
    ("WASTE", "bold red", "section ROI: cited far less than its share of the context (stubbed below the threshold)"),
    ("LOW", "bold yellow", "section ROI: cited less than its share"),
    ("MED+", "bold green", "section ROI: earns its tokens"),
)

SEPARATORS = (
    "── fresh tail ──  sort by ordinal: every row below it is at or after the fresh-tail ordinal and is kept.",
    "── budget ──  sort by ordinal: counting tokens back from the newest item, the budget is used up at this "
    "line — everything above cannot all fit, so something above it is evicted.  Sort by score (the selection "
    "priority): the line sits before the first evictable item that was not kept; below it, items were kept only "
    "if they still fit.",
    "── live inputs ──  the engine's live inputs, after the context items.",
    "Rows marked ▲ became kept with the last edit, ▼ stopped being kept, • changed otherwise.",
)


def help_renderable() -> Table:
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold", no_wrap=True)
    grid.add_column()
    for title, keys in KEYS:
        grid.add_row(Text(title, style="bold underline"), "")
        for key, what in keys:
            grid.add_row(Text(key, style="bold cyan"), Text(what))
        grid.add_row("", "")
    grid.add_row(Text("Outcomes", style="bold underline"), "")
    for name, style, what in LEGEND:
        grid.add_row(Text(name, style=style), Text(what))
    grid.add_row("", "")
    grid.add_row(Text("Scorer labels", style="bold underline"), "")
    for name, style, what in LABELS:
        grid.add_row(Text(name, style=style), Text(what))
    grid.add_row("", "")
    grid.add_row(Text("Lines", style="bold underline"), "")
    for line in SEPARATORS:
        grid.add_row("", Text(line))
    return grid


class HelpScreen(ModalScreen[None]):
    """Every key of ctxview, and how to read the table."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,question_mark", "dismiss", "Close", id="help.close"),
    ]

    DEFAULT_CSS = """
    HelpScreen {
        align: center middle;
        & > VerticalScroll {
            width: 96;
            max-width: 100%;
            height: 90%;
            border: round $accent;
            background: $surface;
            padding: 0 1;
        }
    }
    """

    def compose(self) -> ComposeResult:
        with VerticalScroll() as scroll:
            scroll.border_title = "ctxview — keys"
            scroll.border_subtitle = "escape closes"
            yield Static(help_renderable())
