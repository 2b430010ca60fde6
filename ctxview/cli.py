"""Command line: ``ctxview [DB]`` opens the inspector; subcommands run headless.

Headless commands never import Textual, so they start fast; every error a
user can cause is one line on stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, NoReturn

from ctxview.errors import CtxviewError, InputError
from ctxview.export_cli import (
    DIFF_DESCRIPTION,
    EXPORT_FORMAT_HELP,
    add_diff_arguments,
    add_export_arguments,
    cmd_export,
    run_diff,
    run_export,
)
from ctxview.export_formats import FORMATS
from ctxview.gc_pause import gc_paused
from ctxview.model import Params

SUBCOMMANDS = ("conversations", "assemble", "export", "diff", "sweep", "sample")

DEFAULTS_HELP = (
    "Defaults follow the reference engine: budget 128000, fresh-tail count 64, no fresh-tail token cap, "
    "prompt-aware eviction off, engine step (live inputs, serialized clamp) on. With --no-engine the bare "
    "assembler's defaults apply instead: fresh-tail count 8 and prompt-aware eviction on. "
    "--params FILE reads a parity params.json (a value outside the usual ranges is read as the engine reads it, "
    "with a note on stderr); flags given on the command line override it."
)


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line and exit 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"ctxview: error: {message} (see '{self.prog} --help')\n")


def _add_selection_flags(parser: argparse.ArgumentParser, *, engine_per_side: bool = False) -> None:
    parser.add_argument("--conversation", type=int, metavar="ID", help="conversation id (default: the only/newest one)")
    parser.add_argument("--budget", metavar="N", help="token budget (default 128000)")
    parser.add_argument("--prompt", metavar="TEXT", help="the incoming user prompt (drives relevance scores)")
    parser.add_argument(
        "--fresh-tail-count", metavar="K", help="newest raw messages protected (engine 64, --no-engine 8)"
    )
    parser.add_argument("--fresh-tail-max-tokens", metavar="T", help="token cap on the fresh tail (default: none)")
    parser.add_argument(
        "--prompt-aware",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="evict by prompt relevance instead of age (engine default off)",
    )
    parser.add_argument("--params", metavar="FILE", help="read parameters from a parity params.json")
    parser.add_argument(
        "--live", metavar="FILE", help="live inputs: JSON array of messages or an OpenClaw .jsonl transcript"
    )
    parser.add_argument(
        "--no-engine",
        action="store_true",
        help="run the bare assembler only (no live-input step, no serialized clamp)",
    )
    parser.add_argument("--timezone", metavar="TZ", help="IANA zone for summary dates (default UTC)")
    parser.add_argument("--reserved", metavar="N", help="tokens reserved for host costs, taken off the budget")
    parser.add_argument(
        "--scorer",
        choices=("lcm", "rarity", "roi"),
        help="relevance scorer: lcm = the reference BM25-lite (default); rarity = term rarity with a title/slug "
        "bonus; roi = section ROI from a citation log, stubbing low-ROI items",
    )
    parser.add_argument(
        "--tokenizer",
        choices=("lcm", "unicode"),
        help="prompt/item terms: lcm = the reference ASCII tokenizer (default); unicode = words in any script "
        "and CJK character bigrams",
    )
    parser.add_argument("--citations", metavar="FILE", help="citation log (JSONL) for --scorer roi")
    parser.add_argument("--stub-threshold", metavar="X", help="ROI score below which items are stubbed (default 0.3)")
    parser.add_argument(
        "--engine",
        choices=("0.15", "1.0"),
        action="append" if engine_per_side else "store",
        help=(
            "engine line whose rules to run: lossless-claw 0.15 or 1.0 (default: the line the database's tables "
            "point to)"
            + (
                "; give it twice to compare the two lines on one database: A with the first, B with the second"
                if engine_per_side
                else ""
            )
        ),
    )
    parser.add_argument(
        "--stub-large-tool-payloads",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="replace evictable externalized tool results by stubs (§10.2)",
    )


def _version() -> str:
    from ctxview import __version__

    return __version__


def _tui_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="ctxview",
        description="Open the interactive inspector on DB (default: ~/.openclaw/lcm.db when it exists, else the "
        "built-in demo). Headless subcommands: " + ", ".join(SUBCOMMANDS) + " (ctxview SUBCOMMAND --help).",
        epilog=DEFAULTS_HELP,
    )
    parser.add_argument("--version", action="version", version=f"ctxview {_version()}")
    parser.add_argument("db", nargs="?", help="LCM SQLite database")
    parser.add_argument("--demo", action="store_true", help="open the built-in demo session")
    parser.add_argument(
        "--watch",
        action="store_true",
        help="re-assemble automatically when the database changes (polls its data version, about once a second)",
    )
    _add_selection_flags(parser)
    return parser


def _subcommand_parser(name: str) -> argparse.ArgumentParser:
    if name == "conversations":
        parser = _Parser(prog="ctxview conversations", description="List the conversations in an LCM database.")
        parser.add_argument("db", help="LCM SQLite database")
        parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
        return parser
    if name == "assemble":
        parser = _Parser(
            prog="ctxview assemble",
            description="Assemble a conversation's context headless and print the result.",
            epilog=DEFAULTS_HELP,
        )
        parser.add_argument("db", help="LCM SQLite database")
        _add_selection_flags(parser)
        parser.add_argument(
            "--format",
            choices=("trace", "table", "json", *(f for f in FORMATS if f != "trace")),
            default="trace",
            help="trace (or table): a readable per-item table with scores, outcomes and reasons (default); "
            "json: the parity expected.json shape plus ctxview's decisions; or an export format — "
            + EXPORT_FORMAT_HELP
            + " (the JSON decision trace is `ctxview export --format trace`)",
        )
        add_export_arguments(parser, with_format=False)
        return parser
    if name == "export":
        parser = _Parser(
            prog="ctxview export",
            description="Export a conversation's assembled context (to replay it, attach it to a report, diff it).",
            epilog=DEFAULTS_HELP,
        )
        parser.add_argument("db", help="LCM SQLite database")
        _add_selection_flags(parser)
        add_export_arguments(parser)
        return parser
    if name == "diff":
        parser = _Parser(prog="ctxview diff", description=DIFF_DESCRIPTION, epilog=DEFAULTS_HELP)
        add_diff_arguments(parser)
        _add_selection_flags(parser, engine_per_side=True)
        return parser
    if name == "sweep":
        from ctxview.sweep_cli import SWEEP_DESCRIPTION, add_sweep_arguments

        parser = _Parser(prog="ctxview sweep", description=SWEEP_DESCRIPTION, epilog=DEFAULTS_HELP)
        parser.add_argument("db", help="LCM SQLite database")
        _add_selection_flags(parser)
        add_sweep_arguments(parser)
        return parser
    parser = _Parser(prog="ctxview sample", description="Write a deterministic sample LCM database.")
    parser.add_argument("out", help="path of the database to write")
    parser.add_argument("--kind", choices=("demo", "medium", "large"), default="demo")
    parser.add_argument("--messages", type=int, help="message count for --kind large (default 100000)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--force", action="store_true", help="overwrite an existing file")
    return parser


# --- parameters ------------------------------------------------------------------------


def resolve_params(args: argparse.Namespace) -> tuple[Params, int | None]:
    """Defaults < --params file < flags; also returns the conversation id to open.

    What the engine makes of odd values in --params and --live files is said on stderr.
    """
    params, conversation, notes = resolve_params_with_notes(args)
    print_notes(notes)
    return params, conversation


def resolve_params_with_notes(args: argparse.Namespace) -> tuple[Params, int | None, list[str]]:
    """``resolve_params`` without printing: the notes come back as ``"<file>: <what the engine does>"``."""
    from ctxview.params_io import build_params, default_params, read_params_file

    notes: list[str] = []
    params = default_params(engine=not args.no_engine)
    conversation: int | None = None
    overrides: dict[str, Any] = {
        "token_budget": args.budget,
        "prompt": args.prompt,
        "fresh_tail_count": args.fresh_tail_count,
        "fresh_tail_max_tokens": args.fresh_tail_max_tokens,
        "prompt_aware_eviction": args.prompt_aware,
        "timezone": args.timezone,
        "reserved_tokens": args.reserved,
        "stub_large_tool_payloads": args.stub_large_tool_payloads,
        "scorer": args.scorer,
        "tokenizer": args.tokenizer,
        "citations_path": args.citations,
        "stub_threshold": args.stub_threshold,
        "engine_line": args.engine,
    }
    if args.params:
        fields, conversation = read_params_file(args.params)
        # a value a flag replaces is not read, so it earns no note
        flagged = {name for name, value in overrides.items() if value is not None}
        if args.live:
            flagged.add("live_messages")
        fields = {name: value for name, value in fields.items() if name not in flagged}
        params = build_params(params, fields, source=args.params, from_file=True, notes=notes)
    params = build_params(params, overrides)
    if args.live:
        from ctxview.livefile import load_live_messages

        live = load_live_messages(args.live, notes)
        params = build_params(params, {"live_messages": live}, source=args.live)
    if args.conversation is not None:  # a conversation named on the command line is assembled as is
        conversation = args.conversation
        params = replace(params, session_id=None, session_key=None)
    return params, conversation, notes


# --- commands ----------------------------------------------------------------------------


def print_notes(warnings: Sequence[str]) -> None:
    """Say what the store or the params reading noticed on stderr, keeping stdout the data."""
    for warning in warnings:
        print(f"ctxview: note: {warning}", file=sys.stderr)


def cmd_conversations(args: argparse.Namespace) -> int:
    from ctxview.assembly.rules import detect_line
    from ctxview.store import LcmStore

    with LcmStore(args.db) as store:
        conversations = store.list_conversations()
        line = detect_line(store.tables())
    print_notes(store.warnings)
    rules = {"line": line.rules.line, "release": line.rules.release, "why": line.why}
    if args.json:
        rows = [
            {
                "conversationId": c.conversation_id,
                "sessionId": c.session_id,
                "sessionKey": c.session_key,
                "title": c.title,
                "active": c.active,
                "archived": c.archived,
                "createdAt": c.created_at,
                "messageCount": c.message_count,
                "contextItemCount": c.context_item_count,
                "summaryCount": c.summary_count,
                "tokenTotal": c.token_total,
                "engineRules": rules,
            }
            for c in conversations
        ]
        print(json.dumps(rows, ensure_ascii=False, indent=2))
        return 0
    print(f"lossless-claw {line.rules.line} rules ({line.rules.release}): {line.why}")
    header = f"{'id':>5}  {'state':<8} {'messages':>9} {'items':>7} {'summaries':>9} {'tokens':>10}  session / title"
    print(header)
    print("-" * len(header))
    for c in conversations:
        state = "active" if c.active else ("archived" if c.archived else "inactive")
        name = c.title or c.session_key or c.session_id or ""
        print(
            f"{c.conversation_id:>5}  {state:<8} {c.message_count:>9,} {c.context_item_count:>7,} "
            f"{c.summary_count:>9,} {c.token_total:>10,}  {_printable(name)}"
        )
    if not conversations:
        print("(no conversations)")
    return 0


def cmd_assemble(args: argparse.Namespace) -> int:
    from ctxview.pipeline import SessionAssembler
    from ctxview.store import LcmStore

    params, conversation = resolve_params(args)
    with LcmStore(args.db) as store:
        session = store.load_session_for(params, conversation)
    trace = SessionAssembler(session).run(params)
    if args.format not in ("trace", "table", "json"):
        print_notes(session.warnings)  # the table and JSON carry them; an export does not
    if args.format not in ("trace", "table"):
        print_notes(trace.notes)  # what ctxview assumed or cannot reproduce: on stderr, the data stays clean
    if args.format in ("trace", "table"):
        from ctxview.report import trace_table

        sys.stdout.write(trace_table(trace, width=_terminal_width()) + "\n")
        return 0
    if args.format != "json":
        return run_export(args, trace)
    from ctxview.report import dumps, trace_to_json

    sys.stdout.write(dumps(trace_to_json(trace)) + "\n")
    return 0


def _run_sweep(args: argparse.Namespace) -> int:
    from ctxview.sweep_cli import run_sweep

    return run_sweep(args)


def cmd_sample(args: argparse.Namespace) -> int:
    from ctxview.samples import build_sample

    info = build_sample(args.out, args.kind, seed=args.seed, messages=args.messages, overwrite=args.force)
    print(f"wrote {info.path} ({info.kind})")
    return 0


def cmd_tui(args: argparse.Namespace) -> int:
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
    """The demo opens where eviction is visible: a tight budget, a prompt, prompt-aware on."""
    from dataclasses import replace

    changes: dict[str, Any] = {}
    if args.budget is None:
        changes["token_budget"] = 2000
    if args.prompt is None:
        changes["prompt"] = "helm rollback failed deploy"
    if args.prompt_aware is None:
        changes["prompt_aware_eviction"] = True
    if args.fresh_tail_count is None:
        changes["fresh_tail_count"] = 8
    return replace(params, **changes)


def _terminal_width() -> int:
    try:
        return max(80, os.get_terminal_size().columns)
    except OSError:
        return 160


def _printable(text: str) -> str:
    return "".join(ch if ch.isprintable() else " " for ch in text)


def _without_cyclic_gc(command: Callable[[argparse.Namespace], int], args: argparse.Namespace) -> int:
    """Run a one-shot command with the cyclic garbage collector paused.

    A headless run builds millions of acyclic objects (rows, rendered messages,
    decisions) and exits; each full collection would walk all of them again, which
    made a 100,000-item export spend a third of its time collecting nothing.
    """
    with gc_paused():
        return command(args)


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    try:
        if arguments and arguments[0] in SUBCOMMANDS:
            name = arguments[0]
            args = _subcommand_parser(name).parse_args(arguments[1:])
            command = {
                "conversations": cmd_conversations,
                "assemble": cmd_assemble,
                "export": cmd_export,
                "diff": run_diff,
                "sweep": _run_sweep,
                "sample": cmd_sample,
            }[name]
            return _without_cyclic_gc(command, args)
        args = _tui_parser().parse_args(arguments)
        return cmd_tui(args)
    except CtxviewError as exc:
        print(f"ctxview: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # output piped into `head` and closed early: not an error worth a traceback
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:
            pass
        return 0
