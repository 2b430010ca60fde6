"""The one reader of values stored in an LCM database: what the engine would make of each.

SQLite stores whatever it is given: ``Infinity`` in an INTEGER column, text or a
blob where a number belongs, integers past JavaScript's safe range, NULL where
the schema said NOT NULL.  The engine reads rows through ``node:sqlite`` and
then works with JavaScript values, so every value ctxview reads passes one of
these functions:

- ``whole_number``: ids, seqs and ordinals, which ctxview uses as keys.  A whole
  number (an integral REAL, or text SQLite would compare equal to one) is that
  integer; anything else is None and the row is skipped with a note.
- ``engine_number``: a column the engine only prints or compares (depth, token
  counts, sizes): passed on as the JavaScript value the renderer applies JS
  rules to.  An integer past ±(2**53 − 1) becomes the nearest double, as a JS
  number would (spec §0.6); a blob is read as its text.
- ``total``: the result of ``SUM``: a whole number stays an int, anything else
  (``Infinity``, a fraction) the float JavaScript would hold.
- ``sqlite_order``: a sort key that orders mixed values as SQLite's ``ORDER BY``
  does (NULL, then numbers, then text, then blobs).
"""

from __future__ import annotations

import math
import re
from typing import Any

MAX_SAFE_INTEGER = 2**53 - 1
_MAX_DIGITS = 30  # longer decimal text is no id anyone wrote
_WHOLE = re.compile(r"[ \t\n\f\r]*[+-]?[0-9]+[ \t\n\f\r]*")  # text SQLite reads as an integer


def decode_text(raw: bytes) -> str:
    return raw.decode("utf-8", "replace")


def whole_number(value: Any) -> int | None:
    """An id, seq or ordinal as an int; None for NULL and for what no whole number can be read from."""
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value) if math.isfinite(value) and value.is_integer() else None
    if isinstance(value, str) and len(value) < _MAX_DIGITS and _WHOLE.fullmatch(value):
        return int(value)
    return None


def engine_number(value: Any) -> Any:
    """A numeric column as the engine's JavaScript sees it (the renderer applies JS rules to it)."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value if -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER else float(value)
    if isinstance(value, bytes):
        return decode_text(value)
    return value


def total(value: Any) -> int | float:
    """A ``SUM``/``COUNT`` result as a number: NULL is 0, a whole number an int, anything else a float."""
    if value is None:
        return 0
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value) if math.isfinite(value) and value.is_integer() else value
    number = whole_number(value)
    return number if number is not None else 0


def sqlite_order(value: Any) -> tuple[int, Any]:
    """Sort key of SQLite's ``ORDER BY`` over mixed types: NULL < numbers < text < blobs."""
    if value is None:
        return (0, 0)
    if isinstance(value, (int, float)):
        return (1, value if value == value else -math.inf)  # NaN cannot be stored: SQLite makes it NULL
    if isinstance(value, str):
        return (2, value)  # BINARY collation: UTF-8 byte order is code point order
    if isinstance(value, (bytes, bytearray, memoryview)):
        return (3, bytes(value))
    return (2, str(value))


def text(value: Any) -> str | None:
    """A TEXT column as str (BLOBs decoded, numbers printed); None stays None."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bytes):
        return decode_text(value)
    return str(value)
