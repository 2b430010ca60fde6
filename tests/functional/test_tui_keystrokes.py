"""What a keystroke costs the screen: no layout of the whole screen for a field's or a list's new size,
and no pass over every item's text before a filter asks for it."""

from __future__ import annotations

from typing import Any

from rich.segment import Segment
from textual.app import App, ComposeResult
from textual.geometry import Size

from ctxview.tui.app import CtxviewApp
from ctxview.tui.widgets.controls import FieldInput
from ctxview.tui.widgets.items_table import ItemsTable
from ctxview.tui.widgets.virtual import VirtualList
from tests.conftest import settle


class _Lines(VirtualList):
    def render_row(self, line: int, width: int, cursor: bool) -> list[Segment]:
        return [Segment(f"line {line}")]


class _Harness(App[None]):
    CSS = "FieldInput { width: 20; } _Lines { height: 10; }"

    def compose(self) -> ComposeResult:
        yield FieldInput(id="field")
        yield _Lines(id="lines")


def _count_layouts(app: App[Any]) -> list[int]:
    screen = app.screen
    layouts = [0]
    real = screen._refresh_layout

    def counting(*args: Any, **kwargs: Any) -> Any:
        layouts[0] += 1
        return real(*args, **kwargs)

    screen._refresh_layout = counting  # type: ignore[method-assign]
    return layouts


async def test_typing_in_a_field_scrolls_it_without_laying_the_screen_out():
    app = _Harness()
    async with app.run_test(size=(60, 20)) as pilot:
        field = app.query_one(FieldInput)
        field.focus()
        await pilot.pause()
        layouts = _count_layouts(app)
        await pilot.press(*"abcdefghijklmnopqrstuvwxyz0123")
        await pilot.pause()
        assert field.value == "abcdefghijklmnopqrstuvwxyz0123"
        assert field.virtual_size == Size(31, 1)  # the text and the cursor, as Textual's input sets it
        assert field.scroll_x > 0 and field.cursor_position == 30  # scrolled to keep the cursor in sight
        assert layouts[0] == 0


async def test_a_list_relays_the_screen_out_only_when_its_scrollbar_comes_or_goes():
    app = _Harness()
    async with app.run_test(size=(60, 20)) as pilot:
        lines = app.query_one(_Lines)
        lines.set_line_count(100)
        await pilot.pause(0.2)  # (the scrollbar's coming lays the screen out at the next frame: counted before)
        assert lines.show_vertical_scrollbar
        layouts = _count_layouts(app)
        lines.set_line_count(120)
        await pilot.pause()
        assert (layouts[0], lines.virtual_size.height, lines.max_scroll_y) == (0, 120, 110)
        lines.scroll_end(animate=False, immediate=True)
        lines.set_line_count(50)  # still scrolls: the scroll position is brought into the new range
        await pilot.pause()
        assert (layouts[0], lines.scroll_y, lines.max_scroll_y) == (0, 40, 40)
        lines.set_line_count(5)  # fits: the scrollbar goes, the content gets its column
        await pilot.pause()
        assert layouts[0] >= 1 and not lines.show_vertical_scrollbar and lines.scroll_y == 0


async def test_the_items_text_is_read_when_the_filter_line_first_opens(demo_db):
    app = CtxviewApp(demo_db, conversation_id=1, show_timings=False)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        screen = app.screen
        await pilot.press("plus")  # edits before any filter never wait for a pass over every item
        await settle(pilot)
        assert screen.params.token_budget != screen.start_budget and screen.facts is None
        await pilot.press("f")
        await settle(pilot)
        assert screen.facts is not None and len(screen.facts.texts) == len(screen.trace.decisions)
        await pilot.press(*"user", "enter")
        await settle(pilot)
        table = screen.query_one(ItemsTable)
        wanted = [i for i, row in enumerate(screen.facts.texts) if "user" in row]
        assert table.matches == wanted and 0 < len(wanted) < len(screen.trace.decisions)
