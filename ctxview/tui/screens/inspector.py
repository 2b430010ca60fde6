"""The inspector: controls, items table, assembled context, detail and budget, live.

Every edit re-runs the real assembler: a debounced worker (``group="assemble"``,
exclusive, so a newer edit cancels an older one) runs ``SessionAssembler.run``
in a thread and the result replaces the row data of the virtual views in
place.  The session is read in a thread worker that opens its own store.
With ``watch`` an interval timer polls the database (``ctxview.watch``) in a
thread and re-reads the session when another process committed, keeping the
params and the selected item.

State flows one way.  The screen owns it as reactives: ``params`` (what the
next run uses), ``assembly`` (the run on screen: trace, table layout, diff),
``selection`` (the item under the cursor), ``min_budgets`` (the last budget
sweep) and ``roi`` (the section-ROI table of the trace).  Its widgets are
bound to them (``data_bind``) and redraw themselves; the sub-screens it
opens get what they show and hand results back through ``dismiss``.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual import on, work
from textual.actions import SkipAction
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal, Vertical
from textual.events import Idle, Resize
from textual.message import Message
from textual.reactive import var
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Header, Input, ProgressBar, Static, TextArea

from ctxview.errors import CtxviewError
from ctxview.model import Decision, Params, Session, Trace, column, count_text
from ctxview.tui.actions import app_key, bindings
from ctxview.tui.collector import CollectorHold, freeze_long_lived
from ctxview.tui.finder import ItemFacts, ItemQuery, matching, parse_query
from ctxview.tui.scoring_view import RoiTable, roi_table
from ctxview.tui.state import Assembly, MinBudgets, Selection
from ctxview.tui.view import (
    SORT_MODES,
    DeferredDiff,
    OutcomeDiff,
    SortMode,
    clean_inline,
    deferred_diff,
    item_id,
    layout_rows,
    note_text,
    outcome_counts,
    params_change,
    partner,
    prime_diff,
    rules_label,
    sent_parts,
    step_budget,
)
from ctxview.tui.widgets.assembled import AssembledView
from ctxview.tui.widgets.budget_bar import BudgetBar
from ctxview.tui.widgets.cache_line import CachePrefixLine
from ctxview.tui.widgets.changes import ChangesLine
from ctxview.tui.widgets.controls import Controls, FieldInput
from ctxview.tui.widgets.detail import DetailPane
from ctxview.tui.widgets.find_line import FindLine
from ctxview.tui.widgets.footer import FittingFooter
from ctxview.tui.widgets.items_table import ItemsTable
from ctxview.tui.widgets.virtual import VirtualList
from ctxview.whatif.cache_prefix import CachePrefix, cache_prefix

if TYPE_CHECKING:
    from ctxview.host_check import HostCheck
    from ctxview.openclaw.host import HostContext
    from ctxview.pipeline import SessionAssembler
    from ctxview.preview import SessionPreview
    from ctxview.store import LcmStore
    from ctxview.sweep import SweepResult
    from ctxview.tui.host_view import HostSource
    from ctxview.tui.screens.export import ExportScreen
    from ctxview.tui.screens.sweep import Sweeper, SweepProgress
    from ctxview.watch import DatabaseWatcher

COMPACT_WIDTH = 120
COMPACT_HEIGHT = 30


class InspectorScreen(Screen[None]):
    """The main screen for one conversation."""

    DEBOUNCE: ClassVar[float] = 0.1
    BUSY_AFTER: ClassVar[float] = 0.15  # a run that takes longer shows "assembling…" and a stale table
    PANES_AFTER: ClassVar[float] = 0.1  # the other panes follow the table's paint, or this long after its run
    COLLECT_AFTER: ClassVar[float] = 0.5  # no garbage collection until the edits pause this long…
    COLLECT_EVERY: ClassVar[int] = 64  # …or this many edits came in a row
    HOLD_FRAMES: ClassVar[float] = 0.06  # an edit whose run should take less: one frame shows the field and the table
    AUTO_FOCUS = "ItemsTable"

    BINDINGS: ClassVar[list[BindingType]] = bindings("inspector")

    # the state the views bind to (``var``: setting one repaints only the widgets that use it)
    params: var[Params] = var(Params(), init=False)
    assembly: var[Assembly | None] = var(None, init=False)
    # the run the other panes show: ``assembly``, one frame later (the table draws a new run first)
    panes: var[Assembly | None] = var(None, init=False)
    selection: var[Selection | None] = var(None, init=False)
    min_budgets: var[MinBudgets | None] = var(None, init=False)
    roi: var[RoiTable] = var(roi_table(None), init=False, always_update=True)

    def __init__(
        self,
        db_path: Path,
        conversation_id: int | None,
        params: Params,
        *,
        watch: bool = False,
        host: HostSource | None = None,
    ) -> None:
        """``host``: where to find the OpenClaw session of the conversation; its transcript gives the live window
        (unless the params already bring live inputs) and its newest recorded turn is checked."""
        super().__init__()
        self.host_source = host if params.live_messages is None else None
        self.host: HostContext | None = None  # the session, its transcript and the host's live window
        self.host_why = ""  # why there is no host context
        self.host_window_on = True  # the live window from the transcript feeds the engine step
        self.host_check: HostCheck | None = None  # the newest recorded turn against a re-assembly
        self._checking = False
        self.db_path = db_path
        self.conversation_id = conversation_id
        self.set_reactive(InspectorScreen.params, params)
        self.start_budget = params.token_budget
        self.session: Session | None = None
        self.assembler: SessionAssembler | None = None
        self._generation = 0
        self._applied = 0
        self._last_edit = ""
        self._run_lock = threading.Lock()
        self._in_flight = 0  # runs executing in a worker thread
        self._last_invalid: tuple[str, str] | None = None
        self._show_side = False
        self.load_error: str | None = None
        self.watch = watch
        self._watcher: DatabaseWatcher | None = None
        self._polling = False
        self._watch_reloading = False
        self._reload_edit = "reload"
        self._shown_warnings: set[str] = set()
        self._sub_title = ""  # database · conversation; the engine rules of each trace follow it
        self.updates_seen = 0  # reloads triggered by --watch (for tests and scripts)
        self.query_filter: ItemQuery | None = None  # the items filter (f), None: off
        self.facts: ItemFacts | None = None  # the items' text, kind and role, read once per session for the filter
        self._reading_facts = False  # (read when the filter line first opens: not behind the first keystrokes)
        self._history: list[Params] = []  # earlier parameter sets (ctrl+z), oldest first
        self._future: list[Params] = []  # parameter sets undone (ctrl+y)
        self._restoring = False  # an undo / redo is setting the params: not a new history entry
        self._export_dialog: ExportScreen | None = None  # the last one: the next starts with its format
        self._collector = CollectorHold()  # no garbage collection between an edit and its result on screen
        self._pending_highlight: tuple[Decision | None] | None = None  # the table's item, for the panes' turn
        self._paint_result = False  # a result was applied: paint the table as soon as it asks (``_on_idle``)
        self._parts_asked: Assembly | None = None  # the last result whose pane parts are being measured
        self._parts_ready: Assembly | None = None  # … and the last one measured
        self.prepared = False  # the term index of the first trace is built (edits from here on are warm)
        self._last_run = 0.0  # seconds the last edit's run took in its thread (the run, the table layout, the diff)
        self._frames_held = 0  # the hold on the app's frames (``_hold_frames``) of this number, 0: none
        self._holds = 0

    # --- layout ------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        screen = InspectorScreen
        yield Header(icon="◧")
        yield Static("", id="host-line")
        yield Controls(self.params, id="controls")
        yield BudgetBar(id="budget-bar").data_bind(assembly=screen.panes)
        yield ChangesLine(id="changes").data_bind(assembly=screen.panes)
        yield CachePrefixLine(id="cache-prefix").data_bind(assembly=screen.panes)
        with Horizontal(id="main"):
            with Vertical(id="left"):
                with Vertical(id="load-status"):
                    yield Static("reading the session…", id="load-words")
                    # determinate from the start: an indeterminate bar repaints 15 times a second, and each
                    # repaint takes the interpreter from the thread reading the session
                    yield ProgressBar(total=1, id="load-progress", show_eta=False, show_percentage=False)
                yield FindLine(id="find")
                yield ItemsTable(id="items").data_bind(screen.assembly, screen.min_budgets)
                yield Static("", id="load-error")
            with Vertical(id="side"):
                yield DetailPane(id="detail").data_bind(screen.selection, screen.min_budgets)
                yield AssembledView(id="assembled").data_bind(assembly=screen.panes, selection=screen.selection)
        yield FittingFooter(compact=True)

    @property
    def trace(self) -> Trace | None:
        """The trace on screen."""
        return self.assembly.trace if self.assembly is not None else None

    @property
    def diff(self) -> OutcomeDiff:
        """What the last edit changed (against the trace shown before it)."""
        return self.assembly.diff if self.assembly is not None else OutcomeDiff()

    def on_mount(self) -> None:
        self._show_key_hints()
        self.query_one("#prompt", FieldInput).on_edit = self._hold_frames
        self.bindings_updated_signal.subscribe(self, self._bindings_updated)
        self.query_one("#load-error").display = False
        self.query_one("#host-line").display = False  # shown once an OpenClaw session is found (or was picked)
        self.sub_title = f"{self.db_path.name} · loading…"
        # (no loading animation over the table: #load-status says what is under way, and an animation's
        # repaints would take the interpreter from the thread reading and assembling the session)
        self.query_one(ItemsTable).focus()
        self.load_session()
        if self.watch:
            from ctxview.watch import WATCH_INTERVAL

            self.set_interval(WATCH_INTERVAL, self._poll_database, name="watch the database")

    def _bindings_updated(self, _screen: Screen[object]) -> None:
        self._show_key_hints()  # perhaps a new keymap (App.set_keymap)

    def _show_key_hints(self) -> None:
        """The titles that name a key, with the keys of the active keymap."""
        table = self.query_one(ItemsTable)
        table.border_subtitle = f"sort: {table.sort} ({app_key(self.app, 'inspector.cycle_sort')})"

    async def _on_idle(self, event: Idle) -> None:
        """Paint a new result's table at once, not on the screen's next update tick.

        Textual paints on a 60 Hz timer whose phase the prompt's echo set a run earlier, and
        after a pause the timer skips a tick: the table's frame waited 0–30 ms for it.  The
        frame is the one the timer would draw (``Screen._on_timer_update``), drawn now; other
        changes keep the timer (its own idle handler runs next).
        """
        if self._paint_result and self.is_current and self.query_one(ItemsTable) in self._dirty_widgets:
            self._paint_result = False
            self._on_timer_update()

    def on_unmount(self) -> None:
        self._collector.release()
        self._release_frames()
        if self._watcher is not None:
            self._watcher.close()

    def on_resize(self, event: Resize) -> None:
        self._update_compact(event.size.width, event.size.height)

    def _update_compact(self, width: int, height: int) -> None:
        compact = width < COMPACT_WIDTH or height < COMPACT_HEIGHT
        self.set_class(compact, "-compact")
        self.set_class(compact and self._show_side, "-show-side")

    # --- loading -----------------------------------------------------------------------------

    @work(thread=True, exclusive=True, group="load", exit_on_error=False)
    def load_session(self) -> None:
        """Read the session in this thread (SQLite connections belong to their thread)."""
        from ctxview.pipeline import SessionAssembler
        from ctxview.store import LcmStore

        try:
            if self.watch:
                self._watch_baseline()  # before reading: a commit during the read triggers one more reload
            with LcmStore(self.db_path) as store:
                if self.session is None:
                    self._preview_first_rows(store)
                session = store.load_session(self.conversation_id, progress=self._load_progress)
            assembler = SessionAssembler(session)
            if self.host_source is not None and self.host is None and not self.host_why:
                host, why = self.host_source.resolve(self.db_path, session.conversation.conversation_id)
                self.app.call_from_thread(self._host_found, host, why)
        except CtxviewError as exc:
            self.app.call_from_thread(self._load_failed, str(exc))
            return
        except Exception as exc:  # a bug or an unreadable file: say so, keep running
            self.app.call_from_thread(self._load_failed, f"could not read {self.db_path}: {exc}")
            return
        self.app.call_from_thread(self._session_loaded, session, assembler)

    PREVIEW_FROM: ClassVar[int] = 5000  # context items; a smaller session's trace comes before a preview would help
    PREVIEW_WAIT: ClassVar[float] = 0.25  # the longest the whole read waits for the first rows' paint

    def _preview_first_rows(self, store: LcmStore) -> None:
        """Worker thread: draw the session's first rows before the whole session is read and assembled.

        The read waits (briefly) for their paint: the unpacking that follows holds the interpreter for
        long stretches, and the rows would appear only after it.
        """
        from ctxview.preview import read_preview

        try:
            preview = read_preview(store, self.conversation_id, self.params)
        except Exception:  # (the whole read reports what is wrong with the session)
            return
        if preview.item_count < self.PREVIEW_FROM:
            return
        painted = threading.Event()
        try:
            self.app.call_from_thread(self._show_preview, preview, painted)
        except RuntimeError:  # the app is closing
            return
        painted.wait(self.PREVIEW_WAIT)

    def _show_preview(self, preview: SessionPreview, painted: threading.Event) -> None:
        if self.trace is None:
            self.query_one(ItemsTable).show_preview(preview)
            self.query_one(BudgetBar).waiting = (
                f"budget {self.params.token_budget:,} tok · {count_text(preview.item_count, 'context item')}"
                " · reading and assembling…"
            )
        self.call_after_refresh(painted.set)

    def _load_progress(self, read: int, total: int) -> None:
        """Worker thread: items read of the total, on the progress bar while the session opens."""
        try:
            self.app.call_from_thread(self._show_load_progress, read, total)
        except RuntimeError:  # the app is closing
            pass

    def _show_load_progress(self, read: int, total: int) -> None:
        if total <= 0:
            return
        self.query_one("#load-progress", ProgressBar).update(total=total, progress=read)
        self.query_one("#load-words", Static).update(
            f"reading the session… {read:,} of {count_text(total, 'context item')}"
        )

    # --- the host (OpenClaw): live window and the check against what was sent ------------------

    def _host_found(self, host: HostContext | None, why: str) -> None:
        self.host, self.host_why = host, why or ("" if host is not None else "no OpenClaw session")
        if host is not None and host.window is not None and self.host_window_on:
            self.set_reactive(InspectorScreen.params, replace(self.params, live_messages=tuple(host.window.messages)))
        picked = self.host_source is not None and self.host_source.discovery is not None
        self.query_one("#host-line").display = host is not None or picked
        self._show_host_line()

    def _show_host_line(self) -> None:
        from ctxview.tui.host_view import check_line, window_line

        if self.host_source is None:
            return
        key = app_key(self.app, "inspector.toggle_host_window")
        parts = [window_line(self.host, self.host_why, self.host_window_on, key)]
        badge = check_line(self.host_check, self._checking)
        if badge:
            parts.append(badge)
        self.query_one("#host-line", Static).update(Text(clean_inline("   ·   ".join(parts), 400)))

    def _start_check(self) -> None:
        host, assembler = self.host, self.assembler
        if host is None or host.window is None or assembler is None or self._checking:
            return
        self._checking = True
        self._show_host_line()
        self._check(host, assembler)

    @work(thread=True, exclusive=True, group="check", exit_on_error=False)
    def _check(self, host: HostContext, assembler: SessionAssembler) -> None:
        from ctxview.host_check import HostCheck, check_turn
        from ctxview.tui.host_view import LockedAssembler

        try:
            # the lock is taken per run, not for the whole check: edits re-assemble between the check's runs
            result = check_turn(host, LockedAssembler(assembler, self._run_lock))  # type: ignore[arg-type]
        except Exception as exc:  # the check must never take the inspector down
            result = HostCheck("no-record", f"the check failed: {exc}")
        try:
            self.app.call_from_thread(self._checked, result)
        except RuntimeError:  # the app is closing
            pass

    def _checked(self, result: HostCheck) -> None:
        self._checking = False
        self.host_check = result
        self._show_host_line()
        if self.trace is not None:
            self.sub_title = self._title_with(self.trace)

    def _title_with(self, trace: Trace) -> str:
        badge = f" · {self.host_check.badge()}" if self.host_check is not None else ""
        return f"{self._sub_title}{badge} · {rules_label(trace)}"

    def action_toggle_host_window(self) -> None:
        """The live window from the session's transcript on/off."""
        window = self.host.window if self.host is not None else None
        if window is None:
            self.notify(f"no live window from a transcript ({self.host_why or 'the session has no transcript'})",
                        timeout=4, markup=False)
            return
        self.host_window_on = not self.host_window_on
        live = tuple(window.messages) if self.host_window_on else None
        self._show_host_line()
        self._set_params(replace(self.params, live_messages=live), "live window")

    def action_verify(self) -> None:
        """Show the whole verdict of the check against what the agent sent (and run it when it has not run)."""
        if self.host_check is None:
            if self.host is None or self.host.window is None:
                self.notify(f"nothing to check: {self.host_why or 'no OpenClaw session with a transcript'}",
                            timeout=5, markup=False)
            else:
                self._start_check()
            return
        self.notify(self.host_check.report(), title="Against what your agent sent", timeout=30, markup=False)

    def _load_failed(self, message: str) -> None:
        self._watch_reloading = False
        self.query_one("#load-status").display = False
        self.load_error = message
        table = self.query_one(ItemsTable)
        table.loading = False
        if self.trace is None:
            error = self.query_one("#load-error", Static)
            back, reload, quit_ = (app_key(self.app, i) for i in ("inspector.back", "inspector.reload", "app.quit"))
            error.update(Text(f"{message}\n\nPress {back} to choose another conversation, {reload} to retry, "
                              f"{quit_} to quit."))
            error.display = True
            table.display = False
        self.sub_title = f"{self.db_path.name} · error"
        self.notify(message, title="Cannot load the conversation", severity="error", timeout=8, markup=False)

    def _session_loaded(self, session: Session, assembler: SessionAssembler) -> None:
        reloaded = self.session is not None
        edit, self._reload_edit = self._reload_edit, "reload"
        watched = self._watch_reloading
        self._watch_reloading = False
        self.load_error = None
        self.session = session
        self.assembler = assembler
        self.conversation_id = session.conversation.conversation_id
        conv = session.conversation
        name = clean_inline(conv.title or conv.session_key or conv.session_id or "", 80)
        self._sub_title = f"{self.db_path.name} · conversation {conv.conversation_id}" + (f" · {name}" if name else "")
        if watched:
            self.updates_seen += 1
            self._sub_title += f" · updated {time.strftime('%H:%M:%S')}"
        self.sub_title = self._sub_title
        self.query_one("#load-error").display = False
        table = self.query_one(ItemsTable)
        table.display = True
        fresh = [w for w in session.warnings if w not in self._shown_warnings]
        self._shown_warnings.update(session.warnings)
        for warning in fresh[:3]:  # each once: --watch reloads must not repeat them
            self.notify(warning, title="Database warning", severity="warning", timeout=6, markup=False)
        if not reloaded:
            self.query_one("#load-words", Static).update(
                f"assembling {count_text(len(session.items), 'context item')}…"
            )
            # no count for the run, and no animation either (it would slow the run it stands for): words only
            self.query_one("#load-progress", ProgressBar).display = False
        self.request_assembly(edit if reloaded else "", debounce=False)

    # --- watching (--watch) ----------------------------------------------------------------

    def _watch_baseline(self) -> None:
        """Worker thread: open the watcher, or take the current database state as seen."""
        from ctxview.watch import DatabaseWatcher

        if self._watcher is None:
            self._watcher = DatabaseWatcher(self.db_path)
        else:
            self._watcher.mark()

    def _poll_database(self) -> None:
        """Interval timer: start one poll unless one, or a reload it caused, is still running."""
        if self._polling or self._watch_reloading or self._watcher is None:
            return
        self._polling = True
        self._check_database(self._watcher)

    @work(thread=True, group="watch", exit_on_error=False)
    def _check_database(self, watcher: DatabaseWatcher) -> None:
        changed = False
        try:
            changed = watcher.changed()
        finally:
            try:
                self.app.call_from_thread(self._poll_done, changed)
            except RuntimeError:  # the app is closing
                pass

    def _poll_done(self, changed: bool) -> None:
        self._polling = False
        if changed and self.is_attached:
            self._watch_reloading = True
            self._reload_edit = "database update"
            self.load_session()

    # --- assembling --------------------------------------------------------------------------

    def request_assembly(self, edit: str, *, debounce: bool = True) -> None:
        """Schedule a run with the current params; a newer request supersedes this one.

        An edit made while nothing runs is assembled at once (no fixed debounce: a
        keystroke answers in one run's time).  While a run is in flight, newer
        requests queue behind it and only the newest one runs: the others see
        they are stale when they get the assembler and return.  ``debounce`` is
        kept for callers; it only matters while a run is in flight.
        """
        self._generation += 1
        self._last_edit = edit
        self._collector.hold()  # (released once the result is drawn, or the run failed)
        self._hold_frames()
        delay = self.DEBOUNCE if (debounce and self._in_flight) else 0.0
        self._assemble(self.params, self._generation, delay)
        if self.trace is not None:
            generation = self._generation
            self.set_timer(self.BUSY_AFTER, partial(self._show_busy, generation), name="show assembling")

    def _hold_frames(self) -> None:
        """No frame until the coming edit's result is applied, when its run should take under ``HOLD_FRAMES``
        (the last edit's run took less, or this is the first edit; none is in flight): the edited field and
        the table are then painted in one
        frame, not the field's echo first (a frame of a few milliseconds that held up the run).  The hold
        ends at the result, a failed or superseded run, or after ``HOLD_FRAMES`` whatever happens."""
        if self._frames_held or self.trace is None or self._in_flight or self._last_run > self.HOLD_FRAMES:
            return
        self._holds += 1
        self._frames_held = self._holds
        self.app._begin_batch()  # (Textual's ``batch_update``, across the run's thread)
        self.set_timer(self.HOLD_FRAMES, partial(self._release_frames, self._holds), name="release the frames")

    def _release_frames(self, hold: int | None = None) -> None:
        """End the hold on the frames (``hold``: only that one, for its timer)."""
        if self._frames_held and (hold is None or hold == self._frames_held):
            self._frames_held = 0
            self.app._end_batch()

    def _show_busy(self, generation: int) -> None:
        """A run is taking long enough to see: say so, and dim the table as stale."""
        if self._applied != generation and generation == self._generation:
            self.query_one(ItemsTable).set_stale(True)
            self.query_one(ChangesLine).busy = True

    @work(exclusive=True, group="assemble", exit_on_error=False)
    async def _assemble(self, params: Params, generation: int, delay: float) -> None:
        if delay:
            await asyncio.sleep(delay)  # typing fast while a run is in flight: a newer keystroke cancels this
        assembler = self.assembler
        if assembler is None:
            self._no_result(generation)
            return
        sort = self.query_one(ItemsTable).sort
        try:
            result = await asyncio.to_thread(self._run, assembler, params, generation, sort)
        except Exception as exc:  # the assembler failed on these params: keep the last good trace
            if generation == self._generation:
                self._no_result(generation)
                self.notify(
                    f"assembly failed: {exc}", title="Assembler error", severity="error", timeout=8, markup=False
                )
            return
        if result is None or generation != self._generation:
            self._no_result(generation)
            return  # superseded while it waited or ran
        self._apply(result, generation)

    def _no_result(self, generation: int) -> None:
        """The latest edit's run gave nothing to draw: the collector and the frames need not wait for it."""
        if generation == self._generation:
            self._collector.release()
            self._release_frames()

    def _run(self, assembler: SessionAssembler, params: Params, generation: int, sort: SortMode) -> Assembly | None:
        """Worker thread: the run itself plus the table layout and the diff (None when superseded).

        The run lock: one thread at a time uses the assembler (assembly, indexing, the sweep).
        """
        with self._run_lock:  # the assembler is used by one thread at a time
            if generation != self._generation:
                return None  # a newer edit is queued: do not spend a run on this one
            self._in_flight += 1
            try:
                on_screen = self.assembly  # (read once: the UI thread may apply another result meanwhile)
                previous = on_screen.trace if on_screen is not None else None  # the diff is against it
                started = time.perf_counter()
                trace = assembler.run(params)
                elapsed = time.perf_counter() - started
                before = on_screen.layout if on_screen is not None else None
                layout = layout_rows(trace, sort, before if before is not None and before.sort == sort else None)
                diff = deferred_diff(previous, trace)  # (the whole diff and the counts: after the table's paint)
                counts_before = on_screen.counts if on_screen is not None else None
                counts = None if isinstance(diff, DeferredDiff) else outcome_counts(trace, counts_before, diff)
                if on_screen is not None:  # (an edit's run: the first run of a session is no guide to the next)
                    self._last_run = time.perf_counter() - started
            finally:
                self._in_flight -= 1
        shown = elapsed if getattr(self.app, "show_timings", True) else None
        # (the budget bar's sent parts and the cache prefix are the other panes': ``_pane_parts``, once the
        # table is drawn)
        return Assembly(trace, layout, diff, shown, base=previous, counts=counts, counts_before=counts_before)

    @work(exclusive=True, group="panes", exit_on_error=False)
    async def _pane_parts(self) -> None:
        """What the budget bar and the cache line show of the result ``_show_panes`` asked for (the tokens
        sent per segment, the prompt-cache prefix kept of the run before), measured in a thread after the
        table has drawn it.

        (No arguments: a worker keeps its arguments, and a finished worker waits for the cyclic collector,
        which an edit holds off: a result handed to it would keep every run of a burst of edits alive.)
        """
        result, assembler = self._parts_asked, self.assembler
        if result is None or assembler is None:
            return
        try:
            sent, cache, counts = await asyncio.to_thread(self._measure_panes, assembler, result)
        except Exception:  # the panes still follow: the bar measures what was sent itself, the cache line waits
            sent, cache, counts = None, None, None
        self._pane_parts_done(result, sent, cache, counts)

    def _measure_panes(
        self, assembler: SessionAssembler, result: Assembly
    ) -> tuple[dict[str, int], CachePrefix | None, dict[str, int] | None]:
        """Worker thread: ``Assembly.sent``, ``Assembly.cache`` and ``Assembly.counts`` of ``result`` (its whole
        outcome diff first, when the table drew it from a ``DeferredDiff``)."""
        trace, base, diff = result.trace, result.base, result.diff
        with self._run_lock:  # (the sent parts read the assembler's memo of the run)
            counts = result.counts
            if isinstance(diff, DeferredDiff):
                diff.resolve()
                counts = outcome_counts(trace, result.counts_before, diff)
            tokens = assembler.message_tokens(trace.summary.engine_line)
            sent = sent_parts(trace, tokens, result.layout.index_of_key)
            cache = cache_prefix(base, trace) if base is not None else None
        return sent, cache, counts

    def _pane_parts_done(
        self,
        result: Assembly,
        sent: dict[str, int] | None,
        cache: CachePrefix | None,
        counts: dict[str, int] | None = None,
    ) -> None:
        if result is not self.assembly:
            return  # (superseded: a newer result is on its way to the panes)
        result.sent, result.cache = sent, cache
        if result.counts is None:
            result.counts = counts
        self._parts_ready = result
        self._show_panes(result)

    @work(thread=True, exclusive=True, group="prepare", exit_on_error=False)
    def _prepare(self, assembler: SessionAssembler, params: Params, first: Trace | None = None) -> None:
        """Index the session's terms while the user reads the first trace (one thread uses the assembler)."""
        try:
            with self._run_lock:
                assembler.prepare(params)
                if first is not None:
                    prime_diff(first)  # what the first edit's diff reads of the first trace (and shares with the next)
            freeze_long_lived()  # the first run and the term index live as long as the session
            from ctxview.pipeline import save_pending_renders

            save_pending_renders()  # the messages rendered for the first trace, for the next open of this database
        finally:
            self.prepared = True

    def _sweeper(self, assembler: SessionAssembler) -> Sweeper:
        """What the sweep view runs in its thread: a sweep with this screen's assembler, under its run lock.

        The sweep reports the range and each exact run to the view, and stops (``SweepCancelled``)
        once the view says so.
        """
        from ctxview.sweep import sweep_session

        lock = self._run_lock

        def run(params: Params, progress: SweepProgress) -> SweepResult:
            with lock:
                return sweep_session(assembler, params, progress=progress)

        return run

    def action_sweep(self) -> None:
        if self.assembler is None:
            self.notify("nothing loaded yet", severity="warning")
            return
        from ctxview.tui.screens.sweep import SweepScreen

        params = self.params
        self.app.push_screen(SweepScreen(params, self._sweeper(self.assembler)), partial(self._swept, params))

    def _swept(self, params: Params, result: SweepResult | None) -> None:
        """The sweep view closed: its min budgets hold for every trace of these params (any budget)."""
        if result is not None:
            self.min_budgets = MinBudgets.of_sweep(params, result)

    def _apply(self, result: Assembly, generation: int) -> None:
        first = self.assembly is None
        result.edit = self._last_edit
        result.first = first
        self.query_one(ItemsTable).set_stale(False)
        self.query_one(ChangesLine).busy = False
        self.query_one("#load-status").display = False
        if result.base is not self.trace:  # another result was applied meanwhile: compare with that one
            result.diff = deferred_diff(self.trace, result.trace)
            result.counts = None  # (counted from the trace it was diffed against)
            result.counts_before = self.assembly.counts if self.assembly is not None else None
            result.base = self.trace  # (the cache prefix is measured against it with the sent parts)
        self._applied = generation
        self._release_frames()  # (before the table's refresh: its paint then draws the edited field too)
        self.assembly = result  # the items table first: the other panes follow once it is drawn
        self._paint_result = True
        if self.query_filter is not None:
            self._apply_filter()
        if first:
            self._start_check()
        # (and should the table not be drawn, as when the side panes take its place on a small screen)
        self.set_timer(self.PANES_AFTER, partial(self._show_panes, result), name="show the panes")
        self._paint_table()

    def _paint_table(self) -> None:
        """Paint the table's new rows now, not two idle turns later (the table's turn tells the screen that it
        changed, whose turn then paints: ``_on_idle``, which still paints when this cannot).  The frame is the
        one the screen's update would draw (``Screen._on_timer_update``), with the table among its changes."""
        table = self.query_one(ItemsTable)
        held = getattr(self.app, "_batch_count", 1)  # (frames held: no paint now)
        if not self._paint_result or not self.is_current or held or not table.is_on_screen:
            return
        dirty = getattr(self, "_dirty_widgets", None)
        if not isinstance(dirty, set) or not callable(getattr(self, "_on_timer_update", None)):
            return  # (another Textual: its own update paints the table)
        self._paint_result = False
        dirty.add(table)  # (what the table's update message will say)
        self._on_timer_update()

    @on(ItemsTable.Drawn)
    def _table_drawn(self, event: ItemsTable.Drawn) -> None:
        if self.assembly is not None and event.trace is self.assembly.trace:
            self._show_panes(self.assembly)

    def _show_panes(self, result: Assembly) -> None:
        """After the table drew ``result``: the assembled context, the budget bar, the changes and cache lines,
        the detail pane, the title and the notes follow (unless a newer run is on screen already).

        The bar's sent parts and the cache prefix are measured first, in a thread (``_pane_parts``)."""
        if result is not self.assembly or self.panes is result:
            return
        if self._parts_ready is not result:
            if self._parts_asked is not result and self.assembler is not None:
                self._parts_asked = result
                self._pane_parts()
            return
        self.panes = result
        pending, self._pending_highlight = self._pending_highlight, None
        if pending is not None:
            self._highlight(pending[0])
        self.roi = roi_table(result.trace)
        self.sub_title = self._title_with(result.trace)
        if result.first and self.assembler is not None:
            # the term index is built once the first screen is painted, not while it is: the build holds the
            # interpreter for long stretches
            self.call_after_refresh(self._prepare, self.assembler, result.trace.params, result.trace)
        if self._applied == self._generation:  # collect once the user pauses (or after many edits in a row)
            generation = self._generation
            if self._collector.held_edits >= self.COLLECT_EVERY:
                self._collector.release()
            else:
                self.set_timer(self.COLLECT_AFTER, partial(self._collect_when_idle, generation), name="collect")
        fresh_notes = [n for n in result.trace.notes if n not in self._shown_warnings]
        self._shown_warnings.update(fresh_notes)
        for note in fresh_notes[:3]:  # what ctxview assumed or cannot reproduce: once each, not per keystroke
            self.notify(note, title="Note", timeout=10, markup=False)

    def _collect_when_idle(self, generation: int) -> None:
        if generation == self._generation:  # no edit since: the collector catches up while the user reads
            self._collector.release()

    @property
    def settled(self) -> bool:
        """True when the trace on screen reflects the latest params (for tests and scripts)."""
        if self.trace is None or self._applied != self._generation or self.panes is not self.assembly:
            return False
        return not self.query_one(Controls).typing  # a typed number waiting for a pause is an edit to come

    # --- events from the widgets --------------------------------------------------------------

    @on(Controls.ParamsChanged)
    def _params_changed(self, event: Controls.ParamsChanged) -> None:
        self._last_invalid = None
        self._remember(self.params)
        self.params = event.params
        self.request_assembly(event.field, debounce=event.field in ("prompt", "budget", "tail", "reserved"))

    @on(Controls.Invalid)
    def _params_invalid(self, event: Controls.Invalid) -> None:
        if self._last_invalid == (event.field, event.reason):
            return
        self._last_invalid = (event.field, event.reason)
        self.notify(f"{event.reason} — still showing the last good result", title=f"Invalid {event.field}",
                    severity="warning", timeout=4, markup=False)

    @on(Controls.Done)
    def _controls_done(self) -> None:
        self.action_focus_table()

    @on(ItemsTable.ItemHighlighted)
    def _item_highlighted(self, event: ItemsTable.ItemHighlighted) -> None:
        if self.panes is not self.assembly:  # the table drew a new run: the detail pane follows with the others
            self._pending_highlight = (event.decision,)
            return
        self._highlight(event.decision)

    def _highlight(self, decision: Decision | None) -> None:
        trace = self.trace
        cache = self.assembly.cache if self.assembly is not None else None
        cache_key = cache.first_changed_key if cache is not None else None
        self.selection = Selection(trace, decision, self.session, cache_key) if trace is not None else None

    @on(AssembledView.MessageChosen)
    def _message_chosen(self, event: AssembledView.MessageChosen) -> None:
        if event.key is not None:
            table = self.query_one(ItemsTable)
            table.select_key(event.key)

    # --- actions -------------------------------------------------------------------------------

    def _set_params(self, params: Params, edit: str, *, debounce: bool = False) -> None:
        if params == self.params:
            return
        self._remember(self.params)
        self.params = params
        self.query_one(Controls).set_params(params)
        self.request_assembly(edit, debounce=debounce)

    async def action_focus_prompt(self) -> None:
        """Focus the prompt before the app reads the next key.

        The app hands each key to the widget focused when it reads it, and ``Widget.focus`` waits for the
        keys already read: after ``/`` and ``helm`` in one batch, ``helm`` went to the table as commands.  So
        the key is a priority binding (the app runs it as it reads it), the keys read before it run first
        (``VirtualList.finish_queued_keys``) and the focus moves here.  In a text field the key is text
        (``SkipAction``: the field gets it).
        """
        if isinstance(self.focused, (Input, TextArea)):
            raise SkipAction()
        prompt = self.query_one("#prompt", Input)
        if not prompt.focusable:
            prompt.focus()
            return
        left = self.focused
        if isinstance(left, VirtualList):
            await left.finish_queued_keys()
        if self.is_current and prompt.focusable:  # (a key before it may have opened another screen)
            self.set_focus(prompt)

    def action_focus_table(self) -> None:
        if self._show_side and self.has_class("-compact"):
            self._show_side = False  # on a small terminal the table and the detail take turns
            self._update_compact(self.size.width, self.size.height)
        table = self.query_one(ItemsTable)
        if table.display:
            table.focus()

    def action_budget_step(self, direction: int, big: bool = False) -> None:
        budget = step_budget(self.params.token_budget, direction, big)
        self._set_params(replace(self.params, token_budget=budget), "budget", debounce=True)

    def action_budget_reset(self) -> None:
        self._set_params(replace(self.params, token_budget=self.start_budget), "budget reset")

    def action_toggle_prompt_aware(self) -> None:
        self._set_params(replace(self.params, prompt_aware_eviction=not self.params.prompt_aware_eviction),
                         "prompt-aware")

    def action_toggle_engine(self) -> None:
        self._set_params(replace(self.params, engine=not self.params.engine), "engine")

    def action_switch_rules(self) -> None:
        """Run the other engine line's rules (0.15 ↔ 1.0): what will my agent see after an upgrade?"""
        current = self.trace.summary.engine_line if self.trace is not None else "0.15"
        other = "1.0" if current == "0.15" else "0.15"
        self._set_params(replace(self.params, engine_line=other), f"rules {other}")

    def action_cycle_sort(self) -> None:
        table = self.query_one(ItemsTable)
        self._sort_by(SORT_MODES[(SORT_MODES.index(table.sort) + 1) % len(SORT_MODES)])

    def _sort_by(self, sort: SortMode) -> None:
        table = self.query_one(ItemsTable)
        if self.trace is None or len(self.trace.decisions) < 20_000:
            table.set_sort(sort)
        else:
            table.sort = sort  # new traces use it at once; the current one is re-laid out off the UI thread
            self._relayout(self.trace, sort)
        self._show_key_hints()

    @work(exclusive=True, group="layout", exit_on_error=False)
    async def _relayout(self, trace: Trace, sort: SortMode) -> None:
        layout = await asyncio.to_thread(layout_rows, trace, sort)
        table = self.query_one(ItemsTable)
        if table.trace is trace and table.sort == sort:
            table.set_sort(sort, layout)

    def action_jump_partner(self) -> None:
        table = self.query_one(ItemsTable)
        decision = table.selected_decision
        if self.trace is None or decision is None:
            return
        mate = partner(self.trace, decision)
        if mate is None:
            self.notify(f"item {item_id(decision)} has no tool-pair partner", timeout=3)
            return
        table.select_key(mate.key)
        table.focus()

    def action_toggle_side(self) -> None:
        if not self.has_class("-compact"):
            self.notify("the detail and assembled panes are always shown at this size", timeout=3)
            return
        self._show_side = not self._show_side
        self._update_compact(self.size.width, self.size.height)
        if self._show_side:
            self.query_one(AssembledView).focus()
        else:
            self.query_one(ItemsTable).focus()

    def action_export(self) -> None:
        if self.trace is None:
            self.notify("nothing assembled yet", severity="warning")
            return
        from ctxview.tui.screens.export import ExportScreen

        last = self._export_dialog.fmt if self._export_dialog is not None else None  # remembered
        self._export_dialog = ExportScreen(self.trace, self.db_path, last)
        self.app.push_screen(self._export_dialog)  # it says itself what it wrote

    def action_cycle_scorer(self) -> None:
        from ctxview.tui.scoring_view import next_scorer

        self.action_set_scorer(next_scorer(self.params.scorer))

    def action_set_scorer(self, scorer: str) -> None:
        self._set_params(replace(self.params, scorer=scorer), "scorer")

    def action_toggle_tokenizer(self) -> None:
        from ctxview.tui.scoring_view import next_tokenizer

        self._set_params(replace(self.params, tokenizer=next_tokenizer(self.params.tokenizer)), "tokenizer")

    def action_roi_view(self) -> None:
        from ctxview.tui.screens.roi import RoiScreen

        if isinstance(self.app.screen, RoiScreen):
            return
        view = RoiScreen(self.roi, self.params, self._set_params)
        self._bind(view, "roi", "params")
        self.app.push_screen(view)

    def _bind(self, screen: Screen[object], *names: str) -> None:
        """Bind a sub-screen's reactives to this screen's, as ``data_bind`` binds the widgets composed here.

        (``data_bind`` binds to the node that composes the widget; a pushed screen has none.)  The
        watchers go when the sub-screen closes.
        """
        for name in names:
            screen.watch(self, name, partial(setattr, screen, name), init=False)

    # --- what-if tools (issue 18) ------------------------------------------------------------

    def _jump_to(self, key: str | None) -> None:
        """A sub-screen closed naming an item: put the table's cursor on its row."""
        if key is not None:
            table = self.query_one(ItemsTable)
            if not table.select_key(key):
                self.notify(f"{key} is not in the items table", timeout=3)
            table.focus()

    def action_diagnostics(self) -> None:
        from ctxview.tui.screens.diagnostics import DiagnosticsScreen

        if isinstance(self.app.screen, DiagnosticsScreen):
            return
        view = DiagnosticsScreen(self.assembly)
        self._bind(view, "assembly")
        self.app.push_screen(view, self._jump_to)

    def action_summary_map(self) -> None:
        from ctxview.tui.screens.summary_tree import SummaryTreeScreen

        if self.conversation_id is None or self.session is None:
            self.notify("nothing loaded yet", severity="warning")
            return
        view = SummaryTreeScreen(self.db_path, self.conversation_id, self.assembly)
        self._bind(view, "assembly")
        self.app.push_screen(view, self._jump_to)

    def _live_under_cursor(self) -> int | None:
        decision = self.query_one(ItemsTable).selected_decision
        live = self.params.live_messages or ()
        if decision is None or decision.live_index is None or not 0 <= decision.live_index < len(live):
            self.notify("put the cursor on a live input (an L row) first", timeout=3)
            return None
        return decision.live_index

    def action_add_live(self) -> None:
        from ctxview.tui.screens.add_live import AddLiveScreen

        def added(message: dict[str, object] | None) -> None:
            if message is not None:
                live = (*(self.params.live_messages or ()), message)
                self._set_params(replace(self.params, live_messages=live, engine=True), "live input added")

        self.app.push_screen(AddLiveScreen(), added)

    def action_edit_live(self) -> None:
        from ctxview.tui.screens.add_live import AddLiveScreen
        from ctxview.whatif.live_inputs import kind_of

        index = self._live_under_cursor()
        if index is None:
            return
        live = list(self.params.live_messages or ())
        known = kind_of(live[index])
        if known is None:
            self.notify(f"L{index} came from the host's window in a form the form cannot write; delete it instead",
                        timeout=4)
            return

        def edited(message: dict[str, object] | None) -> None:
            if message is not None:
                live[index] = message
                self._set_params(replace(self.params, live_messages=tuple(live)), f"live input L{index} edited")

        self.app.push_screen(AddLiveScreen(*known, editing=f"L{index}"), edited)

    def action_delete_live(self) -> None:
        index = self._live_under_cursor()
        if index is None:
            return
        live = list(self.params.live_messages or ())
        del live[index]
        self._set_params(replace(self.params, live_messages=tuple(live) if live else None),
                         f"live input L{index} removed")

    def action_compare(self) -> None:
        from ctxview.tui.screens.compare import CompareScreen

        if self.assembler is None:
            self.notify("nothing loaded yet", severity="warning")
            return
        self.app.push_screen(CompareScreen(self.params, self._comparer(self.assembler)), self._jump_to)

    def _comparer(self, assembler: SessionAssembler) -> Callable[[Params], Trace]:
        """What the A/B view runs in its thread: a run with this screen's assembler, under its run lock."""
        lock = self._run_lock

        def run(params: Params) -> Trace:
            with lock:
                return assembler.run(params)

        return run

    # --- the read-only views users know from lcm-tui ----------------------------------------------

    def _item_keys(self) -> frozenset[str] | None:
        from ctxview.model import column

        return frozenset(column(self.trace.decisions, "key")) if self.trace is not None else None

    def action_messages(self) -> None:
        from ctxview.tui.screens.messages import MessagesScreen

        if self.conversation_id is None or self.session is None:
            self.notify("nothing loaded yet", severity="warning")
            return
        view = MessagesScreen(self.db_path, self.conversation_id, self._item_keys())
        self.app.push_screen(view, self._jump_to_view_item)

    def action_briefs(self) -> None:
        from ctxview.tui.screens.briefs import BriefsScreen

        if self.conversation_id is not None and self.session is not None:
            self.app.push_screen(BriefsScreen(self.db_path, self.conversation_id))

    def action_large_files(self) -> None:
        from ctxview.tui.screens.large_files import LargeFilesScreen

        if self.conversation_id is not None and self.session is not None:
            self.app.push_screen(LargeFilesScreen(self.db_path, self.conversation_id))

    def action_transcript(self) -> None:
        from ctxview.tui.screens.transcript import TranscriptScreen

        if self.session is None:
            self.notify("nothing loaded yet", severity="warning")
            return
        state_dir = getattr(self.app, "state_dir", None)
        view = TranscriptScreen(self.db_path, self.session.conversation, self.trace, state_dir=state_dir)
        self.app.push_screen(view, self._jump_to_view_item)

    def _jump_to_view_item(self, jump: object) -> None:
        """A browser view closed asking to select an item (``JumpTo``) in the table."""
        key = getattr(jump, "key", None)
        if key is None:
            return
        table = self.query_one(ItemsTable)
        if table.select_key(key):
            table.focus()
            self.notify(f"selected {getattr(jump, 'what', key)}", timeout=3, markup=False)
        else:
            self.notify(f"{getattr(jump, 'what', key)} is not a row of the table", severity="warning", markup=False)

    def action_reload(self) -> None:
        self.notify("re-reading the database…", timeout=2)
        self._reload_edit = "reload"
        self.load_session()

    class BackRequested(Message):
        """The user wants the conversation picker again."""

        def __init__(self, params: Params) -> None:
            super().__init__()
            self.params = params

    def action_back(self) -> None:
        self.post_message(self.BackRequested(self.params))

    # --- undo / redo of parameter sets --------------------------------------------------------

    def _remember(self, params: Params) -> None:
        if self._restoring:
            return
        if not self._history or self._history[-1] != params:
            self._history.append(params)
            del self._history[:-100]
        self._future.clear()

    def action_undo(self) -> None:
        self._step_history(self._history, self._future, "undo")

    def action_redo(self) -> None:
        self._step_history(self._future, self._history, "redo")

    def _step_history(self, source: list[Params], target: list[Params], word: str) -> None:
        if not source:
            self.notify(f"nothing to {word}", timeout=2)
            return
        params = source.pop()
        target.append(self.params)
        change = params_change(self.params, params)
        self._restoring = True
        try:
            self._set_params(params, f"{word} ({change})")
        finally:
            self._restoring = False
        self.notify(change, title=word.capitalize(), timeout=3, markup=False)

    # --- finding items ----------------------------------------------------------------------------

    def _want_facts(self) -> None:
        """Start reading the items' facts unless they are read or being read.

        Only a filter reads them, and they cost a pass over every item (seconds at 100,000
        items, holding the run lock): read on the first opening of the filter line, the
        edits before it never wait for them.
        """
        if self.facts is None and not self._reading_facts and self.trace is not None:
            self._reading_facts = True
            self._read_facts(self.trace)

    @work(thread=True, exclusive=True, group="facts", exit_on_error=False)
    def _read_facts(self, trace: Trace) -> None:
        """Read every item's text, kind and role once (one thread uses the assembler's runs at a time)."""
        with self._run_lock:
            facts = ItemFacts.of(trace)
        self.app.call_from_thread(self._facts_ready, facts)

    def _facts_ready(self, facts: ItemFacts) -> None:
        self.facts = facts
        self._reading_facts = False
        if self.query_filter is not None and self.query_filter.needs_text:
            self._apply_filter()

    def action_filter(self) -> None:
        self._want_facts()
        line = self.query_one(FindLine)
        line.open("filter", self.query_filter.text if self.query_filter is not None else "")

    def action_goto(self) -> None:
        self.query_one(FindLine).open("goto", "")

    @on(FindLine.Changed, "#find")
    def _find_changed(self, event: FindLine.Changed) -> None:
        event.stop()
        line = self.query_one(FindLine)
        if line.mode != "filter":
            return
        self.set_filter(event.value)

    def set_filter(self, text: str) -> None:
        """Filter the items table by ``text`` (see ``ctxview.tui.finder``); "" removes the filter."""
        if not text.strip():
            self.query_filter = None
            self.query_one(ItemsTable).set_presentation(matches=None)
            return
        try:
            self.query_filter = parse_query(text)
        except CtxviewError as exc:
            self.notify(str(exc), title="Filter", severity="warning", timeout=3, markup=False)
            return
        self._apply_filter()

    def _apply_filter(self) -> None:
        query, trace = self.query_filter, self.trace
        table = self.query_one(ItemsTable)
        if query is None or trace is None:
            return
        if query.needs_text and self.facts is None:
            table.border_title = "items · reading item text for the filter…"
            self._want_facts()
            return
        table.set_presentation(matches=matching(trace, query, self.facts, self.diff.changed))

    @on(FindLine.Submitted, "#find")
    def _find_submitted(self, event: FindLine.Submitted) -> None:
        event.stop()
        line = self.query_one(FindLine)
        if line.mode == "goto":
            self._goto(event.value.strip())
        self._settle_find_line()

    def _settle_find_line(self) -> None:
        """Back to the table; a filter that is on stays in sight over it (escape there clears it)."""
        line = self.query_one(FindLine)
        if self.query_filter is not None:
            line.open("filter", self.query_filter.text)
        else:
            line.close()
        self.action_focus_table()

    @on(FindLine.Cleared)
    def _find_cleared(self, event: FindLine.Cleared) -> None:
        if event.mode == "filter":
            self.set_filter("")
        self._settle_find_line()

    def _goto(self, text: str) -> None:
        table = self.query_one(ItemsTable)
        key = f"l:{text[1:]}" if text[:1] in ("L", "l") else f"o:{text.lstrip('#')}"
        if not text or not table.select_key(key):
            hidden = " (hidden by the filter)" if self.query_filter is not None else ""
            self.notify(f"no item {text or '(none given)'}{hidden}", timeout=3, markup=False)

    def action_next_match(self, step: int) -> None:
        if self.query_filter is None:
            self.notify(f"no filter: press {app_key(self.app, 'inspector.filter')} to write one", timeout=3)
            return
        self._jump(lambda _index: True, step, "row matches the filter")  # the table shows the matches only

    def action_next_change(self, step: int) -> None:
        changed = self.diff.changed
        if not changed or self.trace is None:
            self.notify("the last edit changed no outcome", timeout=3)
            return
        keys = column(self.trace.decisions, "key")
        self._jump(lambda index: keys[index] in changed, step, "row changed in the last edit")

    def _jump(self, wanted: Callable[[int], bool], step: int, what: str) -> None:
        """Move the cursor to the next (``step`` 1) or previous row whose decision index is ``wanted``, wrapping."""
        table = self.query_one(ItemsTable)
        layout = table.table_layout
        if layout is None or not layout.lines:
            return
        count = len(layout.lines)
        start = table.cursor if table.cursor is not None else (-1 if step > 0 else count)
        for offset in range(1, count + 1):
            line = (start + step * offset) % count
            index = layout.lines[line]
            if index >= 0 and wanted(index):
                table.move_cursor_to(line, center=True)
                table.focus()
                return
        self.notify(f"no {what}", timeout=3)

    # --- sorting ----------------------------------------------------------------------------------

    @on(ItemsTable.HeaderClicked)
    def _header_clicked(self, event: ItemsTable.HeaderClicked) -> None:
        table = self.query_one(ItemsTable)
        if event.sort == table.sort:
            self.action_reverse_sort()
        else:
            table.set_presentation(reverse=False)
            self._sort_by(event.sort)

    def action_reverse_sort(self) -> None:
        table = self.query_one(ItemsTable)
        table.set_presentation(reverse=not table.reverse)
        self._show_key_hints()

    # --- panes and notes --------------------------------------------------------------------------

    def action_zoom(self) -> None:
        """The focused pane fills the screen; again: back."""
        if self.maximized is not None:
            self.minimize()
            return
        focused = self.focused
        pane = focused
        while pane is not None and not isinstance(pane, (ItemsTable, DetailPane, AssembledView)):
            pane = pane.parent if isinstance(pane.parent, Widget) else None
        if pane is None:
            pane = self.query_one(ItemsTable)
        self.maximize(pane, container=False)

    def action_notes(self) -> None:
        trace = self.trace
        lines = [*trace.warnings, *trace.notes] if trace is not None else []
        if not lines:
            self.notify("the engine wrote no notes for this run", timeout=3)
            return
        for line in lines[:6]:
            self.notify(note_text(line), title="Engine note", timeout=20, markup=False)
