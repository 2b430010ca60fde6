"""``ctxview conversations DB``: the conversations in a database, and which engine line's rules apply.

``ctxview conversations --state-dir DIR`` (or with no DB at all) lists the user's OpenClaw agents and their
sessions instead, each with the LCM conversation it maps to: the inspector's session picker, as text.
"""

from __future__ import annotations

import argparse
import json

from ctxview.cli.common import print_notes, printable

DESCRIPTION = (
    "List the conversations in an LCM database; with --state-dir (or without DB), list the OpenClaw agents and "
    "their sessions, newest first, each with the LCM conversation it maps to."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("db", nargs="?", help="LCM SQLite database")
    parser.add_argument(
        "--state-dir",
        metavar="DIR",
        help="OpenClaw state directory (default: $OPENCLAW_STATE_DIR, ~/.openclaw, ~/.clawdbot, as OpenClaw finds "
        "it); its LCM database is found as lossless-claw finds it, unless DB is given",
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")


def run(args: argparse.Namespace) -> int:
    if args.state_dir is not None or args.db is None:
        return _sessions(args)
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
            f"{c.summary_count:>9,} {c.token_total:>10,}  {printable(name)}"
        )
    if not conversations:
        print("(no conversations)")
    return 0


def _sessions(args: argparse.Namespace) -> int:
    import os
    from pathlib import Path

    from ctxview.cli.common import write_stdout
    from ctxview.openclaw.host import discover
    from ctxview.openclaw.listing import scan_json, scan_table

    found = discover(os.environ, Path.home(), state_dir=args.state_dir, lcm_path=Path(args.db) if args.db else None)
    if args.json:
        write_stdout(json.dumps(scan_json(found.scan), ensure_ascii=False, indent=2) + "\n")
    else:
        write_stdout(scan_table(found.scan) + "\n")
    return 0
