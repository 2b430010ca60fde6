"""Date vectors for tests/unit/test_jsdate.py, answered by Node 24 (scripts/jsdate_oracle.js).

    python scripts/gen_jsdate_vectors.py /work/tools/node24            # write the test vectors
    python scripts/gen_jsdate_vectors.py /work/tools/node24 --fuzz 200000 --seed 3
                                                                      # compare ctxview.jsdate with Node

The strings mix hand-picked edge cases with random ones built from the pieces V8's date grammar
reacts to: digit runs of every length, separators, signs, month and zone words, AM/PM, ``T``/``Z``,
parenthesised comments, fractions, whitespace (ASCII and not), Unicode digits and NUL.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
ORACLE = ROOT / "scripts" / "jsdate_oracle.js"
OUTPUT = ROOT / "tests" / "unit" / "data" / "jsdate_vectors.json"

EDGE_STRINGS = [
    "2025-04-27T10:00:00.000Z", "2025-04-27T10:00:00Z", "2025-04-27T10:00:00", "2025-04-27 10:00:00",
    "2025-04-27", "2025-04", "2025", "+002025-04-27T10:00:00.000Z", "-000001-01-01T00:00:00Z",
    "-000000-01-01T00:00:00Z", "+000000-01-01T00:00:00Z", "+010000-01-01T00:00:00.000Z",
    "+275760-09-13T00:00:00.000Z", "+275760-09-13T00:00:00.001Z", "-271821-04-20T00:00:00.000Z",
    "-271821-04-19T23:59:59.999Z", "-271821-04-19T23:59:59.999-01:00", "+275760-09-13T00:00:00+01:00",
    "2025-02-29T00:00:00Z", "2024-02-29T00:00:00Z", "2025-02-30", "2025-04-31", "2025-13-01", "2025-00-10",
    "2025-01-32", "2025-01-00", "2025-04-27T24:00:00Z", "2025-04-27T24:00:01Z", "2025-04-27T24:00:00.000Z",
    "2025-04-27T24:00:00.001Z", "2025-04-27T23:60:00Z", "2025-04-27T23:59:60Z", "2025-04-27T10:00:00.1Z",
    "2025-04-27T10:00:00.12Z", "2025-04-27T10:00:00.123456789Z", "2025-04-27T10:00:00.1234567891234Z",
    "2025-04-27T10:00:00.Z", "2025-04-27T10:00Z", "2025-04-27T10Z", "2025-04-27T10:00:00+05:30",
    "2025-04-27T10:00:00+0530", "2025-04-27T10:00:00+05", "2025-04-27T10:00:00+24:00", "2025-04-27T10:00:00-23:59",
    "2025-04-27T10:00:00+05:30Z", "2025-03-30T01:30:00+0200Z", "2025-03-30T01:30:00+0200", "2025-04-27t10:00:00z",
    "2025-04-27T10:00:00 Z", "2025-04-27 10:00:00Z", "2025-04-27 10:00:00 +05:30", "2025-04-27T10:00:00UTC",
    "not a date", "not a dateZ", "", "Z", "T", " ", "0", "1", "12", "123", "1234", "12345", "123456", "1234567",
    "Apr 27 2025", "Apr 27 2025Z", "27 Apr 2025 10:00:00 GMT", "Sun, 27 Apr 2025 10:00:00 GMT",
    "Sunday, April 27, 2025 10:00 AM", "April 27, 2025 12:00 AM", "April 27, 2025 12:00 PM", "4/27/2025",
    "4/27/2025 10:00 PM EST", "4/27/25", "27/4/2025", "2025/04/27", "2025/04/27 10:00:00 +0530",
    "Jan 1-05:30", "1 2000 Janz", "Mon Jan 01 2001 00:00:00 GMT+0100 (Central European Standard Time)",
    "Thu Jan 01 1970 00:00:00 GMT-0500 (EST)", "(comment) 2025-04-27", "2025-04-27 (comment)", "2025 (a(b)c) 4 27",
    "2025-04-27T10:00:00.000Z\u0000garbage", "\u00a02025-04-27", "2025-04-27\u3000", "\ufeff2025-04-27",
    "２０２５-04-27", "2025-04-27T10:00:00.000\u2212", "12:00", "12:00 1/1/2000", "1/1/2000 12:00:00.5",
    "1/1/2000 12::", "1/1/2000 12:30:45.123456", "1/1/2000 13:00 PM", "1/1/2000 0:00 AM", "1/1/2000 12 pm",
    "1/1/2000 +05:30", "1/1/2000 UTC+05:30", "1/1/2000 UTC+5", "1/1/2000 UTC+0530", "1/1/2000 UTC+053",
    "1/1/2000 UTC+05301", "1/1/2000 GMT+300000:", "1/1/2000 GMT+596524:", "1/1/2000 10:00 +:", "May 2000",
    "2000 May", "99 May 1", "May 50", "1 1 1", "32 1 1", "1 32 1", "100 1 1", "1000000000 1 1", "1 1 1000000",
    "1 1 999999999999", "Jan Feb 1 2000", "januaryfoo 1 2000", "ja 1 2000", "x1 Jan 2000", "x 1 Jan 2000",
    "2000-01-01T00:00:00.000+00:00", "2000-01-01T00:00:00.000-00:00", "2000-01-01T00:00:00.000+23:59",
]  # fmt: skip

FORMAT_ZONES = [
    None, "UTC", "utc", "Etc/UTC", "GMT", "", " ", "not/a-zone", "+05:30", "+0530", "+05", "-05", "-00:00",
    "\u221205:30", "+24:00", "+23:59", "-23:59", "+5", "+05:", "+05:30:00", "+05:3", "America/New_York",
    "america/new_york", "AMERICA/NEW_YORK", "US/Eastern", "Asia/Calcutta", "Asia/Kolkata", "Etc/GMT+5",
    "Etc/GMT-14", "Etc/GMT+13", "Europe/London", "Europe/Berlin", "Europe/Oslo", "Australia/Lord_Howe",
    "Asia/Kathmandu", "Pacific/Chatham", "Pacific/Kiritimati", "America/St_Johns", "Africa/Casablanca",
    "PST", "IST", "EST", "Factory", "localtime", "Z", "Europe/\u212aiev", "SystemV/EST5", "Asia/Tokyo",
    "America/Sao_Paulo", "Antarctica/Troll",
]  # fmt: skip

FORMAT_INSTANTS = [
    0, -1, 1, 1_745_748_000_000, 1_767_225_600_000, 1_767_225_605_000, 1_743_296_400_000, 1_743_298_200_000,
    253_402_300_800_000, -62_135_596_800_000, -62_167_219_200_000, -62_198_755_200_000, -65_320_000_000_000,
    -2_208_988_800_000, -5_000_000_000_000, 4_102_444_800_000, 8_640_000_000_000_000, -8_640_000_000_000_000,
    8_639_999_999_999_999, 32_503_680_000_000, 1_000_000_000_000_000, -1_000_000_000_000_000, 1_711_846_799_999,
]  # fmt: skip

_WORDS = [
    "Jan", "February", "mar", "APR", "May", "june", "Jul", "aug", "Sept", "oct", "Nov", "dec", "am", "pm", "AM",
    "PM", "a.m.", "UT", "UTC", "utc", "GMT", "Z", "z", "T", "t", "EST", "EDT", "CST", "CDT", "MST", "MDT", "PST",
    "PDT", "Mon", "Tuesday", "x", "foo", "ja", "janx", "utcx", "pmx", "T10", "\u00e9t\u00e9",
]  # fmt: skip
_SEPARATORS = [
    " ", "  ", "-", "/", ":", "::", ".", ",", ", ", "+", "-", "\t", "\n", "T", "t", "Z", "(", ")", "(x)",
    "(a (b) c)", "\u00a0", "\u3000", "\ufeff", "\u2212", "_", "'", "\u0000", "\u001c",
]  # fmt: skip
_UNICODE_DIGITS = ["\u0661", "\uff15", "\u0969", "\U0001d7d8"]


def _digits(rng: random.Random) -> str:
    length = rng.choice([1, 1, 2, 2, 2, 3, 4, 4, 4, 5, 6, 6, 7, 9, 10, 13])
    return "".join(rng.choice("0123456789") for _ in range(length))


def _field(rng: random.Random, low: int, high: int, width: int) -> str:
    return str(rng.randint(low, high)).zfill(width)


def _iso_like(rng: random.Random) -> str:
    year = rng.choice([
        _field(rng, 0, 9999, 4), _field(rng, 1960, 2040, 4), "+" + _field(rng, 0, 300000, 6),
        "-" + _field(rng, 0, 300000, 6), _field(rng, 0, 99, 2), _field(rng, 0, 99999, 5),
    ])  # fmt: skip
    out = year
    if rng.random() < 0.9:
        out += "-" + _field(rng, 0, 13, rng.choice([2, 2, 2, 1, 3]))
        if rng.random() < 0.9:
            out += "-" + _field(rng, 0, 32, rng.choice([2, 2, 2, 1]))
    if rng.random() < 0.8:
        out += rng.choice(["T", "T", "t", " ", ""])
        out += _field(rng, 0, 25, rng.choice([2, 2, 2, 1])) + ":" + _field(rng, 0, 60, 2)
        if rng.random() < 0.8:
            out += ":" + _field(rng, 0, 60, 2)
            if rng.random() < 0.5:
                out += rng.choice([".", ","]) + _digits(rng)
        roll = rng.random()
        if roll < 0.4:
            out += rng.choice(["Z", "z"])
        elif roll < 0.7:
            sign = rng.choice(["+", "-", "\u2212"])
            hours, minutes = _field(rng, 0, 25, 2), _field(rng, 0, 61, 2)
            out += sign + rng.choice([hours + ":" + minutes, hours + minutes, hours, hours + ":" + minutes + "Z"])
    if rng.random() < 0.15:
        out = rng.choice(["", " ", "\t", "\u00a0", "("]) + out + rng.choice(["", " ", "Z", " Z", "x", ")", " (c)"])
    return out


def _legacy_like(rng: random.Random) -> str:
    pieces: list[str] = []
    for _ in range(rng.randint(1, 9)):
        roll = rng.random()
        if roll < 0.45:
            pieces.append(_digits(rng))
        elif roll < 0.7:
            pieces.append(rng.choice(_WORDS))
        elif roll < 0.97:
            pieces.append(rng.choice(_SEPARATORS))
        else:
            pieces.append(rng.choice(_UNICODE_DIGITS))
        if rng.random() < 0.6:
            pieces.append(rng.choice([" ", " ", "/", "-", ":", ", "]))
    return "".join(pieces).strip(" ") if rng.random() < 0.7 else "".join(pieces)


def _mutated(rng: random.Random) -> str:
    text = list(rng.choice(EDGE_STRINGS) or "2025-04-27T10:00:00.000Z")
    for _ in range(rng.randint(1, 3)):
        position = rng.randrange(len(text) + 1)
        action = rng.random()
        alphabet = "0123456789 :-+.TZ()/,apmAPMJanGUTC\u00a0"
        if action < 0.4 and text:
            text[min(position, len(text) - 1)] = rng.choice(alphabet)
        elif action < 0.7:
            text.insert(position, rng.choice(alphabet))
        elif text:
            del text[min(position, len(text) - 1)]
    return "".join(text)


def random_strings(rng: random.Random, count: int) -> list[str]:
    makers = [_iso_like, _iso_like, _legacy_like, _legacy_like, _mutated]
    return [rng.choice(makers)(rng) for _ in range(count)]


def oracle(node: str, request: dict[str, Any]) -> dict[str, list[Any]]:
    completed = subprocess.run(
        [node, str(ORACLE)],
        input=json.dumps(request),
        capture_output=True,
        text=True,
        check=True,
        env={"TZ": "UTC", "PATH": "/usr/bin:/bin"},
    )
    return json.loads(completed.stdout)


def _python_answers(strings: list[str]) -> tuple[list[float | None], list[float | None]]:
    from ctxview.jsdate import js_date_parse, parse_utc_timestamp

    def plain(value: float) -> float | None:
        return None if math.isnan(value) else value

    return [plain(js_date_parse(s)) for s in strings], [plain(parse_utc_timestamp(s)) for s in strings]


def fuzz(node: str, count: int, seed: int) -> int:
    rng = random.Random(seed)
    strings = random_strings(rng, count)
    answers = oracle(node, {"parse": strings, "utc": strings})
    parsed, utc = _python_answers(strings)
    bad = 0
    for text, want, got, want_utc, got_utc in zip(strings, answers["parse"], parsed, answers["utc"], utc, strict=True):
        if want != got or want_utc != got_utc:
            bad += 1
            if bad <= 40:
                print(f"{text!r}: node {want} / {want_utc}, python {got} / {got_utc}")
    valid = sum(a is not None for a in answers["parse"])
    print(f"{count} strings ({valid} valid in JS): {bad} disagreements")
    return bad


def write_vectors(node: str) -> None:
    rng = random.Random(20250427)
    strings = list(dict.fromkeys(EDGE_STRINGS + random_strings(rng, 1000)))
    iso_inputs: list[float | None] = [*FORMAT_INSTANTS, 8_640_000_000_000_001, -8_640_000_000_000_001, None]
    format_inputs = [[ms, zone] for zone in FORMAT_ZONES for ms in FORMAT_INSTANTS]
    format_inputs += [[rng.randrange(-8_640_000_000_000_000, 8_640_000_000_000_001), zone] for zone in FORMAT_ZONES]
    format_inputs += [[None, "UTC"], [None, ""], [None, "+05:30"]]
    answers = oracle(node, {"parse": strings, "utc": strings, "iso": iso_inputs, "format": format_inputs})
    vectors = {
        "comment": "Answers of Node 24 (TZ=UTC) from scripts/gen_jsdate_vectors.py; null = NaN / invalid date.",
        "parse": [[s, ms] for s, ms in zip(strings, answers["parse"], strict=True)],
        "utc": [[s, ms] for s, ms in zip(strings, answers["utc"], strict=True)],
        "iso": [[ms, out] for ms, out in zip(iso_inputs, answers["iso"], strict=True)],
        "format": [[ms, zone, out] for (ms, zone), out in zip(format_inputs, answers["format"], strict=True)],
    }
    OUTPUT.parent.mkdir(parents=True, exist_ok=True)
    with OUTPUT.open("w", encoding="utf-8") as handle:
        handle.write("{\n")
        keys = list(vectors)
        for index, key in enumerate(keys):
            value = vectors[key]
            if isinstance(value, list):
                rows = ",\n".join("  " + json.dumps(row, ensure_ascii=True) for row in value)
                handle.write(f'"{key}": [\n{rows}\n]')
            else:
                handle.write(f'"{key}": {json.dumps(value)}')
            handle.write(",\n" if index < len(keys) - 1 else "\n")
        handle.write("}\n")
    print(f"wrote {OUTPUT}: {len(strings)} strings, {len(iso_inputs)} iso, {len(format_inputs)} format vectors")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("node", help="path of the Node 24 binary")
    parser.add_argument("--fuzz", type=int, default=0, help="compare this many random strings instead of writing")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    if args.fuzz:
        sys.exit(1 if fuzz(args.node, args.fuzz, args.seed) else 0)
    write_vectors(args.node)


if __name__ == "__main__":
    main()
