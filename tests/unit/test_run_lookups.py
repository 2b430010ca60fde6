"""Per-run lookups of the decisions: shared with the session's last run only when its evictable list is the same."""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace

from ctxview.assembly.decisions import _evictable_lookups
from ctxview.assembly.resolve import ResolvedItem


def item(ordinal: int) -> ResolvedItem:
    return ResolvedItem(ordinal=ordinal, stored_message={"role": "user", "content": str(ordinal)}, tokens=1,
                        is_message=True, text=str(ordinal))


def test_the_same_items_share_the_lookups_and_a_stub_gets_new_ones() -> None:
    items = [item(i) for i in range(5)]
    static = SimpleNamespace(evictable_lookups=None)
    first = _evictable_lookups(SimpleNamespace(evictable=items[:4], static=static))  # type: ignore[arg-type]
    assert first == ({id(items[i]): i for i in range(4)}, {})
    again = _evictable_lookups(SimpleNamespace(evictable=items[:4], static=static))  # type: ignore[arg-type]
    assert again[0] is first[0] and again[1] is first[1]
    stub = replace(items[2], stub_of=items[2])
    stubbed = [items[0], items[1], stub, items[3]]
    changed = _evictable_lookups(SimpleNamespace(evictable=stubbed, static=static))  # type: ignore[arg-type]
    assert changed == ({id(items[0]): 0, id(items[1]): 1, id(stub): 2, id(items[3]): 3}, {id(items[2]): stub})
    longer = _evictable_lookups(SimpleNamespace(evictable=items, static=static))  # type: ignore[arg-type]
    assert longer == ({id(items[i]): i for i in range(5)}, {})
