"""A line-API list with a cursor: renders only the visible lines, caches them.

The items table and the assembled-context pane both show up to 100,000
lines and change on every keystroke, so they never build widgets per row:
they swap their row data, clear the line cache and refresh (Toolong's way).
"""

from __future__ import annotations

import asyncio
from math import ceil
from typing import ClassVar

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import BindingType
from textual.cache import LRUCache
from textual.geometry import Region, Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.scrollbar import ScrollBar
from textual.strip import Strip
from textual.widget import Widget

from ctxview.tui.actions import bindings


class VirtualList(ScrollView, can_focus=True):
    """Base class: subclasses implement ``render_row`` (and optionally ``render_header``)."""

    BINDINGS: ClassVar[list[BindingType]] = bindings("list")

    DEFAULT_CSS = """
    VirtualList {
        overflow-x: hidden;
        overflow-y: auto;
        scrollbar-size-vertical: 1;
    }
    """

    HEADER_LINES: ClassVar[int] = 0
    # ``row_unchanged`` says False only where a line may draw differently: ``repaint_changed`` then leaves the
    # lines it does not keep to the paint instead of rendering them to compare
    ROWS_EXACT: ClassVar[bool] = False
    COMPONENT_PREFIX: ClassVar[str] = "virtual-list"

    class CursorMoved(Message):
        def __init__(self, widget: VirtualList, line: int | None) -> None:
            super().__init__()
            self.widget = widget
            self.line = line

        @property
        def control(self) -> VirtualList:
            return self.widget

    def __init__(self, *, name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._line_count = 0
        self.cursor: int | None = None
        self._line_cache: LRUCache[tuple[int, int, bool], Strip] = LRUCache(1024)
        self._style_cache: dict[str, Style] = {}
        self._pass_style: Style | None = None  # the widget's style while one paint renders its lines
        self._drawn_style: Style | None = None  # the widget's style when the cached lines were rendered
        self._keys_read_for_it = False  # running the keys queued to it before a key moved the focus

    # --- subclass hooks ---------------------------------------------------------------

    def is_selectable(self, line: int) -> bool:
        return True

    def render_row(self, line: int, width: int, cursor: bool) -> list[Segment]:
        raise NotImplementedError

    def render_header(self, width: int) -> list[Segment]:
        return []

    def row_unchanged(self, line: int) -> bool:
        """True when ``line`` of the new row data draws exactly what the line drawn before did (for
        ``repaint_changed``, which then keeps that line's strip instead of rendering it again); with
        ``ROWS_EXACT``, False only where it may draw differently."""
        return False

    # --- data --------------------------------------------------------------------------

    @property
    def line_count(self) -> int:
        return self._line_count

    def set_line_count(self, count: int) -> None:
        """New row data: resize the virtual area, drop cached lines, repaint."""
        self.resize_lines(count)
        self.invalidate()

    def resize_lines(self, count: int) -> bool:
        """A new line count, the lines drawn kept (the caller repaints: ``invalidate``, ``repaint_changed``);
        False when the screen must be laid out again (the scrollbar comes or goes), and so every line repainted.

        A new virtual size re-lays out the whole screen (``virtual_size`` is a layout
        reactive), though only this list's scrollbar depends on it: that is done only
        when the scrollbar comes or goes; otherwise the scrollbar is updated in place, and
        repainted only when its thumb moves (a line more or less among thousands seldom moves it).
        """
        self._line_count = count
        size = Size(self.scrollable_content_region.width, count + self.HEADER_LINES)
        old = self.virtual_size
        height = self.scrollable_content_region.height
        quiet = True
        if size != old and self.is_attached and (old.height > height) == (size.height > height):
            self.set_reactive(Widget.virtual_size, size)
            if (size.width == old.width or not self.show_horizontal_scrollbar) and self._same_scrollbar(
                old.height, size.height
            ):
                # (the value ``_scroll_update`` sets, without the repaint)
                self.vertical_scrollbar.set_reactive(ScrollBar.window_virtual_size, size.height)
                self.scroll_y = self.validate_scroll_y(self.scroll_y)
            else:
                self._scroll_update(size)
        else:
            quiet = size == old  # (the same size: nothing to lay out)
            self.virtual_size = size
        if self.cursor is not None and self.cursor >= count:
            self.cursor = self._nearest_selectable(count - 1, -1)
        return quiet

    def _same_scrollbar(self, old_height: int, new_height: int) -> bool:
        """True when the vertical scrollbar draws the same cells for a virtual height of ``new_height`` as for
        ``old_height`` (its renderer's own bar, compared; any doubt: False, and it is repainted)."""
        if not self.show_vertical_scrollbar:
            return True  # (no scrollbar to draw)
        try:
            bar = self.vertical_scrollbar
            render_bar = bar.renderer.render_bar
            size, window, position, thickness = bar.size.height, bar.window_size, bar.position, bar.thickness

            def cells(virtual: int) -> list[Segment]:
                shown = window if window < virtual else 0
                drawn = render_bar(
                    size=size, virtual_size=ceil(virtual), window_size=ceil(shown), position=position,
                    thickness=thickness, vertical=True,
                )
                return list(drawn.segments)

            return bool(size) and cells(old_height) == cells(new_height)
        except Exception:  # (another Textual's scrollbar: draw it again)
            return False

    def invalidate(self) -> None:
        self._line_cache.clear()
        self.refresh()

    def repaint_changed(self, drawn_count: int | None = None) -> int:
        """New row data in the same lines (scroll and columns unchanged; ``drawn_count``: the line count drawn
        before, when ``resize_lines`` changed it): repaint only the visible lines whose strips differ from the
        ones drawn; returns how many.

        A full refresh makes Textual re-render every line of the list (borders, filters, crops), the larger
        part of a keystroke's paint, though an edit often leaves most visible rows as they were.  A list whose
        ``row_unchanged`` is exact (``ROWS_EXACT``: it says True whenever the line draws as before) leaves the
        other lines to the paint, which draws them once; otherwise they are rendered here and compared with
        the strips drawn.  The first line (the header, if any) is repainted with them: a paint is what says
        the new data is on screen (``ItemsTable.Drawn``).
        """
        region = self.scrollable_content_region
        width, height = region.width, region.height
        top = round(self.scroll_y)
        drawn = self._line_cache
        self._line_cache = LRUCache(drawn.maxsize)
        base = self._pass_style = self.rich_style  # (the rows read it as ``base_style``: once, not per row)
        reuse = base == self._drawn_style  # (strips drawn on another style are drawn again)
        changed: list[int] = []
        count = self._line_count
        drawn_lines = count if drawn_count is None else drawn_count
        exact = self.ROWS_EXACT
        try:
            for y in range(self.HEADER_LINES, height):
                line = top + y - self.HEADER_LINES
                if line >= count:
                    if line >= drawn_lines:
                        break  # (blank below the last line, as before)
                    changed.append(y)  # (a line drawn before, blank now)
                    continue
                key = (line, width, line == self.cursor)
                old = drawn.get(key)
                if old is not None and reuse and self.row_unchanged(line):
                    self._line_cache.set(key, old)
                    continue
                if exact:
                    changed.append(y)  # (drawn by the paint: ``render_line``)
                    continue
                strip = Strip(self.render_row(line, width, key[2])).crop_extend(0, width, base)
                self._line_cache.set(key, strip)
                if old != strip:
                    changed.append(y)
        finally:
            self._pass_style = None
        self._drawn_style = base
        full_width = max(self.virtual_size.width, self.size.width)
        runs: list[list[int]] = [[0, 1]]  # (first line, count) of each stretch of lines to repaint
        for y in changed:
            last = runs[-1]
            if y == last[0] + last[1]:
                last[1] += 1
            elif y > last[0]:
                runs.append([y, 1])
        self.refresh(*(Region(0, first, full_width, count) for first, count in runs))
        return len(changed)

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._style_cache.clear()
        self._line_cache.clear()

    def on_resize(self, event: events.Resize) -> None:
        self._line_cache.clear()
        self.virtual_size = Size(self.scrollable_content_region.width, self._line_count + self.HEADER_LINES)

    # --- keys read before the focus moved ------------------------------------------------

    async def finish_queued_keys(self, timeout: float = 0.5) -> None:
        """Run the keys the app has handed to this list so far, as this list's commands (for a key the app
        runs as it reads it, such as ``/``, before it moves the focus: "j+/ab" moves the cursor, raises
        the budget, then types "ab").

        The app hands a key to the widget focused when it reads it, but looks its binding up only once the
        key has bubbled back to it, against the widget focused then; and the app reads no key while it
        waits here.  So the keys queued to this list are looked up here, against this list's bindings.
        """
        done = asyncio.Event()
        self._keys_read_for_it = True

        def finished() -> None:
            self._keys_read_for_it = False
            done.set()

        self.call_later(finished)  # (after every message queued to this list so far)
        try:
            await asyncio.wait_for(done.wait(), timeout)
        except TimeoutError:
            pass

    async def handle_key(self, event: events.Key) -> bool:
        if not self._keys_read_for_it:
            return await super().handle_key(event)
        event.stop()  # (not on to the app: see ``finish_queued_keys``)
        if await super().handle_key(event):
            return True
        app = self.app
        keymap = app._keymap
        for node in self.ancestors_with_self:  # the binding chain from this list (as ``Screen._binding_chain``)
            bindings = node._bindings.copy()
            if keymap:
                bindings.apply_keymap(keymap)
            for binding in bindings.key_to_bindings.get(event.key, ()):
                if not binding.priority and await app.run_action(binding.action, node):
                    return True
        return False

    # --- rendering -----------------------------------------------------------------------

    def render_lines(self, crop: Region) -> list[Strip]:
        # ``rich_style`` walks every ancestor's styles; a paint asked for it twice per line,
        # which was a sixth of a keystroke's time.  Styles cannot change within one paint.
        self._pass_style = self.rich_style
        if not self._line_cache:
            self._drawn_style = self._pass_style  # (every line cached from here on is drawn on it)
        elif self._pass_style != self._drawn_style:
            self._drawn_style = None  # (cached lines of another style may be rendered anew from here on)
        try:
            return super().render_lines(crop)
        finally:
            self._pass_style = None

    @property
    def base_style(self) -> Style:
        """The widget's own style (background, colour) that every row is drawn on."""
        return self._pass_style if self._pass_style is not None else self.rich_style

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        base = self.base_style
        if y < self.HEADER_LINES:
            return Strip(self.render_header(width)).crop_extend(0, width, base)
        line = round(self.scroll_y) + y - self.HEADER_LINES
        if line < 0 or line >= self._line_count:
            return Strip.blank(width, base)
        is_cursor = line == self.cursor
        key = (line, width, is_cursor)
        strip = self._line_cache.get(key)
        if strip is None:
            strip = Strip(self.render_row(line, width, is_cursor)).crop_extend(0, width, base)
            self._line_cache.set(key, strip)
        return strip

    def part_style(self, name: str) -> Style:
        """The attributes a component class sets (colours blended as Textual blends them), by short name."""
        cached = self._style_cache.get(name)
        if cached is None:
            component = f"{self.COMPONENT_PREFIX}--{name}"
            full = self.get_component_rich_style(component)
            part = self.get_component_rich_style(component, partial=True)
            cached = Style(
                color=full.color if part.color is not None else None,
                bgcolor=full.bgcolor if part.bgcolor is not None else None,
                bold=part.bold,
                dim=part.dim,
                italic=part.italic,
                underline=part.underline,
                strike=part.strike,
                reverse=part.reverse,
            )
            self._style_cache[name] = cached
        return cached

    # --- cursor --------------------------------------------------------------------------

    @property
    def page_height(self) -> int:
        return max(1, self.scrollable_content_region.height - self.HEADER_LINES)

    def _nearest_selectable(self, line: int, step: int) -> int | None:
        if self._line_count == 0:
            return None
        line = max(0, min(self._line_count - 1, line))
        probe = line
        while 0 <= probe < self._line_count:
            if self.is_selectable(probe):
                return probe
            probe += step
        probe = line - step
        while 0 <= probe < self._line_count:
            if self.is_selectable(probe):
                return probe
            probe -= step
        return None

    def move_cursor_to(
        self, line: int | None, *, step: int = 1, notify: bool = True, center: bool = False, repaint: bool = True
    ) -> None:
        """``repaint`` False: the caller repaints (``repaint_changed``)."""
        target = None if line is None else self._nearest_selectable(line, step)
        old = self.cursor
        self.cursor = target
        if old is not None:
            self._line_cache.discard((old, self.scrollable_content_region.width, True))
        if target is not None:
            self.scroll_to_line(target, center=center)
        if repaint:
            self.refresh()
        if notify and target != old:
            self.post_message(self.CursorMoved(self, target))

    def scroll_to_line(self, line: int, *, center: bool = False) -> None:
        top = round(self.scroll_y)
        height = self.page_height
        if center and not (top <= line < top + height):
            self.scroll_to(y=max(0, line - height // 2), animate=False, immediate=True)
        elif line < top:
            self.scroll_to(y=line, animate=False, immediate=True)
        elif line >= top + height:
            self.scroll_to(y=line - height + 1, animate=False, immediate=True)

    def action_cursor(self, delta: int) -> None:
        if self.cursor is None:
            self.move_cursor_to(0)
            return
        self.move_cursor_to(self.cursor + delta, step=1 if delta > 0 else -1)

    def action_page(self, direction: int) -> None:
        start = self.cursor if self.cursor is not None else 0
        self.move_cursor_to(start + direction * self.page_height, step=1 if direction > 0 else -1)

    def action_edge(self, direction: int) -> None:
        if direction < 0:
            self.move_cursor_to(0, step=1)
        else:
            self.move_cursor_to(self._line_count - 1, step=-1)

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None or offset.y < self.HEADER_LINES:
            return
        line = round(self.scroll_y) + offset.y - self.HEADER_LINES
        if 0 <= line < self._line_count and self.is_selectable(line):
            self.focus()
            self.move_cursor_to(line)
