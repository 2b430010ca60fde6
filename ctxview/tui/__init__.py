"""The interactive inspector (Textual).  ``run_tui`` is the entry the CLI calls."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from ctxview.errors import CtxviewError
from ctxview.model import Params

if TYPE_CHECKING:
    from ctxview.openclaw.host import Discovery


def prepare_params(params: Params, live_path: Path | None, demo: bool) -> Params:
    """Load the live inputs the inspector starts with (the demo brings its own)."""
    if params.live_messages is None:
        if live_path is not None:
            from ctxview.livefile import load_live_messages

            params = replace(params, live_messages=tuple(load_live_messages(live_path)))
        elif demo:
            from ctxview.samples import demo_live_messages

            params = replace(params, live_messages=tuple(demo_live_messages()))
    return params


def run_tui(
    db_path: Path | None,
    *,
    conversation_id: int | None,
    params: Params,
    live_path: Path | None,
    demo: bool,
    watch: bool = False,
    discovery: Discovery | None = None,
    notice: str | None = None,
    state_dir: str | None = None,
) -> int:
    """Run the inspector until the user quits; 2 when it cannot start (the message goes to stderr).

    ``watch``: re-assemble automatically when another process commits to the database.
    """
    try:
        params = prepare_params(params, live_path, demo)
    except CtxviewError as exc:
        print(f"ctxview: error: {exc}", file=sys.stderr)
        return 2
    if demo and conversation_id is None:
        # the demo's story is its first (active) conversation: open it, not the picker
        from ctxview.samples import DEMO_CONVERSATION_ID

        conversation_id = DEMO_CONVERSATION_ID
    from ctxview.tui.app import CtxviewApp

    app = CtxviewApp(
        db_path,
        conversation_id=conversation_id,
        params=params,
        demo=demo,
        watch=watch,
        discovery=discovery,
        notice=notice,
        state_dir=state_dir,
    )
    app.run()
    return app.return_code or 0
