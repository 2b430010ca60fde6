"""JavaScript ``Date`` semantics for the dates the reference engine renders (spec §1, §3, §10.1).

The reference turns stored timestamps into ``Date`` objects with V8's date
parser (the ES date-time format first, then V8's legacy fallback grammar for
anything else) and prints them with ``Intl.DateTimeFormat("en-CA", …)`` in the
configured zone, falling back to ``toISOString()`` when the zone is refused.
An unparseable timestamp gives an invalid date, and printing that throws a
``RangeError`` that ends the whole assembly.  This module reproduces all of
that as Node 24 does it, with epoch milliseconds as floats and ``math.nan``
for an invalid date.

Known divergences (measured against Node 24.19 with scripts/gen_jsdate_vectors.py and
scripts/gen_intl_time_zones.py):

* a string without any zone that still parses (only possible when the input
  already ends in ``z``/``Z`` or ``±HH:MM``, e.g. ``"Jan 1-05:30"``) is local
  time in JavaScript; here the process zone is taken to be UTC, as on the
  reference engine's hosts and in the parity cases;
* wall times come from Python's tz database (the ``tzdata`` package first,
  which like ICU is built without ``backzone``) instead of ICU's copy (tz
  2026b in Node 24.19): zones whose rules changed in later tz releases
  (Morocco after 2026, Alberta/Manitoba/NWT after 2026, Cuba) differ for
  those future dates only, and the deprecated ``SystemV/*ST*DT`` zones use
  today's US rule for all years where ICU has its own older history.
"""

from __future__ import annotations

import io
import json
import math
import re
import struct
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from typing import TYPE_CHECKING, Final

from ctxview.jsjson import JS_WHITESPACE, js_trim

if TYPE_CHECKING:
    from zoneinfo import ZoneInfo

__all__ = [
    "JSRangeError",
    "format_for_attribute",
    "js_date_parse",
    "parse_utc_timestamp",
    "resolve_time_zone",
    "to_iso_string",
]

INVALID_TIME_VALUE: Final = "Invalid time value"
MAX_TIME_MS: Final = 8_640_000_000_000_000  # ±1e8 days around the epoch (ECMA-262 TimeClip)
_MS_PER_DAY: Final = 86_400_000


try:  # the engine-wide JS error types (ctxview.jserrors), which the fallback wiring catches
    from ctxview.jserrors import JSRangeError  # type: ignore[import-not-found, unused-ignore]
except ImportError:  # a tree without ctxview.jserrors: the same interface, defined here

    class JSRangeError(ValueError):  # type: ignore[no-redef]
        """JavaScript's ``RangeError``: ``str()`` is its message, ``js_text`` what ``String(error)`` prints."""

        js_name = "RangeError"

        @property
        def js_text(self) -> str:
            return f"{self.js_name}: {self}"


# --- proleptic Gregorian calendar arithmetic ---------------------------------------------


def days_from_civil(year: int, month: int, day: int) -> int:
    """Days since 1970-01-01 of a proleptic Gregorian date (month 1–12, day may overflow)."""
    y = year - (month <= 2)
    era = y // 400
    year_of_era = y - era * 400
    day_of_year = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    day_of_era = year_of_era * 365 + year_of_era // 4 - year_of_era // 100 + day_of_year
    return era * 146_097 + day_of_era - 719_468


def civil_from_days(days: int) -> tuple[int, int, int]:
    """(year, month 1–12, day) of a day count since 1970-01-01."""
    z = days + 719_468
    era = z // 146_097
    day_of_era = z - era * 146_097
    year_of_era = (day_of_era - day_of_era // 1460 + day_of_era // 36_524 - day_of_era // 146_096) // 365
    day_of_year = day_of_era - (365 * year_of_era + year_of_era // 4 - year_of_era // 100)
    mp = (5 * day_of_year + 2) // 153
    day = day_of_year - (153 * mp + 2) // 5 + 1
    month = mp + 3 if mp < 10 else mp - 9
    return year_of_era + era * 400 + (month <= 2), month, day


def _time_clip(ms: int) -> float:
    return float(ms) if -MAX_TIME_MS <= ms <= MAX_TIME_MS else math.nan


# --- V8's date parser ------------------------------------------------------------------------
#
# Tokens are tuples (kind, value, length).  A word's value is its keyword
# (type, value) pair; unknown words are keywords of type _KW_INVALID, as in V8.

_END, _NUMBER, _SYMBOL, _SPACE, _WORD, _UNKNOWN, _INVALID = range(7)
_KW_INVALID, _KW_MONTH, _KW_ZONE, _KW_TIME_SEPARATOR, _KW_AM_PM = range(5)

_MAX_SIGNIFICANT_DIGITS: Final = 9
_SMI_MAX: Final = 2**31 - 1
_MAX_TIME_BEFORE_UTC_MS: Final = MAX_TIME_MS + 864_000_000

# Keyword table: the zero-padded lower-case first three characters of a word.
# Only month names may be longer than their three-letter key.
_KEYWORDS: Final[dict[str, tuple[int, int]]] = {
    **{
        name: (_KW_MONTH, number)
        for number, name in enumerate(
            ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"), start=1
        )
    },
    "am": (_KW_AM_PM, 0),
    "pm": (_KW_AM_PM, 12),
    "ut": (_KW_ZONE, 0),
    "utc": (_KW_ZONE, 0),
    "z": (_KW_ZONE, 0),
    "gmt": (_KW_ZONE, 0),
    "cdt": (_KW_ZONE, -5),
    "cst": (_KW_ZONE, -6),
    "edt": (_KW_ZONE, -4),
    "est": (_KW_ZONE, -5),
    "mdt": (_KW_ZONE, -6),
    "mst": (_KW_ZONE, -7),
    "pdt": (_KW_ZONE, -7),
    "pst": (_KW_ZONE, -8),
    "t": (_KW_TIME_SEPARATOR, 0),
}

_Token = tuple[int, object, int]
_END_TOKEN: Final[_Token] = (_END, None, 0)


def _keyword(word: str) -> tuple[int, int]:
    # V8 lower-cases by OR-ing 0x20 into each code unit, which only maps ASCII letters onto letters.
    prefix = "".join(chr(ord(c) | 0x20) for c in word[:3])
    entry = _KEYWORDS.get(prefix)
    if entry is not None and (len(word) <= 3 or entry[0] == _KW_MONTH):
        return entry
    return (_KW_INVALID, 0)


def _tokenize(text: str) -> list[_Token]:
    """Every token of ``text``; V8 stops reading at the first NUL character."""
    nul = text.find("\0")
    if nul >= 0:
        text = text[:nul]
    tokens: list[_Token] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if "0" <= c <= "9":
            j = i + 1
            while j < n and "0" <= text[j] <= "9":
                j += 1
            # The value keeps the first nine digits after any leading zeros; the length counts all.
            significant = text[i:j].lstrip("0")[:_MAX_SIGNIFICANT_DIGITS]
            tokens.append((_NUMBER, int(significant) if significant else 0, j - i))
            i = j
        elif c in ":-+.)":
            tokens.append((_SYMBOL, c, 1))
            i += 1
        elif c >= "A" and c not in JS_WHITESPACE:
            j = i + 1
            while j < n and text[j] >= "A" and text[j] not in JS_WHITESPACE:
                j += 1
            tokens.append((_WORD, _keyword(text[i:j]), j - i))
            i = j
        elif c in JS_WHITESPACE:
            tokens.append((_SPACE, None, 1))
            i += 1
        elif c == "(":
            depth = 0
            while i < n:
                if text[i] == ")":
                    depth -= 1
                elif text[i] == "(":
                    depth += 1
                i += 1
                if depth <= 0:
                    break
            tokens.append((_UNKNOWN, None, 1))
        else:
            tokens.append((_UNKNOWN, None, 1))
            i += 1
    return tokens


class _Scanner:
    """A token cursor with one token of look-ahead."""

    __slots__ = ("pos", "tokens")

    def __init__(self, tokens: list[_Token]) -> None:
        self.tokens = tokens
        self.pos = 0

    def peek(self) -> _Token:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else _END_TOKEN

    def next(self) -> _Token:
        token = self.peek()
        self.pos += 1
        return token

    def skip_symbol(self, symbol: str) -> bool:
        token = self.peek()
        if token[0] == _SYMBOL and token[1] == symbol:
            self.pos += 1
            return True
        return False


def _is_number(token: _Token, length: int | None = None) -> bool:
    return token[0] == _NUMBER and (length is None or token[2] == length)


def _is_sign(token: _Token) -> bool:
    return token[0] == _SYMBOL and token[1] in ("+", "-")


def _is_keyword_z(token: _Token) -> bool:
    return token[0] == _WORD and token[1] == (_KW_ZONE, 0) and token[2] == 1


def _milliseconds(token: _Token) -> int:
    """The first three significant digits of a fraction, from its value and digit count."""
    number = token[1]
    assert isinstance(number, int)
    length = min(token[2], _MAX_SIGNIFICANT_DIGITS)
    if length < 3:
        return number * (100 if length == 1 else 10)
    return number // 10 ** (length - 3)


def _token_number(token: _Token) -> int:
    value = token[1]
    assert isinstance(value, int)
    return value


class _Day:
    __slots__ = ("comps", "is_iso", "named_month")

    def __init__(self) -> None:
        self.comps: list[int] = []
        self.named_month: int | None = None
        self.is_iso = False

    def add(self, value: int) -> bool:
        if len(self.comps) < 3:
            self.comps.append(value)
            return True
        return False

    def write(self) -> tuple[int, int, int] | None:
        if not self.comps:
            return None
        comps = self.comps + [1] * (3 - len(self.comps))
        year = 0  # a missing year is 0, which becomes 2000
        if self.named_month is None:
            if self.is_iso or not 1 <= comps[0] <= 31:
                year, month, day = comps
            else:
                month, day, year = comps
        else:
            month = self.named_month
            if not 1 <= comps[0] <= 31:
                year, day = comps[0], comps[1]
            else:
                day, year = comps[0], comps[1]
        if not self.is_iso:
            if 0 <= year <= 49:
                year += 2000
            elif 50 <= year <= 99:
                year += 1900
        if not (1 <= month <= 12 and 1 <= day <= 31):
            return None
        return year, month, day


class _Time:
    __slots__ = ("comps", "hour_offset")

    def __init__(self) -> None:
        self.comps: list[int] = []
        self.hour_offset: int | None = None

    def is_empty(self) -> bool:
        return not self.comps

    def is_expecting(self, value: int) -> bool:
        index = len(self.comps)
        return (
            (index == 1 and 0 <= value <= 59) or (index == 2 and 0 <= value <= 59) or (index == 3 and 0 <= value <= 999)
        )

    def add(self, value: int) -> bool:
        if len(self.comps) < 4:
            self.comps.append(value)
            return True
        return False

    def add_final(self, value: int) -> bool:
        if not self.add(value):
            return False
        self.comps.extend([0] * (4 - len(self.comps)))
        return True

    def write(self) -> tuple[int, int, int, int] | None:
        hour, minute, second, milli = self.comps + [0] * (4 - len(self.comps))
        if self.hour_offset is not None:
            if not 0 <= hour <= 12:
                return None
            hour = hour % 12 + self.hour_offset
        if not (0 <= hour <= 23 and 0 <= minute <= 59 and 0 <= second <= 59 and 0 <= milli <= 999) and (
            hour != 24 or minute or second or milli
        ):
            return None
        return hour, minute, second, milli


class _Zone:
    __slots__ = ("hour", "minute", "sign")

    def __init__(self) -> None:
        self.sign: int | None = None
        self.hour: int | None = None
        self.minute: int | None = None

    def set(self, offset_hours: int) -> None:
        self.sign = -1 if offset_hours < 0 else 1
        self.hour = abs(offset_hours)
        self.minute = 0

    def is_expecting(self, value: int) -> bool:
        return self.hour is not None and self.minute is None and 0 <= value <= 59

    def is_utc(self) -> bool:
        return self.hour == 0 and self.minute == 0

    def write(self) -> tuple[bool, int | None]:
        """(ok, offset in seconds or None when no zone was given)."""
        if self.sign is None:
            return True, None
        total = ((self.hour or 0) * 3600 + (self.minute or 0) * 60) % 2**32  # unsigned 32-bit, as V8
        if total > _SMI_MAX:
            return False, None
        return True, -total if self.sign < 0 else total


def _parse_iso_prefix(scanner: _Scanner, day: _Day, time: _Time, zone: _Zone) -> _Token:
    """The ES date-time format; returns the token the legacy grammar continues with."""
    token = scanner.peek()
    if _is_sign(token):
        sign_token = scanner.next()
        if not _is_number(scanner.peek(), 6):
            return sign_token
        year = _token_number(scanner.next())
        if sign_token[1] == "-" and year == 0:
            return sign_token
        day.add(-year if sign_token[1] == "-" else year)
    elif _is_number(token, 4):
        day.add(_token_number(scanner.next()))
    else:
        return scanner.next()
    if scanner.skip_symbol("-"):
        token = scanner.peek()
        if not (_is_number(token, 2) and 1 <= _token_number(token) <= 12):
            return scanner.next()
        day.add(_token_number(scanner.next()))
        if scanner.skip_symbol("-"):
            token = scanner.peek()
            if not (_is_number(token, 2) and 1 <= _token_number(token) <= 31):
                return scanner.next()
            day.add(_token_number(scanner.next()))
    token = scanner.peek()
    if not (token[0] == _WORD and token[1][0] == _KW_TIME_SEPARATOR):  # type: ignore[index]
        if token[0] != _END:
            return scanner.next()
    else:
        scanner.next()
        token = scanner.peek()
        if not (_is_number(token, 2) and 0 <= _token_number(token) <= 24):
            return (_INVALID, None, 0)
        hour_is_24 = _token_number(token) == 24
        time.add(_token_number(scanner.next()))
        if not scanner.skip_symbol(":"):
            return (_INVALID, None, 0)
        token = scanner.peek()
        if not (_is_number(token, 2) and _token_number(token) <= 59) or (hour_is_24 and _token_number(token) > 0):
            return (_INVALID, None, 0)
        time.add(_token_number(scanner.next()))
        if scanner.skip_symbol(":"):
            token = scanner.peek()
            if not (_is_number(token, 2) and _token_number(token) <= 59) or (hour_is_24 and _token_number(token) > 0):
                return (_INVALID, None, 0)
            time.add(_token_number(scanner.next()))
            if scanner.skip_symbol("."):
                token = scanner.peek()
                if not _is_number(token) or (hour_is_24 and _token_number(token) > 0):
                    return (_INVALID, None, 0)
                time.add(_milliseconds(scanner.next()))
        token = scanner.peek()
        if _is_keyword_z(token):
            scanner.next()
            zone.set(0)
        elif _is_sign(token):
            zone.sign = 1 if scanner.next()[1] == "+" else -1
            token = scanner.peek()
            if _is_number(token, 4):
                hour, minute = divmod(_token_number(scanner.next()), 100)
                if not (hour <= 23 and minute <= 59):
                    return (_INVALID, None, 0)
                zone.hour, zone.minute = hour, minute
            else:
                if not (_is_number(token, 2) and _token_number(token) <= 23):
                    return (_INVALID, None, 0)
                zone.hour = _token_number(scanner.next())
                if not scanner.skip_symbol(":"):
                    return (_INVALID, None, 0)
                token = scanner.peek()
                if not (_is_number(token, 2) and _token_number(token) <= 59):
                    return (_INVALID, None, 0)
                zone.minute = _token_number(scanner.next())
        if scanner.peek()[0] != _END:
            return (_INVALID, None, 0)
    # Date-only forms without an offset are UTC; date-time forms are local time.
    if zone.hour is None and time.is_empty():
        zone.set(0)
    day.is_iso = True
    return _END_TOKEN


def _parse_fields(text: str) -> tuple[tuple[int, int, int], tuple[int, int, int, int], int | None] | None:
    """V8's ``DateParser::Parse``: (year, month, day), (h, m, s, ms), offset seconds; None when invalid."""
    scanner = _Scanner(_tokenize(text))
    day, time, zone = _Day(), _Time(), _Zone()
    token = _parse_iso_prefix(scanner, day, time, zone)
    if token[0] == _INVALID:
        return None
    has_read_number = bool(day.comps)
    while token[0] != _END:
        kind = token[0]
        if kind == _NUMBER:
            has_read_number = True
            n = _token_number(token)
            if scanner.skip_symbol(":"):
                if scanner.skip_symbol(":"):
                    if not time.is_empty():
                        return None
                    time.add(n)
                    time.add(0)
                else:
                    if not time.add(n):
                        return None
                    scanner.skip_symbol(".")
            elif scanner.skip_symbol(".") and time.is_expecting(n):
                time.add(n)
                if not _is_number(scanner.peek()):
                    return None
                time.add_final(_milliseconds(scanner.next()))
            elif zone.is_expecting(n):
                zone.minute = n
            elif time.is_expecting(n):
                time.add_final(n)
                following = scanner.peek()
                if not (following[0] in (_END, _SPACE) or _is_keyword_z(following) or _is_sign(following)):
                    return None
            else:
                if not day.add(n):
                    return None
                scanner.skip_symbol("-")
        elif kind == _WORD:
            keyword_type, value = token[1]  # type: ignore[misc]
            if keyword_type == _KW_AM_PM and not time.is_empty():
                time.hour_offset = value
            elif keyword_type == _KW_MONTH:
                day.named_month = value
                scanner.skip_symbol("-")
            elif keyword_type == _KW_ZONE and has_read_number:
                zone.set(value)
            else:
                # Unknown words may only come before the first number, and not right before it.
                if has_read_number or _is_number(scanner.peek()):
                    return None
        elif _is_sign(token) and (zone.is_utc() or not time.is_empty()):
            zone.sign = 1 if token[1] == "+" else -1
            n, length = 0, 0
            if _is_number(scanner.peek()):
                number_token = scanner.next()
                n, length = _token_number(number_token), number_token[2]
            has_read_number = True
            following = scanner.peek()
            if following[0] == _SYMBOL and following[1] == ":":
                zone.hour, zone.minute = n, None
            elif length in (1, 2):
                zone.hour, zone.minute = n, 0
            elif length in (3, 4):
                zone.hour, zone.minute = divmod(n, 100)
            else:
                return None
        elif (_is_sign(token) or (kind == _SYMBOL and token[1] == ")")) and has_read_number:
            return None
        token = scanner.next()
    date = day.write()
    if date is None:
        return None
    clock = time.write()
    if clock is None:
        return None
    ok, offset = zone.write()
    if not ok:
        return None
    return date, clock, offset


def _make_time_value(year: int, month: int, day: int, clock: tuple[int, int, int, int], offset: int | None) -> float:
    if not -1_000_000 <= year <= 1_000_000:
        return math.nan
    hour, minute, second, milli = clock
    ms = (days_from_civil(year, month, 1) + day - 1) * _MS_PER_DAY + hour * 3_600_000 + minute * 60_000
    ms += second * 1000 + milli
    if offset is None:
        # Local time; the process zone is UTC (see the module docstring).
        if not -_MAX_TIME_BEFORE_UTC_MS <= ms <= _MAX_TIME_BEFORE_UTC_MS:
            return math.nan
    else:
        ms -= offset * 1000
    return _time_clip(ms)


# The forms the store writes: ISO with Z (summaries) and SQLite's datetime('now') (§1), with the
# fields ES's date-time format accepts; anything else takes the full parser.
_FAST_ISO = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt]([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]{1,9}))?[Zz]")
_FAST_STORED = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})[T ]([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]{1,9}))?Z?")


@lru_cache(maxsize=4096)
def _month_start_ms(year: str, month: str) -> int:
    return days_from_civil(int(year), int(month), 1) * _MS_PER_DAY


def _fast_fields(groups: tuple[str | None, ...]) -> float | None:
    """Epoch ms of matched fast-path fields, or None when a field is out of range for V8."""
    year, month, day, hour, minute, second, fraction = groups
    assert year is not None and month is not None and day is not None
    assert hour is not None and minute is not None and second is not None
    d, h, mi, s = int(day), int(hour), int(minute), int(second)
    if not ("01" <= month <= "12" and 1 <= d <= 31 and h <= 23 and mi <= 59 and s <= 59):
        return None
    milli = int(fraction[:3].ljust(3, "0")) if fraction else 0
    return float(_month_start_ms(year, month) + (d - 1) * _MS_PER_DAY + h * 3_600_000 + mi * 60_000 + s * 1000 + milli)


def js_date_parse(text: str) -> float:
    """``new Date(text).getTime()`` on Node 24: epoch milliseconds, ``math.nan`` when invalid."""
    match = _FAST_ISO.fullmatch(text)
    if match is not None:
        ms = _fast_fields(match.groups())
        if ms is not None:
            return ms
    fields = _parse_fields(text)
    if fields is None:
        return math.nan
    (year, month, day), clock, offset = fields
    return _make_time_value(year, month, day, clock, offset)


_HAS_ZONE_SUFFIX = re.compile(r"(?:[zZ]|[+-][0-9]{2}:[0-9]{2})\Z")


def parse_utc_timestamp(value: object) -> float:
    """§1: a stored timestamp as JS parses it; strings without a zone suffix are UTC."""
    if not isinstance(value, str):
        return math.nan
    match = _FAST_STORED.fullmatch(value)
    if match is not None and (value[10] == "T" or value[-1] != "Z"):  # "… HH:MM:SSZ" is parsed as written
        ms = _fast_fields(match.groups())
        if ms is not None:
            return ms
    text = js_trim(value)
    if _HAS_ZONE_SUFFIX.search(text) is None:
        text = (text if "T" in text else text.replace(" ", "T", 1)) + "Z"
    return js_date_parse(text)


# --- printing --------------------------------------------------------------------------------


def _breakdown(ms: int) -> tuple[int, int, int, int, int, int, int]:
    days, in_day = divmod(ms, _MS_PER_DAY)
    year, month, day = civil_from_days(days)
    seconds, milli = divmod(in_day, 1000)
    minutes, second = divmod(seconds, 60)
    hour, minute = divmod(minutes, 60)
    return year, month, day, hour, minute, second, milli


def to_iso_string(ms: float) -> str:
    """``Date.prototype.toISOString``; raises JSRangeError for an invalid date."""
    if ms != ms or not -MAX_TIME_MS <= ms <= MAX_TIME_MS:
        raise JSRangeError(INVALID_TIME_VALUE)
    year, month, day, hour, minute, second, milli = _breakdown(int(ms))
    if 0 <= year <= 9999:
        head = f"{year:04d}"
    elif year < 0:
        head = f"-{-year:06d}"
    else:
        head = f"+{year:06d}"
    return f"{head}-{month:02d}-{day:02d}T{hour:02d}:{minute:02d}:{second:02d}.{milli:03d}Z"


# --- time zones as Intl.DateTimeFormat accepts them ------------------------------------------

# UTC-offset identifiers: sign (ASCII or U+2212), hours 00–23, optional [:]minutes 00–59.
_OFFSET_ZONE = re.compile("([+\\-\u2212])([01][0-9]|2[0-3])(?::?([0-5][0-9]))?")
_DATETIME_MIN_MS: Final = -62_135_596_800_000 + 2 * _MS_PER_DAY  # 0001-01-03, room for any offset
_DATETIME_MAX_MS: Final = 253_402_300_799_999 - 2 * _MS_PER_DAY  # 9999-12-29
_CYCLE_MS: Final = 146_097 * _MS_PER_DAY  # the Gregorian calendar repeats every 400 years
_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)
_EPOCH_NAIVE: Final = datetime(1970, 1, 1)


@lru_cache(maxsize=1)
def _zone_keys() -> dict[str, str]:
    """Lower-cased identifier → tz database key, for every name Node 24's Intl accepts."""
    from importlib import resources  # (here: a UTC run never reads the table, and starts faster without it)

    data = resources.files("ctxview").joinpath("data", "intl_time_zones.json").read_text(encoding="utf-8")
    table = json.loads(data)
    return {name.lower(): key for name, key in table["zones"].items()}


def _load_zone(key: str) -> ZoneInfo | None:
    """A tz database zone, or a zone made from a POSIX TZ rule (``posix:…`` keys).

    The ``tzdata`` package comes first: like ICU's copy it is built without
    the ``backzone`` file that some systems add (which changes pre-1970
    history of merged zones such as Europe/Oslo).  ICU defines ``SystemV/*``
    by a rule alone; a TZif file without transitions and that rule as its
    footer does the same (for the dates that rule covers)."""
    from importlib import resources
    from zoneinfo import ZoneInfo  # (here: only a named zone other than UTC needs it)

    if key.startswith("posix:"):
        return ZoneInfo.from_file(io.BytesIO(_rule_only_tzif(key[len("posix:") :])), key=key)
    try:
        path = resources.files("tzdata").joinpath("zoneinfo", *key.split("/"))
        with path.open("rb") as handle:
            return ZoneInfo.from_file(handle, key=key)
    except (ImportError, OSError, ValueError):
        pass
    try:
        return ZoneInfo(key)
    except (OSError, ValueError):
        return None


def _rule_only_tzif(rule: str) -> bytes:
    """A version-2 TZif file without transitions whose footer is ``rule``."""
    name = re.match(r"[A-Za-z]+", rule)
    standard = re.match(r"[A-Za-z]+(-?[0-9]+)", rule)
    assert name is not None and standard is not None, rule
    offset = -int(standard.group(1)) * 3600
    designation = name.group(0).encode("ascii") + b"\0"
    counts = struct.pack(">6l", 0, 0, 0, 0, 1, len(designation))
    data = struct.pack(">lBB", offset, 0, 0) + designation
    header = b"TZif2" + bytes(15) + counts
    return header + data + header + data + b"\n" + rule.encode("ascii") + b"\n"


@lru_cache(maxsize=256)
def resolve_time_zone(name: str) -> int | ZoneInfo | None:
    """What ``Intl.DateTimeFormat`` makes of ``timeZone: name``: a fixed offset in
    milliseconds, a tz database zone, or None when it throws (``""`` included)."""
    match = _OFFSET_ZONE.fullmatch(name)
    if match is not None:
        sign, hours, minutes = match.groups()
        offset = (int(hours) * 60 + int(minutes or 0)) * 60_000
        return -offset if sign != "+" else offset
    if name == "UTC":  # (the default zone: what the table gives it, without reading the table)
        return 0
    if not name.isascii():
        return None
    key = _zone_keys().get(name.lower())
    if key is None:
        return None
    if key in ("UTC", "Etc/UTC"):
        return 0
    return _load_zone(key)


def _zone_offset_ms(zone: ZoneInfo, ms: int) -> int:
    """The zone's UTC offset at an instant.  Outside Python's datetime range the instant is
    moved by whole 400-year cycles, which keeps both the rules (the calendar repeats) and
    the offset before a zone's first transition."""
    if ms < _DATETIME_MIN_MS:
        ms += -(-(_DATETIME_MIN_MS - ms) // _CYCLE_MS) * _CYCLE_MS
    elif ms > _DATETIME_MAX_MS:
        ms -= -(-(ms - _DATETIME_MAX_MS) // _CYCLE_MS) * _CYCLE_MS
    local = (_EPOCH + timedelta(milliseconds=ms)).astimezone(zone)
    delta = local.utcoffset()
    return 0 if delta is None else (delta.days * 86_400 + delta.seconds) * 1000


def format_for_attribute(ms: float, timezone: str | None) -> str:
    """§3 ``D(date)``: the wall time in the zone as ``Y-MM-DDTHH:MM:SS`` (en-CA, 24-hour), or
    ``toISOString()`` when Intl refuses the zone; raises JSRangeError for an invalid date."""
    if ms != ms:
        raise JSRangeError(INVALID_TIME_VALUE)
    zone = resolve_time_zone("UTC" if timezone is None else timezone)
    if zone is None:
        return to_iso_string(ms)
    instant = int(ms)
    offset = zone if isinstance(zone, int) else _zone_offset_ms(zone, instant)
    local = instant + offset
    if _DATETIME_MIN_MS <= local <= _DATETIME_MAX_MS:  # datetime's C arithmetic, the common case
        wall = _EPOCH_NAIVE + timedelta(milliseconds=local)
        return f"{wall.year}-{wall.month:02d}-{wall.day:02d}T{wall.hour:02d}:{wall.minute:02d}:{wall.second:02d}"
    year, month, day, hour, minute, second, _ = _breakdown(local)
    if year <= 0:
        year = 1 - year  # the era year (1 BC is year 0); en-CA prints no era
    return f"{year}-{month:02d}-{day:02d}T{hour:02d}:{minute:02d}:{second:02d}"
