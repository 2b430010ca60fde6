"""The scorer selector, tokenizer toggle, label column, term rows and ROI view, driven like a user.

Every score and outcome the table shows is compared with
``SessionAssembler(session).run(params)`` for the same params: switching the
scorer in the TUI must show exactly what the headless assembler returns.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from rich.console import Console
from textual.widgets import Select, Static

from ctxview.model import Params, Trace
from ctxview.samples import DEMO_PARAMS
from ctxview.tui.app import CtxviewApp
from ctxview.tui.screens.inspector import InspectorScreen
from ctxview.tui.screens.roi import RoiScreen
from ctxview.tui.view import format_score, item_id, outcome_text
from ctxview.tui.widgets.budget_bar import BudgetBar
from ctxview.tui.widgets.detail import DetailPane
from ctxview.tui.widgets.items_table import ItemsTable
from tests.conftest import settle

CJK_PROMPT = "部署 デプロイ"


def make_app(db: Path, params: Params = DEMO_PARAMS) -> CtxviewApp:
    return CtxviewApp(db, conversation_id=1, params=params, show_timings=False)


def inspector(app: CtxviewApp) -> InspectorScreen:
    found = [s for s in app.screen_stack if isinstance(s, InspectorScreen)]
    assert found, app.screen_stack
    return found[0]


def expected_rows(trace: Trace) -> list[tuple[str, str, str, str, str, str]]:
    return [
        (item_id(d), d.label, str(d.tokens), format_score(d.score), outcome_text(d.outcome), d.reason)
        for d in trace.decisions
    ]


def drawn_rows(table: ItemsTable) -> list[str]:
    """The text of every item row (separators left out) as the widget draws it."""
    width = table.scrollable_content_region.width
    lines = []
    assert table.table_layout is not None
    for line, index in enumerate(table.table_layout.lines):
        if index >= 0:
            lines.append("".join(seg.text for seg in table.render_row(line, width, False)))
    return lines


def plain(renderable, width: int = 140) -> str:
    console = Console(width=width, record=True, color_system=None)
    console.print(renderable)
    return console.export_text()


def detail_text(screen: InspectorScreen) -> str:
    body = screen.query_one(DetailPane).query_one("#detail-body", Static)
    return plain(body.content)


async def test_c_cycles_the_scorer_and_the_table_shows_the_headless_result(demo_db, assembler):
    app = make_app(demo_db)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        screen = inspector(app)
        table = screen.query_one(ItemsTable)
        reference = assembler.run(DEMO_PARAMS)
        assert table.visible_rows() == expected_rows(reference)
        assert not table.show_labels and "label" not in "".join(s.text for s in table.render_header(150))

        await pilot.press("c")
        await settle(pilot)
        assert screen.params.scorer == "rarity"
        assert screen.query_one("#scorer", Select).value == "rarity"
        rarity = assembler.run(replace(DEMO_PARAMS, scorer="rarity"))
        assert table.visible_rows() == expected_rows(rarity)
        assert [d.score for d in rarity.decisions] != [d.score for d in reference.decisions]
        assert [d.outcome for d in rarity.decisions] != [d.outcome for d in reference.decisions]
        # the label column: "exact" / "kw" right after the score, for exactly the labelled rows
        assert table.show_labels
        drawn = drawn_rows(table)
        labelled = 0
        for line, d in zip(drawn, rarity.decisions, strict=True):
            marker = {"exact": "exact", "keyword-only": "kw"}.get(d.label_extra, "")
            if marker:
                labelled += 1
                assert f"{format_score(d.score)} {marker}" in line, line
            else:
                assert f"{format_score(d.score)} exact" not in line and " kw " not in line
        assert labelled == sum(1 for d in rarity.decisions if d.label_extra)
        assert any(d.label_extra == "keyword-only" for d in rarity.decisions)

        await pilot.press("c")
        await settle(pilot)
        assert screen.params.scorer == "roi"
        roi = assembler.run(replace(DEMO_PARAMS, scorer="roi"))
        assert table.visible_rows() == expected_rows(roi)
        stubbed = [d for d in roi.decisions if d.outcome == "stubbed"]
        assert stubbed
        # stubbed rows have their own colour, not the one of stripped tool calls
        line = table.table_layout.line_of[roi.decisions.index(stubbed[0])]
        outcome_segment = next(s for s in table.render_row(line, 150, False) if s.text.strip() == "stubbed")
        assert outcome_segment.style.color == table.part_style("stubbed").color
        assert table.part_style("stubbed").color != table.part_style("stripped").color

        await pilot.press("c")
        await settle(pilot)
        assert screen.params.scorer == "lcm"
        assert table.visible_rows() == expected_rows(reference)
        assert not table.show_labels


async def test_the_scorer_select_switches_like_the_key(demo_db, assembler):
    app = make_app(demo_db)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        screen = inspector(app)
        select = screen.query_one("#scorer", Select)
        select.focus()
        await pilot.press("enter")  # open the overlay on "lcm"
        await pilot.press("down", "down", "enter")  # rarity, roi
        await settle(pilot)
        assert select.value == "roi"
        assert screen.params.scorer == "roi"
        assert screen.query_one(ItemsTable).visible_rows() == expected_rows(
            assembler.run(replace(DEMO_PARAMS, scorer="roi"))
        )
        assert "after scorer" in str(screen.query_one("#changes").render())
        assert "scorer roi" in str(screen.query_one(BudgetBar).render())


async def test_detail_pane_explains_a_score_term_by_term(demo_db, assembler):
    params = replace(DEMO_PARAMS, scorer="rarity")
    app = make_app(demo_db, params)
    async with app.run_test(size=(180, 60)) as pilot:
        await settle(pilot)
        screen = inspector(app)
        trace = assembler.run(params)
        decision = max(trace.decisions, key=lambda d: len(d.matched_terms))
        assert len(decision.matched_terms) >= 4  # rarity rows and BM25-lite rows
        screen.query_one(ItemsTable).select_key(decision.key)
        await pilot.pause()
        text = detail_text(screen)
        assert f"{decision.score:.6f}" in text and "rarity · exact" in text
        lines = text.splitlines()
        for match in decision.matched_terms:
            kind = "rarity · body" if match.note.startswith("rarity") else "bm25-lite"
            weight = f"{match.weight:.4f}".rstrip("0").rstrip(".")
            row = f"{match.term} {match.count} {weight} {match.contribution:.6f} {kind}"
            assert any(" ".join(line.split()) == row for line in lines), (row, text)
        total = sum(m.contribution for m in decision.matched_terms)
        assert total == pytest.approx(decision.score, abs=1e-12)
        assert any(" ".join(line.split()) == f"Σ {total:.6f} = score" for line in lines), text


async def test_roi_rows_are_factors_that_add_up(demo_db, assembler):
    params = replace(DEMO_PARAMS, scorer="roi")
    app = make_app(demo_db, params)
    async with app.run_test(size=(180, 60)) as pilot:
        await settle(pilot)
        screen = inspector(app)
        trace = assembler.run(params)
        decision = next(d for d in trace.decisions if d.score)
        screen.query_one(ItemsTable).select_key(decision.key)
        await pilot.pause()
        text = detail_text(screen)
        assert decision.label_extra == "MED+" and "roi · MED+" in text
        for match in decision.matched_terms:
            assert match.term in "CTRS"
            note = match.note.removeprefix("factor ")
            assert note in text
        assert f"Σ {sum(m.contribution for m in decision.matched_terms):.6f} = score" in " ".join(text.split())


async def test_cjk_prompt_finds_cjk_items_in_unicode_mode_and_nothing_in_lcm_mode(demo_db, assembler):
    app = make_app(demo_db)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        screen = inspector(app)
        field = screen.query_one("#prompt")
        field.focus()
        field.value = CJK_PROMPT
        await settle(pilot)
        table = screen.query_one(ItemsTable)
        lcm = assembler.run(replace(DEMO_PARAMS, prompt=CJK_PROMPT))
        assert table.visible_rows() == expected_rows(lcm)
        assert screen.trace.summary.selection_mode == "chronological"
        assert all(d.score is None for d in screen.trace.decisions)

        await pilot.press("escape", "u")
        await settle(pilot)
        assert screen.params.tokenizer == "unicode"
        assert screen.query_one("#tokenizer", Select).value == "unicode"
        unicode = assembler.run(replace(DEMO_PARAMS, prompt=CJK_PROMPT, tokenizer="unicode"))
        assert table.visible_rows() == expected_rows(unicode)
        found = [d for d in screen.trace.decisions if d.score]
        assert found and screen.trace.summary.selection_mode == "prompt-aware"
        for d in found:
            assert any(term.term in d.text for term in d.matched_terms)
            assert any("\u3040" <= ch <= "\u9fff" for ch in d.text)
        # the detail pane names the bigrams that matched
        table.select_key(found[0].key)
        await pilot.pause()
        text = detail_text(screen)
        for match in found[0].matched_terms:
            assert match.term in text
        assert "lcm + unicode" in str(screen.query_one(BudgetBar).render())

        await pilot.press("u")
        await settle(pilot)
        assert screen.params.tokenizer == "lcm"
        assert all(d.score is None for d in screen.trace.decisions)


async def test_roi_view_says_it_is_off_then_lists_the_sections(demo_db, assembler):
    app = make_app(demo_db)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        screen = inspector(app)
        await pilot.press("i")
        await pilot.pause()
        assert isinstance(app.screen, RoiScreen)
        body = app.screen.query_one("#roi-body", Static)
        assert "ROI scorer is off — press c to switch" in plain(body.content)
        await pilot.press("c")  # from the ROI view: straight to the ROI scorer
        await settle(pilot)
        assert screen.params.scorer == "roi"
        assert isinstance(app.screen, RoiScreen)
        text = plain(body.content, width=220)
        sections = assembler.run(replace(DEMO_PARAMS, scorer="roi")).stages["scoring"]["sections"]
        assert sections == screen.trace.stages["scoring"]["sections"]
        rows = {line.split()[0]: line.split() for line in text.splitlines() if line.strip()}

        def shown(value, digits):
            return "—" if value is None else f"{value:.{digits}f}"

        for section in sections:
            # section, band, score, decision, C, T, R, S, cited, incl, ROI, items, tokens, then the why;
            # a section not scored (too few inclusions) has no band and no score, whatever its ratio
            scored = section["status"] == "scored"
            cells = rows[section["section"]][:13]
            assert cells == [
                section["section"],
                section["category"] if scored else "—",
                f"{section['score']:.3f}" if scored else "—",
                section["decision"],
                *(shown(section[f], 2) for f in "CTRS"),
                str(section["cited"]),
                str(section["included"]),
                "n/a" if section["roi"] is None else f"{section['roi']:.2f}",
                str(section["items"]),
                f"{section['tokens']:,}",
            ]
        assert {"WASTE", "MED+"} <= {s["category"] for s in sections}
        assert "section ROI" in text and f"{screen.trace.stages['scoring']['stubbedCount']} items stubbed" in text
        await pilot.press("c")  # on: cycles on, as everywhere
        await settle(pilot)
        assert screen.params.scorer == "lcm"
        assert "ROI scorer is off" in plain(body.content)
        await pilot.press("escape")
        assert app.screen is screen


async def test_low_confidence_note_shows_for_rarity(demo_db):
    # every score zero: no prompt term occurs anywhere
    app = make_app(demo_db, replace(DEMO_PARAMS, scorer="rarity", prompt="zebra quantum xylophone"))
    async with app.run_test(size=(220, 48)) as pilot:
        await settle(pilot)
        screen = inspector(app)
        assert screen.trace.summary.low_confidence
        assert "low confidence: the prompt matches no item" in str(screen.query_one(BudgetBar).render())
    # threadnote's condition: the kept items only contain the word as a substring (fail ⊂ failed)
    app = make_app(demo_db, replace(DEMO_PARAMS, scorer="rarity", prompt="fail"))
    async with app.run_test(size=(240, 48)) as pilot:
        await settle(pilot)
        screen = inspector(app)
        kept = [d for d in screen.trace.decisions if d.segment == "evictable" and d.is_kept]
        assert kept and all(d.label_extra != "exact" for d in kept)
        assert any(d.label_extra == "keyword-only" for d in kept)
        assert "kept items only contain the prompt's words" in str(screen.query_one(BudgetBar).render())
    # and the reference scorer on the same prompt has no such note
    app = make_app(demo_db, replace(DEMO_PARAMS, prompt="helm rollback"))
    async with app.run_test(size=(240, 48)) as pilot:
        await settle(pilot)
        assert "low confidence" not in str(inspector(app).query_one(BudgetBar).render())


async def test_palette_sets_a_scorer_by_name(demo_db):
    app = make_app(demo_db)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        screen = inspector(app)
        await pilot.press("ctrl+p")
        await pilot.pause()
        for ch in "Scorer: roi":
            await pilot.press(ch if ch != " " else "space")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await settle(pilot)
        assert screen.params.scorer == "roi"
        assert screen.trace.stages["scoring"]["scorer"] == "section-roi"


def test_help_documents_the_new_keys():
    from ctxview.tui.screens.help import KEYS

    sections = {title: " ".join(key for key, _ in keys) for title, keys in KEYS}
    editing, reading = sections["Inspector — editing"], sections["Inspector — reading"]
    for binding in InspectorScreen.BINDINGS:
        if binding.action in ("cycle_scorer", "toggle_tokenizer", "roi_view"):  # type: ignore[union-attr]
            assert binding.key in (editing + " " + reading).split(), binding  # type: ignore[union-attr]
    roi_keys = sections["ROI view (i)"].replace("/", " ").split()
    for binding in RoiScreen.BINDINGS:
        for key in binding.key.split(","):  # type: ignore[union-attr]
            assert key in roi_keys, binding
