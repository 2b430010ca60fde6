"""Where a keystroke's time goes in the TUI, in CPU time (comparable on a busy machine, unlike wall time).

Runs the benchmark's TUI worker (``run.py``: a prompt typed a character at a time, then
``+`` / ``-`` on the items table) and splits each edit into the thread CPU of

* the UI thread, from the edit's request until the items table draws the new trace;
* ``SessionAssembler.run`` in the worker thread (the core);
* the rest of the worker's run (table layout, outcome diff and counts).

The GIL makes these add up: the wall time of an edit is at least their sum.  The budget bar's
sent parts and the cache prefix are measured after the table's paint (``_measure_panes``, shown
apart: not on the way to the table).  With
``--profile FILE`` the UI thread's part is also written as a cProfile (thread CPU) for
``python -m pstats FILE`` (profiling slows that thread several times: compare its
numbers with runs without the option).

Usage::

    python benchmarks/tui_cpu.py --size 10000
    python benchmarks/tui_cpu.py --size 100000 --keys data --profile /tmp/ui.prof
    python benchmarks/tui_cpu.py --size 10000 --path   # where each key's wall time goes, stage by stage
"""

from __future__ import annotations

import argparse
import cProfile
import statistics
import sys
import time
from pathlib import Path
from typing import Any, ClassVar

sys.path.insert(0, str(Path(__file__).resolve().parent))

import run as bench  # (the benchmark next to this file)


class EditClock:
    """Thread CPU of each edit, by part (see the module docstring)."""

    def __init__(self, profile: cProfile.Profile | None) -> None:
        self.profile = profile
        self.ui: list[float] = []
        self.core: list[float] = []
        self.view: list[float] = []
        self.panes: list[float] = []
        self._core_last = 0.0
        self._waiting_for: Any = None  # the trace the table showed when the edit was asked for
        self._started = 0.0

    def install(self) -> None:
        from ctxview.pipeline import SessionAssembler
        from ctxview.tui.screens.inspector import InspectorScreen
        from ctxview.tui.widgets.items_table import ItemsTable

        clock = self
        real_core = SessionAssembler.run
        real_run = InspectorScreen._run
        real_panes = InspectorScreen._measure_panes
        real_request = InspectorScreen.request_assembly
        real_render = ItemsTable.render_line

        def core(assembler: Any, *args: Any, **kwargs: Any) -> Any:
            mark = time.thread_time()
            try:
                return real_core(assembler, *args, **kwargs)
            finally:
                clock._core_last = time.thread_time() - mark

        def worker_run(screen: Any, *args: Any, **kwargs: Any) -> Any:
            mark = time.thread_time()
            try:
                return real_run(screen, *args, **kwargs)
            finally:
                total = time.thread_time() - mark
                clock.core.append(clock._core_last)
                clock.view.append(total - clock._core_last)

        def panes(screen: Any, *args: Any, **kwargs: Any) -> Any:
            mark = time.thread_time()
            try:
                return real_panes(screen, *args, **kwargs)
            finally:
                clock.panes.append(time.thread_time() - mark)

        def request(screen: Any, *args: Any, **kwargs: Any) -> Any:
            shown = screen.query_one(ItemsTable).trace
            if screen.trace is not None and shown is not None and clock._waiting_for is None:
                clock._waiting_for, clock._started = shown, time.thread_time()
                if clock.profile is not None:
                    clock.profile.enable()
            return real_request(screen, *args, **kwargs)

        def render_line(table: Any, y: int) -> Any:
            strip = real_render(table, y)
            if clock._waiting_for is not None and table.trace is not None and table.trace is not clock._waiting_for:
                if clock.profile is not None:
                    clock.profile.disable()
                clock.ui.append(time.thread_time() - clock._started)
                clock._waiting_for = None
            return strip

        SessionAssembler.run = core  # type: ignore[method-assign]
        InspectorScreen._run = worker_run  # type: ignore[method-assign]
        InspectorScreen._measure_panes = panes  # type: ignore[method-assign]
        InspectorScreen.request_assembly = request  # type: ignore[method-assign]
        ItemsTable.render_line = render_line  # type: ignore[method-assign]


class PathClock:
    """Wall and process CPU time from each key to the stages of its way to the table (``--path``).

    Stamps (the first of each name after the key): the key reaches the input, the controls see the change,
    the screen asks for a run, the run starts and ends in its thread (``SessionAssembler.run`` inside
    ``_run``), the result is applied, the screen paints a frame, the table draws its first line of the
    new trace.  Wall minus CPU is time when no thread of the process ran (the machine busy, or a wait).
    """

    STAGES: ClassVar[tuple[tuple[str, str, str], ...]] = (
        # (name, module, "Class.method")
        ("input", "textual.widgets", "Input._on_key"),
        ("controls", "ctxview.tui.widgets.controls", "Controls.on_input_changed"),
        ("request", "ctxview.tui.screens.inspector", "InspectorScreen.request_assembly"),
        ("run", "ctxview.tui.screens.inspector", "InspectorScreen._run"),
        ("core", "ctxview.pipeline", "SessionAssembler.run"),
        ("apply", "ctxview.tui.screens.inspector", "InspectorScreen._apply"),
        ("frame", "textual.screen", "Screen._on_timer_update"),
    )

    def __init__(self) -> None:
        self.edits: list[list[tuple[str, float, float]]] = []
        self.shown: Any = None  # the trace the table showed when the key was pressed

    def stamp(self, name: str) -> None:
        if self.edits:
            self.edits[-1].append((name, time.perf_counter(), time.process_time()))

    def install(self) -> None:
        import importlib
        import inspect

        from textual.pilot import Pilot

        from ctxview.tui.widgets.items_table import ItemsTable

        clock = self

        def wrap(owner: Any, attribute: str, name: str, *, ends: bool = False) -> None:
            real = getattr(owner, attribute)
            if inspect.iscoroutinefunction(real):
                async def stamped_async(*args: Any, **kwargs: Any) -> Any:
                    clock.stamp(name)
                    try:
                        return await real(*args, **kwargs)
                    finally:
                        if ends:
                            clock.stamp(name + " end")

                setattr(owner, attribute, stamped_async)
                return

            def stamped(*args: Any, **kwargs: Any) -> Any:
                clock.stamp(name)
                try:
                    return real(*args, **kwargs)
                finally:
                    if ends:
                        clock.stamp(name + " end")

            setattr(owner, attribute, stamped)

        for name, module, dotted in self.STAGES:
            class_name, attribute = dotted.split(".")
            wrap(getattr(importlib.import_module(module), class_name), attribute, name, ends=name in ("run", "core"))
        real_press = Pilot.press

        async def press(pilot: Any, *keys: str) -> None:
            tables = pilot.app.screen.query(ItemsTable)
            clock.shown = tables.first().trace if tables else None
            clock.edits.append([("key", time.perf_counter(), time.process_time())])
            await real_press(pilot, *keys)

        Pilot.press = press  # type: ignore[method-assign]
        real_line = ItemsTable.render_line

        def render_line(table: Any, y: int) -> Any:
            if clock.edits and table.trace is not None and table.trace is not clock.shown:
                clock.stamp("table line")  # (the first line of the new trace: the benchmark's clock stops there)
            return real_line(table, y)

        ItemsTable.render_line = render_line  # type: ignore[method-assign]

    def report(self, name: str, edits: list[list[tuple[str, float, float]]]) -> str:
        """Median ms from the key to each stage (wall/CPU), in the order the stages came."""
        reached: dict[str, list[tuple[float, float]]] = {}
        for stamps in edits:
            _, wall0, cpu0 = stamps[0]
            seen: set[str] = set()
            for stage, wall, cpu in stamps:
                if stage in seen:
                    continue
                seen.add(stage)
                reached.setdefault(stage, []).append(((wall - wall0) * 1000, (cpu - cpu0) * 1000))
                if stage == "table line":
                    break
        order = sorted(reached, key=lambda stage: statistics.median(w for w, _ in reached[stage]))
        parts = [
            f"{stage} {statistics.median(w for w, _ in reached[stage]):.1f}/"
            f"{statistics.median(c for _, c in reached[stage]):.1f}"
            for stage in order
        ]
        return f"{name}, ms from the key (wall/CPU, medians): " + " · ".join(parts)


def _ms(values: list[float]) -> str:
    return f"{statistics.median(values) * 1000:.1f}" if values else "—"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=10_000, help="context items (a cached benchmark session)")
    parser.add_argument("--keys", default="data", help="characters typed into the prompt")
    parser.add_argument("--profile", metavar="FILE", help="write the UI thread's cProfile (thread CPU) here")
    parser.add_argument("--path", action="store_true", help="also time each key's way to the table, stage by stage")
    args = parser.parse_args(argv)

    db = bench.session_db(args.size)
    budget = bench.worker_budget(db, 0)["budget"]
    profile = cProfile.Profile(time.thread_time) if args.profile else None
    clock = EditClock(profile)
    clock.install()
    path = PathClock() if args.path else None
    if path is not None:
        path.install()
    out = bench.worker_tui(db, budget, args.keys)
    typed = len(out["tui"])
    # the first run is the opening assembly; then one run per edit (a superseded edit may skip its run)
    core, view, panes = clock.core[1:], clock.view[1:], clock.panes[1:]
    print(f"{db.name}: wall ms, prompt {[round(t * 1000) for t in out['tui']]}, "
          f"budget {[round(t * 1000) for t in out.get('tui_budget', [])]}")
    for name, ui, core_part, view_part, pane_part in (
        ("prompt edit", clock.ui[:typed], core[:typed], view[:typed], panes[:typed]),
        ("budget edit", clock.ui[typed:], core[typed:], view[typed:], panes[typed:]),
    ):
        print(f"{name}: CPU medians, UI thread {_ms(ui)} + SessionAssembler.run {_ms(core_part)}"
              f" + view work in the worker {_ms(view_part)} ms (then, after the paint: the panes' parts"
              f" {_ms(pane_part)} ms)")
    if path is not None:
        print(path.report("prompt edit", path.edits[:typed]))
        print(path.report("budget edit", path.edits[typed:]))
    if profile is not None:
        profile.dump_stats(args.profile)
    return 0


if __name__ == "__main__":
    sys.exit(main())
