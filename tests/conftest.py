"""What every Pilot test (and the screenshot script) shares: waiting until the app has settled.

``settle`` is the one wait that is not racy: no worker runs (but the ``--watch`` poll, which a
timer restarts) and every inspector on the screen stack shows the trace of its current params, or
the error that stopped it loading.  Tests press a key, then ``await settle(pilot)``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


async def settle(pilot: Any, timeout: float = 30.0) -> None:
    """Wait until the app shows the result of everything asked of it so far."""
    from textual.worker import WorkerState

    from ctxview.tui.screens.inspector import InspectorScreen

    app = pilot.app
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        await app.workers.wait_for_complete()
        await pilot.pause()
        busy = any(w.state in (WorkerState.PENDING, WorkerState.RUNNING) for w in app.workers if w.group != "watch")
        inspectors = [s for s in app.screen_stack if isinstance(s, InspectorScreen)]
        if not busy and all(s.settled or s.load_error is not None for s in inspectors):
            return
    raise AssertionError("the app did not settle")


async def wait_for(pilot: Any, condition: Callable[[], object], timeout: float = 30.0) -> None:
    """Wait until ``condition()`` holds (for states ``settle`` does not know, such as a sub-screen's result)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        await pilot.pause()
        if condition():
            return
    raise AssertionError("condition never held")


def pytest_configure(config: Any) -> None:
    """Render caches of the test run go to a directory of its own, never the user's cache (ctxview.render_cache)."""
    import atexit
    import os
    import shutil
    import tempfile

    if "CTXVIEW_CACHE_DIR" not in os.environ:
        directory = tempfile.mkdtemp(prefix="ctxview-test-cache-")
        atexit.register(shutil.rmtree, directory, True)
        os.environ["CTXVIEW_CACHE_DIR"] = directory
    # a command run as a subprocess writes its cache before it exits: a writer outliving it could outlive the
    # test run and make its cache directory again (test_cache_write_in_background runs the default way)
    os.environ.setdefault("CTXVIEW_CACHE_WRITE", "wait")
    _check_every_fast_stringify()


def _check_every_fast_stringify() -> None:
    """Every message orjson stringifies in this process during the test run (``jsjson.js_stringify_message``) is
    stringified by the json module's C encoder too, and the two must agree: orjson is used only where they do."""
    from ctxview import jsjson

    fast = jsjson._fast_utf8

    def checked(value: Any) -> bytes | None:
        encoded = fast(value)
        if encoded is not None:
            slow = jsjson.js_stringify(value)
            if encoded.decode() != slow:
                raise AssertionError(f"orjson and the C encoder disagree: {encoded[:200]!r} vs {slow[:200]!r}")
        return encoded

    jsjson._fast_utf8 = checked
