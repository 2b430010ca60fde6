"""The conversation picker: every conversation with its counts and tokens.

A handful of rows, so a DataTable is right here.  The list is read in a
thread worker that opens its own store; errors are shown in place.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.message import Message
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Static

from ctxview.errors import CtxviewError
from ctxview.model import ConversationInfo
from ctxview.tui.actions import app_key, bindings
from ctxview.tui.view import clean_inline


class PickerScreen(Screen[None]):
    """Choose the conversation to inspect."""

    class Loaded(Message):
        """The conversation list was read (the app may skip the picker)."""

        def __init__(self, path: Path, conversations: list[ConversationInfo]) -> None:
            super().__init__()
            self.path = path
            self.conversations = conversations

    class Chosen(Message):
        """The user chose a conversation."""

        def __init__(self, conversation_id: int) -> None:
            super().__init__()
            self.conversation_id = conversation_id

    BINDINGS: ClassVar[list[BindingType]] = bindings("picker")

    DEFAULT_CSS = """
    PickerScreen {
        & #picker-intro { padding: 1 2 0 2; color: $text-muted; }
        & DataTable { height: 1fr; margin: 1 2; border: round $border; }
        & #picker-error { padding: 1 2; color: $error; display: none; }
    }
    """

    def __init__(self, db_path: Path | None) -> None:
        super().__init__()
        self.db_path = db_path
        self.conversations: list[ConversationInfo] = []

    def compose(self) -> ComposeResult:
        yield Header(icon="◧")
        yield Static("", id="picker-intro")
        yield DataTable(cursor_type="row", zebra_stripes=True, id="conversations")
        yield Static("", id="picker-error")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.sub_title = "conversations"
        table = self.query_one(DataTable)
        table.border_title = "conversations"
        table.add_column("id", key="id")
        table.add_column("session / title", key="title")
        table.add_column("state", key="state")
        table.add_column("messages", key="messages")
        table.add_column("items", key="items")
        table.add_column("summaries", key="summaries")
        table.add_column("tokens", key="tokens")
        table.add_column("created", key="created")
        table.loading = True
        self.load_conversations()

    @work(thread=True, exclusive=True, group="picker", exit_on_error=False)
    def load_conversations(self) -> None:
        from ctxview.store import LcmStore

        try:
            path = self.db_path
            if path is None:
                from ctxview.samples import ensure_demo_db

                path = ensure_demo_db()
            with LcmStore(path) as store:
                conversations = store.list_conversations()
        except CtxviewError as exc:
            self.app.call_from_thread(self._failed, str(exc))
            return
        except Exception as exc:
            self.app.call_from_thread(self._failed, f"could not read {self.db_path}: {exc}")
            return
        self.app.call_from_thread(self._loaded, path, conversations)

    def _failed(self, message: str) -> None:
        table = self.query_one(DataTable)
        table.loading = False
        table.display = False
        error = self.query_one("#picker-error", Static)
        keys = {name: app_key(self.app, f"{scope}.{name}") for scope, name in (("picker", "reload"), ("app", "quit"))}
        error.update(Text(f"{message}\n\nPress {keys['reload']} to retry or {keys['quit']} to quit."))
        error.display = True
        self.notify(message, title="Cannot open the database", severity="error", timeout=8, markup=False)

    def _loaded(self, path: Path, conversations: list[ConversationInfo]) -> None:
        self.db_path = path
        self.conversations = conversations
        self.sub_title = f"{path.name} · {len(conversations)} conversation{'s' if len(conversations) != 1 else ''}"
        intro = self.query_one("#picker-intro", Static)
        open_key = app_key(self.app, "picker.open")
        open_key = open_key.capitalize() if len(open_key) > 1 else open_key  # "Enter", never "O" for "o"
        reload_key, quit_key = app_key(self.app, "picker.reload"), app_key(self.app, "app.quit")
        intro.update(
            Text(f"{path}  —  {open_key} opens a conversation, {reload_key} re-reads the file, {quit_key} quits.")
        )
        table = self.query_one(DataTable)
        table.loading = False
        table.display = True
        self.query_one("#picker-error").display = False
        table.clear()
        for conv in conversations:
            state = "active" if conv.active else ("archived" if conv.archived else "inactive")
            name = conv.title or conv.session_key or conv.session_id or ""
            table.add_row(
                Text(str(conv.conversation_id), justify="right"),
                Text(clean_inline(name, 60)),
                Text(state, style="green" if conv.active else "dim"),
                Text(f"{conv.message_count:,}", justify="right"),
                Text(f"{conv.context_item_count:,}", justify="right"),
                Text(f"{conv.summary_count:,}", justify="right"),
                Text(f"{conv.token_total:,}", justify="right"),
                Text(clean_inline(conv.created_at or "", 30)),
                key=str(conv.conversation_id),
            )
        if not conversations:
            self._failed(f"{path} has no conversations")
            return
        table.focus()
        self.post_message(self.Loaded(path, conversations))

    @on(DataTable.RowSelected)
    def _row_selected(self, event: DataTable.RowSelected) -> None:
        if event.row_key.value is not None:
            self.post_message(self.Chosen(int(event.row_key.value)))

    def action_open(self) -> None:
        table = self.query_one(DataTable)
        if table.row_count:
            row_key, _ = table.coordinate_to_cell_key(table.cursor_coordinate)
            if row_key.value is not None:
                self.post_message(self.Chosen(int(row_key.value)))

    def action_reload(self) -> None:
        self.query_one(DataTable).loading = True
        self.load_conversations()

    def action_cursor_down(self) -> None:
        self.query_one(DataTable).action_cursor_down()

    def action_cursor_up(self) -> None:
        self.query_one(DataTable).action_cursor_up()
