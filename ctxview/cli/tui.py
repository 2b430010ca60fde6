"""``ctxview [DB]``: open the interactive inspector (the only command that loads Textual, and only to run)."""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ctxview.cli.common import add_selection_flags, resolve_params
from ctxview.errors import InputError
from ctxview.watch import WATCH_INTERVAL

if TYPE_CHECKING:
    from ctxview.model import Params
    from ctxview.openclaw.host import Discovery

DESCRIPTION = (
    "Open the interactive inspector on DB. Without DB: the sessions of your OpenClaw agents (the state directory "
    "found as OpenClaw finds it: $OPENCLAW_STATE_DIR, ~/.openclaw, ~/.clawdbot; the LCM database as lossless-claw "
    "finds it: $LCM_DATABASE_PATH, openclaw.json, <state>/lcm.db; --state-dir DIR overrides both), else the "
    "built-in demo. Headless subcommands: {subcommands} (ctxview SUBCOMMAND --help)."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--version", action="version", version=f"ctxview {_version()}")
    parser.add_argument("db", nargs="?", help="LCM SQLite database")
    parser.add_argument("--demo", action="store_true", help="open the built-in demo session")
    parser.add_argument(
        "--watch",
        action="store_true",
        help="re-assemble automatically when the database changes (polls its data version, "
        f"every {WATCH_INTERVAL:g} s)",
    )
    add_selection_flags(parser)


def run(args: argparse.Namespace) -> int:
    params, conversation = resolve_params(args)
    db: Path | None
    demo = args.demo
    discovery = None
    notice = None
    if args.db:
        db = Path(args.db)
        if not db.exists():
            raise InputError(f"database not found: {db}")
    elif not demo:
        discovery, db, notice = _discover(args.state_dir)
        demo = db is None
        if discovery is not None and args.params is None:
            params = _plugin_settings(params, args, discovery)
    else:
        db = None
    if demo and args.params is None:
        params = _demo_params(params, args)
    if demo and args.live is None and args.add_live and args.params is None:
        from ctxview.samples import demo_live_messages  # the demo's own live window, then the inputs added by hand

        params = replace(params, live_messages=(*demo_live_messages(), *(params.live_messages or ())))
    from ctxview.tui import run_tui

    return run_tui(
        db,
        conversation_id=conversation,
        params=params,
        live_path=Path(args.live) if args.live else None,
        demo=demo,
        watch=args.watch,
        discovery=discovery,
        notice=notice,
        state_dir=args.state_dir,
    )


def _plugin_settings(params: Params, args: argparse.Namespace, discovery: Discovery) -> Params:
    """The lossless-claw settings of the user's ``openclaw.json`` (fresh tail, prompt-aware eviction, time zone,
    stubs), except where a flag says otherwise: the inspector opens with what the agent runs."""
    from ctxview.openclaw.engine_config import engine_settings

    flagged = {
        name
        for name, flag in (
            ("fresh_tail_count", args.fresh_tail_count),
            ("fresh_tail_max_tokens", args.fresh_tail_max_tokens),
            ("prompt_aware_eviction", args.prompt_aware),
            ("stub_large_tool_payloads", args.stub_large_tool_payloads),
            ("timezone", args.timezone),
        )
        if flag is not None
    }
    return engine_settings(discovery.config.data).apply(params, keep=frozenset(flagged))


def _discover(state_dir: str | None) -> tuple[Discovery | None, Path | None, str | None]:
    """The user's sessions: (the discovery for the session picker, the LCM database, a notice when none was found)."""
    import os

    from ctxview.openclaw.host import discover

    found = discover(os.environ, Path.home(), state_dir=state_dir)
    if found.scan.rows and found.lcm.exists:
        return found, found.lcm.path, None
    if found.lcm.exists:
        return None, found.lcm.path, None  # a database but no sessions: its conversations
    return None, None, found.where_looked() + "; showing the built-in demo"


def _demo_params(params: Params, args: argparse.Namespace) -> Params:
    """The demo opens where eviction is visible (``DEMO_PARAMS``), except where a flag says otherwise."""
    from ctxview.samples import DEMO_PARAMS

    changes: dict[str, Any] = {}
    if args.budget is None:
        changes["token_budget"] = DEMO_PARAMS.token_budget
    if args.prompt is None:
        changes["prompt"] = DEMO_PARAMS.prompt
    if args.prompt_aware is None:
        changes["prompt_aware_eviction"] = DEMO_PARAMS.prompt_aware_eviction
    if args.fresh_tail_count is None:
        changes["fresh_tail_count"] = DEMO_PARAMS.fresh_tail_count
    return replace(params, **changes)


def _version() -> str:
    from ctxview import __version__

    return __version__
