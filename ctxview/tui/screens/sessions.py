"""The session picker: the user's OpenClaw agents, then each agent's sessions newest first.

Shown instead of the conversation picker when ctxview found an OpenClaw state
directory.  Every session row names the LCM conversation it maps to, with its
message, summary and item counts and the session's last activity, or says
plainly what is missing (no LCM conversation, no transcript); the LCM
conversations no session's transcript belongs to follow.  The list is built
before the app starts (``ctxview.openclaw.host.discover`` reads only indexes).
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.message import Message
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Static

from ctxview.openclaw.host import Discovery
from ctxview.openclaw.listing import agent_line, local_time, row_status, rows_by_agent, session_name, short_id
from ctxview.openclaw.mapping import SessionRow
from ctxview.tui.actions import app_key, bindings
from ctxview.tui.view import clean_inline


class SessionsScreen(Screen[None]):
    """Choose one of the user's sessions (or a conversation no session has)."""

    class Chosen(Message):
        """The user chose a session that has an LCM conversation (``row`` None: a conversation alone)."""

        def __init__(self, conversation_id: int, row: SessionRow | None) -> None:
            super().__init__()
            self.conversation_id = conversation_id
            self.row = row

    BINDINGS: ClassVar[list[BindingType]] = bindings("picker")

    DEFAULT_CSS = """
    SessionsScreen {
        & #sessions-intro { padding: 1 2 0 2; color: $text-muted; }
        & DataTable { height: 1fr; margin: 1 2 0 2; border: round $border; }
        & #sessions-notes { padding: 0 2 1 2; color: $text-muted; max-height: 8; }
    }
    """

    def __init__(self, discovery: Discovery) -> None:
        super().__init__()
        self.discovery = discovery
        self.rows: dict[str, SessionRow] = {}  # row key → session
        self.orphans: dict[str, int] = {}  # row key → conversation without a transcript

    def compose(self) -> ComposeResult:
        yield Header(icon="◧")
        yield Static("", id="sessions-intro")
        yield DataTable(cursor_type="row", zebra_stripes=False, id="sessions")
        yield Static("", id="sessions-notes")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        scan = self.discovery.scan
        count = len(scan.rows)
        self.sub_title = f"{scan.state.path.name} · {count} session{'s' if count != 1 else ''}"
        lcm = scan.lcm
        rules = f", lossless-claw {scan.engine_line} rules" if scan.engine_line else ""
        open_key = app_key(self.app, "picker.open")
        open_key = open_key.capitalize() if len(open_key) > 1 else open_key
        self.query_one("#sessions-intro", Static).update(
            Text(
                f"state directory {scan.state.path} ({scan.state.how})\n"
                f"LCM database {lcm.path} ({lcm.how}{'' if lcm.exists else ', not found'}{rules})\n"
                f"{open_key} opens a session's conversation with the host's live window from its transcript."
            )
        )
        table = self.query_one(DataTable)
        table.border_title = "agents and sessions"
        for key, label in (("when", "last activity"), ("session", "session"), ("conv", "conv"),
                           ("messages", "messages"), ("summaries", "summaries"), ("items", "items"),
                           ("id", "id"), ("status", "conversation / transcript")):
            table.add_column(label, key=key)
        self._fill(table)
        notes = scan.notes
        self.query_one("#sessions-notes", Static).update(
            Text("\n".join(f"note: {clean_inline(n, 200)}" for n in notes[:6])
                 + (f"\n… {len(notes) - 6} more (ctxview conversations --state-dir lists them)" if len(notes) > 6
                    else ""))
        )
        first = next((i for i, key in enumerate(self._order) if key in self.rows or key in self.orphans), 0)
        table.move_cursor(row=first)
        table.focus()

    def _fill(self, table: DataTable[Text]) -> None:
        self._order: list[str] = []
        blank = Text("")
        for agent, rows in rows_by_agent(self.discovery.scan):
            key = f"agent:{agent.agent_id}"
            self._order.append(key)
            era = agent_line(agent, len(rows)).split(" · ", 1)[1]
            table.add_row(Text(f"agent {agent.agent_id}", style="bold"), Text(era, style="bold"), *([blank] * 6),
                          key=key)
            for index, row in enumerate(rows):
                key = f"session:{agent.agent_id}:{index}"
                self._order.append(key)
                self.rows[key] = row
                table.add_row(*self._session_cells(row), key=key)
        orphans = self.discovery.scan.conversations_without_transcript
        if orphans:
            self._order.append("orphans")
            title = Text("LCM conversations without a transcript", style="bold")
            table.add_row(Text("no session", style="bold"), title, *([blank] * 6), key="orphans")
            for conv in orphans:
                key = f"conversation:{conv.conversation_id}"
                self._order.append(key)
                self.orphans[key] = conv.conversation_id
                name = clean_inline(conv.session_key or conv.title or "", 40)
                table.add_row(
                    Text(""), Text(f"  {name}"), Text(str(conv.conversation_id), justify="right"),
                    Text(f"{conv.message_count:,}", justify="right"), Text(f"{conv.summary_count:,}", justify="right"),
                    Text(f"{conv.context_item_count:,}", justify="right"),
                    Text(short_id(conv.session_id) if conv.session_id else "—"),
                    Text("no transcript", style="yellow"),
                    key=key,
                )

    @staticmethod
    def _session_cells(row: SessionRow) -> list[Text]:
        session = row.session
        conv = row.conversation
        missing = [what for what, gone in (("no LCM conversation", conv is None),
                                           ("no transcript", session.transcript is None)) if gone]
        dim = "dim" if conv is None else ""
        cells = [
            Text(local_time(session.updated_at_ms), style=dim),
            Text("  " + clean_inline(session_name(session), 40), style=dim),
        ]
        if conv is not None:
            cells += [
                Text(str(conv.conversation_id), justify="right"),
                Text(f"{conv.message_count:,}", justify="right"),
                Text(f"{conv.summary_count:,}", justify="right"),
                Text(f"{conv.context_item_count:,}", justify="right"),
            ]
        else:
            cells += [Text("—", justify="right", style="dim"), Text(""), Text(""), Text("")]
        cells.append(Text(short_id(session.session_id), style=dim))
        cells.append(Text(", ".join(missing), style="yellow") if missing else Text("✓", style="green"))
        return cells

    def _choose(self, key: str | None) -> None:
        if key is None:
            return
        if key in self.orphans:
            self.post_message(self.Chosen(self.orphans[key], None))
            return
        row = self.rows.get(key)
        if row is None:
            return
        if row.conversation is None:
            self.notify(clean_inline(row_status(row), 300), title="Nothing to inspect", severity="warning",
                        timeout=6, markup=False)
            return
        self.post_message(self.Chosen(row.conversation.conversation_id, row))

    @on(DataTable.RowSelected)
    def _row_selected(self, event: DataTable.RowSelected) -> None:
        self._choose(event.row_key.value)

    def action_open(self) -> None:
        table = self.query_one(DataTable)
        if table.row_count:
            row_key, _ = table.coordinate_to_cell_key(table.cursor_coordinate)
            self._choose(row_key.value)

    def action_reload(self) -> None:
        self.notify("the session list is read when ctxview starts; restart it to re-read", timeout=4)

    def action_cursor_down(self) -> None:
        self.query_one(DataTable).action_cursor_down()

    def action_cursor_up(self) -> None:
        self.query_one(DataTable).action_cursor_up()
