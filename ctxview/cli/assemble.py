"""``ctxview assemble DB``: assemble headless and print the readable table, the parity JSON or an export."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ctxview.cli.common import (
    DEFAULTS_HELP,
    add_selection_flags,
    live_from_transcript,
    print_notes,
    resolve_params,
    terminal_width,
)
from ctxview.cli.export import add_output_arguments, run_export
from ctxview.export.formats import FORMATS, format_help

DESCRIPTION = "Assemble a conversation's context headless and print the result."
EPILOG = DEFAULTS_HELP


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("db", help="LCM SQLite database")
    add_selection_flags(parser)
    parser.add_argument(
        "--format",
        choices=("table", "json", *FORMATS),
        default="table",
        help="table: a readable per-item table with scores, outcomes and reasons (default); "
        "json: the parity expected.json shape plus ctxview's decisions; or an export format, the same as "
        "`ctxview export` writes — " + format_help(),
    )
    add_output_arguments(parser, with_format=False)


def run(args: argparse.Namespace) -> int:
    from ctxview.pipeline import SessionAssembler
    from ctxview.store import LcmStore

    params, conversation = resolve_params(args)
    with LcmStore(args.db) as store:
        session = store.load_session_for(params, conversation)
    params = live_from_transcript(args, Path(args.db), params, session.conversation.conversation_id)
    trace = SessionAssembler(session).run(params)
    if args.format not in ("table", "json"):
        print_notes(session.warnings)  # the table and JSON carry them; an export does not
    if args.format != "table":
        print_notes(trace.notes)  # what ctxview assumed or cannot reproduce: on stderr, the data stays clean
    if args.format == "table":
        from ctxview.report import trace_table

        sys.stdout.write(trace_table(trace, width=terminal_width(160)) + "\n")
        return 0
    if args.format != "json":
        return run_export(args, trace)
    from ctxview.report import write_trace_json

    write_trace_json(trace, sys.stdout.write, fork=True)  # (the later items in a forked process, where that helps)
    sys.stdout.write("\n")
    return 0
