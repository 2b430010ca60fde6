"""Render ctxview's main screens headless to SVG and PNG in screenshots/.

    python scripts/screenshots.py [--out screenshots] [--no-png]

Uses the demo sample (and the medium one when it is in sample_sessions/), the
demo's parameters and live inputs, and hides timings so the images are
reproducible.  PNGs need cairosvg (``pip install cairosvg``) or rsvg-convert;
without either only the SVGs are written.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from ctxview.model import Params
from ctxview.samples import DEMO_PARAMS, demo_live_messages, ensure_demo_db
from ctxview.tui.app import CtxviewApp

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # run as a script: the tests' settle lives in the repository, not the package
from tests.conftest import settle  # noqa: E402

LIVE_PARAMS = replace(DEMO_PARAMS, live_messages=tuple(demo_live_messages()))


@dataclass(frozen=True)
class Shot:
    name: str
    size: tuple[int, int]
    keys: tuple[str, ...] = ()
    conversation: int | None = 1
    params: Params = LIVE_PARAMS
    db: str = "demo"
    state: str | None = None  # an OpenClaw state directory from the test fixtures: "agents" or "case"


SHOTS: tuple[Shot, ...] = (
    Shot("picker", (120, 30), conversation=None),
    # the README's first picture: the priority (score) sort, where the budget line is the cut and each why shows
    Shot("inspector", (160, 48), keys=("o",)),
    Shot("inspector-filter", (160, 48),
         keys=("f", *"helm", "space", *"outcome:evicted", "space", *"kind:toolResult", "enter")),
    Shot("sweep", (160, 48), keys=("w",)),
    Shot("inspector-budget-cut-by-score", (160, 48), keys=("minus", "o", "j", "j", "j")),
    Shot("inspector-tool-pair", (160, 48), keys=("G", *("k",) * 13, "p")),
    Shot("inspector-chronological", (160, 48), keys=("G",),
         params=replace(LIVE_PARAMS, prompt_aware_eviction=False, engine=False)),
    Shot("inspector-80x24", (80, 24)),
    Shot("inspector-rarity", (160, 48), keys=("c", "j", "j", "j", "j", "j")),
    Shot("roi-view", (160, 48), keys=("i",), params=replace(LIVE_PARAMS, scorer="roi")),
    Shot("help", (120, 48), keys=("question_mark",)),
    Shot("export", (160, 48), keys=("e", "down", "down", "down")),
    Shot("sessions", (160, 40), state="agents"),
    Shot("verify", (160, 48), keys=("enter",), state="case"),
    Shot("messages", (160, 48), keys=("M", "n", "k", "k", "k")),
    Shot("focus-briefs", (160, 40), keys=("f", "j"), conversation=None, db="browse",
         params=Params()),
    Shot("large-files", (160, 40), keys=("L", "j"), conversation=None, db="browse",
         params=Params()),
    Shot("transcript", (160, 40), keys=("T", "j", "j", "j", "j", "j"), conversation=None, db="browse",
         params=Params()),
    Shot("medium", (160, 48), keys=("o", "g"), db="medium",
         params=Params(token_budget=20_000, prompt="postgres failover replica lag", prompt_aware_eviction=True,
                       fresh_tail_count=16)),
)


STATE_ROOT = Path("/tmp/ctxview-screenshots")


def openclaw_state(kind: str) -> Path:
    """A fixture state directory at a fixed path (the picker shows it), rebuilt each time."""
    import os
    import time

    from tests.openclaw_case_fixture import build_case_state
    from tests.openclaw_fixtures import build_state

    os.environ["TZ"] = "UTC"  # the fixtures' times, as the tests see them
    time.tzset()
    root = STATE_ROOT / kind / ".openclaw"
    shutil.rmtree(root.parent, ignore_errors=True)
    if kind == "case":
        return build_case_state(root, "match")
    return build_state(root).root


async def render(shot: Shot, db: Path) -> str:
    from ctxview.openclaw.engine_config import engine_settings

    discovery = None
    if shot.state is not None:
        from ctxview.openclaw.host import discover

        discovery = discover({}, Path("/nonexistent-home"), state_dir=openclaw_state(shot.state))
        db = discovery.lcm.path
    app = CtxviewApp(
        db,
        conversation_id=shot.conversation if discovery is None else None,
        params=shot.params if discovery is None else engine_settings(discovery.config.data).apply(Params()),
        show_timings=False,
        discovery=discovery,
    )
    async with app.run_test(size=shot.size) as pilot:
        await settle(pilot)
        for key in shot.keys:
            await pilot.press(key)
            await settle(pilot)
        await pilot.pause(0.2)
        return app.export_screenshot(title=f"ctxview — {shot.name}")


def to_png(svg: str, target: Path) -> bool:
    """Rasterise with cairosvg or rsvg-convert; the web font is swapped for a local monospace one."""
    svg = re.sub(r"@font-face\s*\{[^}]*\}", "", svg)
    svg = svg.replace("font-family: Fira Code, monospace", "font-family: DejaVu Sans Mono, Menlo, monospace")
    try:
        import cairosvg  # type: ignore[import-not-found]
    except ImportError:
        converter = shutil.which("rsvg-convert")
        if converter is None:
            return False
        subprocess.run([converter, "-o", str(target)], input=svg.encode(), check=True)
        return True
    cairosvg.svg2png(bytestring=svg.encode(), write_to=str(target))
    return True


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(ROOT / "screenshots"))
    parser.add_argument("--no-png", action="store_true")
    parser.add_argument("--only", nargs="*", help="names of the shots to render")
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    import tempfile

    from tests.browse_fixtures import build_browse_state  # a small OpenClaw state: briefs, files, a transcript

    browse = build_browse_state(Path(tempfile.mkdtemp(prefix="ctxview-shots-")) / "state").lcm
    dbs = {"demo": ensure_demo_db(), "medium": ROOT / "sample_sessions" / "medium.db", "browse": browse}
    png_ok = not args.no_png
    for shot in SHOTS:
        if args.only and shot.name not in args.only:
            continue
        db = dbs[shot.db]
        if not db.is_file():
            print(f"skip {shot.name}: {db} not found", file=sys.stderr)
            continue
        svg = asyncio.run(render(shot, db))
        (out / f"{shot.name}.svg").write_text(svg, encoding="utf-8")
        written = [f"{shot.name}.svg"]
        if png_ok:
            if to_png(svg, out / f"{shot.name}.png"):
                written.append(f"{shot.name}.png")
            else:
                png_ok = False
                print("no cairosvg or rsvg-convert: writing SVGs only", file=sys.stderr)
        print("wrote " + ", ".join(str(out / name) for name in written))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
