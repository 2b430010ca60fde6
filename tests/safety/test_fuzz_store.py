"""Fuzzing the store with damaged databases: every failure is one clear CtxviewError.

Copies of ``sample_sessions/demo.db`` are damaged by hypothesis — bytes
flipped or zeroed (the schema pages more often), the file truncated, tables
or columns dropped, and rows rewritten with garbage JSON, NUL bytes, invalid
UTF-8, wrong SQLite types and huge numbers — and then read, assembled and
rendered the way the CLI does.  A run may succeed (the store keeps working
with what is readable) or raise ``CtxviewError``; anything else is a crash.
Bounded by ``max_examples`` so the whole safety suite stays well under two
minutes on two cores.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxview.errors import CtxviewError
from ctxview.export import FORMATS, render
from ctxview.model import Params
from ctxview.pipeline import SessionAssembler
from ctxview.report import dumps, trace_table, trace_to_json
from ctxview.samples import demo_live_messages
from ctxview.store import REQUIRED, LcmStore

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "sample_sessions" / "demo.db"
PAGE = 4096
LIVE = tuple(demo_live_messages())

# CI runs a fixed, bounded set; CTXVIEW_FUZZ_EXAMPLES=5000 fuzzes longer with fresh randomness
LONG_RUN = int(os.environ.get("CTXVIEW_FUZZ_EXAMPLES", "0"))
FUZZ = settings(
    max_examples=LONG_RUN or 60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    derandomize=not LONG_RUN,
    database=None,
)

# --- the damage ----------------------------------------------------------------------------

GARBAGE_TEXT = st.sampled_from(
    [
        "{not json",
        "[1, 2",
        '{"raw": 5, "rawType": 7, "originalRole": 3}',
        '{"raw": {"type": "toolCall", "id": 5, "arguments": "x"}, "rawType": "toolCall"}',
        '{"raw": {"type": "text"}, "rawType": "text", "originalRole": "toolResult", "toolCallId": []}',
        '{"originalRole": "assistant", "raw": {"type": "thinking", "thinking": null, "signature": {}}}',
        "null",
        "1e999",
        "-0",
        '"\\ud800"',
        "[" * 5000,
        "\x00\x00",
        "a\x00b\x1b[31m[bold red]x[/]",
        "",
        "   ",
        "\u2028",
    ]
)
GARBAGE_VALUE: st.SearchStrategy[Any] = st.one_of(
    GARBAGE_TEXT,
    st.binary(max_size=40),
    st.sampled_from([b"\xff\xfe\x00A", b"\xc3\x28", b"{\"a\xff\": 1}"]),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.floats(allow_nan=True, allow_infinity=True),
    st.none(),
)

# (table, column) pairs the assembler reads, with the row filter that spreads the damage
TARGETS = [
    ("messages", "content"),
    ("messages", "role"),
    ("messages", "seq"),
    ("messages", "token_count"),
    ("messages", "large_content"),
    ("messages", "openclaw_sender_metadata"),
    ("messages", "created_at"),
    ("message_parts", "metadata"),
    ("message_parts", "tool_input"),
    ("message_parts", "tool_output"),
    ("message_parts", "text_content"),
    ("message_parts", "part_type"),
    ("message_parts", "ordinal"),
    ("message_parts", "tool_call_id"),
    ("message_parts", "tool_name"),
    ("message_parts", "message_id"),
    ("context_items", "ordinal"),
    ("context_items", "item_type"),
    ("context_items", "message_id"),
    ("context_items", "summary_id"),
    ("summaries", "content"),
    ("summaries", "kind"),
    ("summaries", "depth"),
    ("summaries", "earliest_at"),
    ("summaries", "latest_at"),
    ("summaries", "descendant_count"),
    ("summaries", "file_ids"),
    ("summaries", "summary_id"),
    ("summary_parents", "parent_summary_id"),
    ("summary_messages", "message_id"),
    ("conversations", "conversation_id"),
    ("conversations", "active"),
    ("conversations", "created_at"),
    ("conversations", "title"),
    ("large_files", "byte_size"),
    ("large_files", "file_id"),
    ("focus_briefs", "status"),
]


@st.composite
def sql_damage(draw: st.DrawFn) -> list[tuple[str, tuple[Any, ...]]]:
    """UPDATEs that write garbage into a few columns of a fraction of the rows."""
    statements = []
    for _ in range(draw(st.integers(1, 4))):
        table, column = draw(st.sampled_from(TARGETS))
        modulus = draw(st.sampled_from([1, 2, 3, 7]))
        value = draw(GARBAGE_VALUE)
        statements.append((f"UPDATE OR IGNORE {table} SET {column} = ? WHERE rowid % {modulus} = 0", (value,)))
    return statements


@st.composite
def schema_damage(draw: st.DrawFn) -> list[str]:
    """Drop a table or rebuild one without a column (an older or a foreign schema)."""
    table = draw(st.sampled_from([*REQUIRED, "large_files", "focus_briefs", "conversation_bootstrap_state"]))
    if draw(st.booleans()):
        return [f"DROP TABLE {table}"]
    with sqlite3.connect(DEMO) as conn:
        columns = [row[1] for row in conn.execute(f"PRAGMA table_info({table})")]
    conn.close()
    dropped = draw(st.sampled_from(columns))
    kept = ", ".join(c for c in columns if c != dropped) or "1 AS x"
    return [
        f"CREATE TABLE damaged AS SELECT {kept} FROM {table}",
        f"DROP TABLE {table}",
        f"ALTER TABLE damaged RENAME TO {table}",
    ]


@st.composite
def byte_damage(draw: st.DrawFn) -> list[tuple[int, bytes]]:
    """Overwrite a few byte ranges; the header and schema pages are hit more often."""
    size = DEMO.stat().st_size
    edits = []
    for _ in range(draw(st.integers(1, 6))):
        offset = draw(st.one_of(st.integers(0, 100), st.integers(0, PAGE * 3), st.integers(0, size - 1)))
        data = draw(st.one_of(st.binary(min_size=1, max_size=16), st.just(b"\x00" * PAGE)))
        edits.append((offset, data))
    return edits


@contextmanager
def damaged_copy() -> Iterator[Path]:
    """A private copy of the demo database (tmp_path cannot be shared across hypothesis examples)."""
    folder = Path(tempfile.mkdtemp(prefix="ctxview-fuzz-"))
    try:
        path = folder / "lcm.db"
        shutil.copyfile(DEMO, path)
        yield path
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def apply_sql(path: Path, statements: list[Any]) -> None:
    conn = sqlite3.connect(path)
    try:
        conn.execute("PRAGMA ignore_check_constraints = ON")
        conn.execute("PRAGMA foreign_keys = OFF")
        for statement in statements:
            sql, args = (statement, ()) if isinstance(statement, str) else statement
            try:
                conn.execute(sql, args)
            except sqlite3.Error:
                pass  # a NOT NULL or type constraint refused this piece of damage: the rest still applies
        conn.commit()
    finally:
        conn.close()


def apply_bytes(path: Path, edits: list[tuple[int, bytes]], truncate: int | None) -> None:
    with path.open("r+b") as handle:
        for offset, data in edits:
            handle.seek(offset)
            handle.write(data)
        if truncate is not None:
            handle.truncate(truncate)


# --- what ctxview does with a file -------------------------------------------------------------


def exercise(path: Path) -> None:
    """Everything the CLI does with a database: list, load, assemble, report and export."""
    try:
        with LcmStore(path) as store:
            conversations = store.list_conversations()
            sessions = [store.load_session(c.conversation_id) for c in conversations[:2]]
            if not conversations:
                sessions.append(store.load_session(None))
    except CtxviewError as exc:
        assert str(exc) and "\n" not in str(exc)
        return
    for session in sessions:
        assembler = SessionAssembler(session)
        for params in (
            Params(token_budget=2000, prompt="helm rollback", prompt_aware_eviction=True, live_messages=LIVE),
            Params(token_budget=50, fresh_tail_count=3, engine=False, stub_large_tool_payloads=True),
        ):
            trace = assembler.run(params)
            dumps(trace_to_json(trace))
            trace_table(trace)
            for fmt in FORMATS:
                render(trace, fmt)


def check(path: Path) -> None:
    try:
        exercise(path)
    except CtxviewError:
        pass  # the one-line error path of the CLI and the TUI


# --- the fuzz tests -----------------------------------------------------------------------------


@FUZZ
@given(edits=byte_damage(), truncate=st.one_of(st.none(), st.integers(0, 140 * PAGE)))
def test_flipped_and_truncated_bytes(edits, truncate):
    with damaged_copy() as path:
        apply_bytes(path, edits, truncate)
        check(path)


@FUZZ
@given(statements=sql_damage())
def test_garbage_values_in_every_column_the_assembler_reads(statements):
    with damaged_copy() as path:
        apply_sql(path, statements)
        check(path)


@FUZZ
@given(statements=schema_damage())
def test_dropped_tables_and_columns(statements):
    with damaged_copy() as path:
        apply_sql(path, statements)
        table = statements[0].split()[2] if statements[0].startswith("DROP") else statements[1].split()[2]
        try:
            with LcmStore(path) as store:
                store.load_session(None)
        except CtxviewError as exc:
            if table in REQUIRED:
                assert table in str(exc)  # the message says which table (or which of its columns)
            return
        check(path)


def test_fuzz_cases_leave_no_temporary_files_behind():
    before = set(os.listdir(tempfile.gettempdir()))
    with damaged_copy() as path:
        apply_bytes(path, [(100, b"\xff" * 8)], None)
        check(path)
    after = set(os.listdir(tempfile.gettempdir()))
    assert not {name for name in after - before if name.startswith("ctxview-fuzz-")}
