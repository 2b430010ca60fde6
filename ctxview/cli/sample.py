"""``ctxview sample OUT``: write one of the deterministic sample databases."""

from __future__ import annotations

import argparse

DESCRIPTION = "Write a deterministic sample LCM database."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("out", help="path of the database to write")
    parser.add_argument("--kind", choices=("demo", "medium", "large"), default="demo")
    parser.add_argument("--messages", type=int, help="message count for --kind large (default 100000)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--force", action="store_true", help="overwrite an existing file")


def run(args: argparse.Namespace) -> int:
    from ctxview.samples import build_sample

    info = build_sample(args.out, args.kind, seed=args.seed, messages=args.messages, overwrite=args.force)
    print(f"wrote {info.path} ({info.kind})")
    return 0
