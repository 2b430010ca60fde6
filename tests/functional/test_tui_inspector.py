"""The inspector driven like a user (Pilot), checked against the headless assembler.

Every assertion about scores and outcomes compares what the table shows with
``SessionAssembler(session).run(params)`` for the same params: the UI must
show the trace, never its own idea of it.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from textual.widgets import Input, Switch

from ctxview.jsjson import js_stringify
from ctxview.model import KEPT_OUTCOMES, Params, Trace
from ctxview.samples import DEMO_PARAMS, build_sample
from ctxview.tui.app import CtxviewApp
from ctxview.tui.screens.export import ExportScreen
from ctxview.tui.screens.help import HelpScreen
from ctxview.tui.screens.inspector import InspectorScreen
from ctxview.tui.screens.picker import PickerScreen
from ctxview.tui.view import format_score, item_id, outcome_text
from ctxview.tui.widgets.assembled import AssembledView
from ctxview.tui.widgets.items_table import ItemsTable
from tests.conftest import settle


def inspector(app: CtxviewApp) -> InspectorScreen:
    assert isinstance(app.screen, InspectorScreen), app.screen
    return app.screen


def expected_rows(trace: Trace) -> list[tuple[str, str, str, str, str, str]]:
    return [
        (item_id(d), d.label, str(d.tokens), format_score(d.score), outcome_text(d.outcome), d.reason)
        for d in trace.decisions
    ]


def rendered_lines(table: ItemsTable) -> list[str]:
    """The text of every table line as the widget draws it."""
    width = table.scrollable_content_region.width
    return ["".join(seg.text for seg in table.render_row(line, width, False)) for line in range(table.line_count)]


async def paste_into(pilot, selector: str, text: str) -> None:
    """Replace a field's value in one edit (as a paste does)."""
    field = pilot.app.screen.query_one(selector, Input)
    field.focus()
    field.value = text
    await settle(pilot)


async def type_into(pilot, selector: str, text: str) -> None:
    field = pilot.app.screen.query_one(selector, Input)
    field.focus()
    field.value = ""
    await pilot.pause()
    for ch in text:
        await pilot.press(ch if ch != " " else "space")
    await settle(pilot)


def make_app(db: Path, **kwargs) -> CtxviewApp:
    kwargs.setdefault("params", DEMO_PARAMS)
    return CtxviewApp(db, show_timings=False, **kwargs)


async def test_typed_prompt_scores_and_outcomes_equal_headless(demo_db, assembler):
    app = make_app(demo_db, conversation_id=1)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        await pilot.press("slash")
        assert app.focused is not None and app.focused.id == "prompt"
        await type_into(pilot, "#prompt", "invoice migration lock")
        screen = inspector(app)
        assert screen.params.prompt == "invoice migration lock"
        headless = assembler.run(replace(DEMO_PARAMS, prompt="invoice migration lock"))
        table = screen.query_one(ItemsTable)
        assert table.visible_rows() == expected_rows(headless)
        assert any(d.score and d.score > 0 for d in headless.decisions)
        # the drawn lines carry the same score (4 decimals) and outcome text, row by row
        drawn = [line for line in rendered_lines(table) if not line.startswith("──")]
        assert len(drawn) == len(headless.decisions)
        for line, d in zip(drawn, headless.decisions, strict=True):
            cells = line[2:].split()  # after the change-marker column
            assert cells[0] == item_id(d)
            if d.score is not None:
                assert format_score(d.score) in line
            assert outcome_text(d.outcome) in line
        # the prompt differs from the opening one, so the changes line reports it
        assert "after prompt" in str(screen.query_one("#changes").render())


async def test_lowering_the_budget_turns_rows_evicted(demo_db, assembler):
    app = make_app(demo_db, conversation_id=1, params=replace(DEMO_PARAMS, token_budget=6000))
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        screen = inspector(app)
        before = {d.key: d.outcome for d in screen.trace.decisions}
        await paste_into(pilot, "#budget", "1200")
        assert screen.params.token_budget == 1200
        headless = assembler.run(replace(DEMO_PARAMS, token_budget=1200))
        assert screen.query_one(ItemsTable).visible_rows() == expected_rows(headless)
        now_evicted = [d.key for d in headless.decisions if d.outcome == "evicted" and before[d.key] in KEPT_OUTCOMES]
        assert now_evicted, "a smaller budget must evict something that was kept"
        # those rows are marked as no longer kept, and counted
        assert all(screen.diff.direction(key) == -1 for key in now_evicted)
        assert screen.diff.lost >= len(now_evicted)
        assert f"▼ {screen.diff.lost:,} newly evicted" in str(screen.query_one("#changes").render())


async def test_budget_keys_step_and_reset(demo_db, assembler):
    app = make_app(demo_db, conversation_id=1)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        screen = inspector(app)
        assert isinstance(app.focused, ItemsTable)
        await pilot.press("minus", "minus")
        await settle(pilot)
        assert screen.params.token_budget == 1620  # 2000 → 1800 → 1620
        assert screen.query_one("#budget", Input).value == "1620"
        assert screen.trace.summary.token_budget == 1620
        assert screen.query_one(ItemsTable).visible_rows() == expected_rows(
            assembler.run(replace(DEMO_PARAMS, token_budget=1620))
        )
        await pilot.press("greater_than_sign")
        await settle(pilot)
        assert screen.params.token_budget == 3240
        await pilot.press("0")
        await settle(pilot)
        assert screen.params.token_budget == 2000


async def test_toggle_prompt_aware_switches_selection_mode(demo_db, assembler):
    app = make_app(demo_db, conversation_id=1)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        screen = inspector(app)
        assert screen.trace.summary.selection_mode == "prompt-aware"
        await pilot.press("t")
        await settle(pilot)
        assert screen.params.prompt_aware_eviction is False
        assert screen.query_one("#prompt-aware", Switch).value is False
        headless = assembler.run(replace(DEMO_PARAMS, prompt_aware_eviction=False))
        assert screen.trace.summary.selection_mode == headless.summary.selection_mode == "chronological"
        assert screen.query_one(ItemsTable).visible_rows() == expected_rows(headless)
        # and the engine step: live inputs disappear from the table
        await pilot.press("l")
        await settle(pilot)
        assert not any(d.live_index is not None for d in screen.trace.decisions)


async def test_live_inputs_are_rows_and_marked_in_the_assembled_context(demo_db, assembler):
    from ctxview.samples import demo_live_messages

    params = replace(DEMO_PARAMS, live_messages=tuple(demo_live_messages()))
    app = make_app(demo_db, conversation_id=1, params=params)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        screen = inspector(app)
        headless = assembler.run(params)
        appended = [d for d in headless.decisions if d.outcome == "appended"]
        assert appended, "the demo live file appends at least one volatile input"
        assert screen.query_one(ItemsTable).visible_rows() == expected_rows(headless)
        view = screen.query_one(AssembledView)
        width = view.scrollable_content_region.width
        line = "".join(s.text for s in view.render_row(appended[0].output_index, width, False))
        assert f"+live {item_id(appended[0])}" in line


async def test_p_jumps_from_tool_call_to_result_and_back(demo_db):
    app = make_app(demo_db, conversation_id=1, params=replace(DEMO_PARAMS, token_budget=100_000))
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        screen = inspector(app)
        table = screen.query_one(ItemsTable)
        call = next(d for d in screen.trace.decisions if d.label == "assistant" and d.pair_with)
        assert table.select_key(call.key)
        await pilot.pause()
        await pilot.press("p")
        await pilot.pause()
        mate = table.selected_decision
        assert mate is not None and mate.key == call.pair_with[0]
        assert mate.label == "toolResult"
        assert call.key in mate.pair_with
        # the detail pane follows the selection
        assert screen.query_one("#detail").key == mate.key
        await pilot.press("p")
        await pilot.pause()
        assert table.selected_key == call.key


async def test_cursor_keys_sort_and_click(demo_db):
    app = make_app(demo_db, conversation_id=1)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        screen = inspector(app)
        table = screen.query_one(ItemsTable)
        assert table.selected_decision.ordinal == 0
        await pilot.press("j", "j", "k")
        assert table.selected_decision.ordinal == 1
        await pilot.press("G")
        assert table.selected_key == screen.trace.decisions[-1].key
        await pilot.press("g")
        assert table.selected_decision.ordinal == 0
        await pilot.press("o")
        assert table.sort == "score"
        scores = [d.score for d in (screen.trace.decisions[i] for i in table.table_layout.lines if i >= 0)
                  if d.segment == "evictable"]
        assert scores == sorted(scores, reverse=True)
        await pilot.press("o", "o")
        assert table.sort == "ordinal"
        # a click on the fourth row (header line + 4) selects it
        await pilot.click(ItemsTable, offset=(5, 1 + 4 + 1))  # border + header + 4 rows
        assert table.cursor == 4


async def test_selecting_an_item_highlights_its_message(demo_db):
    app = make_app(demo_db, conversation_id=1)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        screen = inspector(app)
        table = screen.query_one(ItemsTable)
        kept = next(d for d in screen.trace.decisions if d.output_index is not None and d.output_index > 2)
        table.select_key(kept.key)
        await pilot.pause()
        assert screen.query_one(AssembledView).highlight == kept.output_index


async def test_bad_budget_keeps_the_last_trace_and_says_why(demo_db):
    app = make_app(demo_db, conversation_id=1)
    async with app.run_test(size=(160, 48), notifications=True) as pilot:
        await settle(pilot)
        screen = inspector(app)
        trace = screen.trace
        await paste_into(pilot, "#budget", "12abc")
        field = screen.query_one("#budget", Input)
        assert field.has_class("-invalid")
        assert screen.trace is trace
        assert screen.params.token_budget == 2000
        messages = [n.message for n in app._notifications]
        assert any("token budget must be a positive whole number" in m for m in messages), messages
        await paste_into(pilot, "#budget", "-5")
        assert screen.trace is trace
        # a good value again assembles again
        await type_into(pilot, "#budget", "3k")
        assert not field.has_class("-invalid")
        assert screen.params.token_budget == 3000
        assert screen.trace is not trace and screen.trace.summary.token_budget == 3000


async def test_compact_layout_at_80x24(demo_db):
    app = make_app(demo_db, conversation_id=1)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        screen = inspector(app)
        assert screen.has_class("-compact")
        table = screen.query_one(ItemsTable)
        assert table.display and table.region.height >= 8 and table.region.width >= 76
        assert not screen.query_one("#side").display or screen.query_one("#side").region.width == 0
        assert rendered_lines(table)[0][2:].split()[0] == "0"
        await pilot.press("d")
        await pilot.pause()
        assert screen.query_one("#detail").region.height > 0
        await pilot.press("d")
        await pilot.pause()
        await pilot.resize_terminal(160, 48)
        await pilot.pause()
        assert not screen.has_class("-compact")
        assert screen.query_one("#detail").region.width > 40


async def test_picker_opens_the_chosen_conversation_and_b_goes_back(demo_db):
    app = make_app(demo_db)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, PickerScreen)  # the demo has two conversations
        await pilot.press("j", "enter")
        await settle(pilot)
        screen = inspector(app)
        assert screen.conversation_id == 2
        assert screen.trace is not None and screen.trace.conversation_id == 2
        await pilot.press("b")
        await settle(pilot)
        assert isinstance(app.screen, PickerScreen)
        await pilot.press("k", "enter")
        await settle(pilot)
        assert inspector(app).trace.conversation_id == 1


async def test_a_session_with_one_conversation_opens_without_building_the_picker(tmp_path):
    db = tmp_path / "one.db"
    build_sample(db, "medium", messages=120)
    app = make_app(db)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        screen = inspector(app)
        assert screen.trace is not None and screen.trace.conversation_id == 1
        assert not any(isinstance(s, PickerScreen) for s in app.screen_stack)
        await pilot.press("b")  # the picker takes the inspector's place
        await settle(pilot)
        assert isinstance(app.screen, PickerScreen)
        assert [s for s in app.screen_stack if isinstance(s, InspectorScreen)] == []
        await pilot.press("enter")
        await settle(pilot)
        assert inspector(app).trace.conversation_id == 1


async def test_unknown_conversation_and_bad_file_keep_the_app_up(demo_db, tmp_path):
    app = make_app(demo_db, conversation_id=999)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await settle(pilot)
        screen = inspector(app)
        assert screen.load_error is not None and "999" in screen.load_error
        assert screen.query_one("#load-error").display
        await pilot.press("b")
        await settle(pilot)
        assert isinstance(app.screen, PickerScreen)
    bad = tmp_path / "notes.db"
    bad.write_text("not a database at all")
    app = make_app(bad)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, PickerScreen)
        assert app.screen.query_one("#picker-error").display
        assert app.is_running


async def test_reload_rereads_and_keeps_params(demo_db):
    app = make_app(demo_db, conversation_id=1)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        screen = inspector(app)
        await pilot.press("minus")
        await settle(pilot)
        first_session = screen.session
        await pilot.press("r")
        await settle(pilot)
        assert screen.session is not first_session
        assert screen.params.token_budget == 1800
        assert screen.trace.summary.token_budget == 1800


async def test_export_writes_json_and_refuses_to_overwrite_without_confirmation(demo_db, tmp_path):
    app = make_app(demo_db, conversation_id=1)
    target = tmp_path / "context.json"
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        trace = inspector(app).trace
        await pilot.press("e")
        await pilot.pause()
        assert isinstance(app.screen, ExportScreen)
        field = app.screen.query_one("#export-path", Input)
        field.value = str(target)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, InspectorScreen)
        assert target.read_text(encoding="utf-8") == js_stringify(trace.messages) + "\n"
        assert json.loads(target.read_text(encoding="utf-8"))[0]["role"] == trace.messages[0]["role"]
        # again: the file exists → first Enter asks, second Enter replaces
        target.write_text("old")
        await pilot.press("e")
        await pilot.pause()
        app.screen.query_one("#export-path", Input).value = str(target)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, ExportScreen)
        assert target.read_text() == "old"
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, InspectorScreen)
        assert target.read_text(encoding="utf-8").startswith("[")
        assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


async def test_help_lists_every_binding(demo_db):
    from ctxview.tui.screens.help import KEYS

    app = make_app(demo_db, conversation_id=1)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        documented = " ".join(key for _, keys in KEYS for key, _ in keys)
        names = {"slash": "/", "plus": "+", "minus": "-", "greater_than_sign": ">", "less_than_sign": "<",
                 "question_mark": "?", "equals_sign": "+", "underscore": "-", "up": "↑", "down": "↓",
                 "pageup": "pgup", "pagedown": "pgdn", "right_square_bracket": "]", "left_square_bracket": "[",
                 "colon": ":", "exclamation_mark": "!"}
        for binding in [*InspectorScreen.BINDINGS, *CtxviewApp.BINDINGS, *ItemsTable.BINDINGS,
                        *PickerScreen.BINDINGS]:
            for key in binding.key.split(","):  # type: ignore[union-attr]
                assert names.get(key, key) in documented, binding
        await pilot.press("escape")
        assert isinstance(app.screen, InspectorScreen)


async def test_command_palette_runs_inspector_actions(demo_db):
    from ctxview.tui.commands import INSPECTOR_COMMANDS, CtxviewCommands

    app = make_app(demo_db, conversation_id=1)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        screen = inspector(app)
        for _, _, action in INSPECTOR_COMMANDS:
            name = action.split("(")[0]
            assert callable(getattr(screen, f"action_{name}")), action
        assert CtxviewCommands in app.COMMANDS
        await pilot.press("ctrl+p")
        await pilot.pause()
        for ch in "prompt-aware":
            await pilot.press(ch)
        await pilot.pause(0.3)
        await pilot.press("enter")
        await settle(pilot)
        assert screen.params.prompt_aware_eviction is False


async def test_stored_markup_and_escapes_are_shown_literally(demo_db):
    app = make_app(demo_db, conversation_id=1)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        screen = inspector(app)
        table = screen.query_one(ItemsTable)
        d = screen.trace.decisions[0]
        d.reason = "[bold red]boom[/] \x1b[2J\x1b[31mred\nnext"
        table.invalidate()
        line = rendered_lines(table)[0]
        assert "[bold red]boom[/] red ⏎ next" in line
        assert "\x1b" not in line and "\n" not in line


async def test_rapid_keys_converge_on_the_last_value(demo_db):
    """Held-down keys: stale Changed events from the inputs must not drag the params back."""
    app = make_app(demo_db, conversation_id=1)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        screen = inspector(app)
        await pilot.press(*(["minus"] * 12))
        await pilot.press("t", "t", "t")
        await settle(pilot)
        expected = 2000
        for _ in range(12):
            expected -= max(1, round(expected * 0.1))
        assert screen.params.token_budget == expected
        assert screen.query_one("#budget", Input).value == str(expected)
        assert screen.trace.summary.token_budget == expected
        assert screen.params.prompt_aware_eviction is False
        assert screen.query_one("#prompt-aware", Switch).value is False
        assert screen.trace.params == screen.params


async def test_s_saves_a_screenshot_in_the_current_directory(demo_db, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    app = make_app(demo_db, conversation_id=1)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await settle(pilot)
        await pilot.press("s")
        await pilot.pause()
        shots = list(tmp_path.glob("*.svg"))
        assert len(shots) == 1 and "items" in shots[0].read_text(encoding="utf-8")
        assert any(str(shots[0].name) in n.message for n in app._notifications)


def test_run_tui_refuses_a_malformed_live_file(tmp_path, capsys):
    from ctxview.tui import run_tui

    live = tmp_path / "live.json"
    live.write_text("{not json")
    assert run_tui(None, conversation_id=None, params=Params(), live_path=live, demo=False) == 2
    assert "ctxview: error:" in capsys.readouterr().err


def test_demo_brings_its_live_inputs():
    from ctxview.samples import demo_live_messages
    from ctxview.tui import prepare_params

    assert prepare_params(Params(), None, True).live_messages == tuple(demo_live_messages())
    assert prepare_params(Params(), None, False).live_messages is None
