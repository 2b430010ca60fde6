"""Stored content is shown literally: it never styles, moves the cursor or breaks the layout.

A session full of hostile text — ANSI colour and cursor escapes, OSC title
and hyperlink sequences, C0/C1 control characters, a bidi override, NUL,
Rich/Textual markup such as ``[bold red]`` and ``[@click=app.quit]`` and an
unbalanced ``[/]`` — in titles, messages, tool calls, tool results, summary
ids and summaries.  Every screen the inspector draws (picker, each row of the
table with its detail pane, the assembled context, notifications) is read
back from the compositor: no control character reaches the terminal, every
line is exactly the screen width, and the markup appears as the literal
text it is.  The headless table and conversation list are checked the same way.
"""

from __future__ import annotations

import re
import shutil
import sqlite3
from pathlib import Path

import pytest

from ctxview.cli import main
from ctxview.model import Params
from ctxview.tui.app import CtxviewApp
from ctxview.tui.screens.inspector import InspectorScreen
from ctxview.tui.screens.picker import PickerScreen
from ctxview.tui.widgets.items_table import ItemsTable
from tests.lcmdb import LcmDbWriter
from tests.safety.support import DEMO, settle

ESC = "\x1b"
HOSTILE = (
    f"hello {ESC}[31mRED{ESC}[0m {ESC}[2J{ESC}[H{ESC}[10;10H [bold red]markup[/] [/] "
    f"[@click=app.quit]quit[/] [link=https://evil.example]link[/link] {ESC}]0;new title\x07 "
    f"{ESC}]8;;https://evil.example\x07hyper{ESC}]8;;\x07 back\bspace\rreturn\x00nul\x07bell "
    "\x9b31mC1\x85next \u202eevil-rtl\u202c \ufeffbom\ttab\x0bvt\x0cff end"
)
# what must never reach the terminal: C0 (including ESC, CR, BEL, BS), DEL, C1, bidi overrides
FORBIDDEN = re.compile(r"[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def hostile_db(folder: Path) -> Path:
    path = folder / "hostile.db"
    with LcmDbWriter(path, session_id=f"session {ESC}[5m[blink]blink[/]") as w:
        w.conn.execute("UPDATE conversations SET title = ?, session_key = ?",
                       (f"{ESC}[2J[bold red]PWNED[/]\x07 title", f"{ESC}]0;owned\x07key"))
        w.summary(f"sum_{ESC}[31m[red]x[/]", f"summary {HOSTILE}", earliest_at="2026-01-01T00:00:00Z")
        w.user(f"question {HOSTILE}")
        w.assistant_blocks(
            [
                {"type": "text", "text": f"calling {HOSTILE}"},
                {"type": "toolCall", "id": f"call_{ESC}[31m1", "name": f"bash{ESC}[2J[bold]",
                 "arguments": {"command": HOSTILE}},
            ]
        )
        w.tool_result(f"call_{ESC}[31m1", f"result {HOSTILE}\n" * 3, name=f"bash{ESC}[2J[bold]")
        w.assistant(f"answer {HOSTILE}")
        w.context_summary(f"gone{ESC}[5m[bold]")  # a dangling summary: its id is in the reason
        w.user(f"last {HOSTILE}")
    return path


def screen_lines(app) -> list[str]:
    """Every line of the screen as the terminal would receive it (text of each segment, joined)."""
    strips = app.screen._compositor.render_strips()
    lines = []
    for strip in strips:
        assert strip.cell_length == app.size.width, "a line is longer or shorter than the screen"
        text = "".join(segment.text for segment in strip if not segment.control)
        assert not any(segment.control for segment in strip), "a control segment was emitted"
        lines.append(text)
    return lines


def assert_safe(app, seen: set[str]) -> None:
    lines = screen_lines(app)
    for number, line in enumerate(lines):
        bad = FORBIDDEN.search(line)
        assert bad is None, f"line {number} carries {bad.group()!r}: {line!r}"
    seen.update(lines)


async def test_every_view_of_hostile_content_is_literal_and_keeps_the_layout(tmp_path):
    db = hostile_db(tmp_path)
    seen: set[str] = set()
    app = CtxviewApp(db, params=Params(token_budget=200_000), show_timings=False)
    async with app.run_test(size=(150, 44), notifications=True) as pilot:
        await settle(pilot)
        # one conversation: the picker is skipped; go back to see it drawn too
        assert isinstance(app.screen, InspectorScreen)
        await pilot.press("b")
        await settle(pilot)
        assert isinstance(app.screen, PickerScreen)
        assert_safe(app, seen)
        await pilot.press("enter")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, InspectorScreen)
        table = screen.query_one(ItemsTable)
        for _ in range(table.line_count):
            await pilot.press("down")
            await pilot.pause()
            assert_safe(app, seen)
        # the assembled-context pane, then the detail pane scrolled to its end
        await pilot.press("tab")
        await pilot.pause()
        for _ in range(8):
            await pilot.press("down")
            await pilot.pause()
            assert_safe(app, seen)
        assert app.is_running
    text = "\n".join(seen)
    # markup is text: the brackets are there, so nothing interpreted them
    for literal in ("[bold red]markup[/]", "[/]", "[@click=app.quit]quit[/]", "[link=https://evil.example]link"):
        assert literal in text, literal
    assert "PWNED" in text and "[bold red]PWNED[/]" in text
    assert "hello RED" in text  # the words stay, their escapes go (an OSC title command goes whole)
    # the OSC title command goes whole, except where the pane shows the engine's JSON of the content
    # (the text the scorer saw), whose escapes are printable backslash sequences
    assert "new title" not in text.replace("\\u001b]0;new title\\u0007", "")
    assert "\x1b" not in text and "\x07" not in text


@pytest.mark.parametrize("name", ["[bold red]x [@click=app.quit]q [", "plain ["])
async def test_notifications_show_markup_literally(tmp_path, name):
    # as markup the first would style and make a click action; the second is a MarkupError (a crash)
    folder = tmp_path / name
    folder.mkdir()
    db = folder / "]lcm.db"  # the path reads ".../[bold red]x [@click=app.quit]q [/]lcm.db"
    db.write_bytes(b"garbage that is not SQLite")
    app = CtxviewApp(db, show_timings=False)
    async with app.run_test(size=(150, 44), notifications=True) as pilot:
        await settle(pilot)
        await pilot.pause(0.3)
        messages = [n.message for n in app._notifications]
        assert messages == [f"{db}: not a SQLite database"]
        lines = screen_lines(app)
        assert "[/]lcm.db" in str(db)
        assert any("[/]lcm.db" in line for line in lines)  # the toast and the picker show the path as is
        assert app.is_running


async def test_a_hostile_title_is_clean_in_the_header(tmp_path):
    db = hostile_db(tmp_path)
    app = CtxviewApp(db, conversation_id=1, params=Params(token_budget=2000), show_timings=False)
    async with app.run_test(size=(150, 44)) as pilot:
        await settle(pilot)
        assert FORBIDDEN.search(app.screen.sub_title or "") is None
        assert "[bold red]PWNED[/]" in (app.screen.sub_title or "")
        header = screen_lines(app)[0]
        assert "PWNED" in header


@pytest.mark.parametrize(
    "args",
    [
        ["conversations"],
        ["assemble"],
        ["assemble", "--format", "table", "--budget", "60", "--prompt", f"{ESC}[31m[bold]x", "--prompt-aware"],
        ["assemble", "--no-engine", "--budget", "300"],
        ["diff", "{db}"],
    ],
)
def test_headless_tables_print_no_control_characters(args, tmp_path, capsys):
    db = hostile_db(tmp_path)
    argv = [args[0], str(db), *[str(db) if a == "{db}" else a for a in args[1:]]]
    code = main(argv)
    out, err = capsys.readouterr()
    assert code in (0, 1), err
    for line in out.splitlines():
        assert FORBIDDEN.search(line) is None, repr(line)
    assert "[bold red]" in out or "[bold]" in out or args[0] == "diff"


def test_the_demo_itself_has_no_control_characters_on_screen(tmp_path, capsys):
    db = tmp_path / "demo.db"
    shutil.copyfile(DEMO, db)
    conn = sqlite3.connect(db)
    conn.execute("UPDATE messages SET content = content || ?", (f" {ESC}[1m",))
    conn.commit()
    conn.close()
    assert main(["assemble", str(db), "--budget", "2000", "--prompt", "helm", "--prompt-aware"]) == 0
    out = capsys.readouterr().out
    assert ESC not in out
