"""What the store makes of databases no engine wrote: exact messages, notes and values.

The adversarial suite (``test_hostile.py``) checks that nothing hangs, crashes or writes;
these tests pin what ctxview says and shows for the main classes: a view where a table
belongs, a query stopped by the guard (CLI and inspector), values past what the engine
writes, rows sharing a key, names in another case.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from ctxview.cli import main
from ctxview.errors import DatabaseError
from ctxview.model import Params
from ctxview.pipeline import SessionAssembler
from ctxview.store import LcmStore
from ctxview.tui.app import CtxviewApp
from ctxview.tui.screens.inspector import InspectorScreen
from tests.safety.hostile import KINDS
from tests.safety.support import MEDIUM, settle


def build(kind: str, folder: Path) -> Path:
    return KINDS[kind](folder)


@pytest.mark.parametrize(
    ("kind", "table", "what"),
    [
        ("context_items is a recursive view with no end", "context_items", "a view"),
        ("messages is a cross-join view", "messages", "a view"),
        ("focus_briefs is a view with no end", "focus_briefs", "a view"),
        ("conversation_compaction_maintenance is a view with no end", "conversation_compaction_maintenance", "a view"),
        ("context_items is a virtual table", "context_items", "a virtual table"),
    ],
)
def test_a_view_where_the_engine_writes_a_table_is_refused_at_once(
    kind: str, table: str, what: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = build(kind, tmp_path)
    message = f"{db}: {table} is {what}, not a table: this database was not written by the engine"
    with pytest.raises(DatabaseError) as caught:
        LcmStore(db)
    assert str(caught.value) == message
    assert main(["assemble", str(db)]) == 2
    assert capsys.readouterr().err == f"ctxview: error: {message}\n"


def test_a_query_stopped_by_the_guard_is_one_line_on_the_command_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CTXVIEW_QUERY_DEADLINE", "0.000001")  # every statement of any size is stopped
    assert main(["assemble", str(MEDIUM), "--format", "json"]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"ctxview: error: {MEDIUM}: a query ran longer than 1e-06 s and was stopped; the database holds more than"
        " ctxview can read in that time, or something no engine writes (set CTXVIEW_QUERY_DEADLINE to allow"
        " longer)\n"
    )


async def test_the_inspector_stays_up_and_says_when_the_guard_stops_a_query(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CTXVIEW_QUERY_DEADLINE", "0.000001")
    app = CtxviewApp(MEDIUM, conversation_id=1, params=Params(token_budget=2000), show_timings=False)
    async with app.run_test(size=(120, 36), notifications=True) as pilot:
        await settle(pilot)
        errors = [n.message for n in app._notifications if n.severity == "error"]
        assert errors and all("a query ran longer than 1e-06 s and was stopped" in e for e in errors)
        assert app.is_running and app.return_code is None
        monkeypatch.setenv("CTXVIEW_QUERY_DEADLINE", "30")
        await pilot.press("escape")
        if isinstance(app.screen, InspectorScreen):
            await pilot.press("r")  # with time enough, the same inspector reads the session
            await settle(pilot)
            assert app.screen.trace is not None
        assert app.is_running


def test_infinite_token_counts_are_infinity_in_the_list_and_the_degrade_gate(tmp_path: Path) -> None:
    db = build("compaction pending with infinite pressure", tmp_path)
    with LcmStore(db) as store:
        listed = {c.conversation_id: c.token_total for c in store.list_conversations()}
        session = store.load_session(1)
    assert listed == {1: math.inf, 2: math.inf}
    assert session.stored_context_tokens == math.inf
    trace = SessionAssembler(session).run(Params(token_budget=5000))
    assert trace.summary.fallback_why is not None or trace.warnings  # the engine's degrade path, said so


def test_the_conversation_list_shows_an_infinite_total(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = build("token_count is +Infinity", tmp_path)
    assert main(["conversations", str(db)]) == 0
    rows = capsys.readouterr().out.splitlines()[3:]
    assert [row.split()[5] for row in rows] == ["inf", "inf"]


def test_token_counts_summing_past_2_63_are_summed_as_doubles_with_a_note(tmp_path: Path) -> None:
    db = build("token_count sums past 2**63", tmp_path)
    with LcmStore(db) as store:
        session = store.load_session(1)
    assert isinstance(session.stored_context_tokens, float) and session.stored_context_tokens > 2**63
    assert (
        "the stored token counts of the context sum past 2**63, where SQLite's SUM (the engine's degrade gate)"
        " fails; ctxview uses their sum as a floating-point number"
    ) in session.warnings


def test_context_items_sharing_an_ordinal_keep_the_first_and_say_so(tmp_path: Path) -> None:
    db = build("duplicate context_items ordinals", tmp_path)
    with LcmStore(db) as store:
        session = store.load_session(1)
    ordinals = [item.ordinal for item in session.items]
    assert ordinals == sorted(set(ordinals)) == list(range(42))
    assert (
        "14 context items sharing an ordinal with an earlier one skipped (ordinal 0, 3, 6, 9, 12 …);"
        " the engine would assemble them too"
    ) in session.warnings
    for scorer in ("rarity", "roi"):
        trace = SessionAssembler(session).run(Params(token_budget=900, prompt="helm rollback", scorer=scorer))
        assert len({d.key for d in trace.decisions}) == len(trace.decisions)


def test_ordinals_that_are_no_whole_number_are_skipped_and_counted(tmp_path: Path) -> None:
    db = build("context_items ordinals fractional", tmp_path)
    with LcmStore(db) as store:
        session = store.load_session(1)
    assert [item.ordinal for item in session.items] == list(range(0, 42, 2))
    assert "21 context items without a whole-number ordinal skipped" in session.warnings


def test_part_ordinals_of_any_type_keep_sqlites_order_and_every_scorer_runs(tmp_path: Path) -> None:
    db = build("message_parts ordinals text, fractional and duplicate", tmp_path)
    with LcmStore(db) as store:
        session = store.load_session(1)
    for scorer in ("lcm", "rarity", "roi"):
        SessionAssembler(session).run(Params(token_budget=900, prompt="helm rollback", scorer=scorer))


def test_upper_case_table_and_column_names_are_the_same_tables(tmp_path: Path) -> None:
    db = build("table and column names in upper case", tmp_path)
    with LcmStore(db) as store:
        session = store.load_session(1)
    assert len(session.items) == 42 and len(session.messages) == 38


def test_rows_sharing_a_conversation_id_are_listed_once(tmp_path: Path) -> None:
    db = build("conversation ids no engine writes", tmp_path)
    with LcmStore(db) as store:
        listed = [c.conversation_id for c in store.list_conversations()]
    assert listed == [1, 2, 9223372036854775807]  # 'three' and 4.5 are no whole numbers; 1 once
