"""A virtual list's line count changing by a line or a few: the screen is not laid out again, the scrollbar is
repainted when (and only when) its thumb moves, and what the screen shows is what a fresh paint draws."""

from __future__ import annotations

from typing import Any

import pytest
from rich.segment import Segment
from textual.app import App, ComposeResult
from textual.geometry import Region
from textual.scrollbar import ScrollBar
from textual.strip import Strip
from textual.widget import Widget

from ctxview.tui.widgets.virtual import VirtualList


class Numbers(VirtualList):
    """Line n reads "row n" (its count set from outside)."""

    def render_row(self, line: int, width: int, cursor: bool) -> list[Segment]:
        return [Segment(f"row {line}")]


class NumbersApp(App[None]):
    def compose(self) -> ComposeResult:
        yield Numbers()


def painted(widget: Widget) -> tuple[list[Strip], list[Strip]]:
    """What the widget's paints left on screen (its render cache), and what a fresh paint draws."""
    region = Region(0, 0, widget.outer_size.width, widget.outer_size.height)
    shown = widget.render_lines(region)
    widget.refresh()  # (its content drawn again, not read from its caches)
    if isinstance(widget, VirtualList):
        widget._line_cache.clear()
    return shown, widget.render_lines(region)


@pytest.mark.parametrize(("start", "end"), [(10_000, 10_001), (10_001, 10_000), (40, 41), (41, 40), (40, 60)])
async def test_a_new_line_count_repaints_the_scrollbar_only_when_it_changes(start, end, monkeypatch):
    app = NumbersApp()
    async with app.run_test(size=(40, 20)) as pilot:
        numbers = app.query_one(Numbers)
        numbers.set_line_count(start)
        await pilot.pause(0.1)  # (laid out and painted)
        bar = numbers.vertical_scrollbar
        assert numbers.show_vertical_scrollbar
        before = painted(bar)[0]
        refreshed: list[Any] = []
        real = ScrollBar.refresh

        def refresh(scrollbar: ScrollBar, *args: Any, **kwargs: Any) -> Any:
            refreshed.append(scrollbar)
            return real(scrollbar, *args, **kwargs)

        monkeypatch.setattr(ScrollBar, "refresh", refresh)
        assert numbers.resize_lines(end)  # (the lines are kept: no layout)
        numbers.repaint_changed(start)
        monkeypatch.setattr(ScrollBar, "refresh", real)
        await pilot.pause(0.1)
        assert bar.window_virtual_size == numbers.virtual_size.height == end
        for widget in (numbers, bar):
            shown, fresh = painted(widget)
            assert shown == fresh  # nothing stale on screen
        after = painted(bar)[1]
        assert (bar in refreshed) == (after != before)  # repainted exactly when it draws differently
        if start >= 10_000:
            assert bar not in refreshed  # (a line among ten thousand does not move the thumb)


async def test_a_shorter_list_blanks_the_lines_it_no_longer_has():
    app = NumbersApp()
    async with app.run_test(size=(40, 20)) as pilot:
        numbers = app.query_one(Numbers)
        numbers.set_line_count(15)
        await pilot.pause(0.1)
        assert numbers.resize_lines(13)  # two lines fewer, both on screen
        assert numbers.repaint_changed(15) == 2
        await pilot.pause(0.1)
        shown, fresh = painted(numbers)
        assert shown == fresh
        texts = [strip.text.strip() for strip in fresh]
        assert "row 12" in texts and "row 13" not in texts and "row 14" not in texts
