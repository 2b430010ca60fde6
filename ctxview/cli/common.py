"""What every subcommand shares: the parser, the selection flags, the parameters they resolve to, notes on stderr.

Cheap to import (no store, no assembler): ``ctxview SUBCOMMAND --help`` loads
only this, the subcommand's module and the export format table.
"""

from __future__ import annotations

import argparse
import copy
import os
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

if TYPE_CHECKING:
    from ctxview.model import Params, Trace
    from ctxview.pipeline import SessionAssembler

DEFAULTS_HELP = (
    "Defaults follow the reference engine: budget 128000, fresh-tail count 64, no fresh-tail token cap, "
    "prompt-aware eviction off, engine step (live inputs, serialized clamp) on. With --no-engine the bare "
    "assembler's defaults apply instead: fresh-tail count 8 and prompt-aware eviction on. "
    "--params FILE reads a parity params.json (a value outside the usual ranges is read as the engine reads it, "
    "with a note on stderr); flags given on the command line override it."
)


class _HelpFormatter(argparse.HelpFormatter):
    """argparse's formatter with the width found as ``shutil.get_terminal_size`` finds it, without importing
    ``shutil`` (and the compression modules it imports): argparse makes a formatter for every argument added,
    so every command paid for it (~4 ms of a start)."""

    def __init__(
        self, prog: str, indent_increment: int = 2, max_help_position: int = 24, width: int | None = None
    ) -> None:
        super().__init__(prog, indent_increment, max_help_position, _terminal_columns() - 2 if width is None else width)


def _terminal_columns() -> int:
    """``shutil.get_terminal_size().columns``: ``COLUMNS`` when a positive number, else the terminal's, else 80."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns > 0:
        return columns
    try:
        columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
    except (AttributeError, ValueError, OSError):
        columns = 0
    return columns or 80


class Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line and exit 2."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _HelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"ctxview: error: {message} (see '{self.prog} --help')\n")


def add_selection_flags(parser: argparse.ArgumentParser, *, engine_per_side: bool = False) -> None:
    """The flags that say what to assemble and how (``engine_per_side``: --engine may be given twice, for diff)."""
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
        "--live-from-transcript",
        action="store_true",
        help="live inputs: the host's live window, built from the OpenClaw transcript of the conversation's session "
        "(the branch from its leaf, compaction and branch summaries as the host handles them)",
    )
    parser.add_argument(
        "--state-dir",
        metavar="DIR",
        help="the OpenClaw state directory to find transcripts in (default: the database's own directory when it "
        "has agents/, else the one OpenClaw uses: $OPENCLAW_STATE_DIR, ~/.openclaw, ~/.clawdbot)",
    )
    parser.add_argument(
        "--add-live",
        action="append",
        metavar="KIND:TEXT",
        help="append a live input written with the host's markers (repeatable; after --live's): KIND is user, "
        "subagent (completion announcement), inter-session or retry",
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
    if getattr(args, "live_from_transcript", False) and args.live:
        from ctxview.errors import InputError

        raise InputError("--live and --live-from-transcript both give the live inputs: use one")
    if getattr(args, "add_live", None):
        from ctxview.whatif.live_inputs import parse_add_live, with_added

        added = [parse_add_live(spec) for spec in args.add_live]
        params = replace(params, live_messages=with_added(params.live_messages, added))
    if args.conversation is not None:  # a conversation named on the command line is assembled as is
        conversation = args.conversation
        params = replace(params, session_id=None, session_key=None)
    return params, conversation, notes


def assemble_args(
    args: argparse.Namespace,
    db: Path,
    params_file: str | None = None,
    sessions: dict[tuple[str, int | None], SessionAssembler] | None = None,
) -> Trace:
    """Assemble ``db`` with the selection flags (and ``params_file`` in place of --params, when given).

    ``sessions`` caches the loaded sessions, so a database two sides of a diff share is read once.
    """
    from ctxview.pipeline import SessionAssembler
    from ctxview.store import LcmStore

    side_args = copy.copy(args)
    if params_file is not None:
        side_args.params = params_file
    params, conversation = resolve_params(side_args)
    key = (os.path.realpath(db), conversation)  # realpath: a symlink loop is the store's to report
    assembler = sessions.get(key) if sessions is not None else None
    if assembler is None:
        with LcmStore(db) as store:
            assembler = SessionAssembler(store.load_session(conversation))
        print_notes(assembler.session.warnings)
        if sessions is not None:
            sessions[key] = assembler
    params = live_from_transcript(side_args, db, params, assembler.session.conversation.conversation_id)
    return assembler.run(params)


def live_from_transcript(args: argparse.Namespace, db: Path, params: Params, conversation_id: int) -> Params:
    """With ``--live-from-transcript``: ``params`` with the host's live window for the conversation's session.

    Where the window came from (or why there is none) is said on stderr; no transcript is an error.
    """
    if not getattr(args, "live_from_transcript", False):
        return params
    from ctxview.errors import InputError
    from ctxview.openclaw.host import host_for_database

    host, why = host_for_database(db, conversation_id, os.environ, Path.home(), state_dir=args.state_dir)
    if host is None or host.window is None:
        reason = why if host is None else "; ".join(host.notes) or "the session has no transcript"
        raise InputError(f"--live-from-transcript: {reason}")
    print_notes([host.provenance(), *host.window.notes])
    added = tuple(params.live_messages or ()) if getattr(args, "add_live", None) else ()
    return replace(params, live_messages=(*host.window.messages, *added))  # --add-live's inputs after the window


# --- output ----------------------------------------------------------------------------


def print_notes(warnings: Sequence[str]) -> None:
    """Say what the store or the params reading noticed on stderr, keeping stdout the data."""
    for warning in warnings:
        print(f"ctxview: note: {warning}", file=sys.stderr)


def write_stdout(text: str) -> None:
    """Write text as UTF-8 even where the console encoding is narrower; lone surrogates are escaped."""
    buffer = getattr(sys.stdout, "buffer", None)
    if buffer is None:
        sys.stdout.write(text)
        return
    sys.stdout.flush()
    buffer.write(text.encode("utf-8", "backslashreplace"))
    buffer.flush()


def terminal_width(fallback: int) -> int:
    """Columns of the terminal (at least 80), or ``fallback`` when standard output is not one."""
    try:
        return max(80, os.get_terminal_size().columns)
    except OSError:
        return fallback


def printable(text: str) -> str:
    """Control characters as spaces, so a stored title cannot move the cursor or break a table row."""
    return "".join(ch if ch.isprintable() else " " for ch in text)
