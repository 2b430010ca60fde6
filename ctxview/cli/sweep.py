"""``ctxview sweep DB``: assemble across budgets and print the chart and each item's smallest budget."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace

from ctxview.cli.common import DEFAULTS_HELP, add_selection_flags, resolve_params
from ctxview.errors import InputError
from ctxview.model import Trace
from ctxview.sweep import DEFAULT_POINTS, DEFAULT_RUNS, SweepResult, budget_range, spaced, sweep, sweep_json, text_chart

DESCRIPTION = (
    "Assemble a conversation at many token budgets, from the fresh-tail size to the whole session, and show "
    "the tokens kept against the budget (a text chart) and, per item, the smallest budget at which it is kept."
)

EPILOG = DEFAULTS_HELP


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("db", help="LCM SQLite database")
    add_selection_flags(parser)
    parser.add_argument("--points", type=int, default=DEFAULT_POINTS, metavar="N",
                        help=f"budgets on the curve, evenly spaced (default {DEFAULT_POINTS})")
    parser.add_argument("--runs", type=int, default=DEFAULT_RUNS, metavar="N",
                        help=f"exact full runs among them, for final tokens and min budgets (default {DEFAULT_RUNS}; "
                        "0 = every budget)")
    parser.add_argument("--min", dest="low", metavar="TOKENS", type=int,
                        help="smallest budget (default: the fresh-tail size)")
    parser.add_argument("--max", dest="high", metavar="TOKENS", type=int,
                        help="largest budget (default: every item's tokens)")
    parser.add_argument("--format", dest="sweep_format", choices=("text", "json"), default="text",
                        help="text: chart, runs and items (default); json: every number")
    parser.add_argument("--items", type=int, default=20, metavar="N",
                        help="items listed in text output, those kept latest first (default 20; 0 = none, -1 = all)")
    parser.add_argument("--width", type=int, default=64, help="chart width in columns (default 64)")
    parser.add_argument("--height", type=int, default=12, help="chart height in rows (default 12)")


def run(args: argparse.Namespace) -> int:
    """Load the session, sweep, print; errors a user can cause raise ``CtxviewError`` (exit 2 in the CLI)."""
    from ctxview.pipeline import SessionAssembler
    from ctxview.store import LcmStore

    if args.points < 2:
        raise InputError("--points must be at least 2")
    if args.runs < 0:
        raise InputError("--runs must be 0 (every budget) or more")
    params, conversation = resolve_params(args)
    with LcmStore(args.db) as store:
        session = store.load_session(conversation)
    assembler = SessionAssembler(session)
    low, high = budget_range(assembler, params)
    low = args.low if args.low is not None else low
    high = args.high if args.high is not None else high
    if low < 1 or high < low:
        raise InputError(f"budget range {low:,}…{high:,} is empty: --min must be ≥ 1 and ≤ --max")
    budgets = spaced(low, high, args.points)
    result = sweep(assembler, params, budgets, runs=None if args.runs == 0 else args.runs)
    if args.sweep_format == "json":
        sys.stdout.write(json.dumps(sweep_json(result), ensure_ascii=False, indent=1) + "\n")
        return 0
    trace = assembler.run(replace(params, token_budget=budgets[-1]))
    out = [text_chart(result, width=args.width, height=args.height)]
    if args.items:
        out.append("")
        out.append(item_lines(result, trace, args.items))
    sys.stdout.write("\n".join(out) + "\n")
    return 0


def item_lines(result: SweepResult, trace: Trace, limit: int) -> str:
    """Items with their smallest kept budget, the ones that need the most budget first."""
    from ctxview.model import column

    decisions = trace.decisions
    keys = column(decisions, "key")
    tokens = dict(zip(keys, column(decisions, "tokens"), strict=True))
    labels = dict(zip(keys, column(decisions, "kind"), strict=True))
    rows = sorted(result.min_budget, key=lambda k: (-(result.min_budget[k] or 10**18), k))
    if limit >= 0:
        rows = rows[:limit]
    lines = [f"{'item':>8} {'kind':<8} {'tokens':>7} {'min budget':>12} {'kept from':>12}"]
    for key in rows:
        name = key.split(":", 1)[1] if key.startswith("o:") else ("L" + key[2:] if key.startswith("l:") else key)
        min_budget = result.min_budget[key]
        kept_from = result.kept_from.get(key)
        lines.append(
            f"{name:>8} {labels.get(key, '')!s:<8} {tokens.get(key, 0):>7,} "
            f"{'never' if min_budget is None else f'{min_budget:,}':>12} "
            f"{'—' if kept_from is None else f'{kept_from:,}':>12}"
        )
    lines.append(
        "min budget: smallest exact-run budget with a kept outcome; kept from: the budget pass keeps it at every "
        "budget from here on (exact)"
    )
    return "\n".join(lines)
