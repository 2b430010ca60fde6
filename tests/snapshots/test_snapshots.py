"""Pinned looks of the picker, inspector, ROI view and help screens on the demo sample.

Deterministic: the demo database is rebuilt byte-identically into a temporary
directory and opened by a relative path, the terminal size is fixed, timings
are hidden, the items table (not an input) has focus so no cursor blinks.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from ctxview.model import Params
from ctxview.samples import DEMO_PARAMS, build_sample, demo_live_messages
from ctxview.tui.app import CtxviewApp
from tests.conftest import settle

LIVE_PARAMS = replace(DEMO_PARAMS, live_messages=tuple(demo_live_messages()))


@pytest.fixture
def demo_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    build_sample(tmp_path / "demo.db", "demo")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def make_app(conversation_id: int | None = 1, params: Params = LIVE_PARAMS) -> CtxviewApp:
    return CtxviewApp(Path("demo.db"), conversation_id=conversation_id, params=params, show_timings=False)


def settled(*keys: str):
    """A run_before that presses keys, letting the app settle after each."""

    async def run_before(pilot) -> None:
        await settle(pilot)
        for key in keys:
            await pilot.press(key)
            await settle(pilot)

    return run_before


def test_picker(snap_compare, demo_dir):
    assert snap_compare(make_app(conversation_id=None), terminal_size=(120, 30), run_before=settled())


def test_inspector_wide(snap_compare, demo_dir):
    assert snap_compare(make_app(), terminal_size=(160, 48), run_before=settled())


def test_inspector_after_budget_cut_sorted_by_score(snap_compare, demo_dir):
    """Lower the budget 10 % (rows that lost their place are marked ▼), then sort by score."""
    assert snap_compare(make_app(), terminal_size=(160, 48), run_before=settled("minus", "o", "j", "j", "j"))


def test_inspector_compact_80x24(snap_compare, demo_dir):
    assert snap_compare(make_app(), terminal_size=(80, 24), run_before=settled())


def test_inspector_engine_off_chronological(snap_compare, demo_dir):
    params = replace(LIVE_PARAMS, prompt_aware_eviction=False, engine=False)
    assert snap_compare(make_app(params=params), terminal_size=(160, 48), run_before=settled("G"))


def test_inspector_rarity_scorer(snap_compare, demo_dir):
    """c: the rarity scorer — label column, and the detail pane's term rows adding up to the score."""
    assert snap_compare(make_app(), terminal_size=(160, 48), run_before=settled("c", "j", "j", "j", "j", "j"))


def test_roi_view(snap_compare, demo_dir):
    """i on the section-ROI scorer: one row per section, bands coloured."""
    assert snap_compare(make_app(params=replace(LIVE_PARAMS, scorer="roi")), terminal_size=(160, 48),
                        run_before=settled("i"))


def test_help(snap_compare, demo_dir):
    assert snap_compare(make_app(), terminal_size=(120, 48), run_before=settled("question_mark"))
