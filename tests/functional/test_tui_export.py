"""The export dialog (``e``): every format byte for byte, the overwrite confirmation, the clipboard."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from textual.widgets import Button, Input, OptionList

from ctxview.export import FORMATS, render, suggested_filename
from ctxview.model import Params
from ctxview.samples import DEMO_PARAMS, demo_live_messages
from ctxview.tui.app import CtxviewApp
from ctxview.tui.screens.export import ExportScreen
from ctxview.tui.screens.inspector import InspectorScreen
from tests.conftest import settle

LIVE_PARAMS = replace(DEMO_PARAMS, live_messages=tuple(demo_live_messages()))


def make_app(db: Path, params: Params = LIVE_PARAMS) -> CtxviewApp:
    return CtxviewApp(db, conversation_id=1, params=params, show_timings=False)


async def open_dialog(pilot) -> ExportScreen:
    await pilot.press("e")
    await pilot.pause()
    screen = pilot.app.screen
    assert isinstance(screen, ExportScreen)
    return screen


async def click(pilot, selector: str) -> None:
    """Click a button, then wait out its press animation (a Button ignores clicks while it plays)."""
    await pilot.click(selector)
    await pilot.pause(0.25)
    await settle(pilot)


def messages(app: CtxviewApp) -> list[str]:
    return [n.message for n in app._notifications]


async def test_writes_each_format_byte_for_byte(demo_db, tmp_path):
    app = make_app(demo_db, replace(LIVE_PARAMS, scorer="rarity"))
    async with app.run_test(size=(160, 48), notifications=True) as pilot:
        await settle(pilot)
        trace = app.screen.trace
        for index, fmt in enumerate(FORMATS):
            dialog = await open_dialog(pilot)
            # the dialog starts at the format chosen last; ↓ from the path field moves to the next one
            assert dialog.fmt == FORMATS[max(0, index - 1)]
            if index:
                await pilot.press("down")
            await pilot.pause()
            assert dialog.fmt == fmt
            field = dialog.query_one("#export-path", Input)
            assert field.value == suggested_filename(fmt, stem=demo_db.stem, conversation_id=1)
            target = tmp_path / field.value
            field.value = str(target)
            await pilot.press("enter")
            await settle(pilot)
            assert isinstance(app.screen, InspectorScreen), fmt
            expected = render(trace, fmt).encode("utf-8", "backslashreplace")
            assert target.read_bytes() == expected, fmt
            assert f"wrote {len(expected):,} bytes ({fmt}) to {target.resolve()}" in messages(app)
        assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
            suggested_filename(fmt, stem=demo_db.stem, conversation_id=1) for fmt in FORMATS
        )


async def test_format_change_follows_the_suggestion_until_the_path_is_edited(demo_db):
    app = make_app(demo_db)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        dialog = await open_dialog(pilot)
        field = dialog.query_one("#export-path", Input)
        assert field.value == "demo-conversation-1.json"
        dialog.select_format("markdown")
        await pilot.pause()
        assert field.value == "demo-conversation-1.md"
        # the format list shows every format with its description
        formats = dialog.query_one("#export-format", OptionList)
        assert [formats.get_option_at_index(i).id for i in range(formats.option_count)] == list(FORMATS)
        await pilot.press("end", "x")  # the user edits the name
        await pilot.pause()
        assert field.value == "demo-conversation-1.mdx"
        dialog.select_format("openai")
        await pilot.pause()
        assert dialog.fmt == "openai"
        assert field.value == "demo-conversation-1.mdx"  # kept: the user chose it


async def test_refuses_to_overwrite_until_confirmed(demo_db, tmp_path):
    app = make_app(demo_db)
    target = tmp_path / "context.anthropic.json"
    target.write_text("old", encoding="utf-8")
    async with app.run_test(size=(160, 48), notifications=True) as pilot:
        await settle(pilot)
        trace = app.screen.trace
        dialog = await open_dialog(pilot)
        dialog.select_format("anthropic")
        await pilot.pause()
        dialog.query_one("#export-path", Input).value = str(target)
        await click(pilot, "#write")
        assert app.screen is dialog
        assert target.read_text(encoding="utf-8") == "old"
        write = dialog.query_one("#write", Button)
        assert str(write.label) == "Overwrite"
        # another file name withdraws the question
        dialog.query_one("#export-path", Input).value = str(target) + ".bak"
        await pilot.pause()
        assert str(write.label) == "Write"
        dialog.query_one("#export-path", Input).value = str(target)
        await click(pilot, "#write")
        assert app.screen is dialog and target.read_text(encoding="utf-8") == "old"
        await click(pilot, "#write")  # confirmed
        assert isinstance(app.screen, InspectorScreen)
        assert target.read_bytes() == render(trace, "anthropic").encode("utf-8")
        assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


async def test_copy_to_clipboard_sends_the_rendered_text(demo_db, monkeypatch):
    app = make_app(demo_db)
    copied: list[str] = []
    monkeypatch.setattr(app, "copy_to_clipboard", copied.append)
    async with app.run_test(size=(160, 48), notifications=True) as pilot:
        await settle(pilot)
        trace = app.screen.trace
        dialog = await open_dialog(pilot)
        dialog.select_format("markdown")
        await pilot.pause()
        await click(pilot, "#copy")
        assert copied == [render(trace, "markdown")]
        assert isinstance(app.screen, InspectorScreen)
        note = next(m for m in messages(app) if m.startswith("copied"))
        assert f"{len(copied[0].encode('utf-8')):,} bytes (markdown)" in note
        assert "terminal" in note and "OSC 52" in note
        # ctrl+y copies too, without leaving the path field, in the format chosen last
        dialog = await open_dialog(pilot)
        await pilot.press("ctrl+y")
        await settle(pilot)
        assert copied[-1] == render(trace, "markdown")


async def test_a_failed_write_is_reported_and_the_dialog_stays(demo_db, tmp_path):
    app = make_app(demo_db)
    async with app.run_test(size=(160, 48), notifications=True) as pilot:
        await settle(pilot)
        dialog = await open_dialog(pilot)
        missing = tmp_path / "no-such-dir" / "out.json"
        dialog.query_one("#export-path", Input).value = str(missing)
        await pilot.press("enter")
        await settle(pilot)
        assert app.screen is dialog
        assert not missing.exists()
        assert any("does not exist" in m for m in messages(app))
        # a directory is not a file either
        dialog.query_one("#export-path", Input).value = str(tmp_path)
        await pilot.press("enter")
        await settle(pilot)
        assert app.screen is dialog
        assert any("is a directory" in m for m in messages(app))
        await pilot.press("escape")
        assert isinstance(app.screen, InspectorScreen)
        assert list(tmp_path.iterdir()) == []


def test_help_documents_the_dialog_keys():
    from ctxview.tui.screens.help import KEYS

    documented = dict(KEYS)["Export dialog (e)"]
    keys = " ".join(key for key, _ in documented).replace("/", " ").split()
    names = {"up": "↑", "down": "↓"}
    for binding in ExportScreen.BINDINGS:
        assert names.get(binding.key, binding.key) in keys, binding  # type: ignore[union-attr]
