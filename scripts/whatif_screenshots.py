"""Render the what-if screens (issue 18) headless to SVG and PNG in screenshots/.

    python scripts/whatif_screenshots.py [--out screenshots]

Each shot drives the inspector on the demo sample as a user would (keys, the
add-live form, the A/B view's side B set to another scorer and budget); timings
are hidden so the images are reproducible.  PNGs as in ``screenshots.py``.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
for entry in (str(ROOT), str(ROOT / "scripts")):
    if entry not in sys.path:
        sys.path.insert(0, entry)

from textual.widgets import TextArea, Tree  # noqa: E402

from ctxview.samples import ensure_demo_db  # noqa: E402
from ctxview.tui.app import CtxviewApp  # noqa: E402
from screenshots import LIVE_PARAMS, to_png  # noqa: E402
from tests.conftest import settle, wait_for  # noqa: E402

Steps = Callable[[Any, CtxviewApp], Awaitable[None]]


async def diagnostics(pilot: Any, app: CtxviewApp) -> None:
    await pilot.press("D")
    await pilot.pause(0.3)


async def summary_map(pilot: Any, app: CtxviewApp) -> None:
    await pilot.press("m")
    await wait_for(pilot, lambda: getattr(app.screen, "tree_data", None) is not None)
    tree = app.screen.query_one(Tree)
    first = tree.root.children[0]
    first.children[0].expand()
    await pilot.pause(0.2)
    tree.move_cursor(first.children[0])
    await pilot.press("enter")
    await pilot.pause(0.3)


async def add_live_form(pilot: Any, app: CtxviewApp) -> None:
    await pilot.press("a")
    await pilot.pause(0.2)
    app.screen.query_one(TextArea).text = (
        "backfill-dry-run finished: 4,822 batches, 11m42s, no lock waits over 180 ms; ready for the prod window."
    )
    await pilot.pause(0.2)


async def add_live_done(pilot: Any, app: CtxviewApp) -> None:
    await add_live_form(pilot, app)
    await pilot.press("ctrl+s")
    await settle(pilot)
    await pilot.press("G")
    await settle(pilot)


async def compare(pilot: Any, app: CtxviewApp) -> None:
    from ctxview.tui.screens.compare import CompareScreen

    await pilot.press("x")
    await wait_for(pilot, lambda: isinstance(app.screen, CompareScreen) and app.screen.runs > 0)
    view = app.screen
    assert isinstance(view, CompareScreen)
    view.set_side("b", replace(view.params_a, scorer="rarity", token_budget=2400))
    await wait_for(pilot, lambda: view.runs > 1)
    await pilot.press("n")
    await pilot.pause(0.2)


SHOTS: dict[str, tuple[tuple[int, int], Steps]] = {
    "whatif-diagnostics": ((160, 48), diagnostics),
    "whatif-summary-map": ((160, 48), summary_map),
    "whatif-add-live-form": ((160, 48), add_live_form),
    "whatif-add-live-cache-prefix": ((160, 48), add_live_done),
    "whatif-compare": ((160, 48), compare),
}


async def render(name: str, size: tuple[int, int], steps: Steps) -> str:
    params = replace(LIVE_PARAMS, live_messages=LIVE_PARAMS.live_messages)
    app = CtxviewApp(ensure_demo_db(), conversation_id=1, params=params, show_timings=False)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await steps(pilot, app)
        await pilot.pause(0.2)
        return app.export_screenshot(title=f"ctxview — {name}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(ROOT / "screenshots"))
    parser.add_argument("--only", nargs="*", help="names of the shots to render")
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for name, (size, steps) in SHOTS.items():
        if args.only and name not in args.only:
            continue
        svg = asyncio.run(render(name, size, steps))
        (out / f"{name}.svg").write_text(svg, encoding="utf-8")
        png = to_png(svg, out / f"{name}.png")
        print(f"wrote {out / name}.svg" + (" and .png" if png else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
