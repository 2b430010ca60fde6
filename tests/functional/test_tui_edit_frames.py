"""The frames of an edit: a quick run's result and the edited field are painted together (no frame of the
field's echo alone in the run's way); a run that turns out slow lets the echo through after
``InspectorScreen.HOLD_FRAMES``, before its result; a failed run lets the frames go at once."""

from __future__ import annotations

import threading
from typing import Any

from textual.geometry import Region
from textual.strip import Strip
from textual.widget import Widget
from textual.widgets import Input

from ctxview.tui.app import CtxviewApp
from ctxview.tui.screens.inspector import InspectorScreen
from ctxview.tui.widgets.controls import FieldInput
from ctxview.tui.widgets.items_table import ItemsTable
from tests.conftest import settle, wait_for


def record_prompt_paints(monkeypatch: Any) -> list[tuple[str, str | None]]:
    """(the prompt field's text, the prompt of the trace the table holds) at each line the field paints."""
    seen: list[tuple[str, str | None]] = []
    real = FieldInput.render_line

    def render_line(field: FieldInput, y: int) -> Strip:
        if field.id == "prompt" and isinstance(field.screen, InspectorScreen):
            trace = field.screen.query_one(ItemsTable).trace
            seen.append((field.value, trace.params.prompt if trace is not None else None))
        return real(field, y)

    monkeypatch.setattr(FieldInput, "render_line", render_line)
    return seen


async def focused_prompt(pilot: Any) -> tuple[InspectorScreen, Input]:
    await settle(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, InspectorScreen)
    prompt = screen.query_one("#prompt", Input)
    prompt.focus()
    await settle(pilot)
    return screen, prompt


async def test_a_quick_edit_paints_the_field_with_the_table(demo_db, monkeypatch):
    seen = record_prompt_paints(monkeypatch)
    monkeypatch.setattr(InspectorScreen, "HOLD_FRAMES", 30.0)  # (quick, whatever the machine: the demo's runs)
    app = CtxviewApp(demo_db, conversation_id=1, show_timings=False)
    async with app.run_test(size=(160, 48)) as pilot:
        screen, _prompt = await focused_prompt(pilot)
        seen.clear()
        await pilot.press("x")
        await settle(pilot)
        assert screen.trace.params.prompt == "x"
        first = next(entry for entry in seen if entry[0] == "x")
        assert first == ("x", "x")  # the field's first paint of "x" is the frame of the table's "x" trace
        assert app._batch_count == 0


async def test_a_run_that_turns_out_slow_lets_the_echo_through_before_its_result(demo_db, monkeypatch):
    seen = record_prompt_paints(monkeypatch)
    monkeypatch.setattr(InspectorScreen, "HOLD_FRAMES", 0.5)  # (the last run took less, whatever the machine)
    app = CtxviewApp(demo_db, conversation_id=1, show_timings=False)
    async with app.run_test(size=(160, 48)) as pilot:
        screen, _prompt = await focused_prompt(pilot)
        release = threading.Event()
        real_run = screen.assembler.run
        holding: list[int] = []

        def slow(params: Any) -> Any:
            holding.append(pilot.app._batch_count)
            release.wait(10)
            return real_run(params)

        screen.assembler.run = slow  # type: ignore[method-assign]
        seen.clear()
        await pilot.press("y")
        await wait_for(pilot, lambda: any(value == "y" for value, _ in seen))
        assert holding == [1]  # the frames were held when it started
        assert next(entry for entry in seen if entry[0] == "y") == ("y", None)  # the table still shows the run before
        assert app._batch_count == 0
        release.set()
        await settle(pilot)
        assert screen.trace.params.prompt == "y"


async def test_a_failed_run_lets_the_frames_go(demo_db, monkeypatch):
    app = CtxviewApp(demo_db, conversation_id=1, show_timings=False)
    async with app.run_test(size=(160, 48)) as pilot:
        screen, prompt = await focused_prompt(pilot)
        shown = screen.trace
        holding: list[int] = []

        def failing(params: Any) -> Any:
            holding.append(app._batch_count)
            raise RuntimeError("boom")

        monkeypatch.setattr(InspectorScreen, "HOLD_FRAMES", 30.0)  # (only the failure can end the hold)
        screen.assembler.run = failing  # type: ignore[method-assign]
        await pilot.press("z")
        await wait_for(pilot, lambda: bool(holding) and app._batch_count == 0, timeout=10)
        assert holding == [1]  # the frames were held while it ran
        assert screen.trace is shown and prompt.value == "z"


def _rows_rendered(monkeypatch: Any) -> list[int]:
    """The lines the items table renders a row for from now on, in order (a list the test may clear)."""
    rendered: list[int] = []
    real = ItemsTable.render_row

    def render_row(table: ItemsTable, line: int, width: int, cursor: bool) -> Any:
        rendered.append(line)
        return real(table, line, width, cursor)

    monkeypatch.setattr(ItemsTable, "render_row", render_row)
    return rendered


def _visible_lines(table: ItemsTable) -> list[Strip]:
    return [table.render_line(y) for y in range(table.scrollable_content_region.height)]


async def test_the_lines_an_edit_keeps_are_the_lines_a_fresh_paint_draws(demo_db, monkeypatch):
    rendered = _rows_rendered(monkeypatch)
    app = CtxviewApp(demo_db, conversation_id=1, show_timings=False)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, InspectorScreen)
        table = screen.query_one(ItemsTable)
        visible = table.scrollable_content_region.height - ItemsTable.HEADER_LINES
        counts: list[int] = []
        for keys in (["j", "j"], ["slash", "r", "e", "a", "d"], ["escape", "minus"], ["plus"], ["slash", "backspace"]):
            rendered.clear()
            await pilot.press(*keys)
            await settle(pilot)
            counts.append(len(rendered))
            kept = _visible_lines(table)
            table._line_cache.clear()
            assert _visible_lines(table) == kept  # every line on screen is what a fresh paint draws
        assert min(counts) < visible  # (and some edit kept lines it had drawn)


async def test_the_first_edit_is_held_however_long_the_opening_run_took(demo_db, monkeypatch):
    """The session's first run (the open) reads and cleans up everything: its time says nothing of an edit's."""
    from ctxview.pipeline import SessionAssembler

    seen = record_prompt_paints(monkeypatch)
    monkeypatch.setattr(InspectorScreen, "HOLD_FRAMES", 1.0)
    real_run = SessionAssembler.run
    holding: list[int] = []
    opened = threading.Event()

    def run(assembler: SessionAssembler, params: Any) -> Any:
        if not opened.is_set():  # the opening run: slower than HOLD_FRAMES
            opened.set()
            threading.Event().wait(1.2)
        else:
            holding.append(app._batch_count)
        return real_run(assembler, params)

    monkeypatch.setattr(SessionAssembler, "run", run)
    app = CtxviewApp(demo_db, conversation_id=1, show_timings=False)
    async with app.run_test(size=(160, 48)) as pilot:
        screen, _prompt = await focused_prompt(pilot)
        seen.clear()
        await pilot.press("x")
        await settle(pilot)
        assert screen.trace.params.prompt == "x"
        assert holding[:1] == [1]  # the frames were held when the first edit's run started
        assert next(entry for entry in seen if entry[0] == "x") == ("x", "x")  # one frame: the field and the table
        assert app._batch_count == 0


def _painted(widget: Widget) -> list[Strip]:
    """What the widget's last paints left on screen (its render cache), and then what a fresh paint draws."""
    region = Region(0, 0, widget.outer_size.width, widget.outer_size.height)
    shown = widget.render_lines(region)
    widget.refresh()  # (its content drawn again, not read from its caches)
    if isinstance(widget, ItemsTable):
        widget._line_cache.clear()
    return [*shown, *widget.render_lines(region)]


async def test_an_edit_that_adds_or_removes_a_separator_keeps_the_lines_it_can(demo_db, monkeypatch):
    """"d" runs chronologically (a budget line appears), "de" by score (it goes): the line count changes by one,
    and the table repaints the lines that changed without laying the screen out again; at the end of the
    table, the line that is no longer there is blank."""
    from dataclasses import replace

    from ctxview.samples import DEMO_PARAMS
    from ctxview.tui.widgets.virtual import VirtualList

    full_repaints: list[int] = []
    real = VirtualList.set_line_count

    def set_line_count(table: VirtualList, count: int) -> None:
        if isinstance(table, ItemsTable):
            full_repaints.append(count)
        real(table, count)

    monkeypatch.setattr(VirtualList, "set_line_count", set_line_count)
    app = CtxviewApp(demo_db, conversation_id=1, show_timings=False, params=replace(DEMO_PARAMS, token_budget=1500))
    async with app.run_test(size=(160, 48)) as pilot:
        screen, _prompt = await focused_prompt(pilot)
        table = screen.query_one(ItemsTable)
        assert table.line_count > table.scrollable_content_region.height  # (a scrollbar: no layout for a line more)
        for at_end in (False, True):
            if at_end:
                table.scroll_end(animate=False, immediate=True)
                await settle(pilot)
            counts = []
            for keys in (["backspace" if at_end else "d"], ["e"], ["backspace"], ["e"]):  # "d", "de", "d", "de"
                full_repaints.clear()
                await pilot.press(*keys)
                await settle(pilot)
                counts.append(table.line_count)
                assert full_repaints == []  # (no full repaint: the lines that did not change were kept)
                assert table.virtual_size.height == table.line_count + ItemsTable.HEADER_LINES
                assert table.vertical_scrollbar.window_virtual_size == table.virtual_size.height
                for widget in (table, table.vertical_scrollbar):  # nothing stale on screen
                    lines = _painted(widget)
                    assert lines[: len(lines) // 2] == lines[len(lines) // 2 :]
            assert counts[0] == counts[1] + 1 and counts[2] == counts[0] and counts[3] == counts[1]


async def test_the_first_edit_keeps_the_lines_the_first_paints_drew(demo_db, monkeypatch):
    """The lines the table drew in full (its first trace, the focus leaving it) are kept by the first edit that
    leaves them as they were, as by any later one."""
    rendered = _rows_rendered(monkeypatch)
    app = CtxviewApp(demo_db, conversation_id=1, show_timings=False)
    async with app.run_test(size=(160, 48)) as pilot:
        screen, _prompt = await focused_prompt(pilot)
        table = screen.query_one(ItemsTable)
        visible = table.scrollable_content_region.height - ItemsTable.HEADER_LINES
        rendered.clear()
        await pilot.press("x")
        await settle(pilot)
        assert screen.trace.params.prompt == "x"
        assert len(rendered) < visible // 2
        lines = _painted(table)  # nothing stale on screen
        assert lines[: len(lines) // 2] == lines[len(lines) // 2 :]


async def test_the_first_keystroke_in_a_field_restyles_nothing(demo_db, monkeypatch):
    """The fields carry the validity class their text gives them from the start (``Input`` would add it at the
    first change, restyling the field on the way to the run)."""
    from textual.dom import DOMNode

    restyled: list[object] = []
    real = DOMNode.update_node_styles

    def update_node_styles(node: DOMNode, animate: bool = True) -> None:
        restyled.append(node)
        real(node, animate)

    app = CtxviewApp(demo_db, conversation_id=1, show_timings=False)
    async with app.run_test(size=(160, 48)) as pilot:
        screen, prompt = await focused_prompt(pilot)
        fields = list(screen.query(FieldInput))
        assert [field.id for field in fields] == ["prompt", "budget", "tail", "reserved"]
        assert all(field.has_class("-valid") and not field.has_class("-invalid") for field in fields)
        monkeypatch.setattr(DOMNode, "update_node_styles", update_node_styles)
        await pilot.press("x")
        await settle(pilot)
        assert screen.trace.params.prompt == "x"
        assert prompt not in restyled


async def test_an_edit_s_table_is_painted_as_its_result_is_applied(demo_db, monkeypatch):
    """The frame with the new rows is drawn by the result's application itself, not idle turns later."""
    applying: list[bool] = [False]
    drawn_while_applying: list[bool] = []
    real_apply = InspectorScreen._apply
    real_line = ItemsTable.render_line

    def apply(screen: InspectorScreen, *args: Any) -> None:
        applying[0] = True
        try:
            real_apply(screen, *args)
        finally:
            applying[0] = False

    def render_line(table: ItemsTable, y: int) -> Strip:
        if table.trace is not None and table.trace.params.prompt == "x" and not drawn_while_applying:
            drawn_while_applying.append(applying[0])
        return real_line(table, y)

    monkeypatch.setattr(InspectorScreen, "_apply", apply)
    monkeypatch.setattr(ItemsTable, "render_line", render_line)
    monkeypatch.setattr(InspectorScreen, "HOLD_FRAMES", 30.0)  # (quick, whatever the machine: the demo's runs)
    app = CtxviewApp(demo_db, conversation_id=1, show_timings=False)
    async with app.run_test(size=(160, 48)) as pilot:
        screen, _prompt = await focused_prompt(pilot)
        await pilot.press("x")
        await settle(pilot)
        assert screen.trace.params.prompt == "x"
        assert drawn_while_applying == [True]
