"""Export dialog: the assembled messages as JSON to a path the user types.

An existing file is only replaced after a second confirmation, and the file
is written to a temporary sibling first and renamed, so a failed write never
leaves half a file behind.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Static

from ctxview.jsjson import js_stringify
from ctxview.model import Trace


def export_json(trace: Trace) -> str:
    """The messages the model receives, exactly as JSON.stringify would write them."""
    return js_stringify(trace.messages) + "\n"


def write_atomically(path: Path, text: str, *, overwrite: bool) -> Path:
    """Write ``text`` to ``path`` via a temporary file in the same directory; refuse to replace unless asked."""
    path = path.expanduser()
    if path.exists() and not overwrite:
        raise FileExistsError(f"{path} exists")
    if path.is_dir():
        raise IsADirectoryError(f"{path} is a directory")
    directory = path.parent if str(path.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


class ExportScreen(ModalScreen[Path | None]):
    """Ask for a path, confirm an overwrite, write the JSON."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel", id="export.cancel")]

    DEFAULT_CSS = """
    ExportScreen {
        align: center middle;
        & > Vertical {
            width: 76;
            max-width: 100%;
            height: auto;
            border: round $accent;
            background: $surface;
            padding: 1 2;
        }
        & #export-path { margin: 1 0; }
        & #export-status { height: auto; color: $text-muted; }
        & #export-status.-warning { color: $warning; }
        & #export-status.-error { color: $error; }
        & Horizontal { height: auto; align-horizontal: right; }
        & Button { margin-left: 2; }
    }
    """

    def __init__(self, trace: Trace, db_path: Path | None) -> None:
        super().__init__()
        self.trace = trace
        stem = db_path.stem if db_path is not None else "ctxview"
        self.default_path = f"{stem}-conversation-{trace.conversation_id}-context.json"
        self._confirmed_for: Path | None = None

    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = "export the assembled context"
            yield Static(
                Text(
                    f"{len(self.trace.messages):,} messages ({self.trace.summary.final_tokens:,} tokens) as JSON — "
                    "exactly what the model receives."
                )
            )
            yield Input(self.default_path, id="export-path", placeholder="file to write")
            yield Static("", id="export-status")
            with Horizontal():
                yield Button("Cancel", id="cancel")
                yield Button("Export", id="export", variant="primary")

    def on_mount(self) -> None:
        self.query_one("#export-path", Input).focus()

    def _status(self, text: str, level: str = "") -> None:
        status = self.query_one("#export-status", Static)
        status.update(Text(text))
        status.set_class(level == "warning", "-warning")
        status.set_class(level == "error", "-error")

    @on(Input.Changed, "#export-path")
    def _path_changed(self) -> None:
        self._confirmed_for = None
        self.query_one("#export", Button).label = "Export"
        self._status("")

    @on(Input.Submitted, "#export-path")
    @on(Button.Pressed, "#export")
    def _export(self) -> None:
        raw = self.query_one("#export-path", Input).value.strip()
        if not raw:
            self._status("type a file name", "error")
            return
        path = Path(raw).expanduser()
        if path.exists() and self._confirmed_for != path:
            if path.is_dir():
                self._status(f"{path} is a directory — type a file name", "error")
                return
            self._confirmed_for = path
            self.query_one("#export", Button).label = "Overwrite"
            self._status(f"{path} exists — press Enter or Overwrite again to replace it", "warning")
            return
        self._write(path, overwrite=self._confirmed_for == path)

    @work(thread=True, exclusive=True, group="export", exit_on_error=False)
    def _write(self, path: Path, *, overwrite: bool) -> None:
        try:
            written = write_atomically(path, export_json(self.trace), overwrite=overwrite)
        except OSError as exc:
            self.app.call_from_thread(self._status, f"could not write: {exc}", "error")
            return
        self.app.call_from_thread(self._done, written)

    def _done(self, path: Path) -> None:
        self.app.notify(f"wrote {path.resolve()}", title="Exported")
        self.dismiss(path)

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)
