"""``a``: a live input written by hand: its kind (the host's markers, spec §9.5) and its text.

The form returns the message ``ctxview.whatif.live_inputs.live_message`` writes,
so the engine step sees it exactly as it would see the real one; the inspector
appends it to the live window (or, for ``A`` on a live row, puts it in place of
the one it edits) and re-assembles at once.
"""

from __future__ import annotations

from typing import Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Label, Select, Static, TextArea

from ctxview.tui.actions import app_key, bindings
from ctxview.whatif.live_inputs import LIVE_KINDS, live_message

_NOTES = {
    "user": "no marker: the engine appends it only when it is the decorated face of the current turn",
    "subagent": "[Inter-session message] … [Internal task completion event] Child result: …",
    "inter-session": "[Inter-session message] with the internal-context markers",
    "retry": "[Retry after the previous model attempt failed or timed out] on its first line",
}


class AddLiveScreen(ModalScreen[dict[str, Any] | None]):
    """Kind and text of one live input; dismisses with the message, or None."""

    BINDINGS: ClassVar[list[BindingType]] = bindings("add_live")

    DEFAULT_CSS = """
    AddLiveScreen {
        align: center middle;
        & > Vertical {
            width: 90;
            max-width: 96%;
            height: auto;
            border: round $accent;
            background: $surface;
            padding: 0 1;
        }
        & TextArea { height: 8; }
        & #live-note { color: $text-muted; height: auto; }
        & Horizontal { height: auto; align-horizontal: right; }
        & Button { margin-left: 1; }
    }
    """

    def __init__(self, kind: str = "subagent", text: str = "", *, editing: str | None = None) -> None:
        super().__init__()
        self.kind = kind
        self.text = text
        self.editing = editing  # the live input replaced ("L2"), or None when adding

    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = f"edit live input {self.editing}" if self.editing else "add a live input"
            box.border_subtitle = (
                f"{app_key(self.app, 'add_live.submit')} {'saves' if self.editing else 'adds'} · "
                f"{app_key(self.app, 'add_live.cancel')} cancels"
            )
            yield Label("kind")
            yield Select([(k.title, k.name) for k in LIVE_KINDS], value=self.kind, allow_blank=False, id="live-kind")
            yield Static(Text(_NOTES[self.kind]), id="live-note")
            yield Label("text")
            yield TextArea(self.text, id="live-text")
            with Horizontal():
                yield Button("Cancel", id="live-cancel")
                yield Button("Save" if self.editing else "Add", variant="primary", id="live-add")

    def on_mount(self) -> None:
        self.query_one(TextArea).focus()

    def on_select_changed(self, event: Select.Changed) -> None:
        if isinstance(event.value, str):
            self.kind = event.value
            self.query_one("#live-note", Static).update(Text(_NOTES[self.kind]))

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "live-add":
            self.action_submit()
        else:
            self.action_cancel()

    def action_submit(self) -> None:
        text = self.query_one(TextArea).text
        if not text.strip():
            self.notify("write the text of the live input first", severity="warning", timeout=3)
            return
        self.dismiss(live_message(self.kind, text))

    def action_cancel(self) -> None:
        self.dismiss(None)
