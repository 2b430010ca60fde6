"""Bad input gives one clear line, and nothing readable is lost.

CLI: the message goes to stderr as ``ctxview: error: …``, exit status 2, no
traceback, nothing on stdout.  TUI: a notification, and the app stays up and
responsive.  Damage the assembler can work around (dangling context items,
malformed part JSON, NUL bytes, invalid UTF-8, a 5 MB message, a 100,000
character prompt) is not an error: the run succeeds and says what it skipped.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from textual.widgets import Input

from ctxview.cli import main
from ctxview.errors import InputError
from ctxview.export import FORMATS, render
from ctxview.model import Params
from ctxview.params_io import build_params
from ctxview.pipeline import SessionAssembler
from ctxview.report import dumps, trace_table, trace_to_json
from ctxview.store import LcmStore
from ctxview.tui.app import CtxviewApp
from ctxview.tui.screens.help import HelpScreen
from ctxview.tui.screens.inspector import InspectorScreen
from ctxview.tui.screens.picker import PickerScreen
from tests.lcmdb import LcmDbWriter
from tests.safety.support import DEMO, REPO, settle

# --- building bad files -----------------------------------------------------------------------


def empty_file(folder: Path) -> Path:
    path = folder / "empty.db"
    path.write_bytes(b"")
    return path


def random_bytes(folder: Path) -> Path:
    path = folder / "random.db"
    path.write_bytes(os.urandom(3 * 4096))
    return path


def random_after_header(folder: Path) -> Path:
    path = folder / "header-only.db"
    path.write_bytes(b"SQLite format 3\x00" + bytes(range(256)) * 40)
    return path


def other_application(folder: Path) -> Path:
    path = folder / "places.sqlite"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE moz_places (id INTEGER PRIMARY KEY, url TEXT)")
    conn.execute("INSERT INTO moz_places (url) VALUES ('https://example.com')")
    conn.commit()
    conn.close()
    return path


def demo_copy(folder: Path, *statements: str) -> Path:
    path = folder / "lcm.db"
    shutil.copyfile(DEMO, path)
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA ignore_check_constraints = ON")
    for statement in statements:
        conn.execute(statement)
    conn.commit()
    conn.close()
    return path


def without_table(table: str) -> Callable[[Path], Path]:
    return lambda folder: demo_copy(folder, f"DROP TABLE {table}")


def without_column(table: str, column: str) -> Callable[[Path], Path]:
    """An older schema: the table as it was before the column was added."""

    def build(folder: Path) -> Path:
        with sqlite3.connect(DEMO) as conn:
            columns = [row[1] for row in conn.execute(f"PRAGMA table_info({table})") if row[1] != column]
        conn.close()
        return demo_copy(
            folder,
            f"CREATE TABLE older AS SELECT {', '.join(columns)} FROM {table}",
            f"DROP TABLE {table}",
            f"ALTER TABLE older RENAME TO {table}",
        )

    return build


def a_directory(folder: Path) -> Path:
    path = folder / "lcm.db"
    path.mkdir()
    return path


BAD_DATABASES: dict[str, tuple[Callable[[Path], Path], str]] = {
    "empty file": (empty_file, "empty file (0 bytes), not an LCM database"),
    "random bytes": (random_bytes, "not a SQLite database"),
    "random bytes after the SQLite header": (random_after_header, "SQLite"),
    "another application's SQLite file": (
        other_application,
        "not an LCM database: missing tables conversations, context_items, messages, message_parts, summaries,"
        " summary_parents, summary_messages",
    ),
    "missing table": (without_table("summaries"), "not an LCM database: missing tables summaries"),
    "missing column (older schema)": (
        without_column("messages", "seq"),
        "table messages is missing column seq (not an LCM schema this version can read)",
    ),
    "missing column of context_items": (
        without_column("context_items", "item_type"),
        "table context_items is missing column item_type",
    ),
    "a directory": (a_directory, "is a directory, not an LCM database file"),
    "no such file": (lambda folder: folder / "nope.db", "no such file"),
}


# diff also takes export files, so a file that is not SQLite is judged as an export there
DIFF_EXPECTED = {
    "empty file": "is empty: neither an LCM database nor a ctxview export",
    "random bytes": "is neither an LCM database nor a ctxview export (not UTF-8 text)",
    "a directory": "is a directory",
    "no such file": "nope.db not found",
}


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        code = main(args)
    except SystemExit as exc:  # argparse's usage errors
        code = int(exc.code or 0)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def assert_one_line_error(code: int, out: str, err: str, expected: str) -> None:
    assert code == 2, err
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("ctxview: error: "), err
    assert expected in lines[0], err
    assert "Traceback" not in err


# --- CLI: one line, exit 2 ---------------------------------------------------------------------


@pytest.mark.parametrize("case", list(BAD_DATABASES))
@pytest.mark.parametrize("command", ["conversations", "assemble", "export", "diff"])
def test_a_bad_database_is_one_line_on_stderr_and_exit_2(case, command, tmp_path, capsys):
    build, expected = BAD_DATABASES[case]
    db = build(tmp_path)
    args = {
        "conversations": ["conversations", str(db)],
        "assemble": ["assemble", str(db), "--format", "json"],
        "export": ["export", str(db), "--format", "openai"],
        "diff": ["diff", str(DEMO), str(db)],
    }[command]
    if command == "diff":
        expected = DIFF_EXPECTED.get(case, expected)
    assert_one_line_error(*run_cli(args, capsys), expected)


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        (["--conversation", "99"], "conversation 99 not found; valid ids: 1, 2"),
        (["--conversation", "abc"], "argument --conversation: invalid int value: 'abc'"),
        (["--conversation", "-1"], "conversation -1 not found"),
        (["--budget", "-5"], "token budget must be at least 1 (got '-5')"),
        (["--budget", "0"], "token budget must be at least 1 (got '0')"),
        (["--budget", "lots"], "token budget must be a positive whole number, not 'lots'"),
        (["--budget", "1.5"], "token budget must be a positive whole number, not '1.5'"),
        (["--budget", "nan"], "token budget must be a positive whole number, not 'nan'"),
        (["--budget", "10000000000000"], "is unreasonably large"),
        (["--budget", "9" * 5000], "token budget must be a positive whole number"),
        (["--budget", ""], "token budget must be a positive whole number, not ''"),
        (["--fresh-tail-count", "-1"], "fresh-tail count must be a number ≥ 0"),
        (["--fresh-tail-count", "inf"], "fresh-tail count must be a number ≥ 0"),
        (["--fresh-tail-max-tokens", "many"], "fresh-tail max tokens must be a number ≥ 0"),
        (["--reserved", "-3"], "reserved tokens must be a number ≥ 0"),
        (["--prompt", "x" * 1_000_001], "prompt is longer than 1,000,000 characters"),
    ],
)
def test_bad_parameters_are_one_line_on_stderr_and_exit_2(flags, expected, capsys):
    assert_one_line_error(*run_cli(["assemble", str(DEMO), *flags], capsys), expected)


LIVE_FILES: dict[str, tuple[bytes, str, str]] = {
    "not JSON": (b"this is not json", "live.json", "is not valid JSON"),
    "an object": (b'{"role": "user", "content": "hi"}', "live.json", "must hold a JSON array of message objects"),
    "a string": (b'"hi"', "live.json", "must hold a JSON array of message objects, not a string"),
    "truncated": (b'[{"role": "user", "content": "hi"', "live.json", "is not valid JSON"),
    "not UTF-8": (b'[{"role": "user", "content": "\xff\xfe"}]', "live.json", "is not UTF-8 text"),
    "bad jsonl line": (b'{"type": "message", "message": {"role": "user"}}\n{oops\n', "live.jsonl", "line 2"),
    "jsonl entry without role": (
        b'{"type": "message", "message": {"content": "x"}}\n',
        "live.jsonl",
        "line 1 is a message entry without a message object with a role",
    ),
    "empty file": (b"", "live.json", "is not valid JSON"),
}


@pytest.mark.parametrize("case", list(LIVE_FILES))
def test_a_bad_live_input_file_is_one_line_and_exit_2(case, tmp_path, capsys):
    data, name, expected = LIVE_FILES[case]
    live = tmp_path / name
    live.write_bytes(data)
    assert_one_line_error(*run_cli(["assemble", str(DEMO), "--live", str(live)], capsys), expected)


def test_a_real_process_prints_no_traceback_for_garbage(tmp_path):
    db = random_bytes(tmp_path)
    proc = subprocess.run(
        [sys.executable, "-m", "ctxview", "assemble", str(db)], capture_output=True, text=True, timeout=60, cwd=REPO
    )
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr == f"ctxview: error: {db}: not a SQLite database\n"


# --- damage that is worked around: the run succeeds and says what it skipped ------------------------


def test_dangling_context_items_are_skipped_and_counted(tmp_path, capsys):
    db = demo_copy(
        tmp_path,
        "INSERT INTO context_items (conversation_id, ordinal, item_type, message_id)"
        " VALUES (1, 100, 'message', 987654)",
        "INSERT INTO context_items (conversation_id, ordinal, item_type, summary_id)"
        " VALUES (1, 101, 'summary', 'gone')",
        "DELETE FROM messages WHERE message_id = (SELECT message_id FROM context_items"
        " WHERE conversation_id = 1 AND ordinal = 10)",
    )
    code, out, err = run_cli(["assemble", str(db), "--format", "json", "--conversation", "1"], capsys)
    assert code == 0, err
    data = json.loads(out)
    assert data["trace"]["unresolvedOrdinals"] == [10, 100, 101]
    assert data["trace"]["summary"]["outcomes"]["unresolved"] == 3
    assert "3 context items reference missing rows" in data["warnings"]
    assert 10 not in data["keptOrdinals"] and 100 not in data["keptOrdinals"]
    # the others are all there: 42 demo items less the one whose message was deleted
    assert len(data["trace"]["contextOrdinals"]) == 44
    assert len(data["trace"]["items"]) == 41
    code, out, err = run_cli(["assemble", str(db), "--conversation", "1"], capsys)
    assert "warning: 3 context items reference missing rows" in out
    assert "unresolved: message 987654 does not exist" in out


def writer_db(folder: Path) -> tuple[Path, LcmDbWriter]:
    return folder / "lcm.db", LcmDbWriter(folder / "lcm.db")


def test_malformed_json_in_message_parts_keeps_the_text(tmp_path, capsys):
    path, w = writer_db(tmp_path)
    with w:
        w.user("first question about the helm rollback")
        mid = w.message("assistant", "fallback text", [])
        w.part(mid, 0, text_content="the answer survives broken metadata", metadata="{not json")
        w.part(mid, 1, part_type="tool", tool_call_id="c1", tool_name="bash", tool_input="[[[", metadata="[1, 2")
        w.tool_result("c1", "result text")
        w.user("last question")
    code, out, err = run_cli(["assemble", str(path), "--format", "json"], capsys)
    assert code == 0, err
    text = json.dumps(json.loads(out)["messages"])
    assert "the answer survives broken metadata" in text
    assert "last question" in text


def test_nul_bytes_and_invalid_utf8_are_shown_not_fatal(tmp_path, capsys):
    path, w = writer_db(tmp_path)
    with w:
        w.user("before\x00after the NUL")
        mid = w.message("assistant", "x", [])
        w.part(mid, 0, text_content="placeholder", metadata='{"originalRole":"assistant"}')
        w.user("last")
    conn = sqlite3.connect(path)
    # "ok", two bytes no UTF-8 sequence starts with, a space, and a truncated two-byte sequence
    conn.execute("UPDATE message_parts SET text_content = CAST(X'6f6bfffe20c328' AS TEXT) WHERE message_id = ?", (mid,))
    conn.commit()
    conn.close()
    code, out, err = run_cli(["assemble", str(path), "--format", "json"], capsys)
    assert code == 0, err
    messages = json.loads(out)["messages"]
    assert messages[0]["content"] == "before\x00after the NUL"
    assert messages[1]["content"][0]["text"] == "ok\ufffd\ufffd \ufffd("


def test_a_5_mb_message_is_assembled_in_seconds(tmp_path, capsys):
    path, w = writer_db(tmp_path)
    huge = ("lorem ipsum helm rollback " * 200_000)[:5_000_000]
    with w:
        w.user("small question")
        w.tool_result("c1", huge)
        w.user("what did the log say?")
    started = time.perf_counter()
    code, out, err = run_cli(["assemble", str(path), "--format", "json", "--budget", "5000"], capsys)
    assert code == 0, err
    assert time.perf_counter() - started < 20
    data = json.loads(out)
    item = next(i for i in data["trace"]["items"] if i["ordinal"] == 1)
    assert item["tokens"] > 1_000_000
    code, out, err = run_cli(["assemble", str(path), "--budget", "5000"], capsys)
    assert code == 0 and max(len(line) for line in out.splitlines()) <= 200


def test_a_100000_character_prompt_is_accepted(capsys):
    prompt = ("helm rollback database migration flaky test " * 3000)[:100_000]
    started = time.perf_counter()
    code, out, err = run_cli(
        ["assemble", str(DEMO), "--prompt", prompt, "--prompt-aware", "--budget", "2000", "--format", "json"], capsys
    )
    assert code == 0, err
    assert time.perf_counter() - started < 20
    data = json.loads(out)
    assert data["selectionMode"] == "prompt-aware"
    assert data["trace"]["summary"]["promptTerms"][:3] == ["helm", "rollback", "database"]


def test_the_largest_budget_is_accepted(capsys):
    code, out, err = run_cli(["assemble", str(DEMO), "--budget", "1000000000000", "--format", "json"], capsys)
    assert code == 0, err
    assert json.loads(out)["selectionMode"] == "full-fit"


# --- TUI: a notification, and the app stays up --------------------------------------------------


async def assert_still_responsive(pilot) -> None:
    app = pilot.app
    assert app.is_running and app.return_code is None
    await pilot.press("question_mark")
    await pilot.pause()
    assert isinstance(app.screen, HelpScreen)
    await pilot.press("escape")
    await pilot.pause()


def notifications(app: CtxviewApp) -> list[tuple[str, str]]:
    return [(n.severity, n.message) for n in app._notifications]


@pytest.mark.parametrize("case", ["empty file", "random bytes", "another application's SQLite file",
                                  "missing column (older schema)", "a directory"])
async def test_a_bad_database_in_the_tui_is_a_notification(case, tmp_path):
    build, expected = BAD_DATABASES[case]
    db = build(tmp_path)
    app = CtxviewApp(db, show_timings=False)
    async with app.run_test(size=(120, 36), notifications=True) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, PickerScreen)
        errors = [message for severity, message in notifications(app) if severity == "error"]
        assert len(errors) == 1 and expected in errors[0]
        await assert_still_responsive(pilot)


async def test_an_unknown_conversation_in_the_tui_is_a_notification(tmp_path):
    app = CtxviewApp(DEMO, conversation_id=99, show_timings=False)
    async with app.run_test(size=(120, 36), notifications=True) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, InspectorScreen)
        assert app.screen.load_error == "conversation 99 not found; valid ids: 1, 2"
        assert ("error", "conversation 99 not found; valid ids: 1, 2") in notifications(app)
        await pilot.press("b")
        await settle(pilot)
        assert isinstance(app.screen, PickerScreen)
        await assert_still_responsive(pilot)


async def test_bad_budgets_typed_in_the_tui_keep_the_last_good_result():
    params = Params(token_budget=2000, fresh_tail_count=8)
    app = CtxviewApp(DEMO, conversation_id=1, params=params, show_timings=False)
    shown: list[tuple[str, str]] = []  # every notification as it is posted (they expire on screen)
    post = app.notify

    def recorded(message: str, *args: object, **kwargs: object) -> None:
        shown.append((str(kwargs.get("severity", "information")), message))
        post(message, *args, **kwargs)  # type: ignore[arg-type]

    app.notify = recorded  # type: ignore[method-assign]
    async with app.run_test(size=(140, 40), notifications=True) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, InspectorScreen)
        before = screen.trace
        field = screen.query_one("#budget", Input)
        typed_values = ["-5", "0", "lots", "1e400", "[/]", "[bold red]9", "99999999999999999", ""]
        for typed in typed_values:
            field.focus()
            field.value = typed
            await pilot.press("enter")  # a typed number applies on enter (or when typing pauses)
            await settle(pilot)
            assert screen.params.token_budget == 2000 and screen.trace is before, typed
            newest = shown[-1]
            assert newest[0] == "warning" and "still showing the last good result" in newest[1], typed
            assert "token budget" in newest[1], typed
        warnings = [message for severity, message in shown if severity == "warning"]
        assert len(warnings) == len(typed_values)  # one each, none lost, none repeated
        assert any("'[/]'" in message for message in warnings)  # shown as typed, not read as markup
        await pilot.press("escape")
        await assert_still_responsive(pilot)


async def test_a_100000_character_prompt_pasted_into_the_tui_is_assembled():
    prompt = ("helm rollback database migration flaky test " * 3000)[:100_000]
    params = Params(token_budget=2000, fresh_tail_count=8, prompt_aware_eviction=True)
    app = CtxviewApp(DEMO, conversation_id=1, params=params, show_timings=False)
    async with app.run_test(size=(140, 40), notifications=True) as pilot:
        await settle(pilot)
        screen = app.screen
        field = screen.query_one("#prompt", Input)
        field.focus()
        field.value = prompt
        await pilot.pause(0.3)
        await settle(pilot)
        assert screen.params.prompt == prompt
        assert screen.trace.summary.selection_mode == "prompt-aware"
        with LcmStore(DEMO) as store:
            headless = SessionAssembler(store.load_session(1)).run(screen.params)
        assert [d.outcome for d in screen.trace.decisions] == [d.outcome for d in headless.decisions]
        await pilot.press("escape")  # out of the prompt field
        await assert_still_responsive(pilot)


async def test_a_5_mb_message_is_shown_in_the_tui(tmp_path):
    path, w = writer_db(tmp_path)
    huge = ("lorem ipsum helm rollback\n" * 200_000)[:5_000_000]
    with w:
        w.user("small question")
        w.tool_result("c1", huge)
        w.user("what did the log say?")
    app = CtxviewApp(path, conversation_id=1, params=Params(token_budget=2_000_000), show_timings=False)
    async with app.run_test(size=(140, 40), notifications=True) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, InspectorScreen) and screen.trace is not None
        await pilot.press("down")  # the huge item: the detail pane shows it, cut to a readable length
        await settle(pilot)
        await pilot.press("d")
        await pilot.pause(0.2)
        await assert_still_responsive(pilot)


@pytest.mark.parametrize("case", ["not JSON", "an object", "bad jsonl line"])
def test_a_bad_live_input_file_for_the_tui_is_one_line_before_it_starts(case, tmp_path, capsys):
    from ctxview.tui import run_tui

    data, name, expected = LIVE_FILES[case]
    live = tmp_path / name
    live.write_bytes(data)
    code = run_tui(DEMO, conversation_id=1, params=Params(), live_path=live, demo=False)
    captured = capsys.readouterr()
    assert_one_line_error(code, captured.out, captured.err, expected)


# --- live inputs of every shape that passes the file check --------------------------------------

with LcmStore(DEMO) as _store:
    DEMO_ASSEMBLER = SessionAssembler(_store.load_session(1))

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(
        st.sampled_from(["type", "text", "id", "name", "arguments", "toolCallId", "content", "role", "isError"]),
        inner,
        max_size=5,
    ),
    max_leaves=12,
)
BLOCKS = st.fixed_dictionaries(
    {"type": st.sampled_from(["text", "toolCall", "tool_use", "functionCall", "thinking", "image", "toolResult"])},
    optional={"text": JSON_VALUES, "id": JSON_VALUES, "name": JSON_VALUES, "arguments": JSON_VALUES},
)
LIVE_MESSAGES = st.fixed_dictionaries(
    {"role": st.sampled_from(["user", "assistant", "toolResult", "tool", "system", "developer", "other"])},
    optional={
        "content": st.one_of(JSON_VALUES, st.lists(st.one_of(BLOCKS, JSON_VALUES), max_size=4)),
        "toolCallId": JSON_VALUES,
        "stopReason": JSON_VALUES,
        "timestamp": JSON_VALUES,
    },
)


@settings(max_examples=80, deadline=None, derandomize=True, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(live=st.lists(LIVE_MESSAGES, max_size=6), budget=st.integers(1, 5000))
def test_live_messages_of_odd_shapes_are_assembled_or_refused_never_a_crash(live, budget):
    try:
        params = build_params(Params(token_budget=budget, fresh_tail_count=8), {"live_messages": live}, source="live")
    except InputError:
        return
    trace = DEMO_ASSEMBLER.run(params)
    dumps(trace_to_json(trace))
    trace_table(trace)
    for fmt in FORMATS:
        render(trace, fmt)
    assert len([d for d in trace.decisions if d.live_index is not None]) == len(live)
