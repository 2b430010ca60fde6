"""Every key of ctxview in one table: the screens' bindings, the footer, the palette and the help come from it.

An action's id is its binding id, the name a keymap uses to move it to another key
(``app.set_keymap({"inspector.cycle_sort": "f2"})``).  Whatever shows a key to the
user (the help screen, the command palette, a title such as ``sort: ordinal (o)``)
asks ``key_hint`` / ``key_list``, which read the active keymap, so a remapped key
never shows stale.  The help screen arranges the lines (``screens/help.py``); the
words and the keys are the table's.

To add an action with a key: one ``Action`` line here and the ``action_…`` method on
its screen; the footer, the palette (when it has a ``palette`` name) and the keymap
follow, and listing its id in ``screens/help.py`` puts it on the help screen.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from textual.binding import Binding
from textual.keys import format_key

from ctxview.export.formats import format_list

Keymap = Mapping[str, str]  # binding id → keys, as App.set_keymap takes them


@dataclass(frozen=True, slots=True)
class Action:
    """One thing a key (or the command palette) does, and every word shown about it."""

    id: str  # "<scope>.<name>": the binding id; the scope is the screen or widget whose BINDINGS hold it
    keys: str  # default keys, comma separated, in Textual's names ("" : palette only, no binding)
    action: str  # what the binding runs on its screen or widget: "budget_step(1)"
    label: str = ""  # the footer's word for it
    help: str = ""  # the help screen's line ("": none, or it shares the line of the action before it)
    show: bool = True  # shown in the footer
    key_display: str | None = None  # how the default keys are written ("+" for "plus,equals_sign")
    priority: bool = False  # checked before the focused widget's own keys
    palette: str = ""  # the command palette's name for it ("": not in the palette)
    palette_help: str = ""  # the palette's second line; the key is added from the keymap

    @property
    def scope(self) -> str:
        return self.id.partition(".")[0]

    def binding(self) -> Binding:
        return Binding(
            self.keys,
            self.action,
            self.label,
            show=self.show,
            key_display=self.key_display,
            priority=self.priority,
            id=self.id,
        )


ACTIONS: tuple[Action, ...] = (
    # --- anywhere (CtxviewApp) ---
    Action("app.quit", "q", "quit", "Quit", "quit", palette="Quit", palette_help="leave ctxview"),
    Action("app.help", "question_mark", "help", "Help", "this help", key_display="?",
           palette="Help: keys and legend", palette_help="every key and what the colours mean"),
    Action("app.screenshot", "s", "screenshot", "Screenshot", "save a screenshot (SVG) in the current directory",
           show=False, palette="Save screenshot", palette_help="SVG of the screen in the current directory"),
    # --- the inspector (InspectorScreen); the footer shows them in this order ---
    Action("inspector.focus_prompt", "slash", "focus_prompt", "Prompt",
           "type the prompt (the table follows as you type)", priority=True,  # (see action_focus_prompt)
           palette="Edit the prompt", palette_help="focus the prompt input"),
    Action("inspector.focus_table", "escape", "focus_table", "Table", "back to the items table", show=False),
    Action("inspector.budget_up", "plus,equals_sign", "budget_step(1)", "Budget +10%", "token budget ±10 %",
           key_display="+", palette="Budget +10 %", palette_help="raise the token budget"),
    Action("inspector.budget_down", "minus,underscore", "budget_step(-1)", "−10%", key_display="-",
           palette="Budget −10 %", palette_help="lower the token budget"),
    Action("inspector.budget_double", "greater_than_sign", "budget_step(1, True)", "Budget ×2",
           "token budget ×2 / ÷2 (big steps; terminals do not send shift with + reliably)", show=False,
           palette="Budget ×2", palette_help="double the token budget"),
    Action("inspector.budget_half", "less_than_sign", "budget_step(-1, True)", "Budget ÷2", show=False,
           palette="Budget ÷2", palette_help="halve the token budget"),
    Action("inspector.budget_reset", "0", "budget_reset", "Reset budget",
           "reset the budget to the one the inspector opened with", show=False,
           palette="Reset budget", palette_help="back to the starting budget"),
    Action("inspector.toggle_prompt_aware", "t", "toggle_prompt_aware", "Prompt-aware", "prompt-aware eviction on/off",
           palette="Toggle prompt-aware eviction", palette_help="evict by prompt relevance instead of age"),
    Action("inspector.toggle_engine", "l", "toggle_engine", "Live",
           "engine step (live inputs, serialized clamp) on/off",
           palette="Toggle engine step (live inputs)", palette_help="append live inputs and clamp to the budget"),
    Action("inspector.toggle_host_window", "h", "toggle_host_window", "Host window",
           "the live window from the OpenClaw transcript (the host's own) on/off", show=False,
           palette="Toggle the host's live window", palette_help="live inputs from the session's OpenClaw transcript"),
    Action("inspector.verify", "v", "verify", "Verify",
           "the check against what your agent sent: the whole verdict (the header shows its badge)", show=False,
           palette="Verify against what was sent", palette_help="the newest recorded turn against a re-assembly"),
    Action("inspector.switch_rules", "E", "switch_rules", "Rules 0.15/1.0",
           "engine rules: lossless-claw 0.15 ↔ 1.0 (what changes after an upgrade)", show=False,
           palette="Switch engine rules 0.15 / 1.0",
           palette_help="run the other lossless-claw line's rules: what an upgrade changes"),
    Action("inspector.cycle_sort", "o", "cycle_sort", "Sort", "cycle the sort: ordinal → score → tokens",
           palette="Cycle sort order", palette_help="ordinal → score → tokens"),
    Action("inspector.cycle_scorer", "c", "cycle_scorer", "Scorer",
           "cycle the scorer: lcm → rarity → roi (or pick one in the scorer selector)",
           palette="Cycle scorer", palette_help="lcm → rarity → roi"),
    Action("inspector.scorer_lcm", "", "set_scorer('lcm')", palette="Scorer: lcm (reference BM25-lite)",
           palette_help="the default; exactly what the reference engine does"),
    Action("inspector.scorer_rarity", "", "set_scorer('rarity')", palette="Scorer: rarity",
           palette_help="rarity-weighted exact match with a slug bonus, plus BM25-lite"),
    Action("inspector.scorer_roi", "", "set_scorer('roi')", palette="Scorer: roi (section ROI)",
           palette_help="sections rated from the citation log; waste becomes stubs"),
    Action("inspector.toggle_tokenizer", "u", "toggle_tokenizer", "Tokenizer",
           "tokenizer lcm ↔ unicode (unicode finds Chinese, Japanese and Korean terms)", show=False,
           palette="Toggle tokenizer", palette_help="lcm ↔ unicode, for Chinese, Japanese and Korean prompts"),
    Action("inspector.roi_view", "i", "roi_view", "ROI",
           "the section-ROI table: every section's band, factors, citations and decision",
           palette="Show the ROI table", palette_help="section-ROI bands, factors and decisions"),
    Action("inspector.sweep", "w", "sweep", "Sweep",
           "budget sweep: tokens kept vs budget; fills the items table's min-budget column", show=False,
           palette="Budget sweep",
           palette_help="tokens kept at every budget; the smallest budget that keeps each item"),
    Action("inspector.filter", "f", "filter", "Filter",
           "filter the items: words match text; outcome:evicted kind:toolResult role:user tokens>500 changed",
           palette="Filter items",
           palette_help="find items: words match text; outcome: kind: role: tokens>N changed; terms combine"),
    Action("inspector.next_match", "n", "next_match(1)", "Next match", "next / previous row matching the filter",
           show=False, palette="Next filter match", palette_help="find the next row the filter matches"),
    Action("inspector.previous_match", "N", "next_match(-1)", "Previous match", show=False,
           palette="Previous filter match", palette_help="find the previous row the filter matches"),
    Action("inspector.next_change", "right_square_bracket", "next_change(1)", "Next change",
           "next / previous row whose outcome the last edit changed", show=False, key_display="]",
           palette="Next changed row", palette_help="jump to the next item whose outcome changed"),
    Action("inspector.previous_change", "left_square_bracket", "next_change(-1)", "Previous change", show=False,
           key_display="[", palette="Previous changed row",
           palette_help="jump to the previous item whose outcome changed"),
    Action("inspector.goto", "colon", "goto", "Go to", "go to an item: type its number (or L2), then Enter",
           show=False, key_display=":", palette="Go to item", palette_help="jump to an ordinal or a live input"),
    Action("inspector.reverse_sort", "O", "reverse_sort", "Reverse", "reverse the sort (or click a header again)",
           show=False, palette="Reverse sort order", palette_help="the same sort, the other way round"),
    Action("inspector.undo", "ctrl+z", "undo", "Undo", "undo / redo a change of the parameters",
           show=False, palette="Undo parameter change", palette_help="back to the parameters before the last edit"),
    Action("inspector.redo", "ctrl+y", "redo", "Redo", show=False,
           palette="Redo parameter change", palette_help="forward again after an undo"),
    Action("inspector.zoom", "z", "zoom", "Zoom", "zoom the focused pane to the whole screen and back",
           show=False, palette="Zoom pane", palette_help="the focused pane fills the screen (z again: back)"),
    Action("inspector.notes", "exclamation_mark", "notes", "Notes",
           "the engine's notes of this run, in full", show=False, key_display="!",
           palette="Engine notes", palette_help="the engine's log lines of this run, in full"),
    Action("inspector.jump_partner", "p", "jump_partner", "Partner",
           "jump to the tool-pair partner (tool call ↔ tool result)",
           palette="Jump to tool-pair partner", palette_help="from a tool call to its result and back"),
    Action("inspector.toggle_side", "d", "toggle_side", "Detail",
           "show / hide the detail and assembled panes on a small terminal",
           palette="Show or hide detail pane", palette_help="on small terminals"),
    Action("inspector.export", "e", "export", "Export", "export dialog: a format, a file, or the clipboard",
           palette="Export assembled context",
           palette_help=f"{format_list(last=' or ')}; file or clipboard"),
    Action("inspector.reload", "r", "reload", "Reload", "re-read the session from the database (keeps the parameters)",
           palette="Reload database", palette_help="re-read the session, keep the parameters"),
    Action("inspector.back", "b,backspace", "back", "Back", "back to the conversation picker",
           palette="Back to conversations", palette_help="the conversation picker"),
    # what-if tools (issue 18)
    Action("inspector.diagnostics", "D", "diagnostics", "Diagnostics",
           "the engine's overflow diagnostics: top contributors, duplicates, raw vs summary tokens", show=False,
           palette="Show overflow diagnostics", palette_help="why the prompt is big (§8)"),
    Action("inspector.summary_map", "m", "summary_map", "Summaries",
           "the summary map: condensed summaries down to leaves and source messages", show=False,
           palette="Show the summary map", palette_help="the summary tree with compression and outcomes"),
    Action("inspector.add_live", "a", "add_live", "Add live",
           "add a live input by hand (user turn, subagent announcement, inter-session message, retry prompt)",
           show=False, palette="Add a live input", palette_help="the engine step runs at once"),
    Action("inspector.edit_live", "A", "edit_live", "Edit live", "edit the live input under the cursor", show=False),
    Action("inspector.delete_live", "delete", "delete_live", "Delete live", "remove the live input under the cursor",
           show=False),
    Action("inspector.compare", "x", "compare", "A/B", "compare two settings side by side (A/B)", show=False,
           palette="Compare two settings (A/B)", palette_help="each side its own prompt, budget, scorer, rules"),
    Action("inspector.messages", "M", "messages", "Messages",
           "every message of the conversation: in the context, summarised (into which summary) or not",
           show=False, palette="Browse every message",
           palette_help="the whole conversation, summarised messages too, with a jump to their summary"),
    Action("inspector.briefs", "F", "briefs", "Briefs", "the focus briefs the engine wrote, with their text",
           show=False, palette="Focus briefs", palette_help="every focus brief of the conversation and its detail"),
    Action("inspector.large_files", "L", "large_files", "Files", "the large files the engine stored, with their detail",
           show=False, palette="Large files", palette_help="externalized payloads: size, summary, referring messages"),
    Action("inspector.transcript", "T", "transcript", "Transcript",
           "the session transcript beside the assembled context: what reached the model, and how", show=False,
           palette="Transcript beside the assembled context",
           palette_help="which transcript entries reached the model: as themselves, as a summary, not at all"),
    # --- the items table and the assembled context (VirtualList) ---
    Action("list.up", "up,k", "cursor(-1)", "Up", show=False),
    Action("list.down", "down,j", "cursor(1)", "Down", "move in the items table (or the assembled context)",
           show=False),
    Action("list.page_up", "pageup", "page(-1)", "Page up", "page", show=False),
    Action("list.page_down", "pagedown", "page(1)", "Page down", show=False),
    Action("list.first", "home,g", "edge(-1)", "First", "first / last row", show=False),
    Action("list.last", "end,G", "edge(1)", "Last", show=False),
    # --- the detail pane (DetailPane) ---
    Action("detail.down", "j", "scroll_down", "Down", "scroll the detail pane (when it has focus)", show=False),
    Action("detail.up", "k", "scroll_up", "Up", show=False),
    # --- the filter / go-to line over the items table (FindLine) ---
    Action("find.clear", "escape", "clear", "Clear",
           "in the filter line: clear the filter (enter keeps it); back to the table"),
    # --- the conversation picker (PickerScreen) ---
    Action("picker.open", "enter", "open", "Open", "open the conversation under the cursor (or click it)",
           priority=True),
    Action("picker.reload", "r", "reload", "Reload", "re-read the database"),
    Action("picker.down", "j", "cursor_down", "Down", "move", show=False),
    Action("picker.up", "k", "cursor_up", "Up", show=False),
    # --- the ROI view (RoiScreen) ---
    Action("roi.close", "escape,i", "close", "Close", "close"),
    Action("roi.switch_scorer", "c", "switch_scorer", "Scorer",
           "scorer off: switch to roi; on: cycle to the next scorer"),
    Action("roi.toggle_tokenizer", "u", "toggle_tokenizer", "Tokenizer", "tokenizer lcm ↔ unicode"),
    # --- the export dialog (ExportScreen) ---
    Action("export.cancel", "escape", "cancel", "Cancel", "cancel"),
    Action("export.format_up", "up", "move_format(-1)", "Previous format",
           f"choose the format: {format_list()}", show=False),
    Action("export.format_down", "down", "move_format(1)", "Next format", show=False),
    Action("export.copy", "ctrl+y", "copy", "Copy to clipboard",
           "copy the export to the clipboard (OSC 52: only where the terminal supports it)"),
    # --- the conversation browser (MessagesScreen) ---
    Action("messages.jump", "enter", "jump", "Jump",
           "jump to what the model sees for it: its summary's row, or its own"),
    Action("messages.next_change", "n", "next_change(1)", "Next change", "next / previous change of mark"),
    Action("messages.prev_change", "N", "next_change(-1)", "Previous change", show=False),
    Action("messages.close", "escape,b,M", "close", "Back", "back to the inspector"),
    # --- focus briefs, large files, transcript (BriefsScreen, LargeFilesScreen, TranscriptScreen) ---
    Action("briefs.close", "escape,b,F", "close", "Back", "back to the inspector"),
    Action("files.close", "escape,b,L", "close", "Back", "back to the inspector"),
    Action("transcript.jump", "enter", "jump", "Jump", "select what reached the model in the items table"),
    Action("transcript.close", "escape,b,T", "close", "Back", "back to the inspector"),
    # --- the sweep view (SweepScreen) and the help screen (HelpScreen) ---
    Action("sweep.close", "escape,b,w", "close", "Back", "back (while a sweep runs: cancel it)"),
    Action("sweep.rerun", "r", "rerun", "Re-run"),
    Action("help.close", "escape,q,question_mark", "dismiss", "Close"),
    # --- the what-if screens (issue 18) ---
    Action("diagnostics.close", "escape,D", "close", "Close"),
    Action("summaries.close", "escape,m", "close", "Close"),
    Action("summaries.jump", "t", "jump", "To table", "jump to the summary's (or message's) row in the items table"),
    Action("add_live.cancel", "escape", "cancel", "Cancel"),
    Action("add_live.submit", "ctrl+s", "submit", "Add"),
    Action("compare.close", "escape,x", "close", "Close"),
    Action("compare.next_diff", "n", "next_diff(1)", "Next diff", "jump to the next / previous differing row"),
    Action("compare.prev_diff", "N", "next_diff(-1)", "Prev diff", show=False),
)

ACTION_BY_ID: dict[str, Action] = {action.id: action for action in ACTIONS}


def actions(scope: str) -> tuple[Action, ...]:
    """The actions of one screen or widget, in table order."""
    return tuple(action for action in ACTIONS if action.scope == scope)


def bindings(scope: str) -> list[Binding]:
    """The ``BINDINGS`` of one screen or widget (palette-only actions have no key and no binding)."""
    return [action.binding() for action in actions(scope) if action.keys]


# --- keys as the user sees them ------------------------------------------------------------

_SPELLED_OUT = frozenset({"enter", "escape", "backspace", "delete", "tab", "space", "insert"})


def key_text(key: str) -> str:
    """One key as the help and the palette write it: ``/``, ``↑``, ``pgup``, ``ctrl+y``, ``escape``."""
    return key if key in _SPELLED_OUT else format_key(key)


def active_keymap(app: Any) -> Keymap:
    """The keymap set with ``App.set_keymap`` / ``update_keymap``.

    Textual 8 keeps it in ``App._keymap`` and offers no getter; this is the one place that reads it.
    """
    keymap = getattr(app, "_keymap", None)
    return keymap if isinstance(keymap, Mapping) else {}


def key_list(action_id: str, keymap: Keymap) -> list[str]:
    """Every key of an action as written for the user, the keymap's when it remaps the action."""
    action = ACTION_BY_ID[action_id]
    remapped = keymap.get(action_id)
    if remapped:
        keys = remapped
    elif action.key_display:
        return [action.key_display]
    else:
        keys = action.keys
    shown: list[str] = []
    for key in keys.split(","):
        text = key_text(key.strip())
        if text and text not in shown:
            shown.append(text)
    return shown


def key_hint(action_id: str, keymap: Keymap) -> str:
    """The first key of an action ("" when it has none): what a title or a palette line names."""
    keys = key_list(action_id, keymap)
    return keys[0] if keys else ""


def app_key(app: Any, action_id: str) -> str:
    """``key_hint`` with the app's active keymap: for titles and messages that name a key."""
    return key_hint(action_id, active_keymap(app))
