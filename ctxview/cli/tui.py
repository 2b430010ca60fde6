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

DESCRIPTION = (
    "Open the interactive inspector on DB (default: ~/.openclaw/lcm.db when it exists, else the "
    "built-in demo). Headless subcommands: {subcommands} (ctxview SUBCOMMAND --help)."
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
    if args.db:
        db = Path(args.db)
        if not db.exists():
            raise InputError(f"database not found: {db}")
    elif not demo and (Path.home() / ".openclaw" / "lcm.db").exists():
        db = Path.home() / ".openclaw" / "lcm.db"
    else:
        db = None
        demo = True
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
    )


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
