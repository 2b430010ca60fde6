"""``e``: the export dialog — a format, a path, write it or copy it to the clipboard.

The formats are the ``ctxview.export.formats`` table with their descriptions; the text
is ``export.render(trace, fmt)``, byte for byte what ``ctxview export``
writes for the same run.  The path starts as ``suggested_filename`` for the
format and follows the format until the user edits it.  Writing goes through
``export.write_export`` (atomic, never a half file); an existing file is
only replaced after the user confirms, then with ``force=True``.  Copying
uses the terminal's clipboard escape (OSC 52), which not every terminal
honours, so the notification says so.  Errors are notifications and the
dialog stays open; success is confirmed with the path and the byte count.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, OptionList, Static
from textual.widgets.option_list import Option

from ctxview.errors import CtxviewError
from ctxview.export import FORMATS, format_named, render, suggested_filename, write_export
from ctxview.model import Trace, count_text
from ctxview.tui.actions import app_key, bindings
from ctxview.tui.scoring_view import run_label

CLIPBOARD_NOTE = (
    "via the terminal's clipboard escape (OSC 52): it arrives only where the terminal supports it "
    "(most modern terminals; not macOS Terminal; tmux needs set-clipboard on)"
)


def export_bytes(text: str) -> bytes:
    """The bytes ``write_export`` writes for ``text`` (lone surrogates escaped, as in the file)."""
    return text.encode("utf-8", "backslashreplace")


def format_option(fmt: str) -> Option:
    prompt = Text()
    prompt.append(f"{fmt:<10}", style="bold")
    prompt.append(format_named(fmt).description, style="dim")
    return Option(prompt, id=fmt)


class ExportScreen(ModalScreen[Path | None]):
    """Choose a format and a file, then write it (or copy the text to the clipboard)."""

    BINDINGS: ClassVar[list[BindingType]] = bindings("export")

    DEFAULT_CSS = """
    ExportScreen {
        align: center middle;
        & > Vertical {
            width: 116;
            max-width: 100%;
            height: auto;
            max-height: 100%;
            border: round $accent;
            background: $surface;
            padding: 1 2;
        }
        & #export-summary { color: $text-muted; margin-bottom: 1; }
        & Label { color: $text-muted; text-style: bold; }
        & #export-format { height: auto; max-height: 10; margin-bottom: 1; border: round $foreground 30%; }
        & #export-format:focus { border: round $accent; }
        & #export-path { margin-bottom: 0; }
        & #export-status { height: auto; min-height: 1; color: $text-muted; margin: 0 0 1 0; }
        & #export-status.-warning { color: $text-warning; }
        & #export-status.-error { color: $text-error; }
        & #export-keys { color: $text-muted; height: 1; }
        & Horizontal { height: auto; align-horizontal: right; }
        & Button { margin-left: 2; }
    }
    """

    def __init__(self, trace: Trace, db_path: Path | None, fmt: str | None = None) -> None:
        """``fmt``: the format to start with (the inspector passes the one chosen last time)."""
        super().__init__()
        self.trace = trace
        self.stem = db_path.stem if db_path is not None else "ctxview"
        self.fmt = fmt if fmt in FORMATS else FORMATS[0]
        self.suggested = self.suggestion(self.fmt)
        self.path_edited = False  # once the user types a path, a new format no longer replaces it
        self._confirmed_for: Path | None = None  # the existing file the user agreed to replace
        self._busy = False

    def suggestion(self, fmt: str) -> str:
        return suggested_filename(fmt, stem=self.stem, conversation_id=self.trace.conversation_id)

    # --- layout ------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = "export the assembled context"
            up, down, copy, cancel = (
                app_key(self.app, f"export.{name}") for name in ("format_up", "format_down", "copy", "cancel")
            )
            box.border_subtitle = f"{up}{down} format · enter write · {copy} copy · {cancel} cancel"
            yield Static(self._summary(), id="export-summary")
            yield Label("format")
            yield OptionList(*(format_option(fmt) for fmt in FORMATS), id="export-format")
            yield Label("file")
            yield Input(self.suggested, id="export-path", placeholder="file to write")
            yield Static("", id="export-status")
            with Horizontal():
                yield Button("Cancel", id="cancel")
                yield Button("Copy to clipboard", id="copy")
                yield Button("Write", id="write", variant="primary")

    def _summary(self) -> Text:
        s = self.trace.summary
        text = Text(
            f"{count_text(len(self.trace.messages), 'message')} · {count_text(s.final_tokens, 'token')} · "
            f"conversation {self.trace.conversation_id} · {s.selection_mode}"
        )
        mode = run_label(self.trace)
        if mode:
            text.append(f" · scorer {mode}")
        return text

    def on_mount(self) -> None:
        formats = self.query_one("#export-format", OptionList)
        formats.highlighted = FORMATS.index(self.fmt)
        self.query_one("#export-path", Input).focus()

    # --- format and path ------------------------------------------------------------------------

    @on(OptionList.OptionHighlighted, "#export-format")
    def _format_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        fmt = event.option.id
        if fmt is None or fmt == self.fmt:
            return
        self.fmt = fmt
        self._reset_confirmation()
        if not self.path_edited:
            self.suggested = self.suggestion(fmt)
            field = self.query_one("#export-path", Input)
            field.value = self.suggested
            field.cursor_position = len(self.suggested)  # no stale selection of the old name
        self._status("")

    @on(OptionList.OptionSelected, "#export-format")
    def _format_chosen(self) -> None:
        self.query_one("#export-path", Input).focus()

    def action_move_format(self, step: int) -> None:
        formats = self.query_one("#export-format", OptionList)
        index = (FORMATS.index(self.fmt) + step) % len(FORMATS)
        formats.highlighted = index

    def select_format(self, fmt: str) -> None:
        """Choose a format as the user would (for scripts and tests)."""
        self.query_one("#export-format", OptionList).highlighted = FORMATS.index(fmt)

    @on(Input.Changed, "#export-path")
    def _path_changed(self, event: Input.Changed) -> None:
        if event.value != event.input.value:
            return  # stale: the field changed again since (a format change while another was pending)
        self.path_edited = event.value != self.suggested
        self._reset_confirmation()
        self._status("")

    def _reset_confirmation(self) -> None:
        self._confirmed_for = None
        write = self.query_one("#write", Button)
        write.label = "Write"
        write.variant = "primary"

    def _status(self, text: str, level: str = "") -> None:
        status = self.query_one("#export-status", Static)
        status.update(Text(text))
        status.set_class(level == "warning", "-warning")
        status.set_class(level == "error", "-error")

    # --- write -------------------------------------------------------------------------------------

    @on(Input.Submitted, "#export-path")
    @on(Button.Pressed, "#write")
    def action_write(self) -> None:
        if self._busy:
            return
        raw = self.query_one("#export-path", Input).value.strip()
        if not raw:
            self._status("type a file name", "error")
            return
        path = Path(raw).expanduser()
        force = self._confirmed_for == path
        if not force and (path.exists() or path.is_symlink()) and not path.is_dir():
            self._ask_overwrite(path)
            return
        self._busy = True
        self._status(f"writing {self.fmt}…")
        self._write(self.fmt, path, force)

    def _ask_overwrite(self, path: Path) -> None:
        self._confirmed_for = path
        write = self.query_one("#write", Button)
        write.label = "Overwrite"
        write.variant = "error"
        self._status(f"{path} exists — press Overwrite (or enter) to replace it, or change the file name", "warning")

    @work(thread=True, exclusive=True, group="export", exit_on_error=False)
    def _write(self, fmt: str, path: Path, force: bool) -> None:
        """Worker thread: render and write (a large trace takes a moment)."""
        try:
            written = write_export(render(self.trace, fmt), path, force=force)
            size = written.stat().st_size
        except (CtxviewError, OSError) as exc:
            if not force and (path.exists() or path.is_symlink()) and not path.is_dir():
                # another process created it meanwhile: ask, as for any existing file
                self.app.call_from_thread(self._exists_now, path)
            else:
                self.app.call_from_thread(self._failed, str(exc))
            return
        except Exception as exc:  # a bug in a renderer: say so, keep the dialog usable
            self.app.call_from_thread(self._failed, f"could not export {fmt}: {exc}")
            return
        self.app.call_from_thread(self._written, written, size, fmt)

    def _exists_now(self, path: Path) -> None:
        self._busy = False
        self._ask_overwrite(path)

    def _failed(self, message: str) -> None:
        """An error: say it in the dialog and as a notification; the dialog stays open."""
        self._busy = False
        self._status(message, "error")
        self.app.notify(message, title="Export failed", severity="error", timeout=8, markup=False)

    def _written(self, path: Path, size: int, fmt: str) -> None:
        self._busy = False
        self.app.notify(
            f"wrote {size:,} bytes ({fmt}) to {path.resolve()}", title="Exported", timeout=6, markup=False
        )
        self.dismiss(path)

    # --- copy ---------------------------------------------------------------------------------------

    @on(Button.Pressed, "#copy")
    def action_copy(self) -> None:
        if self._busy:
            return
        self._busy = True
        self._status(f"rendering {self.fmt}…")
        self._render_for_copy(self.fmt)

    @work(thread=True, exclusive=True, group="export", exit_on_error=False)
    def _render_for_copy(self, fmt: str) -> None:
        try:
            data = export_bytes(render(self.trace, fmt))
        except Exception as exc:  # CtxviewError, or a bug in a renderer
            self.app.call_from_thread(self._failed, f"could not render {fmt}: {exc}")
            return
        self.app.call_from_thread(self._copy, data, fmt)

    def _copy(self, data: bytes, fmt: str) -> None:
        self._busy = False
        try:
            self.app.copy_to_clipboard(data.decode("utf-8"))
        except (OSError, ValueError) as exc:
            self._failed(f"could not copy to the clipboard: {exc}")
            return
        self.app.notify(
            f"copied {len(data):,} bytes ({fmt}) to the clipboard {CLIPBOARD_NOTE}",
            title="Copied",
            timeout=8,
            markup=False,
        )
        self.dismiss(None)

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)
