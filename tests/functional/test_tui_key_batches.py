"""Keys that arrive together (a paste into the terminal, tmux ``send-keys``, a fast typist on a busy machine).

Textual hands each key to the widget focused when the app reads it, so a key that moves the focus must
move it before the app reads the next one: ``/`` followed at once by ``helm`` types ``helm`` into the
prompt; none of its letters runs as a table command (``h`` the host window, ``e`` the export dialog).
"""

from __future__ import annotations

from textual import events
from textual.widgets import Input

from ctxview.tui.app import CtxviewApp
from ctxview.tui.screens.inspector import InspectorScreen
from ctxview.tui.widgets.items_table import ItemsTable
from tests.conftest import settle

_NAMES = {"/": "slash", " ": "space", "+": "plus", ".": "full_stop"}


def post_batch(app: CtxviewApp, text: str) -> None:
    """Every key of ``text`` in the app's queue at once, before it reads the first."""
    for character in text:
        app.post_message(events.Key(_NAMES.get(character, character), character))


async def open_inspector(pilot: object) -> InspectorScreen:
    await settle(pilot)
    screen = pilot.app.screen  # type: ignore[attr-defined]
    assert isinstance(screen, InspectorScreen)
    return screen


async def test_letters_right_after_slash_are_typed_into_the_prompt(demo_db):
    app = CtxviewApp(demo_db, conversation_id=1, show_timings=False)
    async with app.run_test(size=(160, 48)) as pilot:
        screen = await open_inspector(pilot)
        table = screen.query_one(ItemsTable)
        prompt = screen.query_one("#prompt", Input)
        assert app.focused is table and prompt.value == ""
        notified = len(app._notifications)
        post_batch(app, "/helm")
        await settle(pilot)
        assert app.screen is screen  # no export dialog (e)
        assert len(app._notifications) == notified  # no host-window notice (h)
        assert app.focused is prompt and prompt.value == "helm"
        assert screen.params.prompt == "helm" and screen.trace.params.prompt == "helm"


async def test_a_slash_typed_in_the_prompt_is_text(demo_db):
    app = CtxviewApp(demo_db, conversation_id=1, show_timings=False)
    async with app.run_test(size=(160, 48)) as pilot:
        screen = await open_inspector(pilot)
        prompt = screen.query_one("#prompt", Input)
        post_batch(app, "/src/app.py")
        await settle(pilot)
        assert app.focused is prompt and prompt.value == "src/app.py"
        assert screen.trace.params.prompt == "src/app.py"


async def test_keys_before_the_slash_still_run_as_table_commands(demo_db):
    app = CtxviewApp(demo_db, conversation_id=1, show_timings=False)
    async with app.run_test(size=(160, 48)) as pilot:
        screen = await open_inspector(pilot)
        table = screen.query_one(ItemsTable)
        start = table.cursor
        budget = screen.params.token_budget
        post_batch(app, "j+/ab")
        await settle(pilot)
        assert table.cursor == start + 1  # j: the cursor down
        assert screen.params.token_budget > budget  # +: the budget up
        prompt = screen.query_one("#prompt", Input)
        assert app.focused is prompt and prompt.value == "ab"


async def test_a_slash_in_the_filter_line_is_text(demo_db):
    app = CtxviewApp(demo_db, conversation_id=1, show_timings=False)
    async with app.run_test(size=(160, 48)) as pilot:
        await open_inspector(pilot)
        await pilot.press("f")
        await pilot.pause()
        find = app.focused
        assert isinstance(find, Input) and find.id == "find"
        post_batch(app, "a/b")
        await settle(pilot)
        assert app.focused is find and find.value == "a/b"
