"""ctxview at scale: the issue-7 and issue-19 benchmark (open, re-assemble, TUI keystroke, RSS, CLI, sweep).

Builds generated ``large`` sample sessions with at least 2,000 / 10,000 / 100,000
context items (cached in ``benchmarks/.cache/``, never committed), runs every
measure several times, each repetition in a fresh Python process, and prints a
table of medians and maxima next to the targets of issues 7 and 19.

The scenario is the same at every size: engine step on (the default), fresh
tail 64, prompt-aware eviction on, and the engine's default budget of 128,000
tokens, or a quarter of the session's item tokens when that is smaller (the
2,000-item session holds about 100,000 tokens), so items are evicted at every
size and the greedy walk, the tool-pair repair and the engine step all work.

* prompt edit: typing ``database migration rollback`` one character at a time
  (each keystroke is a new prompt; the first is un-searchable); warm = after a
  first assembly with the same other parameters.
* budget edit: the TUI's ``+`` / ``-`` steps (±10 %) around the start budget.
* TUI: the real app under Textual's Pilot; a character typed into the prompt
  until the items table holds the trace of the new prompt and has repainted.
* TUI budget edit: then, in the same app, the first steps of the budget edit above
  pressed as ``+`` / ``-`` on the items table, each until the table repaints the trace
  of the new budget.
* RSS: the peak resident set of that TUI process (``ru_maxrss``).
* CLI: ``ctxview assemble DB --format json`` as a whole process, and its peak RSS; also on a first
  open (render cache on, no file yet), timed until the command exits, with the writer of its cache
  file, which goes on after it, adopted (Linux's child subreaper), waited for and counted in the RSS.
* floor: a plain Python process reading ``context_items``, ``messages``, ``message_parts``
  and ``summaries`` with ``fetchall()``, run right before each CLI run; the ratio CLI ÷ floor
  of each pair is what stays comparable on a busy machine.
* render cache: the measures run with ctxview's render cache (``ctxview.render_cache``) in
  ``benchmarks/.cache/renders``, written once per size before them (warm); the CLI and the TUI
  open are also measured cold (``CTXVIEW_CACHE=off``: every message rendered, as on a first open).
* sweep: ``ctxview.sweep.sweep`` over every budget from the fresh tail to the total, timed twice
  per repetition: first with no ``.sweep`` file in the cache (the first sweep of a database state,
  what a session that changed since its last sweep gets), then the next sweep, which reads it.  The
  first sweep's file is written by a process of its own, which the worker adopts and waits for after
  the timing (its time is shown on its own row): the next sweep always finds it.
* TUI open: from creating the app to the first complete trace on screen.
* private copy (issue 20): opening a 150 MB WAL-mode database whose newest commit is only in
  its ``-wal`` and whose ``-shm`` is gone (a copy of a live agent's files): ctxview copies the
  database and its ``-wal`` to a private temporary folder rather than create a ``-shm`` beside
  them.  Shown next to opening the same database with no ``-wal`` (read in place, immutable).

Usage::

    python benchmarks/run.py                       # 2,000, 10,000 and 100,000 items
    python benchmarks/run.py --sizes 2000,10000 --repeat 3
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CACHE = Path(__file__).resolve().parent / ".cache"
PROMPT = "database migration rollback"
BUDGET_STEPS = (1, 1, -1, -1, -1, 1, 1, 1, -1, -1, 1, -1, -1, 1, 1, 1, -1, -1, 1, -1)
BUDGET_KEYS = 6  # the first budget steps, pressed in the TUI measure

# measure → (unit, {size: target}); sizes without a target are measured and shown, not judged
TARGETS: dict[str, tuple[str, dict[int, float]]] = {
    "open": ("s", {2000: 0.3, 10000: 1.0, 100000: 6.0}),
    "index": ("s", {}),
    "prompt": ("ms", {2000: 5, 10000: 25, 100000: 250}),
    "budget": ("ms", {2000: 3, 10000: 15, 100000: 60}),
    "tui_first": ("s", {100000: 1.5}),
    "tui_open": ("s", {100000: 2.5}),
    "tui_open_cold": ("s", {}),
    "tui": ("ms", {2000: 60, 10000: 30, 100000: 100}),
    "tui_budget": ("ms", {100000: 60}),
    "rss": ("MB", {2000: 150, 10000: 250, 100000: 350}),
    "cli": ("s", {2000: 0.6, 10000: 1.5, 100000: 10.0}),
    "floor": ("s", {}),
    "cli_ratio": ("×", {10000: 4.0, 100000: 4.0}),
    "cli_rss": ("MB", {100000: 400}),
    "cli_cold": ("s", {}),
    "cli_cold_ratio": ("×", {10000: 4.0, 100000: 4.0}),
    "cli_cold_rss": ("MB", {}),
    "cli_first": ("s", {}),
    "cli_first_after": ("s", {}),
    "cli_first_rss": ("MB", {}),
    "sweep_first": ("s", {10000: 2.0, 100000: 2.0}),
    "sweep_first_after": ("s", {}),
    "sweep": ("s", {10000: 2.0, 100000: 2.0}),
}
# judged by the worst repetition: the peak memory rows (a peak is what a machine must have); every time is
# judged by the median, as issue 19 asks ("median of at least 3 runs"), with the maximum printed beside it
JUDGED_BY_MAX = ("rss", "cli_rss", "cli_cold_rss", "cli_first_rss")
LABELS = {
    "open": "open + resolve a conversation",
    "index": "term index once after opening: loaded from its file, built on a first open (not a target)",
    "prompt": "re-assemble after a prompt edit (warm)",
    "budget": "re-assemble after a budget edit (warm)",
    "tui_first": "TUI: start → first screen with rows and the budget bar (render cache warm)",
    "tui_open": "TUI: start → first complete trace on screen (render cache warm)",
    "tui_open_cold": "the same, cold (no render cache)",
    "tui": "TUI: keystroke in prompt → table shows new outcomes",
    "tui_budget": "TUI: budget edit (+ / -) → table shows new outcomes",
    "rss": "peak RSS of the TUI",
    "cli": "`ctxview assemble … --format json` whole process (render cache warm)",
    "floor": "floor: bare `sqlite3` fetchall() of the four tables, whole process",
    "cli_ratio": "`assemble --format json` ÷ the floor run just before it",
    "cli_rss": "peak RSS of `assemble --format json`",
    "cli_cold": "`assemble --format json` cold (no render cache)",
    "cli_cold_ratio": "the cold run ÷ the floor",
    "cli_cold_rss": "peak RSS of the cold run",
    "cli_first": "`assemble --format json`, first open (cache on, no file yet): until the command exits",
    "cli_first_after": "… and its render cache writer, after the command exited",
    "cli_first_rss": "peak RSS of the first open, its writer included",
    "sweep_first": "budget sweep, fresh tail → total (whole), first of this database state",
    "sweep_first_after": "… and its `.sweep` file writer, after the sweep returned",
    "sweep": "the same, next sweep (`.sweep` file of the first read)",
}


# --- the sessions -------------------------------------------------------------------------------


def session_db(size: int) -> Path:
    """A cached ``large`` sample with at least ``size`` context items (a sixth of messages is compacted)."""
    from ctxview.samples import build_sample

    CACHE.mkdir(parents=True, exist_ok=True)
    messages = math.ceil(size * 6 / 5)
    path = CACHE / f"large-{messages}.db"
    if not path.exists():
        print(f"building {path.name} ({messages:,} messages)…", file=sys.stderr, flush=True)
        info = build_sample(path, "large", messages=messages)
        if info.context_item_count < size:
            raise SystemExit(f"{path}: only {info.context_item_count} context items, wanted {size}")
    return path


def scenario_params(budget: int) -> Any:
    """The benchmark scenario's parameters for a session whose budget is ``budget``."""
    from ctxview.params_io import default_params

    return replace(default_params(engine=True), token_budget=budget, prompt_aware_eviction=True)


def scenario(db: Path) -> tuple[Any, Any]:
    """(session, params) of the benchmark scenario for ``db``: the budget needs the item total."""
    from ctxview.pipeline import SessionAssembler
    from ctxview.store import LcmStore

    with LcmStore(db) as store:
        session = store.load_session()
    total = sum(item.tokens for item in SessionAssembler(session).resolved("UTC"))
    return session, scenario_params(max(1, min(128_000, total // 4)))


# --- workers (one fresh process each) ------------------------------------------------------------


def worker_core(db: Path, budget: int) -> dict[str, Any]:
    """Open + resolve, then prompt keystrokes and budget steps, timed one by one."""
    from ctxview.pipeline import SessionAssembler
    from ctxview.store import LcmStore

    params = scenario_params(budget)
    started = time.perf_counter()
    with LcmStore(db) as store:
        session = store.load_session()
    assembler = SessionAssembler(session)
    assembler.resolved(params.timezone)
    opened = time.perf_counter() - started
    items = len(session.items)

    assembler.run(params)  # warm: the first assembly with these parameters
    mark = time.perf_counter()
    prepare = getattr(assembler, "prepare", None)  # (absent in versions before issue 7)
    if prepare is not None:
        prepare(params)  # what the TUI does in the background after the first trace
    indexed = time.perf_counter() - mark
    prompt_times = []
    for end in range(1, len(PROMPT) + 1):
        edited = replace(params, prompt=PROMPT[:end])
        mark = time.perf_counter()
        assembler.run(edited)
        prompt_times.append(time.perf_counter() - mark)
    from ctxview.tui.view import step_budget

    budget = params.token_budget
    base = replace(params, prompt=PROMPT)
    assembler.run(base)
    budget_times = []
    for step in BUDGET_STEPS:
        budget = step_budget(budget, step)
        mark = time.perf_counter()
        assembler.run(replace(base, token_budget=budget))
        budget_times.append(time.perf_counter() - mark)
    return {"items": items, "open": [opened], "index": [indexed], "prompt": prompt_times, "budget": budget_times}


def worker_sweep(db: Path, budget: int) -> dict[str, Any]:
    from ctxview.pipeline import SessionAssembler
    from ctxview.store import LcmStore
    from ctxview.sweep import default_budgets, sweep

    with LcmStore(db) as store:
        session = store.load_session()
    params = scenario_params(budget)
    assembler = SessionAssembler(session)
    base = replace(params, prompt=PROMPT)
    assembler.run(base)
    adopting = _adopt_orphans()
    mark = time.perf_counter()
    result = sweep(assembler, base, default_budgets(assembler, base))
    elapsed = time.perf_counter() - mark
    # the writer of the .sweep file it left running (a first sweep), adopted and waited for: the next sweep reads it
    after = _reap_adopted() if adopting else 0.0
    return {"sweep": [elapsed], "sweep_runs": result.exact_runs, "sweep_after": [after]}


def worker_tui(db: Path, budget: int, keys: str) -> dict[str, Any]:
    """Type ``keys`` into the prompt of the real app, then step the budget with + / -; time each key until
    the table repaints the new trace.

    The clock starts when the key event is sent and stops when the frame in which the items table
    drew the trace of the new prompt or budget is done (``App.post_display_hook``, outside a batch
    of held frames): the whole frame, not its first line, is what the user sees.
    """
    import asyncio

    from textual.widgets import Input

    from ctxview.tui.app import CtxviewApp
    from ctxview.tui.screens.inspector import InspectorScreen
    from ctxview.tui.view import step_budget
    from ctxview.tui.widgets.items_table import ItemsTable

    params = scenario_params(budget)  # (not the session: its copy would count in this process's RSS)
    times: list[float] = []
    budget_times: list[float] = []
    painted: list[Any] = [None]  # (time, trace) of the latest items-table line drawn
    first_rows: list[float] = []  # when the table first drew a row (the session's first rows, or a trace)
    original = ItemsTable.render_line

    def render_line(self: ItemsTable, y: int) -> Any:
        if self.trace is not None:
            painted[0] = (time.perf_counter(), self.trace)
        if not first_rows and y >= self.HEADER_LINES and (self.trace is not None or self.preview is not None):
            first_rows.append(time.perf_counter())
        return original(self, y)

    ItemsTable.render_line = render_line  # type: ignore[method-assign]
    shown: list[Any] = [None]  # (time, (time, trace)) of the latest frame done, with the table line drawn in it

    def frame_done(app: Any) -> None:
        if not app._batch_count:  # (a held frame is not drawn)
            shown[0] = (time.perf_counter(), painted[0])

    opened: list[float] = []
    first: list[float] = []

    async def timed(pilot: Any, key: str, shows: Any, what: str) -> float:
        """Press ``key``; seconds until the frame in which the table drew a line of a trace for which
        ``shows(trace)`` holds is done."""
        mark = time.perf_counter()
        press = asyncio.create_task(pilot.press(key))
        while True:
            frame = shown[0]
            seen = frame[1] if frame is not None else None
            if seen is not None and seen[0] > mark and shows(seen[1]):
                break
            if time.perf_counter() - mark > 120:
                raise SystemExit(f"the table never showed the new {what}'s trace")
            await asyncio.sleep(0.0005)
        await press
        await asyncio.sleep(0.05)  # a person types a few keys a second at most
        return frame[0] - mark

    async def main() -> None:
        started = time.perf_counter()
        app = CtxviewApp(db, conversation_id=1, params=params, show_timings=False)
        app.post_display_hook = partial(frame_done, app)  # type: ignore[method-assign]
        async with app.run_test(size=(160, 48)) as pilot:
            screen: Any = None
            deadline = time.perf_counter() + 300
            while time.perf_counter() < deadline:
                screen = app.screen
                if isinstance(screen, InspectorScreen) and (screen.settled or screen.load_error):
                    break
                await asyncio.sleep(0.005)
            if not isinstance(screen, InspectorScreen) or not screen.settled:
                raise SystemExit(f"the inspector did not open: {getattr(screen, 'load_error', None)}")
            opened.append(time.perf_counter() - started)
            first.append(first_rows[0] - started)
            # warm, as in the core measure: the term index the inspector builds in the background after
            # the first trace is ready (a user reading the first screen never notices it)
            while not getattr(screen, "prepared", True) or any(
                w.group == "prepare" and not w.is_finished for w in app.workers
            ):
                await asyncio.sleep(0.01)
            screen.query_one("#prompt", Input).focus()
            await pilot.pause()
            await asyncio.sleep(0.05)  # (the focus's own frame is drawn before the first key, as for a person)
            typed = screen.params.prompt or ""
            for key in keys:
                typed += key
                times.append(await timed(pilot, "space" if key == " " else key,
                                         lambda trace, prompt=typed: trace.params.prompt == prompt, "prompt"))
            # the budget edit: + / - on the table (in the prompt they would be typed)
            screen.action_focus_table()
            await pilot.pause()
            await asyncio.sleep(0.05)
            budget_now = screen.params.token_budget
            for step in BUDGET_STEPS[:BUDGET_KEYS]:
                budget_now = step_budget(budget_now, step)
                budget_times.append(await timed(pilot, "plus" if step > 0 else "minus",
                                                lambda trace, b=budget_now: trace.params.token_budget == b, "budget"))

    asyncio.run(main())
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    return {"tui": times, "tui_budget": budget_times, "rss": [rss * 1024 / 1e6], "tui_open": opened, "tui_first": first}


def worker_budget(db: Path, budget: int) -> dict[str, Any]:
    """The scenario's budget and the session's item count, read once per size for the other workers."""
    session, params = scenario(db)
    return {"budget": params.token_budget, "items": len(session.items)}


def worker_cli(db: Path, budget: int) -> dict[str, Any]:
    params = scenario_params(budget)
    exe = Path(sys.executable).with_name("ctxview")
    command = [str(exe)] if exe.exists() else [sys.executable, "-m", "ctxview"]
    command += ["assemble", str(db), "--format", "json", "--budget", str(params.token_budget), "--prompt", PROMPT,
                "--prompt-aware"]
    adopting = _adopt_orphans()
    mark = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    elapsed = time.perf_counter() - mark
    # the render cache writer it left behind (a first open), adopted: waited for, and its memory counted
    after = _reap_adopted() if adopting else 0.0
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # KiB: the largest of this worker's children
    return {"cli": [elapsed], "cli_rss": [rss * 1024 / 1e6], "cli_after_exit": [after]}


def _adopt_orphans() -> bool:
    """Make this worker the parent of the processes its child leaves running when it exits (Linux's child
    subreaper), so that the measure can wait for them and count their memory; False where it cannot."""
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0) == 0  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        return False


def _reap_adopted() -> float:
    """Wait for every adopted process; the seconds that took."""
    mark = time.perf_counter()
    while True:
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return time.perf_counter() - mark


FLOOR_SCRIPT = """
import sqlite3, sys
connection = sqlite3.connect("file:" + sys.argv[1] + "?mode=ro", uri=True)
for table in ("context_items", "messages", "message_parts", "summaries"):
    rows = connection.execute("SELECT * FROM " + table).fetchall()
"""


def worker_floor(db: Path, budget: int) -> dict[str, Any]:
    """The floor: a plain Python process that reads every row the assembly needs with ``fetchall()``.

    Measured in the same run as the CLI, so the ratio stays meaningful on a busy machine.
    """
    mark = time.perf_counter()
    subprocess.run([sys.executable, "-c", FLOOR_SCRIPT, str(db)], check=True, stdout=subprocess.DEVNULL)
    return {"floor": [time.perf_counter() - mark]}


PRIVATE_COPY_MB = 150


def private_copy_dbs() -> tuple[Path, Path]:
    """(a 150 MB WAL database with its newest commit in a -wal and no -shm, the same without the -wal)."""
    import shutil
    import sqlite3

    folder = CACHE / "private-copy"
    with_wal, plain = folder / "wal" / "lcm.db", folder / "plain" / "lcm.db"
    if with_wal.exists() and Path(f"{with_wal}-wal").exists() and plain.exists():
        return with_wal, plain
    print(f"building a {PRIVATE_COPY_MB} MB WAL database…", file=sys.stderr, flush=True)
    shutil.rmtree(folder, ignore_errors=True)
    for target in (with_wal, plain):
        target.parent.mkdir(parents=True)
    shutil.copyfile(ROOT / "sample_sessions" / "demo.db", plain)
    conn = sqlite3.connect(plain)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("CREATE TABLE benchmark_filler (data BLOB)")  # the bytes a long session's rows would hold
    conn.executemany("INSERT INTO benchmark_filler VALUES (randomblob(1048576))", [()] * PRIVATE_COPY_MB)
    conn.commit()
    conn.close()  # checkpointed: plain has no -wal
    shutil.copyfile(plain, with_wal)
    writer = sqlite3.connect(with_wal)
    writer.execute("PRAGMA wal_autocheckpoint=0")
    writer.execute("UPDATE conversations SET title = 'renamed in the -wal' WHERE conversation_id = 1")
    writer.commit()
    # copy the three files while the writer holds them (the state a live agent leaves), then drop the -shm
    snapshot = folder / "snapshot"
    snapshot.mkdir()
    for suffix in ("", "-wal"):
        shutil.copyfile(f"{with_wal}{suffix}", snapshot / f"lcm.db{suffix}")
    writer.close()
    shutil.rmtree(with_wal.parent)
    snapshot.rename(with_wal.parent)
    return with_wal, plain


def worker_private_copy(db: Path, budget: int) -> dict[str, Any]:
    """Open ``db`` and load conversation 1, as ``ctxview assemble`` starts; the copy is made (and removed) here."""
    from ctxview.store import LcmStore

    mark = time.perf_counter()
    with LcmStore(db) as store:
        store.load_session(1)
    return {"seconds": [time.perf_counter() - mark]}


def private_copy_line(repeat: int) -> str:
    with_wal, plain = private_copy_dbs()
    size = with_wal.stat().st_size + Path(f"{with_wal}-wal").stat().st_size
    copied = [run_worker("privatecopy", with_wal, [])["seconds"][0] for _ in range(repeat)]
    direct = [run_worker("privatecopy", plain, [])["seconds"][0] for _ in range(repeat)]
    left = sorted(p.name for p in with_wal.parent.iterdir())
    return (
        f"private copy: open + load of a {size / 1e6:.0f} MB WAL database whose newest commit is only in its -wal"
        f" (no -shm): {statistics.median(copied):.2f} s median / {max(copied):.2f} s max, against"
        f" {statistics.median(direct):.2f} s / {max(direct):.2f} s for the same database without a -wal;"
        f" files beside it afterwards: {', '.join(left)}"
    )


WORKERS = {
    "core": worker_core,
    "sweep": worker_sweep,
    "cli": worker_cli,
    "floor": worker_floor,
    "budget": worker_budget,
    "privatecopy": worker_private_copy,
}


RENDER_CACHE = CACHE / "renders"  # the benchmark's own render cache (ctxview.render_cache), never the user's


def run_worker(
    kind: str, db: Path, extra: list[str], *, render_cache: bool = True, cache_dir: Path = RENDER_CACHE,
    write_in_background: bool = False,
) -> dict[str, Any]:
    """One measure in a fresh process; ``render_cache=False``: a cold open, every message rendered.

    A command writes the render cache before it exits (the next measure reads it), unless
    ``write_in_background`` (the default of ``ctxview``: a process of its own, which outlives it, writes the file)."""
    command = [sys.executable, __file__, "--worker", kind, "--db", str(db), *extra]
    env = {**os.environ, "CTXVIEW_CACHE_DIR": str(cache_dir), "CTXVIEW_CACHE": "on" if render_cache else "off",
           "CTXVIEW_CACHE_WRITE": "background" if write_in_background else "wait"}
    done = subprocess.run(command, check=False, capture_output=True, text=True, cwd=ROOT, env=env)
    if done.returncode != 0:
        raise SystemExit(f"worker {kind} on {db.name} failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def forget_sweeps() -> None:
    """Remove what earlier sweeps kept in the benchmark's cache (``ctxview.sweep_cache``'s files)."""
    from ctxview.sweep_cache import CUT_SUFFIX, SUFFIX

    for suffix in (SUFFIX, CUT_SUFFIX):
        for path in RENDER_CACHE.glob(f"*{suffix}"):
            path.unlink()


# --- the table ---------------------------------------------------------------------------------


def machine() -> str:
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    ram = ""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                ram = f", {int(line.split()[1]) / 1024 / 1024:.0f} GiB RAM"
    except OSError:
        pass
    return f"{os.cpu_count()} cores ({cpu}){ram}, Python {platform.python_version()}, {platform.system()}"


def fmt(value: float, unit: str) -> str:
    if unit == "ms":
        return f"{value * 1000:.1f}"
    if unit == "s":
        return f"{value:.2f}"
    if unit == "×":
        return f"{value:.1f}"
    return f"{value:.0f}"


def render(results: dict[int, dict[str, list[float]]], items: dict[int, int], sizes: list[int]) -> tuple[str, bool]:
    head = "| measure | " + " | ".join(f"{s:,} items ({items[s]:,})" for s in sizes) + " |"
    lines = [head, "|---|" + "---|" * len(sizes)]
    ok = True
    for measure, (unit, targets) in TARGETS.items():
        cells = []
        for size in sizes:
            values = results[size].get(measure)
            if not values:
                cells.append("—")
                continue
            med, top = statistics.median(values), max(values)
            target = targets.get(size)
            verdict = ""
            if target is not None:
                good = (med if measure not in JUDGED_BY_MAX else top) * (
                    1000 if unit == "ms" else 1
                ) <= target
                ok = ok and good
                verdict = (" ✓" if good else " ✗") + f" (≤ {target:g})"
            cells.append(f"{fmt(med, unit)} / {fmt(top, unit)}{verdict}")
        lines.append(f"| {LABELS[measure]} [{unit}, median / max] | " + " | ".join(cells) + " |")
    return "\n".join(lines), ok


def byte_compile() -> None:
    """Compile ctxview's modules and its dataclasses' methods once (``python -m ctxview.precompile``), as
    ``pip install`` and a first run do for an installed package.

    An editable install run with PYTHONDONTWRITEBYTECODE=1 (as on this machine) would
    otherwise compile every module from source in every process, adding about a
    tenth of a second to each whole-process measure.
    """
    subprocess.run([sys.executable, "-m", "ctxview.precompile"], check=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="2000,10000,100000", help="context-item counts (comma separated)")
    parser.add_argument("--repeat", type=int, default=5, help="fresh processes per measure (default 5)")
    parser.add_argument("--keys", default="dat", help="characters typed in the TUI measure, per process")
    parser.add_argument(
        "--skip", default="", help="measures to skip (comma separated: core,tui,cli,sweep,privatecopy)"
    )
    parser.add_argument("--json", metavar="FILE", help="also write the raw timings here")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--db", help=argparse.SUPPRESS)
    parser.add_argument("--budget", default="0", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.worker:
        db = Path(args.db)
        budget = int(args.budget)
        out = worker_tui(db, budget, args.keys) if args.worker == "tui" else WORKERS[args.worker](db, budget)
        print(json.dumps(out))
        return 0

    sizes = [int(s) for s in args.sizes.split(",") if s]  # an empty list: the private-copy line alone
    skip = {s for s in args.skip.split(",") if s}
    byte_compile()
    results: dict[int, dict[str, list[float]]] = {}
    items: dict[int, int] = {}
    for size in sizes:
        db = session_db(size)
        scene = run_worker("budget", db, [])  # in its own process: the workers below never load it twice
        items[size] = scene["items"]
        budget = ["--budget", str(scene["budget"])]
        merged: dict[str, list[float]] = {}
        kinds = [k for k in ("core", "tui", "cli", "sweep") if k not in skip]
        run_worker("cli", db, budget)  # writes the render cache the warm measures read
        for kind in kinds:
            if kind == "sweep" and size not in TARGETS["sweep"][1]:
                continue  # the sweep is judged at 10,000 and 100,000 items
            for _ in range(args.repeat):
                extra = ["--keys", args.keys] if kind == "tui" else []
                if kind == "cli":  # the floor right before each CLI run: the same load on the machine
                    floor = run_worker("floor", db, [])["floor"][0]
                    merged.setdefault("floor", []).append(floor)
                    cold = run_worker("cli", db, budget, render_cache=False)
                    merged.setdefault("cli_cold", []).extend(cold["cli"])
                    merged.setdefault("cli_cold_ratio", []).append(cold["cli"][0] / floor)
                    merged.setdefault("cli_cold_rss", []).extend(cold["cli_rss"])
                    with tempfile.TemporaryDirectory(dir=CACHE) as empty:  # a first open: cache on, no file yet
                        first = run_worker("cli", db, budget, cache_dir=Path(empty), write_in_background=True)
                    merged.setdefault("cli_first", []).extend(first["cli"])
                    merged.setdefault("cli_first_after", []).extend(first["cli_after_exit"])
                    merged.setdefault("cli_first_rss", []).extend(first["cli_rss"])
                if kind == "sweep":  # a first sweep of this database state: no sweep file from an earlier one
                    forget_sweeps()
                    first = run_worker(kind, db, budget, write_in_background=True)
                    merged.setdefault("sweep_first", []).extend(first["sweep"])
                    merged.setdefault("sweep_first_after", []).extend(first["sweep_after"])
                if kind == "tui" and size in TARGETS["tui_open"][1]:
                    cold = run_worker("tui", db, [*budget, "--keys", ""], render_cache=False)
                    merged.setdefault("tui_open_cold", []).extend(cold["tui_open"])
                out = run_worker(kind, db, budget + extra)
                items[size] = out.pop("items", items.get(size, 0))
                out.pop("sweep_runs", None)
                out.pop("cli_after_exit", None)
                out.pop("sweep_after", None)
                if kind == "cli":
                    merged.setdefault("cli_ratio", []).append(out["cli"][0] / floor)
                for name, values in out.items():
                    merged.setdefault(name, []).extend(values)
            print(f"{size:,}: {kind} done", file=sys.stderr, flush=True)
        results[size] = merged
    table, ok = render(results, items, sizes)
    print(f"machine: {machine()}")
    print(f"scenario: engine on, fresh tail 64, prompt-aware, budget = min(128,000, ¼ of the item tokens); "
          f"{args.repeat} processes per measure; prompt typed: {PROMPT!r}")
    print(table)
    if "privatecopy" not in skip:
        print(private_copy_line(args.repeat))
    print("all targets met" if ok else "some targets missed")
    if args.json:
        Path(args.json).write_text(json.dumps({"items": items, "results": results}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
