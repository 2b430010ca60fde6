"""``M``: every message of the conversation, including those summaries now cover, paged from the database.

Each row says where its message stands: in the context (green), summarised into a
summary of the context (that summary's id), or not in the context.  ``enter`` jumps to
what the model sees instead: the summary's row in the inspector's items table (its text
is in the detail pane there), or the message's own row.  ``n`` / ``N`` skip to the next
or previous change of mark, so a run of 80,000 summarised messages is one key.
The rows come from ``ctxview.browse.messages`` a page at a time; nothing is written.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from rich.console import Group
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Header, Static

from ctxview.browse.messages import BrowsedMessage, MessageBrowser, open_browser
from ctxview.tui.actions import app_key, bindings
from ctxview.tui.view import clean_block, clean_inline
from ctxview.tui.widgets.rows_list import Cell, ListColumn, RowsList

TEXT_LIMIT = 20_000
MARK_GLYPH = {"context": "●", "summarised": "◐", "not-in-context": "○"}
COLUMNS = (
    ListColumn("#", 7, ">"),
    ListColumn("seq", 7, ">"),
    ListColumn("role", 9),
    ListColumn("tokens", 6, ">"),
    ListColumn("where", 24),
    ListColumn("text", None),
)


@dataclass(frozen=True, slots=True)
class JumpTo:
    """What the browser asks the inspector to select: an item key, and the words for a notification."""

    key: str
    what: str


def row_cells(row: BrowsedMessage) -> list[Cell]:
    """The cells of one message row (also what the tests read)."""
    if row.mark == "context":
        where = f"{MARK_GLYPH['context']} context item {row.context_ordinal}"
    elif row.mark == "summarised" and row.cover is not None:
        where = f"{MARK_GLYPH['summarised']} {row.cover.summary_id}"
    else:
        where = f"{MARK_GLYPH['not-in-context']} not in the context"
    tokens = "" if row.token_count is None else f"{row.token_count:,}"
    muted = "muted" if row.mark == "not-in-context" else ""
    return [
        (f"{row.position + 1:,}", "muted"),
        ("" if row.seq is None else str(row.seq), muted),
        (row.role, muted),
        (tokens, muted),
        (where, row.mark),
        (row.preview, muted),
    ]


class MessagesScreen(Screen[JumpTo | None]):
    """The conversation browser; dismisses with the item to select in the inspector, or None."""

    BINDINGS: ClassVar[list[BindingType]] = bindings("messages")
    AUTO_FOCUS = "#message-list"

    DEFAULT_CSS = """
    MessagesScreen {
        & #messages-status { height: auto; padding: 0 1; color: $text-muted; }
        & #messages-main { height: 1fr; }
        & #message-list { width: 3fr; height: 1fr; }
        & #message-detail-box { width: 2fr; height: 1fr; border: round $border-blurred; padding: 0 1; }
    }
    """

    def __init__(self, db_path: Path, conversation_id: int, item_keys: frozenset[str] | None = None) -> None:
        super().__init__()
        self.db_path = db_path
        self.conversation_id = conversation_id
        self.item_keys = item_keys  # the keys of the inspector's rows (None: no run to jump into)
        self.browser: MessageBrowser | None = None
        self.load_error: str | None = None

    def compose(self) -> ComposeResult:
        yield Header(icon="◧")
        yield Static("reading the messages…", id="messages-status")
        with Horizontal(id="messages-main"):
            yield RowsList(COLUMNS, id="message-list")
            with VerticalScroll(id="message-detail-box"):
                yield Static("", id="message-detail")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.sub_title = f"{self.db_path.name} · conversation {self.conversation_id} · every message"
        listing = self.query_one(RowsList)
        listing.border_title = "messages"
        self.query_one("#message-detail-box").border_title = "message"
        listing.loading = True
        self._load()

    @work(thread=True, exclusive=True, group="messages-load", exit_on_error=False)
    def _load(self) -> None:
        from ctxview.store import LcmStore

        try:
            store = LcmStore(self.db_path)
            browser = open_browser(store.connection, self.conversation_id)
        except Exception as exc:  # an unreadable file or a schema this view cannot read: say so
            self.app.call_from_thread(self._failed, str(exc))
            return
        self.app.call_from_thread(self._loaded, store, browser)

    def _failed(self, message: str) -> None:
        self.load_error = message
        self.query_one(RowsList).loading = False
        self.query_one("#messages-status", Static).update(Text(f"cannot read the messages: {message}", style="red"))

    def _loaded(self, store: object, browser: MessageBrowser) -> None:
        self._store = store
        self.browser = browser
        listing = self.query_one(RowsList)
        listing.loading = False
        counts = browser.mark_counts
        status = Text()
        status.append(f"{browser.count:,} messages: ")
        status.append(f"● {counts['context']:,} in the context", style="green")
        status.append(" · ")
        status.append(f"◐ {counts['summarised']:,} summarised", style="cyan")
        status.append(" · ")
        status.append(f"○ {counts['not-in-context']:,} not in the context", style="dim")
        keys = ", ".join(
            f"{app_key(self.app, f'messages.{name}')} {words}"
            for name, words in (("jump", "jumps to what the model sees"), ("next_change", "next change of mark"))
        )
        status.append(f"   ({keys})", style="dim")
        for note in browser.notes:
            status.append(f"\nnote: {note}", style="yellow")
        self.query_one("#messages-status", Static).update(status)
        listing.border_title = f"messages · {browser.count:,}"
        listing.set_rows(browser.count, self._cells)

    def on_unmount(self) -> None:
        store = getattr(self, "_store", None)
        if store is not None:
            store.close()  # type: ignore[attr-defined]

    def _cells(self, line: int) -> list[Cell] | None:
        row = self.browser.row(line) if self.browser is not None else None
        return row_cells(row) if row is not None else None

    @property
    def selected(self) -> BrowsedMessage | None:
        listing = self.query_one(RowsList)
        if self.browser is None or listing.cursor is None:
            return None
        return self.browser.row(listing.cursor)

    @on(RowsList.Highlighted)
    def _highlighted(self, event: RowsList.Highlighted) -> None:
        detail = self.query_one("#message-detail", Static)
        row = self.selected
        if row is None or self.browser is None:
            detail.update("")
            return
        detail.update(self._detail(self.browser, row))
        self.query_one("#message-detail-box", VerticalScroll).scroll_home(animate=False)

    def _detail(self, browser: MessageBrowser, row: BrowsedMessage) -> Group:
        head = Text()
        head.append(f"message {row.message_id}", style="bold")
        head.append(f" · seq {row.seq} · {clean_inline(row.role, 40)}")
        if row.token_count is not None:
            head.append(f" · {row.token_count:,} tokens")
        if row.created_at:
            head.append(f" · {clean_inline(row.created_at, 40)}")
        words = row.mark_text
        mark = Text(f"{MARK_GLYPH[row.mark]} {words[:1].upper()}{words[1:]}",
                    style={"context": "green", "summarised": "cyan"}.get(row.mark, "dim"))
        parts: list[Text] = [head, mark]
        jump = app_key(self.app, "messages.jump")
        if row.cover is not None:
            summary = browser.summary(row.cover.summary_id)
            if row.direct_summaries and row.direct_summaries != (row.cover.summary_id,):
                parts.append(Text(f"directly summarised in {', '.join(row.direct_summaries)}", style="dim"))
            if summary is None:
                parts.append(Text(f"summary {row.cover.summary_id} does not exist", style="yellow"))
            else:
                title = Text(f"\n{summary.summary_id} ", style="bold cyan")
                title.append(f"({summary.kind}, depth {summary.depth}, context item {row.cover.ordinal}) — "
                             f"{jump} selects it in the items table", style="dim")
                parts.append(title)
                parts.append(Text(clean_block(summary.content[:TEXT_LIMIT])))
        elif row.mark == "context":
            parts.append(Text(f"{jump} selects its row (item {row.context_ordinal}) in the items table", style="dim"))
        parts.append(Text("\nmessage text", style="bold"))
        parts.append(Text(clean_block(browser.message_text(row.message_id)[:TEXT_LIMIT])))
        return Group(*parts)

    # --- actions -----------------------------------------------------------------------------

    def action_jump(self) -> None:
        row = self.selected
        if row is None:
            return
        if row.cover is not None:
            key, what = f"o:{row.cover.ordinal}", f"summary {row.cover.summary_id} (item {row.cover.ordinal})"
        elif row.context_ordinal is not None:
            key, what = f"o:{row.context_ordinal}", f"item {row.context_ordinal}"
        else:
            self.notify(f"message {row.message_id} is not in the context: nothing the model sees stands for it",
                        timeout=4, markup=False)
            return
        if self.item_keys is not None and key not in self.item_keys:
            self.notify(f"{what} is not a row of the assembled context", severity="warning", timeout=4, markup=False)
            return
        self.dismiss(JumpTo(key, what))

    def action_next_change(self, direction: int) -> None:
        listing = self.query_one(RowsList)
        if self.browser is None or listing.cursor is None:
            return
        found = self.browser.next_with_mark(listing.cursor, direction)
        if found is None:
            self.notify("no change of mark that way", timeout=2)
            return
        listing.move_cursor_to(found, center=True)

    def action_close(self) -> None:
        self.dismiss(None)
