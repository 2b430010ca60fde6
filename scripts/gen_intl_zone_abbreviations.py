#!/usr/bin/env python3
"""Build ctxview/data/intl_zone_abbreviations.json: the en-US short zone names Node 24's Intl prints.

The engine labels the dates in its compaction summaries with
``Intl.DateTimeFormat("en-US", {timeZoneName: "short"})``.  ICU prints a name
("EST", "CDT", "UTC") only for zones whose metazone has one in en-US, and the
GMT offset ("GMT-3", "GMT+5:30") otherwise.  For every zone name Intl accepts
(ctxview/data/intl_time_zones.json) this samples the 15th of every month,
1900-2040, and keeps, for zones that ever print a name, the periods in which
each UTC offset maps to a name (null: the GMT form).

Usage: scripts/gen_intl_zone_abbreviations.py [NODE]   (needs Node 24; ctxview itself never runs node)
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ZONES = ROOT / "ctxview" / "data" / "intl_time_zones.json"
OUT = ROOT / "ctxview" / "data" / "intl_zone_abbreviations.json"

SAMPLER = r"""
const names = JSON.parse(require("fs").readFileSync(0, "utf8"));
const out = {};
for (const name of names) {
  const short = new Intl.DateTimeFormat("en-US", { timeZone: name, timeZoneName: "short" });
  const offset = new Intl.DateTimeFormat("en-US", { timeZone: name, timeZoneName: "longOffset" });
  const rows = [];
  for (let year = 1900; year <= 2040; year++) {
    for (let month = 0; month < 12; month++) {
      const at = Date.UTC(year, month, 15, 12);
      const pick = (f) => f.formatToParts(at).find((p) => p.type === "timeZoneName").value;
      rows.push([at, pick(offset), pick(short)]);
    }
  }
  out[name] = rows;
}
process.stdout.write(JSON.stringify(out));
"""

GMT_FORM = re.compile(r"GMT[+-]\d{1,2}(?::\d\d){0,2}")  # a bare "GMT" is the name of the GMT metazone


def offset_minutes(text: str) -> int:
    """``GMT-03:00`` → -180 (``GMT`` → 0); seconds are dropped (local mean times before 1900 only)."""
    match = re.fullmatch(r"GMT(?:([+-])(\d\d):(\d\d)(?::\d\d)?)?", text)
    if match is None:
        raise ValueError(text)
    sign, hours, minutes = match.groups()
    if sign is None:
        return 0
    value = int(hours) * 60 + int(minutes)
    return -value if sign == "-" else value


def main() -> int:
    node = sys.argv[1] if len(sys.argv) > 1 else "node"
    names = sorted(json.loads(ZONES.read_text(encoding="utf-8"))["zones"])
    run = subprocess.run([node, "-e", SAMPLER], input=json.dumps(names), capture_output=True, text=True, check=True)
    sampled = json.loads(run.stdout)
    table: dict[str, list[list[object]]] = {}
    for name, rows in sampled.items():
        if all(GMT_FORM.fullmatch(short) for _, _, short in rows):
            continue
        segments: list[list[object]] = []
        current: dict[str, str | None] = {}
        for at, offset, short in rows:
            key = str(offset_minutes(offset))
            value = None if GMT_FORM.fullmatch(short) else short
            if not segments or (key in current and current[key] != value):
                current = {}
                segments.append([at, current])
            current[key] = value
        table[name] = segments
    OUT.write_text(
        json.dumps(
            {
                "comment": "en-US short zone names of Node 24 (ICU 78, tz 2026b) per zone name, as periods "
                "[start epoch ms, {UTC offset minutes: name or null (GMT form)}]; sampled monthly 1900-2040 by "
                "scripts/gen_intl_zone_abbreviations.py; zones never named are absent.",
                "zones": table,
            },
            separators=(",", ":"),
            sort_keys=True,
        )
        + "\n",
        encoding="utf-8",
    )
    print(f"{len(table)} named zones written to {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
