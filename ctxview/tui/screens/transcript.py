"""``T``: the session transcript beside the assembled context.

Left, every transcript entry and how it reached the model: as itself (green), as a
summary (cyan, with the summary's id) or not at all (red, with the reason: evicted,
no longer in the context, never ingested, off the active branch).  Right, the messages
the model receives; the cursor there follows the entry on the left.  ``enter`` selects
the item in the inspector's table.  The transcript is found through the OpenClaw state
directory (``ctxview.openclaw``); when there is none, the screen says so plainly.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Footer, Header, Static

from ctxview.browse.transcript_side import (
    REACH_WORDS,
    EntryRow,
    SideBySide,
    find_transcript,
    message_preview,
    side_by_side,
    state_dir_for,
)
from ctxview.model import ConversationInfo, Trace
from ctxview.tui.actions import app_key, bindings
from ctxview.tui.screens.messages import JumpTo
from ctxview.tui.view import clean_inline
from ctxview.tui.widgets.rows_list import Cell, ListColumn, RowsList

REACH_GLYPH = {"itself": "●", "summary": "◐", "not-sent": "✕"}
ENTRY_COLUMNS = (
    ListColumn("at", 8, ">"),
    ListColumn("entry", 9),
    ListColumn("type", 13),
    ListColumn("reached the model", 26),
    ListColumn("text", None),
)
CONTEXT_COLUMNS = (ListColumn("#", 4, ">"), ListColumn("item", 6), ListColumn("role", 10), ListColumn("text", None))


def entry_cells(row: EntryRow) -> list[Cell]:
    if row.reach == "summary" and row.decision_key is not None and row.decision_key.startswith("f:"):
        reach = f"{REACH_GLYPH['summary']} as the focus brief"
    elif row.reach == "summary" and row.summary_id is not None:
        reach = f"{REACH_GLYPH['summary']} as {row.summary_id}"
    else:
        reach = f"{REACH_GLYPH[row.reach]} {REACH_WORDS[row.reach]}"
    kind = row.role if row.entry_type == "message" and row.role else row.entry_type
    muted = "muted" if row.reach == "not-sent" else ""
    return [
        (row.where, "muted"),
        (row.entry_id or "—", muted),
        (kind, muted),
        (reach, row.reach),
        (row.preview, muted),
    ]


def item_label(key: str | None) -> str:
    """The inspector's name for a decision key: ``12`` (item), ``L3`` (live input), ``brief`` (focus brief)."""
    if key is None:
        return ""
    kind, _, rest = key.partition(":")
    return {"o": rest, "l": f"L{rest}", "f": "brief"}.get(kind, key)


def context_cells(index: int, message: Any, key: str | None) -> list[Cell]:
    role, text = message_preview(message)
    item = item_label(key)
    return [(str(index), "muted"), (item, "muted"), (role, ""), (text, "")]


class TranscriptScreen(Screen[JumpTo | None]):
    """Transcript entries on the left, the assembled messages on the right."""

    BINDINGS: ClassVar[list[BindingType]] = bindings("transcript")
    AUTO_FOCUS = "#entries"

    DEFAULT_CSS = """
    TranscriptScreen {
        & #transcript-status { height: auto; padding: 0 1; color: $text-muted; }
        & #transcript-main { height: 1fr; }
        & #entries { width: 1fr; height: 1fr; }
        & #context-side { width: 1fr; height: 1fr; }
        & #assembled-list { height: 1fr; }
        & #entry-why { height: auto; max-height: 6; border: round $border-blurred; padding: 0 1; }
    }
    """

    def __init__(
        self,
        db_path: Path,
        conversation: ConversationInfo,
        trace: Trace | None,
        *,
        state_dir: Path | None = None,
        live_entry_ids: list[str | None] | None = None,
    ) -> None:
        super().__init__()
        self.db_path = db_path
        self.conversation = conversation
        self.trace = trace
        self.state_dir = state_dir
        self.live_entry_ids = live_entry_ids
        self.result: SideBySide | None = None
        self.found_message = ""

    def compose(self) -> ComposeResult:
        yield Header(icon="◧")
        yield Static("looking for the session transcript…", id="transcript-status")
        with Horizontal(id="transcript-main"):
            yield RowsList(ENTRY_COLUMNS, id="entries")
            with Vertical(id="context-side"):
                yield RowsList(CONTEXT_COLUMNS, id="assembled-list")
                yield Static("", id="entry-why")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.sub_title = (f"{self.db_path.name} · conversation {self.conversation.conversation_id} · "
                          "transcript beside the assembled context")
        entries = self.query_one("#entries", RowsList)
        entries.border_title = "transcript"
        assembled = self.query_one("#assembled-list", RowsList)
        assembled.border_title = "assembled context" if self.trace is not None else "assembled context (no run yet)"
        assembled.can_focus = True
        if self.trace is not None:
            messages, keys = self.trace.messages, self.trace.message_keys
            assembled.set_rows(
                len(messages),
                lambda i: context_cells(i, messages[i], keys[i] if i < len(keys) else None)
                if 0 <= i < len(messages) else None,
                cursor=None,
            )
        entries.loading = True
        self._load()

    @work(thread=True, exclusive=True, group="transcript-load", exit_on_error=False)
    def _load(self) -> None:
        from ctxview.openclaw.live_window import build_live_window
        from ctxview.openclaw.transcript import read_transcript
        from ctxview.store import LcmStore

        try:
            found = find_transcript(state_dir_for(self.db_path, self.state_dir), self.db_path, self.conversation)
            if found.ref is None:
                self.app.call_from_thread(self._shown, None, found.message, [])
                return
            transcript = read_transcript(found.ref)
            window = build_live_window(transcript)
            wheres = [transcript.where(i) for i in range(len(transcript.entries))]
            with LcmStore(self.db_path) as store:
                result = side_by_side(
                    transcript.entries, wheres, store.connection, self.conversation.conversation_id, self.trace,
                    branch=window.branch, live_entry_ids=self.live_entry_ids,
                )
            notes = list(dict.fromkeys([*window.notes, *result.notes]))
        except Exception as exc:  # unreadable state or database: one line, never a crash
            self.app.call_from_thread(self._shown, None, f"cannot compare with the transcript: {exc}", [])
            return
        self.app.call_from_thread(self._shown, result, found.message, notes)

    def _shown(self, result: SideBySide | None, message: str, notes: list[str]) -> None:
        self.result = result
        self.found_message = message
        entries = self.query_one("#entries", RowsList)
        entries.loading = False
        status = Text()
        if result is None:
            status.append(message, style="yellow")
            entries.set_rows(0, lambda _line: None)
        else:
            status.append(f"transcript: {message}\n")
            status.append(f"{len(result.rows):,} entries: ")
            status.append(f"● {result.counts['itself']:,} reached the model as themselves", style="green")
            status.append(" · ")
            status.append(f"◐ {result.counts['summary']:,} as a summary", style="cyan")
            status.append(" · ")
            status.append(f"✕ {result.counts['not-sent']:,} not at all", style="red")
            if not result.assembled:
                status.append("  (judged against the stored context: no assembly run)", style="dim")
            status.append(f"   ({app_key(self.app, 'transcript.jump')} selects it in the items table)", style="dim")
            rows = result.rows
            entries.border_title = f"transcript · {len(rows):,}"
            entries.set_rows(len(rows), lambda line: entry_cells(rows[line]) if 0 <= line < len(rows) else None)
        for note in notes[:6]:
            status.append(f"\nnote: {note}", style="yellow")
        self.query_one("#transcript-status", Static).update(status)

    @property
    def selected(self) -> EntryRow | None:
        entries = self.query_one("#entries", RowsList)
        if self.result is None or entries.cursor is None or not 0 <= entries.cursor < len(self.result.rows):
            return None
        return self.result.rows[entries.cursor]

    @on(RowsList.Highlighted, "#entries")
    def _entry_highlighted(self, event: RowsList.Highlighted) -> None:
        event.stop()
        row = self.selected
        why = self.query_one("#entry-why", Static)
        if row is None:
            why.update("")
            return
        text = Text()
        text.append(f"{row.where} · entry {row.entry_id or '—'}", style="bold")
        if row.message_id is not None:
            text.append(f" · LCM message {row.message_id}")
        text.append("\n")
        text.append(REACH_WORDS[row.reach], style={"itself": "green", "summary": "cyan"}.get(row.reach, "red"))
        text.append(f": {clean_inline(row.why, 600)}")
        why.update(text)
        assembled = self.query_one("#assembled-list", RowsList)
        if row.output_index is not None:
            assembled.move_cursor_to(row.output_index, notify=False, center=True)
        else:
            assembled.move_cursor_to(None, notify=False)

    @on(RowsList.Highlighted, "#assembled-list")
    def _assembled_highlighted(self, event: RowsList.Highlighted) -> None:
        event.stop()

    def action_jump(self) -> None:
        row = self.selected
        if row is None:
            return
        if row.decision_key is None or self.trace is None:
            self.notify("nothing in the items table stands for this entry", timeout=3)
            return
        what = f"summary {row.summary_id}" if row.reach == "summary" else f"the item for {row.where}"
        self.dismiss(JumpTo(row.decision_key, what))

    def action_close(self) -> None:
        self.dismiss(None)
