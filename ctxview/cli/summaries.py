"""``ctxview summaries DB``: the conversation's summary tree, with what a run does with each summary."""

from __future__ import annotations

import argparse

from ctxview.cli.common import DEFAULTS_HELP, add_selection_flags, assemble_args, terminal_width, write_stdout

DESCRIPTION = (
    "Print the conversation's summaries as a tree, from the highest condensed summaries down to the leaves "
    "(and, with --messages, their source messages). Each summary: kind, depth, tokens, the raw tokens it covers "
    "and the compression ratio, its time range, and whether it is in the context and kept or evicted at the "
    "given settings; [fallback], [truncated] and [capped] mark summaries written without a summary model or cut "
    "to size."
)
EPILOG = DEFAULTS_HELP


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("db", help="LCM SQLite database")
    add_selection_flags(parser)
    parser.add_argument("--messages", action="store_true", help="list each leaf's source messages")
    parser.add_argument("--json", action="store_true", help="print the tree as JSON")


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from ctxview.export.jsontext import pretty_js
    from ctxview.store import LcmStore
    from ctxview.whatif.summary_tree import read_summary_tree, tree_lines, tree_to_json, with_outcomes

    trace = assemble_args(args, Path(args.db))
    assert trace.conversation_id is not None
    with LcmStore(args.db) as store:
        tree = with_outcomes(read_summary_tree(store.connection, trace.conversation_id), trace)
    if args.json:
        write_stdout(pretty_js(tree_to_json(tree, messages=args.messages)) + "\n")
        return 0
    if not tree.nodes:
        write_stdout(f"conversation {tree.conversation_id} has no summaries\n")
        return 0
    write_stdout("\n".join(tree_lines(tree, messages=args.messages, width=terminal_width(160))) + "\n")
    return 0
