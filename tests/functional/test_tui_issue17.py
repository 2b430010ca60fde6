"""Issue 17, driven like a user: the why at a glance, any item found, numbers that agree.

The expected values come from the headless assembler or from ``ctxview assemble
--format json`` run as a separate process, never from the widgets themselves.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from itertools import pairwise
from pathlib import Path

import pytest
from textual.widgets import Input
from textual.widgets._footer import FooterKey

from ctxview.export import FORMATS
from ctxview.model import KEPT_OUTCOMES, column
from ctxview.pipeline import SessionAssembler
from ctxview.samples import DEMO_PARAMS, build_sample, demo_live_messages, write_demo_live_json
from ctxview.store import LcmStore
from ctxview.tui.app import CtxviewApp
from ctxview.tui.screens.export import ExportScreen
from ctxview.tui.screens.inspector import InspectorScreen
from ctxview.tui.view import diff_outcomes, format_score, outcome_text
from ctxview.tui.why import terse_reason, terse_text
from ctxview.tui.widgets.budget_bar import BudgetBar, budget_parts
from ctxview.tui.widgets.changes import ChangesLine
from ctxview.tui.widgets.controls import Controls
from ctxview.tui.widgets.find_line import FindLine
from ctxview.tui.widgets.items_table import ItemsTable
from tests.conftest import settle, wait_for

DEMO = replace(DEMO_PARAMS, live_messages=tuple(demo_live_messages()))  # the demo's first screen


def make_app(db: Path, **kwargs) -> CtxviewApp:
    kwargs.setdefault("params", DEMO)
    kwargs.setdefault("conversation_id", 1)
    return CtxviewApp(db, show_timings=False, **kwargs)


def inspector(app: CtxviewApp) -> InspectorScreen:
    assert isinstance(app.screen, InspectorScreen), app.screen
    return app.screen


def table_lines(table: ItemsTable) -> list[str]:
    width = table.scrollable_content_region.width
    return ["".join(seg.text for seg in table.render_row(line, width, False)) for line in range(table.line_count)]


def row_keys(table: ItemsTable) -> list[str]:
    assert table.trace is not None and table.table_layout is not None
    keys = column(table.trace.decisions, "key")
    return [keys[index] for index in table.table_layout.lines if index >= 0]


async def press_text(pilot, text: str) -> None:
    for ch in text:
        await pilot.press({" ": "space", ":": "colon", ">": "greater_than_sign", "<": "less_than_sign"}.get(ch, ch))


# --- 1. a typed budget runs once, and the change line compares with what was applied ---------------


async def test_a_typed_budget_runs_once_on_enter_and_compares_with_the_last_applied(demo_db, assembler):
    app = make_app(demo_db)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        screen = inspector(app)
        before = screen.trace
        ran: list[int] = []
        real_run = screen.assembler.run

        def counting(params):
            ran.append(params.token_budget)
            return real_run(params)

        screen.assembler.run = counting  # type: ignore[method-assign]
        field = screen.query_one("#budget", Input)
        field.focus()
        await pilot.press("ctrl+a", "ctrl+k")  # overwrite 2000 …
        await press_text(pilot, "2500")  # … typed fast, one key at a time
        await pilot.pause()
        assert ran == [] and screen.params.token_budget == 2000  # nothing ran for 2, 25, 250
        await pilot.press("enter")
        await settle(pilot)
        assert ran == [2500]
        assert screen.params.token_budget == 2500 and screen.trace.summary.token_budget == 2500
        expected = diff_outcomes(before, assembler.run(replace(DEMO, token_budget=2500)))
        assert screen.diff.changed == expected.changed  # against 2,000, the last applied result
        line = str(screen.query_one(ChangesLine).render())
        assert line.startswith(f"after budget: {' · '.join(_marked(expected))}")
        assert "−0" not in line and "+0" not in line


def _marked(diff) -> list[str]:
    return [f"{ {1: '▲', -1: '▼', 0: '•'}[direction]} {words}" for direction, words in diff.parts()]


async def test_a_typed_budget_also_applies_when_typing_pauses(demo_db):
    app = make_app(demo_db)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        screen = inspector(app)
        field = screen.query_one("#budget", Input)
        field.focus()
        await pilot.press("ctrl+a", "ctrl+k")
        await press_text(pilot, "1500")
        assert screen.query_one(Controls).typing
        await pilot.pause(Controls.TYPING_PAUSE + 0.3)
        await settle(pilot)
        assert screen.params.token_budget == 1500 and screen.trace.summary.token_budget == 1500
        assert app.focused is field  # a pause applies, it does not take the keyboard away


# --- 2. the budget bar adds up to what is sent ---------------------------------------------------


async def test_the_budget_bar_adds_up_to_what_is_sent_and_names_live_evictions(demo_db):
    app = make_app(demo_db)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        screen = inspector(app)
        s = screen.trace.summary
        parts = dict(budget_parts(screen.trace, screen.assembly.sent))
        sent = parts["tail"] + parts["kept"] + parts["live"] + parts["recall"]
        assert sent == s.final_tokens == 1977
        assert parts["live"] == s.live_appended_tokens == 218
        assert parts["free"] == s.token_budget - sent
        legend = str(screen.query_one(BudgetBar).render()).splitlines()[1]
        assert legend.startswith(
            f"sent 1,977 tok (serialized) = █ fresh tail {parts['tail']:,} + █ kept {parts['kept']:,} + █ live 218 "
            "· evicted for live 148 (not sent) · ░ free 23"
        )
        evicted_for_live = [d for d in screen.trace.decisions if d.outcome == "evicted-for-live"]
        assert [d.key for d in evicted_for_live] == ["o:19"] and evicted_for_live[0].output_index is None
        table = screen.query_one(ItemsTable)
        rows = dict(zip(row_keys(table), [line for line in table_lines(table) if not line.startswith("──")],
                        strict=True))
        assert "evicted for live" in rows["o:19"] and "for L4 +1 · then 1,977/2,000 tok" in rows["o:19"]


async def test_without_the_engine_step_the_bar_adds_up_in_item_tokens(demo_db):
    app = make_app(demo_db, params=replace(DEMO, engine=False))
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        screen = inspector(app)
        s = screen.trace.summary
        parts = dict(budget_parts(screen.trace, screen.assembly.sent))
        assert (parts["tail"], parts["kept"]) == (s.tail_tokens, s.kept_evictable_tokens)
        assert parts["tail"] + parts["kept"] == s.final_tokens


# --- 5. the footer at 80 and 100 columns ----------------------------------------------------------


@pytest.mark.parametrize("size", [(80, 24), (100, 30), (160, 48)])
async def test_the_footer_keys_never_overlap(demo_db, size):
    app = make_app(demo_db)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await pilot.pause()
        keys = sorted(inspector(app).query(FooterKey), key=lambda k: k.region.x)
        assert keys[-1].has_class("-command-palette")
        assert keys[-1].region.right <= size[0]
        for left, right in pairwise(keys):
            assert left.region.right <= right.region.x, (left.key_display, right.key_display)
        assert [k.key_display for k in keys[:3]] == ["/", "+", "-"]  # the first keys of the action table


async def test_the_footer_is_laid_out_again_only_when_its_keys_change(demo_db):
    """Every focus change tells the footer the bindings changed; mounting its keys again each time restyles
    them all (several times while a session opens): the same keys stay the same widgets."""
    app = make_app(demo_db)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        await pilot.pause()
        screen = inspector(app)
        before = list(screen.query(FooterKey))
        screen.bindings_updated_signal.publish(screen)  # (what a focus change or refresh_bindings sends)
        await pilot.pause()
        await pilot.pause()
        assert list(screen.query(FooterKey)) == before
        await pilot.resize_terminal(80, 24)  # the width changes what fits
        await pilot.pause()
        await pilot.pause()
        after = sorted(screen.query(FooterKey), key=lambda k: k.region.x)
        assert len(after) < len(before)
        assert after[-1].has_class("-command-palette") and after[-1].region.right <= 80
        assert [k.key_display for k in after[:3]] == ["/", "+", "-"]


# --- the why in the table -----------------------------------------------------------------------------


async def test_the_reason_column_is_the_terse_why_never_cut_at_160_columns(demo_db):
    app = make_app(demo_db)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        screen = inspector(app)
        table = screen.query_one(ItemsTable)
        lines = [line for line in table_lines(table) if not line.startswith("──")]
        decisions = screen.trace.by_key()
        for key, line in zip(row_keys(table), lines, strict=True):
            why = terse_reason(decisions[key])
            assert line.rstrip().endswith(why), (key, line, why)  # whole, at the end of the row
        assert lines[0].rstrip().endswith(" evicted               194 tok > 3 left · rank 17/34")
        # prompt-aware in ordinal order: no line that looks like a cut; sorted by priority it is there
        separators = [line for line in table_lines(table) if line.startswith("──")]
        assert not any("budget" in line for line in separators)
        await pilot.press("o")  # score: the selection priority
        await settle(pilot)
        assert any(line.startswith("── budget 2,000 reached") for line in table_lines(table))


async def test_engine_notes_are_notes_read_in_full(demo_db):
    app = make_app(demo_db)
    async with app.run_test(size=(160, 48), notifications=True) as pilot:
        await settle(pilot)
        line = str(inspector(app).query_one(ChangesLine).render())
        assert "warning" not in line
        assert line.endswith("note (!): appended unpersisted volatile live input")
        await pilot.press("exclamation_mark")
        await pilot.pause()
        notes = [n.message for n in app._notifications if n.title == "Engine note"]
        assert notes == [
            "appended unpersisted volatile live input\n  conversation 1\n  appendedMessages 2\n  appendedTokens 218\n"
            "  evictedMessages 1\n  evictedTokens 148\n  overBudget false"
        ]


# --- finding things -------------------------------------------------------------------------------------


async def test_filter_terms_combine_escape_clears_enter_keeps(demo_db, assembler):
    app = make_app(demo_db)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        screen = inspector(app)
        table = screen.query_one(ItemsTable)
        await pilot.press("f")
        assert isinstance(app.focused, FindLine)
        await press_text(pilot, "outcome:evicted role:user tokens>50")
        await settle(pilot)
        trace = assembler.run(DEMO)
        expected = [d.key for d in trace.decisions
                    if d.outcome.startswith("evicted") and d.role == "user" and d.tokens > 50]
        assert row_keys(table) == expected
        assert table.border_title == f"items · {len(expected)} of {len(trace.decisions)}"
        await pilot.press("enter")
        assert app.focused is table and screen.query_filter is not None
        assert screen.query_one(FindLine).has_class("-shown")  # the filter stays in sight
        # n / N walk the matches, wrapping
        table.move_cursor_to(0)
        await pilot.press("n")
        assert table.selected_key == expected[1]
        await pilot.press("N", "N")
        assert table.selected_key == expected[-1]
        # escape in the filter line clears it
        await pilot.press("f", "escape")
        await settle(pilot)
        assert screen.query_filter is None and len(row_keys(table)) == len(trace.decisions)
        assert table.border_title == f"items · {len(trace.decisions)}"
        assert app.focused is table


async def test_jump_to_changed_rows_and_to_an_ordinal(demo_db, assembler):
    app = make_app(demo_db)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        screen = inspector(app)
        table = screen.query_one(ItemsTable)
        await pilot.press("t")  # prompt-aware off: many outcomes change
        await settle(pilot)
        order = [key for key in row_keys(table) if key in screen.diff.changed]
        assert len(order) > 2
        table.move_cursor_to(0)
        await pilot.press("right_square_bracket")
        first = next(key for key in order if key != row_keys(table)[0])  # the next changed row below row 0
        assert table.selected_key == first
        await pilot.press("left_square_bracket")
        assert table.selected_key == order[order.index(first) - 1]  # the one before it, wrapping to the last
        await pilot.press("colon")
        await press_text(pilot, "30")
        await pilot.press("enter")
        assert table.selected_key == "o:30" and app.focused is table
        await pilot.press("colon")
        await press_text(pilot, "L4")
        await pilot.press("enter")
        assert table.selected_key == "l:4"


async def test_header_click_sorts_and_reverses_and_O_reverses(demo_db):
    app = make_app(demo_db)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        screen = inspector(app)
        table = screen.query_one(ItemsTable)
        x = table.region.x + 1 + table.render_header(table.scrollable_content_region.width)[0].text.index("tokens")
        await pilot.click(offset=(x, table.region.y + 1))
        await settle(pilot)
        tokens = {d.key: d.tokens for d in screen.trace.decisions}
        keys = row_keys(table)
        assert table.sort == "tokens" and [tokens[k] for k in keys] == sorted(tokens.values(), reverse=True)
        await pilot.click(offset=(x, table.region.y + 1))
        await settle(pilot)
        assert table.reverse and row_keys(table) == keys[::-1]
        assert "tokens▲" in table.render_header(table.scrollable_content_region.width)[0].text
        await pilot.press("O")
        assert not table.reverse and row_keys(table) == keys


async def test_the_palette_lists_every_action_and_matches_help_words(demo_db):
    from ctxview.tui.commands import CtxviewCommands

    app = make_app(demo_db)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        provider = CtxviewCommands(inspector(app))
        names = [name for name, _, _ in provider._commands()]
        for wanted in ("Budget sweep", "Filter items", "Export assembled context", "Quit", "Undo parameter change",
                       "Zoom pane", "Go to item"):
            assert wanted in names
        found = [hit.text for hit in [h async for h in provider.search("clipboard")]]
        assert "Export assembled context" in [str(t) for t in found]  # "clipboard" is only in its help
        found = [str(h.text) for h in [h async for h in provider.search("smallest budget")]]
        assert "Budget sweep" in found


async def test_undo_and_redo_step_through_parameter_sets(demo_db):
    app = make_app(demo_db)
    async with app.run_test(size=(160, 48), notifications=True) as pilot:
        await settle(pilot)
        screen = inspector(app)
        await pilot.press("l")  # an accidental key: live inputs off
        await settle(pilot)
        assert not screen.params.engine
        await pilot.press("plus")
        await settle(pilot)
        assert screen.params.token_budget == 2200
        await pilot.press("ctrl+z")
        await settle(pilot)
        assert screen.params.token_budget == 2000 and not screen.params.engine
        assert screen.assembly.edit == "undo (budget 2,200 → 2,000)"
        await pilot.press("ctrl+z")
        await settle(pilot)
        assert screen.params == DEMO and screen.trace.summary.live_appended_tokens == 218
        assert app._notifications and list(app._notifications)[-1].message == "live inputs off → on"
        await pilot.press("ctrl+y")
        await settle(pilot)
        assert not screen.params.engine and screen.query_one("#engine").value is False


async def test_z_zooms_the_focused_pane_and_j_k_scroll_the_detail(demo_db):
    app = make_app(demo_db)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        screen = inspector(app)
        await pilot.press("z")
        assert screen.maximized is screen.query_one(ItemsTable)
        await pilot.press("z")
        assert screen.maximized is None
        detail = screen.query_one("#detail")
        detail.focus()
        await pilot.press("j", "j", "j")
        await pilot.pause()
        assert detail.scroll_y == 3
        await pilot.press("k")
        await pilot.pause()
        assert detail.scroll_y == 2


# --- feedback -------------------------------------------------------------------------------------------


async def test_a_slow_run_says_assembling_and_dims_the_table(demo_db):
    import threading

    app = make_app(demo_db)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        screen = inspector(app)
        release = threading.Event()
        real_run = screen.assembler.run

        def slow(params):
            release.wait(10)
            return real_run(params)

        screen.assembler.run = slow  # type: ignore[method-assign]
        await pilot.press("plus")
        table = screen.query_one(ItemsTable)
        await wait_for(pilot, lambda: table.stale)
        assert table.styles.text_opacity == ItemsTable.STALE_OPACITY
        assert str(screen.query_one(ChangesLine).render()).startswith("assembling… ")
        release.set()
        await settle(pilot)
        assert not table.stale and table.styles.text_opacity == 1.0
        assert str(screen.query_one(ChangesLine).render()).startswith("after budget")


async def test_the_export_dialog_remembers_the_last_format(demo_db):
    app = make_app(demo_db)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        await pilot.press("e")
        await pilot.pause()
        assert isinstance(app.screen, ExportScreen) and app.screen.fmt == FORMATS[0] != "markdown"
        app.screen.select_format("markdown")
        await pilot.pause()
        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("e")
        await pilot.pause()
        assert isinstance(app.screen, ExportScreen) and app.screen.fmt == "markdown"


# --- done when: every number on screen agrees with `ctxview assemble --format json` -----------------------


DEMO_FLAGS = ["--conversation", "1", "--budget", "2000", "--prompt", "helm rollback failed deploy", "--prompt-aware",
              "--fresh-tail-count", "8"]


def assemble_json(db: Path, live: Path, *flags: str) -> dict:
    out = subprocess.run(
        [sys.executable, "-m", "ctxview", "assemble", str(db), *DEMO_FLAGS, "--live", str(live), *flags,
         "--format", "json"],
        check=True, capture_output=True, text=True,
    )
    return json.loads(out.stdout)


@pytest.mark.parametrize("flags", [(), ("--budget", "1200", "--no-prompt-aware")])
async def test_every_number_on_screen_agrees_with_assemble_json(demo_db, tmp_path, flags):
    live = write_demo_live_json(tmp_path / "live.json")
    expected = assemble_json(demo_db, live, *flags)
    params = DEMO
    if flags:
        params = replace(params, token_budget=1200, prompt_aware_eviction=False)
    app = make_app(demo_db, params=params)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        screen = inspector(app)
        table = screen.query_one(ItemsTable)
        trace = expected["trace"]
        summary = trace["summary"]
        rows = [*({"key": f"o:{i['ordinal']}", "id": str(i["ordinal"]), **i} for i in trace["items"]),
                *({"key": f"l:{i['liveIndex']}", "id": f"L{i['liveIndex']}", **i} for i in trace["liveInputs"])]
        # the table: every row's id, tokens, score, outcome and why
        lines = {key: line for key, line in zip(
            row_keys(table), [line for line in table_lines(table) if not line.startswith("──")], strict=True)}
        assert set(lines) == {row["key"] for row in rows}
        for row in rows:
            line = lines[row["key"]]
            score = format_score(row.get("score"))
            assert line[3:10] == f"{row['id']:>6} ", line
            assert f" {row['tokens']:>7,} {score:>7} " in line, (line, row)
            assert f" {outcome_text(row['outcome']):<21} " in line, (line, row)
            assert line.rstrip().endswith(terse_text(row["reason"])), (line, row["reason"])
        assert table.border_title == f"items · {len(rows)}"
        # the separators
        separators = [line for line in table_lines(table) if line.startswith("──")]
        ordinal, tokens = summary["freshTailOrdinal"], summary["tailTokens"]
        tail = f"── fresh tail — ordinal ≥ {ordinal}, always kept ({tokens:,} tokens) "
        assert any(line.startswith(tail) for line in separators), separators
        # the budget bar
        bar = str(screen.query_one(BudgetBar).render()).splitlines()[1]
        assert bar.startswith(f"sent {expected['estimatedTokens']:,} tok (serialized) = ")
        assert f"│ budget {summary['tokenBudget']:,} · {summary['selectionMode']}" in bar
        if summary["liveAppendedTokens"]:
            assert f"█ live {summary['liveAppendedTokens']:,} " in bar
        if summary["evictedForLiveTokens"]:
            assert f"evicted for live {summary['evictedForLiveTokens']:,} (not sent)" in bar
        # the change line's counts
        outcomes = summary["outcomes"]
        kept = sum(n for outcome, n in outcomes.items() if outcome in KEPT_OUTCOMES and outcome != "appended")
        evicted = outcomes.get("evicted", 0) + outcomes.get("evicted-for-live", 0)
        changes = str(screen.query_one(ChangesLine).render())
        assert f"│ {kept:,} kept · {evicted:,} evicted · " in changes
        assert f" · {len(expected['messages']):,} messages sent" in changes
        if outcomes.get("appended"):
            assert f" · {outcomes['appended']:,} live appended" in changes
        # the assembled pane
        assembled = screen.query_one("#assembled")
        messages, tokens = len(expected["messages"]), expected["estimatedTokens"]
        assert assembled.border_subtitle == f"{messages:,} messages · {tokens:,} tokens"


# --- done when: every evicted tool result that mentions helm, in a few keystrokes, on a large session --------


@pytest.fixture(scope="module")
def large_db(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("large") / "large-6000.db"
    build_sample(path, "large", messages=6000)
    return path


async def test_find_every_evicted_tool_result_mentioning_helm_in_a_large_session(large_db):
    with LcmStore(large_db) as store:
        assembler = SessionAssembler(store.load_session())
    total = sum(item.tokens for item in assembler.resolved("UTC"))
    params = replace(DEMO_PARAMS, token_budget=total // 4, prompt="helm", fresh_tail_count=64)
    headless = assembler.run(params)
    wanted = [d.key for d in headless.decisions
              if d.label == "toolResult" and d.outcome.startswith("evicted") and "helm" in d.text.lower()]
    assert len(wanted) > 10 and len(headless.decisions) > 4_000
    app = CtxviewApp(large_db, params=params, show_timings=False)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        screen = inspector(app)
        assert screen.facts is None  # read when the filter line first opens, not behind the first edits
        keys = "f" + "helm outcome:evicted kind:toolResult"
        await press_text(pilot, keys)
        await pilot.press("enter")
        await settle(pilot)
        table = screen.query_one(ItemsTable)
        assert row_keys(table) == wanted
        assert table.border_title == f"items · {len(wanted):,} of {len(headless.decisions):,}"
        # each row says why it was evicted, without the detail pane
        by_key = headless.by_key()
        lines = [line for line in table_lines(table) if not line.startswith("──")]
        for key, line in zip(row_keys(table), lines, strict=True):
            why = terse_reason(by_key[key])
            assert why and why != by_key[key].reason
            assert line.rstrip().endswith(why), (key, line)


# --- 6. the ROI view agrees with itself ---------------------------------------------------------------


async def test_the_roi_view_never_contradicts_itself(demo_db):
    from rich.console import Console

    from ctxview.tui.screens.roi import RoiScreen, roi_renderable

    app = make_app(demo_db, params=replace(DEMO, scorer="roi"))
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        screen = inspector(app)
        await pilot.press("i")
        await pilot.pause()
        assert isinstance(app.screen, RoiScreen)
        console = Console(width=156, record=True, color_system=None)
        console.print(roi_renderable(screen.roi))
        text = console.export_text()
        rows = {row["section"]: row for row in screen.roi.rows}
        spawn = rows["tool:sessions_spawn"]  # ratio 0 but too few inclusions to score: loaded
        assert spawn["status"] == "insufficient data" and spawn["decision"] == "load"
        lines = [line.strip() for line in text.splitlines()]
        spawn_line = next(line for line in lines if line.startswith("tool:sessions_spawn "))
        assert "WASTE" not in spawn_line and "n/a" not in spawn_line
        assert spawn_line.rstrip().endswith("not scored: 3 of 5 inclusions")
        for section, row in rows.items():
            line = next(line for line in lines if line.startswith(f"{section} "))
            assert ("stub" in line) == (row["decision"] == "stub")
            assert "->" not in line and "ROI " not in line  # the why does not repeat the number columns
        # in the items table, an evicted stub reads as evicted, its stub only a note
        trace = screen.trace
        for d in trace.decisions:
            if d.reason.startswith("stubbed:") and d.outcome == "evicted":
                assert terse_reason(d).split(" · ")[0].split(" tok ")[1].startswith(">")


async def test_the_sweep_shows_progress_and_escape_cancels_it(demo_db, assembler):
    import threading

    from textual.widgets import ProgressBar

    from ctxview.sweep import DEFAULT_RUNS, default_budgets, spaced_subset
    from ctxview.tui.screens.sweep import SweepScreen

    exact = sorted(spaced_subset(default_budgets(assembler, DEMO), DEFAULT_RUNS))

    app = make_app(demo_db)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        screen = inspector(app)
        release = threading.Event()
        real_run = screen.assembler.run
        calls: list[int] = []

        def slow(params):
            calls.append(params.token_budget)
            if params.token_budget == exact[-3]:  # the sweep's second exact run (largest first) waits
                release.wait(10)
            return real_run(params)

        screen.assembler.run = slow  # type: ignore[method-assign]
        await pilot.press("w")
        sweep = app.screen
        assert isinstance(sweep, SweepScreen)
        bar = sweep.query_one("#sweep-progress", ProgressBar)
        # the range (its top run is the sweep's top exact run), then the first exact run; held in the second
        await wait_for(pilot, lambda: bar.progress == 2)
        assert bar.total == 6
        assert str(sweep.query_one("#sweep-notes").render()) == "sweeping… 2 of 6 exact runs (escape cancels)"
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is screen and screen.min_budgets is None  # cancelled: nothing from it is kept
        release.set()
        await settle(pilot)
        assert calls[-2:] == [exact[-2], exact[-3]]  # it stopped before its third exact run
        await pilot.press("plus")  # and the inspector assembles again
        await settle(pilot)
        assert screen.trace.summary.token_budget == 2200


async def test_opening_a_session_says_what_is_under_way(demo_db, monkeypatch):
    import threading

    release = threading.Event()
    real_run = SessionAssembler.run

    def slow(self, params):
        release.wait(10)
        return real_run(self, params)

    monkeypatch.setattr(SessionAssembler, "run", slow)
    app = make_app(demo_db)
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, InspectorScreen) and app.screen.session is not None)
        screen = inspector(app)
        status = screen.query_one("#load-status")
        assert status.display
        assert str(screen.query_one("#load-words").render()) == "assembling 42 context items…"
        release.set()
        await settle(pilot)
        assert not status.display and screen.trace is not None
