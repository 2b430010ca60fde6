"""The conversation browser's data: marks, coverage through condensed summaries, paging, bad data as notes."""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from ctxview.browse.messages import Cover, MessageBrowser, open_browser
from ctxview.store import LcmStore
from tests.browse_fixtures import BrowseState, build_browse_state
from tests.lcmdb import LcmDbWriter


@pytest.fixture(scope="module")
def state(tmp_path_factory: pytest.TempPathFactory) -> BrowseState:
    return build_browse_state(tmp_path_factory.mktemp("browse") / "state")


@pytest.fixture
def browser(state: BrowseState) -> Iterator[MessageBrowser]:
    with LcmStore(state.lcm) as store:
        yield open_browser(store.connection, 1)


def test_every_message_is_listed_with_its_mark(browser: MessageBrowser, state: BrowseState) -> None:
    rows = browser.page(0)
    ids = state.message_ids
    assert [(r.position, r.message_id, r.seq, r.role, r.mark) for r in rows] == [
        (0, ids["e0000001"], 0, "user", "summarised"),
        (1, ids["e0000002"], 1, "assistant", "summarised"),
        (2, ids["e0000003"], 2, "tool", "summarised"),
        (3, ids["e0000004"], 3, "assistant", "not-in-context"),
        (4, ids["e0000006"], 4, "user", "context"),
        (5, ids["e0000008"], 5, "assistant", "context"),
        (6, ids["e0000009"], 6, "user", "context"),
        (7, ids["e000000a"], 7, "assistant", "context"),
    ]
    # the first two reach the context through the condensed summary over their leaf, the third through its leaf
    assert [r.cover for r in rows[:4]] == [Cover("sum_cond", 0), Cover("sum_cond", 0), Cover("sum_leaf2", 1), None]
    assert [r.direct_summaries for r in rows[:4]] == [("sum_leaf1",), ("sum_leaf1",), ("sum_leaf2",), ()]
    assert [r.context_ordinal for r in rows[4:]] == [2, 3, 4, 5]
    assert [r.mark_text for r in rows[2:5]] == [
        "summarised into sum_leaf2 (item 1)",
        "not in the context",
        "in the context (item 2)",
    ]
    assert browser.count == 8
    assert browser.mark_counts == {"context": 4, "summarised": 3, "not-in-context": 1}
    assert browser.notes == []


def test_a_tool_call_without_content_reads_from_its_parts(browser: MessageBrowser, state: BrowseState) -> None:
    assert browser.row(1) is not None and browser.row(1).preview == "[tool exec]"  # type: ignore[union-attr]
    assert browser.message_text(state.message_ids["e0000002"]) == '[tool exec] {"command":"helm upgrade"}'
    assert browser.message_text(state.message_ids["e0000004"]) == "Staging is on 2.14 and healthy."


def test_pages_rows_and_positions(browser: MessageBrowser, state: BrowseState) -> None:
    assert [r.position for r in browser.page(3, 2)] == [3, 4]
    assert browser.page(8) == []
    assert browser.row(8) is None and browser.row(-1) is None
    assert browser.position_of(state.message_ids["e0000009"]) == 6
    assert browser.position_of(999) is None


def test_next_change_of_mark(browser: MessageBrowser) -> None:
    assert browser.next_with_mark(0, 1) == 3  # summarised × 3, then not in the context
    assert browser.next_with_mark(3, 1) == 4
    assert browser.next_with_mark(4, 1) is None  # the context runs to the end
    assert browser.next_with_mark(7, -1) == 3
    assert browser.next_with_mark(7, -1, "summarised") == 2


def test_summary_text_and_standing(browser: MessageBrowser) -> None:
    cond = browser.summary("sum_cond")
    assert cond is not None
    assert (cond.kind, cond.depth, cond.context_ordinal, cond.parents) == ("condensed", 1, 0, ("sum_leaf1",))
    assert cond.content == "Deployed billing-api 2.14 to staging (revision 57)."
    leaf = browser.summary("sum_leaf1")
    assert leaf is not None and (leaf.context_ordinal, leaf.source_messages, leaf.missing_sources) == (None, 2, 0)
    assert browser.summary("sum_nope") is None


def test_bad_data_gives_notes_not_errors(tmp_path: Path) -> None:
    path = tmp_path / "bad.db"
    w = LcmDbWriter(path)
    a = w.user("first", in_context=False)
    w.summary("sum_leaf", "leaf", source_messages=[a, 4242])  # 4242 does not exist
    w.summary("sum_top", "top", kind="condensed", depth=1, parents=["sum_leaf", "sum_lost"])  # sum_lost neither
    w.context_message(777)  # a context item naming a missing message
    w.context_summary("sum_void")  # and one naming a missing summary
    w.user("last")
    w.close()
    with LcmStore(path) as store:
        browser = open_browser(store.connection, 1)
        assert browser.notes == [
            "1 context item names a message that does not exist",
            "1 context item names a summary that does not exist",
            "summaries in the context (sum_leaf, sum_top) cover 1 message that does not exist",
            "1 source summary named in summary_parents does not exist",
        ]
        assert browser.mark_counts == {"context": 1, "summarised": 1, "not-in-context": 0}
        assert [(r.role, r.mark) for r in browser.page(0)] == [("user", "summarised"), ("user", "context")]
        assert browser.summary("sum_leaf") is not None
        assert browser.summary("sum_leaf").missing_sources == 1  # type: ignore[union-attr]


def test_never_writes(state: BrowseState, tmp_path: Path) -> None:
    copy = tmp_path / "lcm.db"
    shutil.copy(state.lcm, copy)
    before = copy.read_bytes()
    with LcmStore(copy) as store:
        browser = open_browser(store.connection, 1)
        browser.page(0)
        with pytest.raises(sqlite3.OperationalError):
            store.connection.execute("DELETE FROM messages")
    assert copy.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lcm.db"]
