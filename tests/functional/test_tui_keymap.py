"""A keymap (``App.set_keymap``) moves a key everywhere the user reads about it, not only in the bindings."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from textual.command import CommandList, CommandPalette
from textual.widgets import Static

from ctxview.samples import DEMO_PARAMS
from ctxview.tui.app import CtxviewApp
from ctxview.tui.screens.help import HelpScreen
from ctxview.tui.screens.inspector import InspectorScreen
from ctxview.tui.widgets.items_table import ItemsTable
from tests.conftest import settle, wait_for

KEYMAP = {"inspector.cycle_sort": "f2", "inspector.budget_up": "f5", "inspector.focus_prompt": "f3"}


def help_lines(screen: HelpScreen) -> list[str]:
    console = Console(width=120, record=True, color_system=None)
    console.print(screen.query_one(Static).content)
    return [" ".join(line.split()) for line in console.export_text().splitlines()]


async def palette_entries(pilot, query: str) -> list[str]:
    await pilot.press("ctrl+p")
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, CommandPalette))
    for ch in query:
        await pilot.press(ch if ch != " " else "space")
    commands = pilot.app.screen.query_one(CommandList)
    await wait_for(pilot, lambda: commands.option_count > 0)
    await pilot.pause(0.3)  # every provider has answered
    entries = [commands.get_option_at_index(i).prompt.plain for i in range(commands.option_count)]
    await pilot.press("escape")
    return entries


async def test_a_remapped_key_shows_in_the_help_the_palette_and_the_titles(demo_db: Path) -> None:
    app = CtxviewApp(demo_db, conversation_id=1, params=DEMO_PARAMS, show_timings=False)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, InspectorScreen)
        table = screen.query_one(ItemsTable)
        assert table.border_subtitle == "sort: ordinal (o)"
        app.set_keymap(KEYMAP)
        await pilot.pause()
        # the keys move: o no longer sorts, f2 does; f5 raises the budget
        await pilot.press("o")
        await settle(pilot)
        assert table.sort == "ordinal"
        await pilot.press("f2")
        await settle(pilot)
        assert table.sort == "score"
        assert table.border_subtitle == "sort: score (f2)"
        await pilot.press("f5")
        await settle(pilot)
        assert screen.params.token_budget == 2200

        # the help names the new keys, and no longer the old ones
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))
        lines = help_lines(app.screen)
        assert "f2 cycle the sort: ordinal → score → tokens" in lines
        assert "o cycle the sort: ordinal → score → tokens" not in lines
        assert "f5 / - token budget ±10 %" in lines
        assert "+ / - token budget ±10 %" not in lines
        assert "p jump to the tool-pair partner (tool call ↔ tool result)" in lines  # the others stay
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is screen)

        # so does the command palette
        assert "Cycle sort order\nordinal → score → tokens (f2)" in await palette_entries(pilot, "sort")
        assert "Budget +10 %\nraise the token budget (f5)" in await palette_entries(pilot, "budget +")
        assert "Show the ROI table\nsection-ROI bands, factors and decisions (i)" in await palette_entries(pilot, "roi")

        # and the titles that name a key: the prompt's, whose key now focuses it
        prompt = screen.query_one("#prompt")
        assert prompt.border_title == "prompt  f3"
        await pilot.press("f3")
        await pilot.pause()
        assert app.focused is prompt
