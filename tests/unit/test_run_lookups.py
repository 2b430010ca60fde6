"""Per-run lookups of the decisions: shared with the session's last run only when its evictable list is the same."""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace

from ctxview.assembly.decisions import PrefixIndex, _evictable_lookups
from ctxview.assembly.incremental.static import ItemsPlan, _plan_index
from ctxview.assembly.resolve import ResolvedItem


def item(ordinal: int) -> ResolvedItem:
    return ResolvedItem(ordinal=ordinal, stored_message={"role": "user", "content": str(ordinal)}, tokens=1,
                        is_message=True, text=str(ordinal))


def test_the_same_items_share_the_lookups_and_a_stub_gets_new_ones() -> None:
    items = [item(i) for i in range(5)]
    static = SimpleNamespace(evictable_lookups=None)
    plan = _plan_index(ItemsPlan(items))

    def lookups(evictable: list[ResolvedItem]) -> tuple[object, object]:
        return _evictable_lookups(SimpleNamespace(evictable=evictable, static=static, plan_index=plan))  # type: ignore[arg-type]

    first = lookups(items[:4])
    assert first == ({id(items[i]): i for i in range(4)}, {})
    assert isinstance(first[0], PrefixIndex)  # (the plan's first items: read from its position map)
    again = lookups(items[:4])
    assert again[0] is first[0] and again[1] is first[1]
    stub = replace(items[2], stub_of=items[2])
    stubbed = [items[0], items[1], stub, items[3]]
    changed = lookups(stubbed)
    assert changed == ({id(items[0]): 0, id(items[1]): 1, id(stub): 2, id(items[3]): 3}, {id(items[2]): stub})
    assert type(changed[0]) is dict
    longer = lookups(items)
    assert longer == ({id(items[i]): i for i in range(5)}, {})
    shuffled = lookups([items[1], items[0]])
    assert shuffled == ({id(items[1]): 0, id(items[0]): 1}, {}) and type(shuffled[0]) is dict


def test_the_prefix_index_answers_as_a_dict_of_the_prefix() -> None:
    items = [item(i) for i in range(6)]
    plan = _plan_index(ItemsPlan(items))
    prefix = PrefixIndex(plan.position, 4)
    plain = {id(items[i]): i for i in range(4)}
    other = item(9)
    for key in [*map(id, items), id(other)]:
        assert prefix.get(key) == plain.get(key)
        assert prefix.get(key, "absent") == plain.get(key, "absent")
        assert (key in prefix) == (key in plain)
    assert dict(prefix) == plain and len(prefix) == 4
