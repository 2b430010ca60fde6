"""The budget sweep's CPU time, first and next sweep of a database state (comparable on a busy machine).

Each sweep runs in a fresh process, as ``run.py``'s sweep worker does (the session read from a
warm render cache, one run at the scenario's budget, then ``default_budgets`` and ``sweep``), in a
render cache directory of its own: the first sweep finds no ``.sweep`` file and writes one, each
next sweep reads it.  Printed per sweep: the CPU and wall seconds of finding the range (its run at
the whole session) and of the sweep's exact runs, and a digest of the sweep's JSON (the same digest
before and after a change: the same result).  ``--workers 1`` (the default) keeps every run in one
process, so its CPU time is the whole sweep's; ``--workers 0`` lets the sweep pick (fork when a core
is idle).

Usage::

    python benchmarks/sweep_cpu.py --size 100000 --next 3
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import run as bench  # (the benchmark next to this file)


def measure(db: Path, budget: int, workers: int | None) -> dict[str, Any]:
    """One sweep in this process: (range, sweep) CPU and wall seconds, and the result's digest."""
    from ctxview.pipeline import SessionAssembler
    from ctxview.store import LcmStore
    from ctxview.sweep import default_budgets, sweep, sweep_json

    with LcmStore(db) as store:
        session = store.load_session()
    assembler = SessionAssembler(session)
    params = replace(bench.scenario_params(budget), prompt=bench.PROMPT)
    assembler.run(params)
    adopting = bench._adopt_orphans()
    cpu, wall = time.process_time(), time.perf_counter()
    budgets = default_budgets(assembler, params, workers=workers)
    range_cpu, range_wall = time.process_time() - cpu, time.perf_counter() - wall
    cpu, wall = time.process_time(), time.perf_counter()
    result = sweep(assembler, params, budgets, workers=workers)
    sweep_cpu, sweep_wall = time.process_time() - cpu, time.perf_counter() - wall
    if adopting:
        bench._reap_adopted()  # (the .sweep file's writer: the next sweep reads the file)
    digest = hashlib.sha256(json.dumps(sweep_json(result), sort_keys=True).encode()).hexdigest()[:16]
    return {
        "range_cpu": range_cpu, "range_wall": range_wall, "sweep_cpu": sweep_cpu, "sweep_wall": sweep_wall,
        "runs": result.exact_runs, "digest": digest,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=100000, help="items (the benchmark's cached sizes)")
    parser.add_argument("--next", type=int, default=2, help="next sweeps after the first")
    parser.add_argument("--workers", type=int, default=1, help="sweep processes (0: the sweep picks)")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--db", default="", help=argparse.SUPPRESS)
    parser.add_argument("--budget", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    workers = args.workers or None
    if args.worker:
        print(json.dumps(measure(Path(args.db), args.budget, workers)))
        return 0
    db = bench.session_db(args.size)
    with tempfile.TemporaryDirectory(prefix="ctxview-sweep-cpu-") as cache:
        env = {**os.environ, "CTXVIEW_CACHE_DIR": cache, "CTXVIEW_CACHE": "on"}

        def worker(kind: str, extra: list[str]) -> dict[str, Any]:
            command = [sys.executable, __file__ if kind == "sweep" else str(bench.__file__), "--worker",
                       *([] if kind == "sweep" else [kind]), "--db", str(db), *extra]
            done = subprocess.run(command, check=True, capture_output=True, text=True, cwd=bench.ROOT, env=env)
            return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]

        budget = worker("budget", [])["budget"]
        worker("cli", ["--budget", str(budget)])  # writes the render cache the sweeps read
        print(f"{args.size:,} items, budget {budget:,}, workers {args.workers or 'auto'}; seconds (CPU / wall)")
        for index in range(1 + args.next):
            out = worker("sweep", ["--budget", str(budget), "--workers", str(args.workers)])
            label = "first" if index == 0 else "next "
            print(f"{label}  range {out['range_cpu']:.2f} / {out['range_wall']:.2f}   "
                  f"runs {out['sweep_cpu']:.2f} / {out['sweep_wall']:.2f}   "
                  f"total {out['range_cpu'] + out['sweep_cpu']:.2f} / {out['range_wall'] + out['sweep_wall']:.2f}"
                  f"   ({out['runs']} exact runs, digest {out['digest']})", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
