"""Build ctxview/data/intl_time_zones.json: every zone name Node 24's Intl accepts → a tz database key.

Run from the repository root with Node 24 (the table must describe the runtime the reference engine
uses; ctxview itself never needs node):

    python scripts/gen_intl_time_zones.py /work/tools/node24

Candidates are the tz database names Python knows, ICU's own extra identifiers (Java-style
three-letter ids, ``SystemV/*`` and two retired links) and every one- to three-letter upper-case
word.  Node decides which are accepted; each accepted name maps to the same name in the tz database
when it exists there, else to the zone ICU resolves it to, else to the tz database zone whose wall
times agree with Node's at every sampled instant.  The script then compares Python's wall times with
Node's for every accepted name and prints the disagreements.
"""

from __future__ import annotations

import itertools
import json
import random
import string
import subprocess
import sys
from pathlib import Path
from zoneinfo import available_timezones

ROOT = Path(__file__).resolve().parent.parent
ORACLE = ROOT / "scripts" / "jsdate_oracle.js"
OUTPUT = ROOT / "ctxview" / "data" / "intl_time_zones.json"

ICU_EXTRAS = [
    "ACT", "AET", "AGT", "ART", "AST", "BET", "BST", "CAT", "CNT", "CST", "CTT", "EAT", "ECT", "IET",
    "IST", "JST", "MIT", "NET", "NST", "PLT", "PNT", "PRT", "PST", "SST", "VST",
    "SystemV/AST4", "SystemV/AST4ADT", "SystemV/CST6", "SystemV/CST6CDT", "SystemV/EST5", "SystemV/EST5EDT",
    "SystemV/HST10", "SystemV/MST7", "SystemV/MST7MDT", "SystemV/PST8", "SystemV/PST8PDT", "SystemV/YST9",
    "SystemV/YST9YDT", "US/Pacific-New", "Canada/East-Saskatchewan",
]  # fmt: skip

# ICU's SystemV zones: one POSIX rule (today's US rules where there is DST) for all time.
SYSTEM_V = {
    "SystemV/AST4": "posix:AST4",
    "SystemV/AST4ADT": "posix:AST4ADT,M3.2.0,M11.1.0",
    "SystemV/CST6": "posix:CST6",
    "SystemV/CST6CDT": "posix:CST6CDT,M3.2.0,M11.1.0",
    "SystemV/EST5": "posix:EST5",
    "SystemV/EST5EDT": "posix:EST5EDT,M3.2.0,M11.1.0",
    "SystemV/HST10": "posix:HST10",
    "SystemV/MST7": "posix:MST7",
    "SystemV/MST7MDT": "posix:MST7MDT,M3.2.0,M11.1.0",
    "SystemV/PST8": "posix:PST8",
    "SystemV/PST8PDT": "posix:PST8PDT,M3.2.0,M11.1.0",
    "SystemV/YST9": "posix:YST9",
    "SystemV/YST9YDT": "posix:YST9YDT,M3.2.0,M11.1.0",
}

# Zones a name without a tz database entry may behave like.
FALLBACK_CANDIDATES = [
    *(f"Etc/GMT{sign}{hours}" for sign in "+-" for hours in range(13)),
    "EST5EDT", "CST6CDT", "MST7MDT", "PST8PDT", "America/Halifax", "America/Anchorage",
    "America/Puerto_Rico", "Pacific/Honolulu", "America/Juneau", "America/Yakutat", "America/Nome",
]  # fmt: skip


def oracle(node: str, request: dict[str, object]) -> dict[str, list[object]]:
    completed = subprocess.run(
        [node, str(ORACLE)],
        input=json.dumps(request),
        capture_output=True,
        text=True,
        check=True,
        env={"TZ": "UTC", "PATH": "/usr/bin:/bin"},
    )
    return json.loads(completed.stdout)


def sample_instants(seed: int = 7) -> list[int]:
    rng = random.Random(seed)
    day = 86_400_000
    start, end = -5_364_662_400_000, 4_102_444_800_000  # 1800 … 2100
    instants = [rng.randrange(start, end) for _ in range(700)]
    instants += [rng.randrange(-8_640_000_000_000_000, start) for _ in range(20)]
    instants += [rng.randrange(end, 8_640_000_000_000_000) for _ in range(20)]
    instants += [-8_640_000_000_000_000, 8_640_000_000_000_000, 0, 1_000 * day]
    return instants


def main() -> None:
    node = sys.argv[1] if len(sys.argv) > 1 else "node"
    sys.path.insert(0, str(ROOT))
    from ctxview import jsdate

    python_names = sorted(available_timezones() - {"Factory", "localtime", "posixrules"})
    words = ["".join(t) for n in (1, 2, 3) for t in itertools.product(string.ascii_uppercase, repeat=n)]
    candidates = sorted(set(python_names) | set(ICU_EXTRAS) | set(words))
    resolved = oracle(node, {"zones": candidates})["zones"]
    accepted = {name: res for name, res in zip(candidates, resolved, strict=True) if res is not None}
    python_set = set(python_names)

    instants = sample_instants()
    names = sorted(accepted)
    flat = oracle(node, {"format": [[ms, name] for name in names for ms in instants]})["format"]
    truth_by_name = {name: flat[i * len(instants) : (i + 1) * len(instants)] for i, name in enumerate(names)}

    def node_wall_times(name: str) -> list[object]:
        return truth_by_name[name]

    def python_wall_times(key: str) -> list[str]:
        zone = jsdate._load_zone(key)
        assert zone is not None, key
        out = []
        for ms in instants:
            offset = jsdate._zone_offset_ms(zone, ms)
            year, month, day, hour, minute, second, _ = jsdate._breakdown(ms + offset)
            year = year if year > 0 else 1 - year
            out.append(f"{year}-{month:02d}-{day:02d}T{hour:02d}:{minute:02d}:{second:02d}")
        return out

    table: dict[str, str] = {}
    for name, icu_id in sorted(accepted.items()):
        if icu_id in python_set:
            table[name] = icu_id  # ICU treats every link as its canonical zone
        elif name in python_set:
            table[name] = name
        elif name in SYSTEM_V:
            table[name] = SYSTEM_V[name]
        else:
            truth = node_wall_times(name)
            scores = [
                (sum(a == b for a, b in zip(python_wall_times(c), truth, strict=True)), c) for c in FALLBACK_CANDIDATES
            ]
            best_score, best = max(scores)
            print(f"{name}: no tz database entry; closest {best} ({best_score}/{len(truth)})")
            table[name] = best

    disagreements = 0
    for name, key in sorted(table.items()):
        truth = node_wall_times(name)
        mine = python_wall_times(key)
        bad = [(ms, t, m) for ms, t, m in zip(instants, truth, mine, strict=True) if t != m]
        if bad:
            disagreements += 1
            ms, t, m = bad[0]
            print(f"{name} → {key}: {len(bad)} of {len(instants)} differ, e.g. {ms}: node {t}, python {m}")
    print(f"{len(table)} accepted names, {disagreements} with disagreements")

    OUTPUT.parent.mkdir(parents=True, exist_ok=True)
    payload = {
        "comment": "Zone names Node 24 (ICU 78, tz 2026b) accepts in Intl.DateTimeFormat, each mapped to the tz "
        "database key with the same wall times; built by scripts/gen_intl_time_zones.py.",
        "zones": table,
    }
    OUTPUT.write_text(json.dumps(payload, indent=0, sort_keys=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
