"""JavaScript string and JSON semantics the reference engine relies on.

The reference assembler is JavaScript: its token estimates, hashes and
signatures are taken over ``JSON.stringify`` output, its length thresholds
count UTF-16 code units and its ``trim`` uses a different whitespace set
from Python's.  Every module that must reproduce reference output goes
through these helpers (spec §0).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from typing import Any

try:
    import orjson
except ImportError:  # pragma: no cover - a platform with no orjson wheel: the json module's C encoder does it all
    orjson = None  # type: ignore[assignment]

# §0.2: the exact whitespace set of JS trim() and regex \s.
JS_WHITESPACE = (
    "\u0009\u000a\u000b\u000c\u000d\u0020\u00a0\u1680"
    "\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000\ufeff"
)
JS_WS_CLASS = "[" + re.escape(JS_WHITESPACE) + "]"
_JS_WS_RUN = re.compile(JS_WS_CLASS + "+")


def js_trim(text: str) -> str:
    return text.strip(JS_WHITESPACE)


def js_trim_start(text: str) -> str:
    return text.lstrip(JS_WHITESPACE)


def js_trim_end(text: str) -> str:
    return text.rstrip(JS_WHITESPACE)


def is_blank(value: object) -> bool:
    """True for a string that is empty after JS trim (§0.3 "blank")."""
    return isinstance(value, str) and js_trim(value) == ""


def collapse_js_whitespace(text: str) -> str:
    """Replace every run of JS whitespace with one space."""
    return _JS_WS_RUN.sub(" ", text)


def utf16_len(text: str) -> int:
    """Length in UTF-16 code units, as JS ``String.length`` counts it."""
    if text.isascii():
        return len(text)
    return len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)


# --- numbers -----------------------------------------------------------------


def js_number_str(value: float) -> str:
    """Format a double the way JS ``Number.prototype.toString`` does."""
    if math.isnan(value) or math.isinf(value):
        return "null"  # JSON.stringify turns NaN/±Infinity into null
    if value == 0:
        return "0"
    text = repr(float(value))  # shortest round-trip digits
    sign = ""
    if text.startswith("-"):
        sign, text = "-", text[1:]
    if "e" in text or "E" in text:
        mantissa, exp_text = text.lower().split("e")
        exponent = int(exp_text)
    else:
        mantissa, exponent = text, 0
    if "." in mantissa:
        int_part, frac_part = mantissa.split(".")
    else:
        int_part, frac_part = mantissa, ""
    if frac_part == "0":
        frac_part = ""
    digits = (int_part + frac_part).lstrip("0")
    # decimal exponent n such that value = 0.d1d2... x 10^n
    point = len(int_part) + exponent
    if int_part.strip("0") == "":
        # value like 0.000123 -> leading zeros in the fraction shift the point
        stripped = frac_part.lstrip("0")
        point = exponent - (len(frac_part) - len(stripped))
        digits = stripped
    digits = digits.rstrip("0") or "0"
    k = len(digits)
    n = point
    if k <= n <= 21:
        out = digits + "0" * (n - k)
    elif 0 < n <= 21:
        out = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        out = "0." + "0" * (-n) + digits
    else:
        e = n - 1
        exp = f"e{'+' if e >= 0 else '-'}{abs(e)}"
        out = digits[0] + ("." + digits[1:] if k > 1 else "") + exp
    return sign + out


class JSNumber:
    """A parsed JSON number whose JS text differs from Python's ``repr``.

    Kept only for the rare numbers (floats in exponent ranges, integers past
    2^53) where Python would print something JavaScript would not.
    """

    __slots__ = ("text", "value")

    def __init__(self, value: float, text: str) -> None:
        self.value = value
        self.text = text

    def __eq__(self, other: object) -> bool:
        if isinstance(other, JSNumber):
            return self.value == other.value
        if isinstance(other, (int, float)) and not isinstance(other, bool):
            return self.value == other
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.value)

    def __repr__(self) -> str:
        return f"JSNumber({self.text})"


_MAX_SAFE = 2**53
# the magnitudes in which a double's shortest text is plain decimal digits for JS, for Python's repr and for
# orjson alike: a parsed float outside them is kept as a JSNumber (``js_stringify_message`` relies on it)
FLOAT_SAME_TEXT_FROM = 1e-4
FLOAT_SAME_TEXT_BELOW = 1e16


def _parse_float(text: str) -> float | int | JSNumber:
    value = float(text)
    if math.isinf(value):
        # JS parses 1e400 as Infinity, which JSON.stringify prints as null
        return JSNumber(value, "null")
    if value.is_integer() and abs(value) < _MAX_SAFE:
        return int(value)
    js = js_number_str(value)
    if js == repr(value) and FLOAT_SAME_TEXT_FROM <= abs(value) < FLOAT_SAME_TEXT_BELOW:
        return value  # (JS, Python's repr and orjson spell it alike)
    # JS's text differs from Python's repr (1e-05 is 0.00001), or orjson's would (1e+21 is 1e21 there)
    return JSNumber(value, js)


def _parse_int(text: str) -> int | JSNumber:
    value = int(text)
    if abs(value) < _MAX_SAFE:
        return value
    as_double = float(value)
    if math.isinf(as_double):
        return JSNumber(as_double, "null")
    return JSNumber(as_double, js_number_str(as_double))


def _reject_constant(name: str) -> Any:
    raise ValueError(f"JSON.parse rejects {name}")


def _js_object(result: dict[str, Any]) -> dict[str, Any]:
    """Give an object JS key order: array-index keys first, ascending.

    The decoder builds the dict (later duplicates win, like JS); only an object with
    an all-digit key needs a second look, and ``str.isdigit`` finds none at C speed.
    """
    if any(map(str.isdigit, result)):
        index_keys = sorted((k for k in result if _is_index_key(k)), key=int)
        if index_keys:
            other = [k for k in result if not _is_index_key(k)]
            return {k: result[k] for k in index_keys + other}
    return result


def _is_index_key(key: str) -> bool:
    return key.isdigit() and key.isascii() and (key == "0" or not key.startswith("0")) and int(key) < 2**32 - 1


_DECODER = json.JSONDecoder(
    object_hook=_js_object,
    parse_float=_parse_float,
    parse_int=_parse_int,
    parse_constant=_reject_constant,
)
JS_JSON_DECODER = _DECODER  # (its ``scan_once`` is ``js_parse`` without the surrounding-whitespace rule)


def js_parse(text: str) -> Any:
    """Parse JSON like ``JSON.parse``; raise ``ValueError`` where JS would throw.

    Only JSON's own whitespace (space, tab, LF, CR) may surround the value;
    JSON.parse rejects a no-break space or BOM there.
    """
    stripped = text.strip(" \t\n\r")
    value, end = _DECODER.raw_decode(stripped)
    if end != len(stripped):
        raise ValueError("trailing data after JSON value")
    return value


def try_js_parse(text: str) -> tuple[bool, Any]:
    try:
        return True, js_parse(text)
    except (ValueError, RecursionError):
        return False, None


def js_string(value: Any) -> str:
    """``String(value)`` (and a template literal's ``${value}``) for JSON and SQLite values."""
    if isinstance(value, str):
        return value
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, JSNumber):
        return value.text if value.text != "null" else ("Infinity" if value.value > 0 else "-Infinity")
    if isinstance(value, int):
        return str(value) if abs(value) < _MAX_SAFE else js_number_str(float(value))
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        return js_number_str(value)
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, list):
        return ",".join("" if v is None else js_string(v) for v in value)
    return "[object Object]"


# --- serialization --------------------------------------------------------------

_SENTINEL_OPEN = "\u0000\u2063JSNUM:"
_SENTINEL_CLOSE = "\u2063\u0000"
_ENCODED_OPEN = json.dumps(_SENTINEL_OPEN, ensure_ascii=False)[:-1]  # with the opening quote
_ENCODED_CLOSE = json.dumps(_SENTINEL_CLOSE, ensure_ascii=False)[1:]  # with the closing quote
_SENTINEL_RE = re.compile(re.escape(_ENCODED_OPEN) + "(.*?)" + re.escape(_ENCODED_CLOSE))
_SURROGATE_RE = re.compile("[\ud800-\udfff]")


def _default(value: Any) -> Any:
    if isinstance(value, JSNumber):
        return _SENTINEL_OPEN + value.text + _SENTINEL_CLOSE
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


# One encoder for every call: ``json.dumps`` with options builds a new one each time.
# allow_nan=False fails exactly when a non-finite float is present (JSON.stringify writes
# null), so text that merely mentions "NaN" or "Infinity" is not sent through a copy.
_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=_default, allow_nan=False)
# The C encoder ``_ENCODER.encode`` builds on every call, built once (``encode`` spends as long building it
# and wrapping its result as the C code spends encoding a usual message).  No circular-reference markers:
# values parsed from JSON or built from database rows hold no cycles (one would end in RecursionError).
_C_ENCODE: Any = (
    json.encoder.c_make_encoder(None, _default, json.encoder.encode_basestring, None, ":", ",", False, False, False)
    if json.encoder.c_make_encoder is not None
    else None
)


def _encode(value: Any) -> str:
    """``_ENCODER.encode(value)``."""
    if _C_ENCODE is None:  # pragma: no cover - CPython always has the C encoder
        return _ENCODER.encode(value)
    return "".join(_C_ENCODE(value, 0))


# orjson writes what the C encoder below writes (compact, insertion order, raw non-ASCII, the same escapes, null
# for a non-finite float) several times faster (into one buffer; the C encoder builds a list of pieces), for every
# value it takes but a float outside [FLOAT_SAME_TEXT_FROM, FLOAT_SAME_TEXT_BELOW), which it spells its own way
# (1e21, 0.00001).  What the C encoder path treats specially makes orjson refuse, and that path takes it: a
# JSNumber, a lone surrogate, a key that is not a str, an int past 64 bits, a subclass, a dataclass, nesting past
# 254 levels.  So it serves values made of parsed JSON (``_parse_float`` keeps the other floats as JSNumber) and
# of strings and ints: the agent messages (``js_stringify_message``), not values with computed floats (scores).
_FAST_OPTIONS = (
    orjson.OPT_PASSTHROUGH_SUBCLASS | orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME
    if orjson is not None
    else 0
)


def _refuse(value: Any) -> Any:
    raise TypeError(type(value).__name__)


def _fast_utf8(value: Any) -> bytes | None:
    """``JSON.stringify(value)`` as UTF-8 by orjson, or None where orjson does not take the value."""
    if orjson is None:  # pragma: no cover - orjson is a dependency
        return None
    try:
        return orjson.dumps(value, default=_refuse, option=_FAST_OPTIONS)
    except TypeError:  # (orjson.JSONEncodeError is one)
        return None


def exact_json(value: Any, *, check: bool = True) -> bytes | None:
    """``value`` as JSON (UTF-8) that ``load_exact_json`` gives back equal to it, or None where orjson does not
    take it or would not give it back equal (a tuple comes back a list, a non-finite float null; orjson keeps
    ints, floats, -0.0 and booleans apart): a cache may keep such a value as JSON, which reads back faster
    than ``marshal``.  These are the bytes ``js_stringify_message`` encodes an agent message to where orjson
    takes it.  ``check`` False: the same bytes, for a value found before to come back equal."""
    encoded = _fast_utf8(value)
    if encoded is None or not check:
        return encoded
    try:
        return encoded if orjson.loads(encoded) == value else None
    except ValueError:  # (orjson.JSONDecodeError)
        return None


def load_exact_json(data: bytes | memoryview) -> Any:
    """The value ``exact_json`` wrote (ValueError where ``data`` is not JSON, or orjson is missing)."""
    if orjson is None:  # pragma: no cover - orjson is a dependency
        raise ValueError("no orjson to read JSON with")
    return orjson.loads(data)


def js_stringify_message(message: Any) -> str:
    """``js_stringify`` of an agent message, or of any value whose floats were parsed (none computed)."""
    encoded = _fast_utf8(message)
    if encoded is not None:
        return encoded.decode()
    return js_stringify(message)


def js_stringify_message_utf8(message: Any) -> tuple[str, bytes]:
    """(``js_stringify_message(message)``, the same text as UTF-8) for a caller that hashes it: one encoding."""
    encoded = _fast_utf8(message)
    if encoded is not None:
        return encoded.decode(), encoded
    text = js_stringify(message)
    return text, text.encode("utf-8", "surrogatepass")


def js_stringify(value: Any) -> str:
    """``JSON.stringify(value)``: compact, insertion key order, raw non-ASCII (by the json module's C encoder)."""
    try:
        text = _encode(value)
    except ValueError:
        try:
            json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=_default, allow_nan=True)
        except ValueError:  # pragma: no cover - circular reference; DB data has none
            raise
        text = _fix_non_finite(value)
    if _ENCODED_OPEN in text:
        text = _SENTINEL_RE.sub(lambda m: json.loads('"' + m.group(1) + '"'), text)
    return escape_lone_surrogates(text)


def has_lone_surrogates(text: str) -> bool:
    """True when ``text`` holds a UTF-16 surrogate that UTF-8 cannot carry.

    The strict encoder answers at C speed; a regex scan of a 50 MB export took
    a quarter of a second.
    """
    if text.isascii():
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def escape_lone_surrogates(text: str) -> str:
    """``JSON.stringify`` writes a lone surrogate as a ``\\uXXXX`` escape."""
    if has_lone_surrogates(text):
        return _SURROGATE_RE.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text)
    return text


def _fix_non_finite(value: Any) -> str:
    def clean(v: Any) -> Any:
        if isinstance(v, float) and not math.isfinite(v):
            return None
        if isinstance(v, dict):
            return {k: clean(x) for k, x in v.items()}
        if isinstance(v, list):
            return [clean(x) for x in v]
        return v

    return json.dumps(clean(value), ensure_ascii=False, separators=(",", ":"), default=_default)


def h16(value: Any) -> str:
    """First 16 hex digits of SHA-256 over ``JSON.stringify(value)`` (§0.7)."""
    return hashlib.sha256(js_stringify(value).encode("utf-8", "surrogatepass")).hexdigest()[:16]


def to_plain(value: Any) -> Any:
    """Replace ``JSNumber`` wrappers by plain floats (for display and export)."""
    if isinstance(value, JSNumber):
        return value.value
    if isinstance(value, dict):
        return {k: to_plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [to_plain(v) for v in value]
    return value
