"""``?``: every key, what the colours and separator lines mean.

The keys and their words come from the action table (``ctxview.tui.actions``)
and the keymap the app runs with, so a remapped key shows as remapped; this
module only arranges them into sections.  ``KEYS`` is the help for the
default keys.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from ctxview.sweep import SELECTED_FROM_SENTENCE, SENT_FROM_SENTENCE
from ctxview.tui.actions import ACTION_BY_ID, Keymap, bindings, key_hint, key_list


@dataclass(frozen=True, slots=True)
class HelpLine:
    """One line of the help: the keys of some actions and the words of the first (or keys Textual owns)."""

    ids: tuple[str, ...] = ()  # actions of the table
    keys: str = ""  # how the keys are written while none of ``ids`` is remapped ("": each id's keys, " / ")
    also: str = ""  # a key outside the table that does the same (enter in a field)
    text: str = ""  # the words of a line that is not about an action of the table

    def render(self, keymap: Keymap) -> tuple[str, str]:
        if not self.ids:
            return self.keys, self.text
        if self.keys and not any(action_id in keymap for action_id in self.ids):
            keys = self.keys
        else:
            keys = " / ".join(key for action_id in self.ids for key in key_list(action_id, keymap))
        if self.also:
            keys = f"{keys} / {self.also}"
        return keys, ACTION_BY_ID[self.ids[0]].help


def line(*ids: str, keys: str = "", also: str = "") -> HelpLine:
    return HelpLine(ids, keys, also)


def textual_keys(keys: str, text: str) -> HelpLine:
    """Keys the app does not declare (Textual's own, or a field's enter): they cannot be remapped."""
    return HelpLine(keys=keys, text=text)


# (title, the action whose key the title names, lines)
SECTIONS: tuple[tuple[str, str | None, tuple[HelpLine, ...]], ...] = (
    (
        "Anywhere",
        None,
        (
            line("app.help"),
            line("app.quit"),
            line("app.screenshot"),
            textual_keys("ctrl+p", "command palette: every action, by its name or the words of its help"),
            textual_keys("tab / shift+tab", "move between the panes and controls"),
        ),
    ),
    (
        "Conversation picker",
        None,
        (
            line("picker.open"),
            line("picker.down", "picker.up", keys="j / k, ↑ / ↓"),
            line("picker.reload"),
        ),
    ),
    (
        "Inspector — editing",
        None,
        (
            line("inspector.focus_prompt"),
            line("inspector.focus_table", also="enter"),
            line("inspector.budget_up", "inspector.budget_down"),
            line("inspector.budget_double", "inspector.budget_half"),
            line("inspector.budget_reset"),
            line("inspector.toggle_prompt_aware"),
            line("inspector.toggle_engine"),
            line("inspector.toggle_host_window"),
            line("inspector.verify"),
            line("inspector.switch_rules"),
            line("inspector.cycle_scorer"),
            line("inspector.toggle_tokenizer"),
            line("inspector.undo", "inspector.redo"),
            textual_keys("enter / pause", "a typed budget, tail or reserved applies on enter or when typing pauses"),
        ),
    ),
    (
        "Inspector — finding",
        None,
        (
            line("inspector.filter"),
            line("find.clear"),
            line("inspector.next_match", "inspector.previous_match"),
            line("inspector.next_change", "inspector.previous_change"),
            line("inspector.goto"),
            line("inspector.cycle_sort"),
            line("inspector.reverse_sort"),
            textual_keys("click a header", "sort by that column (item, tokens, score); again: reverse"),
        ),
    ),
    (
        "Inspector — reading",
        None,
        (
            line("list.down", "list.up", keys="j / k, ↑ / ↓"),
            line("list.page_up", "list.page_down"),
            line("list.first", "list.last", keys="g / G, home / end"),
            textual_keys("click", "select a row"),
            line("detail.down", "detail.up", keys="j / k"),
            line("inspector.jump_partner"),
            line("inspector.zoom"),
            line("inspector.toggle_side"),
            line("inspector.notes"),
            line("inspector.roi_view"),
            line("inspector.sweep"),
            line("inspector.export"),
            line("inspector.messages"),
            line("inspector.briefs"),
            line("inspector.large_files"),
            line("inspector.transcript"),
            line("inspector.reload"),
            line("inspector.back"),
        ),
    ),
    (
        "ROI view",
        "inspector.roi_view",
        (
            line("roi.switch_scorer"),
            line("roi.toggle_tokenizer"),
            line("roi.close"),
        ),
    ),
    (
        "Conversation browser",
        "inspector.messages",
        (
            line("messages.jump"),
            line("messages.next_change", "messages.prev_change"),
            line("messages.close"),
        ),
    ),
    (
        "Transcript beside the context",
        "inspector.transcript",
        (
            line("transcript.jump"),
            line("transcript.close"),
        ),
    ),
    (
        "Export dialog",
        "inspector.export",
        (
            line("export.format_up", "export.format_down"),
            textual_keys("enter", "write the file (asks before replacing an existing one)"),
            line("export.copy"),
            line("export.cancel"),
        ),
    ),
    (
        "What-if tools",
        None,
        (
            line("inspector.add_live"),
            line("inspector.edit_live"),
            line("inspector.delete_live"),
            line("inspector.diagnostics"),
            line("inspector.summary_map"),
            line("summaries.jump"),
            line("inspector.compare"),
            line("compare.next_diff", "compare.prev_diff"),
        ),
    ),
)

HelpSections = tuple[tuple[str, tuple[tuple[str, str], ...]], ...]


def help_sections(keymap: Keymap) -> HelpSections:
    """Each section's title and its (keys, what they do) lines, with the keys of ``keymap``."""
    sections = []
    for title, named, lines in SECTIONS:
        if named is not None:
            title = f"{title} ({key_hint(named, keymap)})"
        sections.append((title, tuple(help_line.render(keymap) for help_line in lines)))
    return tuple(sections)


KEYS: HelpSections = help_sections({})  # the help with the default keys

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
    "── budget ──  drawn only where the budget really cuts.  Chronological selection, sort by ordinal: the "
    "newest-first walk stopped here, the items above are evicted.  Sort by score (the selection priority): the "
    "line sits before the first evictable item that was not kept; below it, items were kept only if they still "
    "fit.  Prompt-aware selection in ordinal order has no such line (it cuts by score).",
    "── live inputs ──  the engine's live inputs, after the context items.",
    "Rows marked ▲ became kept with the last edit, ▼ stopped being kept, • changed otherwise.",
    "The reason column is the why in short: 194 tok > 3 left · rank 17/34 — the item's tokens, what the budget "
    "pass had left when it got there, its place in the walk's order.  The detail pane has the full sentence.",
)

SWEEP_COLUMNS = (SELECTED_FROM_SENTENCE, SENT_FROM_SENTENCE)  # the budget sweep's two budgets, as the CLI says them


def help_renderable(keymap: Keymap | None = None) -> Table:
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold", no_wrap=True)
    grid.add_column()
    for title, keys in help_sections(keymap or {}):
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
    grid.add_row("", "")
    grid.add_row(Text("Budget sweep", style="bold underline"), "")
    for line in SWEEP_COLUMNS:
        grid.add_row("", Text(line))
    return grid


class HelpScreen(ModalScreen[None]):
    """Every key of ctxview, and how to read the table."""

    BINDINGS: ClassVar[list[BindingType]] = bindings("help")

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

    def __init__(self, keymap: Keymap | None = None) -> None:
        super().__init__()
        self.keymap: Keymap = dict(keymap or {})  # the app's, when it was opened

    def compose(self) -> ComposeResult:
        with VerticalScroll() as scroll:
            scroll.border_title = "ctxview — keys"
            scroll.border_subtitle = f"{key_hint('help.close', self.keymap)} closes"
            yield Static(help_renderable(self.keymap))
