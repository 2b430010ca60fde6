"""``ctxview check DB``: context guards for CI (exit 0 when every expectation holds, 1 when one fails)."""

from __future__ import annotations

import argparse
import sys

from ctxview.cli.common import DEFAULTS_HELP, add_selection_flags, assemble_args, write_stdout
from ctxview.errors import InputError

DESCRIPTION = (
    "Assemble a conversation and check expectations about the result: items that must be kept (--keep) or "
    "evicted (--evict), and a cap on the final tokens (--max-tokens). ITEM is an ordinal, L<n> (a live input), "
    "msg:<message id>, a summary id or a tool call id. Exit status: 0 every expectation holds; 1 one or more "
    "fail (one line each, in the trace's words); 2 bad input."
)
EPILOG = (
    "--expect FILE reads the same expectations from TOML (keep = [\"sum_ab12\"], evict = [3], max-tokens = 32000) "
    "or JSON ({\"keep\": [...], \"evict\": [...], \"max-tokens\": N}); flags add to it. " + DEFAULTS_HELP
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("db", help="LCM SQLite database")
    add_selection_flags(parser)
    parser.add_argument("--keep", action="append", default=[], metavar="ITEM", help="ITEM must be kept (repeatable)")
    parser.add_argument(
        "--evict", action="append", default=[], metavar="ITEM", help="ITEM must not be kept (repeatable)"
    )
    parser.add_argument("--max-tokens", type=_tokens, metavar="N", help="the final context must fit in N tokens")
    parser.add_argument("--expect", metavar="FILE", help="expectations from a TOML or JSON file")
    parser.add_argument("-q", "--quiet", action="store_true", help="print nothing when every expectation holds")


def _tokens(text: str) -> int:
    try:
        value = int(text.replace(",", "").replace("_", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number of tokens: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"not a whole number of tokens: {text!r}")
    return value


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from ctxview.whatif.check import check_trace, expectations_from, load_expectations

    expectations = load_expectations(args.expect) if args.expect else []
    expectations += expectations_from(args.keep, args.evict, args.max_tokens)
    if not expectations:
        raise InputError("nothing to check: give --keep, --evict, --max-tokens or --expect")
    trace = assemble_args(args, Path(args.db))
    failures = check_trace(trace, expectations)
    if failures:
        write_stdout("".join(f"FAIL {failure.line}\n" for failure in failures))
        print(f"ctxview check: {len(failures)} of {len(expectations)} expectations failed", file=sys.stderr)
        return 1
    if not args.quiet:
        write_stdout(f"ok: {len(expectations)} expectations hold ({trace.summary.final_tokens:,} tokens)\n")
    return 0
