"""The frame of the small read-only list views (focus briefs, large files): a list, a detail pane, notes.

A subclass reads its rows in a thread (``read``, with its own read-only store),
says how a row looks (``cells``) and what its detail is (``detail``); this frame
shows the notes (a missing table, an inconsistent row) above the list, and an
unreadable database as one line, never a crash.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any, ClassVar, Generic, TypeVar

from rich.console import RenderableType
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Header, Static

from ctxview.tui.view import clean_inline
from ctxview.tui.widgets.rows_list import Cell, ListColumn, RowsList

Row = TypeVar("Row")


def detail_field(label: str, value: str, style: str = "", *, width: int = 12) -> Text:
    """One ``label  value`` line of a list view's detail pane, the value as one clean line."""
    line = Text()
    line.append(f"{label:<{width}}", style="bold")
    line.append(clean_inline(value, 2000), style=style)
    return line


class ListDetailScreen(Screen[None], Generic[Row]):
    """Rows on the left, the selected row's detail on the right."""

    TITLE_NOUN: ClassVar[str] = "rows"
    COLUMNS: ClassVar[tuple[ListColumn, ...]] = ()
    EMPTY: ClassVar[str] = "nothing here"
    AUTO_FOCUS = "#detail-list"

    DEFAULT_CSS = """
    ListDetailScreen {
        & #list-status { height: auto; padding: 0 1; color: $text-muted; }
        & #list-main { height: 1fr; }
        & #detail-list { width: 3fr; height: 1fr; }
        & #detail-box { width: 2fr; height: 1fr; border: round $border-blurred; padding: 0 1; }
    }
    """

    def __init__(self, db_path: Path, conversation_id: int) -> None:
        super().__init__()
        self.db_path = db_path
        self.conversation_id = conversation_id
        self.rows: list[Row] = []
        self.notes: list[str] = []
        self.load_error: str | None = None
        self._connection: sqlite3.Connection | None = None
        self._store: Any = None

    def compose(self) -> ComposeResult:
        yield Header(icon="◧")
        yield Static("reading…", id="list-status")
        with Horizontal(id="list-main"):
            yield RowsList(self.COLUMNS, id="detail-list")
            with VerticalScroll(id="detail-box"):
                yield Static("", id="detail-text")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.sub_title = f"{self.db_path.name} · conversation {self.conversation_id} · {self.TITLE_NOUN}"
        listing = self.query_one(RowsList)
        listing.border_title = self.TITLE_NOUN
        self.query_one("#detail-box").border_title = "detail"
        listing.loading = True
        self._load()

    # --- subclass hooks -------------------------------------------------------------------

    def read(self, connection: sqlite3.Connection) -> tuple[list[Row], list[str]]:
        raise NotImplementedError

    def cells(self, row: Row) -> list[Cell]:
        raise NotImplementedError

    def detail(self, row: Row, connection: sqlite3.Connection) -> RenderableType:
        raise NotImplementedError

    def status(self, rows: list[Row]) -> Text:
        return Text(f"{len(rows):,} {self.TITLE_NOUN}")

    # --- loading ------------------------------------------------------------------------------

    @work(thread=True, exclusive=True, group="list-load", exit_on_error=False)
    def _load(self) -> None:
        from ctxview.store import LcmStore

        try:
            store = LcmStore(self.db_path)
            rows, notes = self.read(store.connection)
        except Exception as exc:  # an unreadable file or schema: one line, the app stays up
            self.app.call_from_thread(self._failed, str(exc))
            return
        self.app.call_from_thread(self._loaded, store, rows, notes)

    def _failed(self, message: str) -> None:
        self.load_error = message
        self.query_one(RowsList).loading = False
        self.query_one("#list-status", Static).update(Text(f"cannot read the {self.TITLE_NOUN}: {message}",
                                                           style="red"))

    def _loaded(self, store: Any, rows: list[Row], notes: list[str]) -> None:
        self._store = store
        self._connection = store.connection
        self.rows = rows
        self.notes = notes
        listing = self.query_one(RowsList)
        listing.loading = False
        status = self.status(rows) if rows else Text(self.EMPTY)
        for note in notes:
            status.append(f"\nnote: {note}", style="yellow")
        self.query_one("#list-status", Static).update(status)
        listing.border_title = f"{self.TITLE_NOUN} · {len(rows):,}"
        listing.set_rows(len(rows), lambda line: self.cells(self.rows[line]) if 0 <= line < len(self.rows) else None)

    def on_unmount(self) -> None:
        if self._store is not None:
            self._store.close()

    @on(RowsList.Highlighted)
    def _highlighted(self, event: RowsList.Highlighted) -> None:
        text = self.query_one("#detail-text", Static)
        if event.line is None or self._connection is None or not 0 <= event.line < len(self.rows):
            text.update("")
            return
        text.update(self.detail(self.rows[event.line], self._connection))
        self.query_one("#detail-box", VerticalScroll).scroll_home(animate=False)

    def action_close(self) -> None:
        self.dismiss(None)
