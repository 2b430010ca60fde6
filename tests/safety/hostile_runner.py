"""Run every ctxview command, then the inspector under Pilot, on hostile inputs; one JSON record per run.

``python -m tests.safety.hostile_runner UNITS RESULTS`` runs in a child process the test
watches.  ``UNITS`` is a JSON list of ``{"kind", "db", "out", "run"}``: ``run`` is a CLI
argument list (run through ``ctxview.cli.main`` in this process, with its own captured
stdout and stderr; an exception that escapes ``main`` is recorded as a traceback) or
``["tui"]``: the picker on that database and, when it lists conversations, conversation 1
in an inspector, in one app shared by every kind (the app has to stay up through all).
A ``start`` record is flushed before each run, so the watcher can tell which run does not
finish, kill this process and start another one on the runs after it.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import sys
import time
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
LIVE = REPO / "sample_sessions" / "demo-live.json"
ASSEMBLE_FORMATS = ("trace", "table", "json", "native", "openai", "anthropic", "markdown", "jsonl")
TUI_CONVERSATION = 1
TUI = ["tui"]
REFERENCE_RUN = ["assemble", "{db}", "--conversation", str(TUI_CONVERSATION), "--format", "json"]


def commands(db: str, out: str, *, formats: Sequence[str] = ASSEMBLE_FORMATS, heavy: bool = False) -> list[list[str]]:
    """Every headless command and every scorer on ``db``, and ``assemble`` in each of ``formats`` (and json).

    ``heavy`` kinds (100,000 rows of something) take a second or two per run: they get each command
    and each scorer once, and the formats (renderers of one trace) are left to the other kinds.
    """
    if heavy:
        formats = ()
    runs = [["conversations", db], ["conversations", db, "--json"]]
    runs += [["assemble", db, "--format", fmt] for fmt in formats if fmt != "json"]
    runs += [
        [part.format(db=db) for part in REFERENCE_RUN],
        # a prompt with an identifier: the engine's recall search reads messages_fts
        ["assemble", db, "--scorer", "rarity", "--prompt", "RETRY_LIMIT helm rollback", "--prompt-aware",
         "--budget", "900"],
        ["assemble", db, "--scorer", "roi", "--prompt", "helm rollback", "--budget", "1500", "--format", "json"],
        ["assemble", db, "--tokenizer", "unicode", "--prompt", "helm 部署", "--prompt-aware", "--no-engine",
         "--budget", "700", "--live", str(LIVE), "--stub-large-tool-payloads"],
        ["export", db, "--format", "anthropic", "-o", f"{out}/export.json", "--force"],
        # the database reaches diff through --db: a FIFO given as a diff side is the file reader's case
        ["diff", f"{out}/wide.json", f"{out}/narrow.json", "--db", db],
        ["sweep", db, "--points", "4", "--items", "5"],
    ]
    if not heavy:
        runs.append(["diff", f"{out}/wide.json", f"{out}/narrow.json", "--db", db, "--engine", "1.0", "--json"])
    return runs


def prepare_out(out: Path) -> None:
    """The two params files the diff runs compare."""
    (out / "wide.json").write_text(json.dumps({"tokenBudget": 4000, "prompt": "helm rollback"}))
    (out / "narrow.json").write_text(json.dumps({"tokenBudget": 600, "prompt": "helm rollback"}))


class _Capture(io.TextIOWrapper):
    def text(self) -> str:
        self.flush()
        return self.buffer.getvalue().decode("utf-8", "replace")  # type: ignore[attr-defined]


def _capture() -> _Capture:
    return _Capture(io.BytesIO(), encoding="utf-8", errors="replace", write_through=True)


def run_cli(argv: list[str]) -> dict[str, Any]:
    from ctxview.cli import main

    out, err = _capture(), _capture()
    error = None
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 2
        except BaseException:  # anything main lets through is a crash
            code = None
            error = traceback.format_exc()
    stdout = out.text()
    warnings = None
    if argv[-2:] == ["--format", "json"] and code == 0:
        warnings = json.loads(stdout).get("warnings")
    return {"code": code, "stderr": err.text()[-4000:], "traceback": error, "warnings": warnings}


class Inspector:
    """One app, kept running: each kind's database opens in a picker and an inspector pushed on top."""

    def __init__(self) -> None:
        self.pilot: Any = None
        self._context: Any = None

    async def start(self) -> None:
        from ctxview.model import Params
        from ctxview.tui.app import CtxviewApp
        from tests.safety.support import DEMO, settle

        # the demo's picker underneath (two conversations: it stays there), cheap to show again between kinds
        app = CtxviewApp(DEMO, params=Params(token_budget=1500), show_timings=False)
        self._context = app.run_test(size=(100, 30), notifications=True)
        self.pilot = await self._context.__aenter__()
        # every notification shown, kept as it is posted: on a slow machine one may time out before the visit ends
        self.shown: list[Any] = []
        collection = app._notifications
        show = collection.add

        def add(notification: Any) -> None:
            self.shown.append(notification)
            show(notification)

        collection.add = add  # type: ignore[method-assign]
        await settle(self.pilot)

    async def visit(self, db: Path, *, inspect: bool = True, scorer_columns: bool = True) -> dict[str, Any]:
        """The picker on ``db`` and, when ``inspect``, conversation 1 in an inspector above it.

        ``scorer_columns``: also switch the rarity scorer's columns on (``c``), for rows no engine writes.
        """
        from ctxview.model import Params
        from ctxview.tui.screens.inspector import InspectorScreen
        from ctxview.tui.screens.picker import PickerScreen
        from tests.safety.support import settle

        pilot = self.pilot
        app = pilot.app
        app.clear_notifications()
        self.shown.clear()
        depth = len(app.screen_stack)
        await app.push_screen(PickerScreen(db))
        if inspect:
            await app.push_screen(InspectorScreen(db, TUI_CONVERSATION, Params(token_budget=1500)))
        await settle(pilot)
        screen = app.screen
        if scorer_columns and isinstance(screen, InspectorScreen) and screen.trace is not None:
            await pilot.press("c")  # the rarity scorer's columns
            await settle(pilot)
        running = app.is_running and app.return_code is None
        notes = [[n.severity, n.message] for n in self.shown]
        while len(app.screen_stack) > depth:
            app.pop_screen()
        await pilot.pause()
        return {"running": running, "notifications": notes}

    async def stop(self) -> None:
        await self.pilot.press("q")
        await self._context.__aexit__(None, None, None)


async def run_units(units: list[dict[str, Any]], record: Any) -> None:
    inspector: Inspector | None = None
    unlisted: set[str] = set()  # kinds whose conversations cannot be listed: the picker says why, as for a user
    for unit in units:
        record({"kind": unit["kind"], "start": unit["run"], "t": time.time()})
        started, cpu = time.monotonic(), time.process_time()
        if unit["run"] == TUI:
            try:
                if inspector is None:
                    inspector = Inspector()
                    await inspector.start()
                outcome = await inspector.visit(
                    Path(unit["db"]), inspect=unit["kind"] not in unlisted, scorer_columns=unit.get("scorers", True)
                )
                outcome["traceback"] = None
            except BaseException:
                outcome = {"running": False, "traceback": traceback.format_exc()}
        else:
            outcome = run_cli(unit["run"])
            if unit["run"] == ["conversations", unit["db"]] and outcome["code"] == 2:
                unlisted.add(unit["kind"])
        outcome["seconds"] = round(time.monotonic() - started, 3)
        outcome["cpu"] = round(time.process_time() - cpu, 3)
        record({"kind": unit["kind"], "run": unit["run"], **outcome})
    if inspector is not None:
        await inspector.stop()


def main(argv: list[str]) -> int:
    units = json.loads(Path(argv[0]).read_text())
    with Path(argv[1]).open("a", encoding="utf-8") as log:

        def record(entry: dict[str, Any]) -> None:
            log.write(json.dumps(entry) + "\n")
            log.flush()

        asyncio.run(run_units(units, record))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
