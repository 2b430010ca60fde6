"""CtxviewApp: startup, screens and the bindings every screen shares.

The inspector opens straight away when there is one conversation or
``--conversation`` was given (no picker is built then: on a large session it would
compete with the read); otherwise the picker is the bottom screen and the inspector
is pushed on top of it.  ``b`` pops back to the picker, or puts one in the
inspector's place.  Every screen's bindings come from the action
table (``ctxview.tui.actions``) and carry ids, so users can remap them with
``App.set_keymap``; the help and the palette show the remapped keys.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from textual import on, work
from textual.app import App
from textual.binding import BindingType

from ctxview.model import ConversationInfo, Params
from ctxview.tui.actions import active_keymap, bindings
from ctxview.tui.commands import CtxviewCommands
from ctxview.tui.screens.help import HelpScreen
from ctxview.tui.screens.inspector import InspectorScreen
from ctxview.tui.screens.picker import PickerScreen
from ctxview.tui.screens.sessions import SessionsScreen

if TYPE_CHECKING:
    from ctxview.openclaw.host import Discovery
    from ctxview.openclaw.mapping import SessionRow


class CtxviewApp(App[int]):
    """The ctxview inspector."""

    TITLE = "ctxview"
    CSS_PATH: ClassVar[list[str | Path]] = ["global.tcss", "app.tcss"]
    COMMANDS = App.COMMANDS | {CtxviewCommands}

    BINDINGS: ClassVar[list[BindingType]] = bindings("app")

    def __init__(
        self,
        db_path: Path | None,
        *,
        conversation_id: int | None = None,
        params: Params | None = None,
        demo: bool = False,
        show_timings: bool = True,
        watch: bool = False,
        discovery: Discovery | None = None,
        notice: str | None = None,
        state_dir: str | None = None,
    ) -> None:
        """``discovery``: the user's OpenClaw sessions (the session picker replaces the conversation picker);
        ``notice``: one line shown on start (where ctxview looked, when it found nothing);
        ``state_dir``: where the transcripts of ``db_path``'s sessions are (default: found from the database)."""
        super().__init__()
        self.discovery = discovery
        self.notice = notice
        self.state_dir = state_dir
        self.host_row: SessionRow | None = None  # the session chosen in the session picker
        self.db_path = db_path
        self.conversation_id = conversation_id
        self.params = params if params is not None else Params()
        self.demo = demo
        self.show_timings = show_timings
        self.watch = watch  # --watch: the inspector re-assembles when the database changes
        self._auto_open = True

    def on_mount(self) -> None:
        if self.notice:
            self.notify(self.notice, title="No OpenClaw sessions found", timeout=15, markup=False)
        if self.discovery is not None:
            self.push_screen(SessionsScreen(self.discovery))
            return
        if self.db_path is not None and self.conversation_id is not None:
            # straight to the conversation: the picker is built only if the user goes back to it (building
            # it, and reading its list, would compete with reading and assembling a large session)
            self._auto_open = False
            self.open_conversation(self.conversation_id)
            return
        if self.db_path is not None:
            self._list_conversations(self.db_path)  # one conversation opens straight away too
            return
        self.push_screen(PickerScreen(self.db_path))

    @work(thread=True, exclusive=True, group="startup", exit_on_error=False)
    def _list_conversations(self, path: Path) -> None:
        from ctxview.store import LcmStore

        try:
            with LcmStore(path) as store:
                found: list[ConversationInfo] | None = store.list_conversations()
        except Exception:  # the picker reads the file again and says what is wrong with it
            found = None
        self.call_from_thread(self._conversations_listed, found)

    def _conversations_listed(self, found: list[ConversationInfo] | None) -> None:
        if found is not None and len(found) == 1:
            self._auto_open = False
            self.open_conversation(found[0].conversation_id)
        else:
            self.push_screen(PickerScreen(self.db_path))

    @on(PickerScreen.Loaded)
    def _picker_loaded(self, event: PickerScreen.Loaded) -> None:
        """Skip the picker once at startup when the choice is obvious."""
        self.db_path = event.path
        if not self._auto_open:
            return
        self._auto_open = False
        if self.conversation_id is not None:
            self.open_conversation(self.conversation_id)
        elif len(event.conversations) == 1:
            self.open_conversation(event.conversations[0].conversation_id)

    @on(PickerScreen.Chosen)
    def _picker_chosen(self, event: PickerScreen.Chosen) -> None:
        # a conversation the user picks is assembled as is: a params file's session identity no longer applies
        self.params = replace(self.params, session_id=None, session_key=None)
        self.open_conversation(event.conversation_id)

    @on(SessionsScreen.Chosen)
    def _session_chosen_event(self, event: SessionsScreen.Chosen) -> None:
        self._session_chosen(event.conversation_id, event.row)

    def _session_chosen(self, conversation_id: int, row: SessionRow | None) -> None:
        """A session (or a conversation without one) chosen in the session picker."""
        self.params = replace(self.params, session_id=None, session_key=None)
        self.host_row = row
        self.open_conversation(conversation_id)

    def open_conversation(self, conversation_id: int) -> None:
        if self.db_path is not None and not isinstance(self.screen, InspectorScreen):
            from ctxview.tui.host_view import HostSource

            host = None if self.demo else HostSource(self.discovery, self.host_row, self.state_dir)
            self.push_screen(InspectorScreen(self.db_path, conversation_id, self.params, watch=self.watch, host=host))

    @on(InspectorScreen.BackRequested)
    def _back_to_picker(self, event: InspectorScreen.BackRequested) -> None:
        if isinstance(self.screen, InspectorScreen):
            self.params = event.params  # the next conversation opens with the same knobs
            if len(self.screen_stack) > 2:  # a picker (of conversations or of sessions) is under it
                self.pop_screen()
            else:  # opened straight from the command line: the picker takes the inspector's place
                self.switch_screen(PickerScreen(self.db_path))

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(active_keymap(self)))

    def action_screenshot(self) -> None:
        path = self.save_screenshot(path=os.getcwd())
        self.notify(f"saved {path}", title="Screenshot", markup=False)
