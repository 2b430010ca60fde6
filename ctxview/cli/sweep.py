"""``ctxview sweep DB``: assemble across budgets and print the chart and each item's smallest budget."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace

from ctxview.cli.common import DEFAULTS_HELP, add_selection_flags, resolve_params
from ctxview.errors import InputError
from ctxview.model import Trace
from ctxview.sweep import (
    DEFAULT_POINTS,
    DEFAULT_RUNS,
    SELECTED_FROM_SENTENCE,
    SENT_FROM_SENTENCE,
    SweepResult,
    budget_range,
    item_order,
    spaced,
    sweep,
    sweep_json,
    text_chart,
)

DESCRIPTION = (
    "Assemble a conversation at many token budgets, from the fresh-tail size to the whole session, and show "
    "the tokens kept against the budget (a text chart) and, per item, the budget from which the budget pass "
    "selects it and the budget from which it is sent."
)

EPILOG = DEFAULTS_HELP


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("db", help="LCM SQLite database")
    add_selection_flags(parser)
    parser.add_argument("--points", type=int, default=DEFAULT_POINTS, metavar="N",
                        help=f"budgets on the curve, evenly spaced (default {DEFAULT_POINTS})")
    parser.add_argument("--runs", type=int, default=DEFAULT_RUNS, metavar="N",
                        help=f"exact full runs among them, for final tokens and 'sent from' (default {DEFAULT_RUNS}; "
                        "0 = every budget)")
    parser.add_argument("--min", dest="low", metavar="TOKENS", type=int,
                        help="smallest budget (default: the fresh-tail size)")
    parser.add_argument("--max", dest="high", metavar="TOKENS", type=int,
                        help="largest budget (default: every item's tokens)")
    parser.add_argument("--format", dest="sweep_format", choices=("text", "json"), default="text",
                        help="text: chart, runs and items (default); json: every number")
    parser.add_argument("--items", type=int, default=20, metavar="N",
                        help="items listed in text output (default 20; 0 = none, -1 = all)")
    parser.add_argument("--sort", choices=("ordinal", "sent", "selected"), default="ordinal",
                        help="order of the item list: by ordinal (default), or the items that need the most "
                        "budget first, by 'sent from' or 'selected from'")
    parser.add_argument("--jobs", type=int, default=None, metavar="N",
                        help="processes for the exact runs (default: 2 where there are two cores, else 1)")
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
    low, high = budget_range(assembler, params, workers=args.jobs)
    low = args.low if args.low is not None else low
    high = args.high if args.high is not None else high
    if low < 1 or high < low:
        raise InputError(f"budget range {low:,}…{high:,} is empty: --min must be ≥ 1 and ≤ --max")
    budgets = spaced(low, high, args.points)
    if args.jobs is not None and args.jobs < 1:
        raise InputError("--jobs must be at least 1")
    result = sweep(assembler, params, budgets, runs=None if args.runs == 0 else args.runs, workers=args.jobs)
    if args.sweep_format == "json":
        sys.stdout.write(json.dumps(sweep_json(result), ensure_ascii=False, indent=1) + "\n")
        return 0
    trace = result.top_trace or assembler.run(replace(params, token_budget=budgets[-1]))
    out = [text_chart(result, width=args.width, height=args.height)]
    if args.items:
        out.append("")
        out.append(item_lines(result, trace, args.items, args.sort))
    sys.stdout.write("\n".join(out) + "\n")
    return 0


def item_lines(result: SweepResult, trace: Trace, limit: int, sort: str = "ordinal") -> str:
    """Items with the budgets from which they are selected and sent, in ``sort`` order."""
    from ctxview.model import column

    decisions = trace.decisions
    keys = column(decisions, "key")
    tokens = dict(zip(keys, column(decisions, "tokens"), strict=True))
    labels = dict(zip(keys, column(decisions, "kind"), strict=True))
    never = 10**18
    rows = sorted(result.sent_from, key=item_order)
    if sort == "sent":
        rows.sort(key=lambda k: -(result.sent_from[k] or never))
    elif sort == "selected":
        rows.sort(key=lambda k: -result.selected_from.get(k, never))
    if limit >= 0:
        rows = rows[:limit]
    lines = [f"{'item':>8} {'kind':<8} {'tokens':>7} {'selected from':>14} {'sent from':>15}"]
    for key in rows:
        name = key.split(":", 1)[1] if key.startswith("o:") else ("L" + key[2:] if key.startswith("l:") else key)
        selected = result.selected_from.get(key)
        lines.append(
            f"{name:>8} {labels.get(key, '')!s:<8} {tokens.get(key, 0):>7,} "
            f"{'—' if selected is None else f'{selected:,}':>14} {result.sent_from_text(key):>15}"
        )
    if limit >= 0 and len(result.sent_from) > limit:
        lines.append(f"… {len(result.sent_from) - limit:,} more (--items -1 lists all)")
    lines.append(SELECTED_FROM_SENTENCE)
    lines.append(SENT_FROM_SENTENCE)
    return "\n".join(lines)
