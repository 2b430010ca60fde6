"""ctxview.jsdate against Node 24's own answers (tests/unit/data/jsdate_vectors.json).

The vectors come from scripts/gen_jsdate_vectors.py, which asks scripts/jsdate_oracle.js (plain
``Date`` and ``Intl``) on Node 24 with TZ=UTC.  ``null`` stands for NaN / an invalid date.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from ctxview.jsdate import (
    JSRangeError,
    civil_from_days,
    days_from_civil,
    format_for_attribute,
    js_date_parse,
    parse_utc_timestamp,
    resolve_time_zone,
    to_iso_string,
)

VECTORS = json.loads((Path(__file__).parent / "data" / "jsdate_vectors.json").read_text(encoding="utf-8"))

# Where Python's tz data and Node 24's ICU data (tz 2026b) disagree; see the module docstring.
KNOWN_ZONE_DIVERGENCES = {"Africa/Casablanca"}


def _ms(value: float) -> float | None:
    return None if math.isnan(value) else value


def test_vectors_cover_both_outcomes():
    parsed = [row[1] for row in VECTORS["parse"]]
    assert len(parsed) > 1000
    assert sum(ms is None for ms in parsed) > 300 and sum(ms is not None for ms in parsed) > 250


def test_js_date_parse_matches_node():
    mismatches = [(text, ms, js_date_parse(text)) for text, ms in VECTORS["parse"] if _ms(js_date_parse(text)) != ms]
    assert mismatches == []


def test_parse_utc_timestamp_matches_node():
    mismatches = [
        (text, ms, parse_utc_timestamp(text)) for text, ms in VECTORS["utc"] if _ms(parse_utc_timestamp(text)) != ms
    ]
    assert mismatches == []


@pytest.mark.parametrize(("ms", "expected"), VECTORS["iso"])
def test_to_iso_string_matches_node(ms, expected):
    value = math.nan if ms is None else float(ms)
    if isinstance(expected, dict):
        assert expected == {"error": "RangeError: Invalid time value"}
        with pytest.raises(JSRangeError) as caught:
            to_iso_string(value)
        assert str(caught.value) == "Invalid time value"
    else:
        assert to_iso_string(value) == expected


def test_format_for_attribute_matches_node():
    mismatches = []
    for ms, zone, expected in VECTORS["format"]:
        value = math.nan if ms is None else float(ms)
        if isinstance(expected, dict):
            with pytest.raises(JSRangeError, match=r"^Invalid time value$"):
                format_for_attribute(value, zone)
            continue
        got = format_for_attribute(value, zone)
        if got != expected and zone not in KNOWN_ZONE_DIVERGENCES:
            mismatches.append((ms, zone, expected, got))
    assert mismatches == []
    assert len(VECTORS["format"]) > 1000


def test_known_divergence_is_still_only_future_morocco():
    # tz 2026b (Node 24.19) still has Morocco's yearly Ramadan switch after 2026; newer tz data does not.
    for ms, zone, expected in VECTORS["format"]:
        if zone in KNOWN_ZONE_DIVERGENCES and format_for_attribute(float(ms), zone) != expected:
            assert ms > 1_790_000_000_000


# --- the classes of the fidelity issue, spelled out ------------------------------------------


def test_sqlite_and_iso_timestamps_parse_as_utc():
    assert parse_utc_timestamp("2025-04-27 10:00:00") == 1_745_748_000_000.0
    assert parse_utc_timestamp("2025-04-27T10:00:00.000Z") == 1_745_748_000_000.0
    assert parse_utc_timestamp("  2025-04-27T10:00:00.000Z\n") == 1_745_748_000_000.0
    assert parse_utc_timestamp("2025-03-29T22:22:04+05:30") == 1_743_267_124_000.0


def test_unparseable_timestamps_are_nan():
    assert math.isnan(parse_utc_timestamp("not a date"))
    # no colon in the offset: the §1 rule appends Z, and V8 refuses "…+0200Z"
    assert math.isnan(parse_utc_timestamp("2025-03-30T01:30:00+0200"))
    assert js_date_parse("2025-03-30T01:30:00+0200") == 1_743_291_000_000.0
    assert math.isnan(parse_utc_timestamp(None))
    assert math.isnan(parse_utc_timestamp(1_745_748_000_000))
    assert math.isnan(parse_utc_timestamp(""))


def test_extended_years():
    ms = parse_utc_timestamp("+010000-01-01T00:00:00.000Z")
    assert ms == 253_402_300_800_000.0
    assert to_iso_string(ms) == "+010000-01-01T00:00:00.000Z"
    assert format_for_attribute(ms, "UTC") == "10000-01-01T00:00:00"
    assert math.isnan(js_date_parse("+275760-09-13T00:00:00.001Z"))
    assert math.isnan(js_date_parse("-000000-01-01T00:00:00Z"))


def test_years_before_one_print_the_era_year():
    year_zero = js_date_parse("0000-06-01T00:00:00Z")
    assert to_iso_string(year_zero) == "0000-06-01T00:00:00.000Z"
    assert format_for_attribute(year_zero, "UTC") == "1-06-01T00:00:00"
    assert format_for_attribute(js_date_parse("-000100-06-01T00:00:00Z"), "UTC") == "101-06-01T00:00:00"
    assert format_for_attribute(js_date_parse("0999-06-01T00:00:00Z"), "UTC") == "999-06-01T00:00:00"


def test_midnight_is_hour_00():
    assert format_for_attribute(parse_utc_timestamp("2026-01-01 00:00:05"), "UTC") == "2026-01-01T00:00:05"


def test_utc_offset_zones():
    ms = parse_utc_timestamp("2025-04-27T10:00:00.000Z")
    assert format_for_attribute(ms, "+05:30") == "2025-04-27T15:30:00"
    assert format_for_attribute(ms, "+0530") == "2025-04-27T15:30:00"
    assert format_for_attribute(ms, "-05") == "2025-04-27T05:00:00"
    assert format_for_attribute(ms, "\u221205:30") == "2025-04-27T04:30:00"
    assert format_for_attribute(ms, "+23:59") == "2025-04-28T09:59:00"
    for refused in ("+24:00", "+5", "+05:", "+05:30:00", "+05:30 ", "Z"):
        assert format_for_attribute(ms, refused) == "2025-04-27T10:00:00.000Z", refused


def test_refused_zones_fall_back_to_iso():
    ms = parse_utc_timestamp("2025-04-27T10:00:00.000Z")
    for refused in ("", " ", "Factory", "localtime", "Europe/\u212aiev", "Etc/GMT+13", "America/New York"):
        assert format_for_attribute(ms, refused) == "2025-04-27T10:00:00.000Z", refused
    assert format_for_attribute(ms, None) == "2025-04-27T10:00:00"


def test_zone_names_case_insensitive_with_aliases():
    ms = parse_utc_timestamp("2025-04-27T10:00:00.000Z")
    assert format_for_attribute(ms, "america/NEW_york") == "2025-04-27T06:00:00"
    assert format_for_attribute(ms, "US/Eastern") == "2025-04-27T06:00:00"
    assert format_for_attribute(ms, "Asia/Calcutta") == "2025-04-27T15:30:00"
    assert format_for_attribute(ms, "Etc/GMT+5") == "2025-04-27T05:00:00"
    assert format_for_attribute(ms, "IST") == "2025-04-27T15:30:00"  # an ICU-only id
    assert format_for_attribute(ms, "SystemV/EST5") == "2025-04-27T05:00:00"


def test_invalid_date_raises_whatever_the_zone():
    for zone in ("UTC", "", "+05:30", "bad zone", None):
        with pytest.raises(JSRangeError) as caught:
            format_for_attribute(math.nan, zone)
        assert str(caught.value) == "Invalid time value"
        assert caught.value.js_text == "RangeError: Invalid time value"  # what the engine's fallback reports
        assert isinstance(caught.value, ValueError)


def test_history_before_1900_uses_local_mean_time():
    assert format_for_attribute(js_date_parse("1850-01-01T00:00:00Z"), "America/New_York") == "1849-12-31T19:03:58"
    assert format_for_attribute(-8.64e15, "America/New_York") == "271822-04-19T19:03:58"


def test_resolve_time_zone_is_cached_and_typed():
    assert resolve_time_zone("+05:30") == 19_800_000
    assert resolve_time_zone("-00:00") == 0
    assert resolve_time_zone("UTC") == 0
    assert resolve_time_zone("") is None
    berlin = resolve_time_zone("europe/BERLIN")
    assert isinstance(berlin, ZoneInfo) and berlin.key == "Europe/Berlin"
    assert resolve_time_zone("europe/BERLIN") is berlin
    calcutta = resolve_time_zone("Asia/Kolkata")
    assert isinstance(calcutta, ZoneInfo) and calcutta.key == "Asia/Calcutta"  # ICU's canonical id


def test_calendar_helpers_round_trip():
    for days in (-100_000_000, -719_468, -1, 0, 1, 59, 11_016, 2_932_896, 100_000_000):
        year, month, day = civil_from_days(days)
        assert days_from_civil(year, month, day) == days
    assert civil_from_days(0) == (1970, 1, 1)
    assert civil_from_days(-719_528) == (0, 1, 1)
    assert days_from_civil(2024, 2, 30) == days_from_civil(2024, 3, 1)
