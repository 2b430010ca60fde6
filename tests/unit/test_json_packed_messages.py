"""Messages kept in the render cache as JSON where orjson gives them back equal (``jsjson.exact_json``).

A warm open reads back exactly the message a cold open renders, with the same Python types all the way down
(int, float, -0.0, bool, str, list, dict in the same key order); a message JSON would not give back equal
(a string with half a surrogate pair here) is kept as ``marshal`` bytes and reads back all the same.
"""

from __future__ import annotations

import json
import math
import sqlite3
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from ctxview.jsjson import exact_json, load_exact_json
from ctxview.pipeline import SessionAssembler, save_pending_renders
from ctxview.samples import build_sample
from ctxview.store import LcmStore


def same(a: Any, b: Any) -> bool:
    """Equal, and of the same types all the way down (``==`` holds 1 == 1.0 == True and 0.0 == -0.0)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float):
        return (a == b and math.copysign(1, a) == math.copysign(1, b)) or (math.isnan(a) and math.isnan(b))
    return bool(a == b)


# (floats of the kinds a parsed message holds: the others are kept as JSNumbers, and the test run checks that
# orjson writes what the C encoder writes, which it does not for 1e-05)
_FLOAT = st.one_of(
    st.floats(min_value=1e-4, max_value=1e15), st.floats(min_value=-1e15, max_value=-1e-4),
    st.sampled_from([0.0, -0.0, float("nan"), float("inf"), float("-inf")]),
)
_LEAF = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**70), 2**70), _FLOAT, st.text(max_size=6), st.just("\ud800"),
)
_VALUE = st.recursive(
    _LEAF,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=4), inner, max_size=4)),
    max_leaves=12,
)


@settings(max_examples=400, deadline=None)
@given(value=_VALUE)
def test_json_is_kept_only_where_it_gives_the_value_back_exactly(value: Any) -> None:
    encoded = exact_json(value)
    if encoded is not None:
        assert same(load_exact_json(encoded), value)


def test_values_json_would_change_are_refused() -> None:
    for value in ((1, 2), [float("nan")], {"n": 2**64}, {"t": "\ud800"}, [float("inf")]):
        assert exact_json(value) is None
    assert exact_json({"a": -0.0, "b": 0.1, "c": True, "d": 1, "e": 1.0}) is not None


def test_a_warm_open_reads_back_the_messages_a_cold_open_renders(cache: Path, tmp_path: Path) -> None:
    db = tmp_path / "session.db"
    build_sample(db, "medium", messages=300)
    with sqlite3.connect(db) as connection:  # (a tool call whose arguments orjson refuses: half a surrogate pair)
        part_id, raw = connection.execute(
            "SELECT part_id, metadata FROM message_parts WHERE part_type = 'tool' AND tool_input IS NOT NULL"
            " ORDER BY message_id DESC LIMIT 1"  # (a recent message: in context)
        ).fetchone()
        metadata = json.loads(raw)
        metadata["raw"]["arguments"] = {**metadata["raw"]["arguments"], "half": "a\ud800b", "f": -0.0, "g": 0.1}
        connection.execute(
            "UPDATE message_parts SET metadata = ?, tool_input = ? WHERE part_id = ?",
            (json.dumps(metadata), json.dumps(metadata["raw"]["arguments"]), part_id),
        )
    with LcmStore(db) as store:
        cold = [item.message for item in SessionAssembler(store.load_session()).resolved("UTC") if item.is_message]
    save_pending_renders()
    with LcmStore(db) as store:
        items = [item for item in SessionAssembler(store.load_session()).resolved("UTC") if item.is_message]
    assert all(type(item.stored_message) is int for item in items)  # (read from the file)
    forms = items[0].packed_in._as_json
    assert 0 < forms.count(0) < len(items) // 10 and forms.count(1) > len(items) // 2
    warm = [item.message for item in items]
    assert len(warm) == len(cold) and all(same(w, c) for w, c in zip(warm, cold, strict=True))
    assert any("a\ud800b" in json.dumps(message, ensure_ascii=False) for message in warm)
