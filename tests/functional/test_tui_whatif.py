"""The what-if tools in the inspector (issue 18), driven like a user and checked against headless runs."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from rich.console import Console
from textual.widgets import DataTable, OptionList, Static, TextArea, Tree

from ctxview.model import Params
from ctxview.pipeline import SessionAssembler
from ctxview.samples import DEMO_PARAMS
from ctxview.tui.app import CtxviewApp
from ctxview.tui.screens.add_live import AddLiveScreen
from ctxview.tui.screens.compare import CompareScreen
from ctxview.tui.screens.diagnostics import DiagnosticsScreen
from ctxview.tui.screens.inspector import InspectorScreen
from ctxview.tui.screens.summary_tree import SummaryTreeScreen
from ctxview.tui.widgets.cache_line import CachePrefixLine
from ctxview.tui.widgets.detail import DetailPane
from ctxview.tui.widgets.items_table import ItemsTable
from ctxview.whatif.cache_prefix import cache_prefix
from ctxview.whatif.compare import compare_traces
from ctxview.whatif.diagnose import diagnostics_of
from ctxview.whatif.live_inputs import live_message
from tests.conftest import settle, wait_for


def inspector(app: CtxviewApp) -> InspectorScreen:
    screen = next(s for s in app.screen_stack if isinstance(s, InspectorScreen))
    return screen


def plain(renderable: object) -> str:
    """Rendered text of a Rich renderable or of what a widget drew (``Static.render()``)."""
    if hasattr(renderable, "plain"):
        return str(renderable.plain)
    console = Console(width=140, record=True, color_system=None)
    console.print(getattr(renderable, "content", renderable))
    return console.export_text()


def detail_text(screen: InspectorScreen) -> str:
    return plain(screen.query_one(DetailPane).query_one("#detail-body", Static).content)


async def test_diagnostics_panel_lists_the_traces_contributors_and_jumps(
    demo_db: Path, assembler: SessionAssembler
) -> None:
    app = CtxviewApp(demo_db, conversation_id=1, params=DEMO_PARAMS)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        await pilot.press("D")
        await wait_for(pilot, lambda: isinstance(app.screen, DiagnosticsScreen))
        diag = diagnostics_of(assembler.run(DEMO_PARAMS))
        assert diag is not None
        options = app.screen.query_one(OptionList)
        ids = [options.get_option_at_index(i).id for i in range(options.option_count)]
        expected = [f"o:{r['ordinal']}" for r in diag["topMessageContributors"] + diag["topSummaryContributors"]]
        assert [i for i in ids if i is not None] == expected
        split = plain(app.screen.query_one("#diag-split", Static).render())
        assert f"raw messages  {diag['rawMessageTokens']:>9,} tokens" in split
        # the third contributor (index 3: the first row is the disabled heading)
        options.highlighted = 3
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, InspectorScreen))
        assert app.screen.query_one(ItemsTable).selected_key == expected[2]


async def test_summary_map_shows_outcomes_and_jumps_to_the_row(demo_db: Path, assembler: SessionAssembler) -> None:
    app = CtxviewApp(demo_db, conversation_id=1, params=DEMO_PARAMS)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        await pilot.press("m")
        await wait_for(pilot, lambda: isinstance(app.screen, SummaryTreeScreen) and app.screen.tree_data is not None)
        screen = app.screen
        assert isinstance(screen, SummaryTreeScreen)
        trace = assembler.run(DEMO_PARAMS)
        in_context = {d.summary_id: d for d in trace.decisions if d.kind == "summary"}
        tree = screen.query_one(Tree)
        roots = list(tree.root.children)
        assert roots
        for node in roots:
            assert node.data is not None
            decision = in_context.get(str(node.data[1]))
            label = plain(node.label)
            if decision is None:
                assert "not in context" in label
            else:
                assert f"item {decision.ordinal}: {decision.outcome.replace('-', ' ')}" in label
        # Enter shows the summary's text
        target = roots[1]
        tree.move_cursor(target)
        await pilot.press("enter")
        await pilot.pause()
        summary = screen.tree_data.nodes[str(target.data[1])]  # type: ignore[union-attr,index]
        assert summary.content[:40] in plain(screen.query_one("#summary-body", Static).render())
        # a child outside the context jumps to its root's row
        child = target.children[0]
        assert "not in context" in plain(child.label)
        tree.move_cursor(child)
        await pilot.press("t")
        await wait_for(pilot, lambda: isinstance(app.screen, InspectorScreen))
        assert app.screen.query_one(ItemsTable).selected_key == f"o:{summary.ordinal}"


async def test_add_edit_and_delete_a_live_input(demo_db: Path, assembler: SessionAssembler) -> None:
    app = CtxviewApp(demo_db, conversation_id=1, params=DEMO_PARAMS)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        await pilot.press("a")
        await wait_for(pilot, lambda: isinstance(app.screen, AddLiveScreen))
        app.screen.query_one(TextArea).text = "200 of 200 runs passed on the fix branch."
        await pilot.press("ctrl+s")
        await settle(pilot)
        screen = inspector(app)
        added = live_message("subagent", "200 of 200 runs passed on the fix branch.")
        assert screen.params.live_messages == (added,)
        expected = assembler.run(replace(DEMO_PARAMS, live_messages=(added,)))
        assert [(d.key, d.outcome, d.reason) for d in screen.trace.decisions] == [  # type: ignore[union-attr]
            (d.key, d.outcome, d.reason) for d in expected.decisions
        ]
        assert expected.decisions[-1].outcome == "appended"
        # edit it: a retry prompt instead
        table = screen.query_one(ItemsTable)
        assert table.select_key("l:0")
        await pilot.press("A")
        await wait_for(pilot, lambda: isinstance(app.screen, AddLiveScreen))
        form = app.screen
        assert isinstance(form, AddLiveScreen) and form.kind == "subagent"
        assert form.query_one(TextArea).text == "200 of 200 runs passed on the fix branch."
        form.kind = "retry"
        form.query_one(TextArea).text = "Double-check revision 59."
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert screen.params.live_messages == (live_message("retry", "Double-check revision 59."),)
        assert screen.trace is not None and screen.trace.decisions[-1].reason.startswith("retry prompt")
        # and remove it
        assert table.select_key("l:0")
        await pilot.press("delete")
        await settle(pilot)
        assert screen.params.live_messages is None
        assert all(d.live_index is None for d in screen.trace.decisions)


async def test_cache_prefix_line_and_first_changed_message(demo_db: Path, assembler: SessionAssembler) -> None:
    app = CtxviewApp(demo_db, conversation_id=1, params=DEMO_PARAMS)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        line = app.screen.query_one(CachePrefixLine)
        assert not line.display  # nothing to compare before the first edit
        await pilot.press("minus")
        await settle(pilot)
        screen = inspector(app)
        before = assembler.run(DEMO_PARAMS)
        after = assembler.run(screen.params)
        expected = cache_prefix(before, after)
        assert screen.params.token_budget == 1800
        assert line.display
        assert plain(line.render()).startswith(expected.text())
        assert expected.first_changed_key is not None
        mark = "▶ the first message the last edit changed: the prompt cache is reused up to here"
        table = screen.query_one(ItemsTable)
        table.select_key(expected.first_changed_key)
        await pilot.pause()
        lines = detail_text(screen).splitlines()
        assert lines[1].split(None, 1) == ["cache", mark]
        table.select_key("o:0" if expected.first_changed_key != "o:0" else "o:1")
        await pilot.pause()
        assert mark not in detail_text(screen)


async def test_compare_two_settings(demo_db: Path, assembler: SessionAssembler) -> None:
    app = CtxviewApp(demo_db, conversation_id=1, params=DEMO_PARAMS)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        await pilot.press("x")
        await wait_for(pilot, lambda: isinstance(app.screen, CompareScreen) and app.screen.runs > 0)
        view = app.screen
        assert isinstance(view, CompareScreen)
        assert view.comparison is not None and not any(row.differs for row in view.comparison.rows)
        side_b: Params = replace(DEMO_PARAMS, scorer="rarity", token_budget=2500)
        view.set_side("b", side_b)
        await wait_for(pilot, lambda: view.runs > 1)
        expected = compare_traces(assembler.run(DEMO_PARAMS), assembler.run(side_b))
        assert [(r.key, r.outcome_a, r.outcome_b, r.mark) for r in view.comparison.rows] == [
            (r.key, r.outcome_a, r.outcome_b, r.mark) for r in expected.rows
        ]
        assert plain(view.query_one("#compare-header", Static).render()) == expected.header()
        differing = [r.key for r in expected.rows if r.differs]
        assert differing
        table = view.query_one(DataTable)
        lines = [index for index, key in enumerate(view.row_keys) if key in differing]
        assert len(lines) >= 2
        start = table.cursor_row
        after = [index for index in lines if index > start]
        await pilot.press("n")
        assert table.cursor_row == after[0]
        await pilot.press("n")
        assert table.cursor_row == after[1]
        await pilot.press("N")
        assert table.cursor_row == after[0]
        chosen = view.row_keys[table.cursor_row]
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, InspectorScreen))
        assert app.screen.query_one(ItemsTable).selected_key == chosen
