"""What the Pilot tests of the inspector share: the demo's parameters and a wait that is not racy."""

from __future__ import annotations

from typing import Any

from textual.worker import WorkerState

from ctxview.model import Params
from ctxview.tui.screens.inspector import InspectorScreen

DEMO_PARAMS = Params(
    token_budget=2000, prompt="helm rollback failed deploy", prompt_aware_eviction=True, fresh_tail_count=8
)


async def settle(pilot: Any) -> None:
    """Wait until no worker runs and every open inspector shows the trace of its current params."""
    app = pilot.app
    for _ in range(400):
        await app.workers.wait_for_complete()
        await pilot.pause()
        busy = any(w.state in (WorkerState.PENDING, WorkerState.RUNNING) for w in app.workers)
        inspectors = [s for s in app.screen_stack if isinstance(s, InspectorScreen)]
        if not busy and all(s.settled or s.load_error is not None for s in inspectors):
            return
    raise AssertionError("the app did not settle")
