"""§8 duplicate clusters: grouping by text hash and the top-five cut."""

from __future__ import annotations

import hashlib
import random

from ctxview.assembly.diagnostics import _collation_key, duplicate_message_clusters, duplicate_ref_clusters
from ctxview.assembly.resolve import ResolvedItem


def _message(ordinal: int, text: str, tokens: int = 1) -> ResolvedItem:
    return ResolvedItem(
        ordinal=ordinal,
        stored_message={"role": "user", "content": text},
        tokens=tokens,
        is_message=True,
        text=text,
        seq=ordinal,
    )


def _node_hash(text: str) -> str:
    """What Node hashes: the UTF-8 of the string with lone surrogates as U+FFFD."""
    cleaned = "".join("\ufffd" if 0xD800 <= ord(ch) <= 0xDFFF else ch for ch in text)
    return hashlib.sha256(cleaned.encode("utf-8")).hexdigest()[:16]


def test_texts_that_differ_only_in_a_lone_surrogate_form_one_cluster_in_context_order() -> None:
    items = [_message(1, "x\ud800"), _message(2, "x\ufffd"), _message(3, "x\ud800"), _message(4, "other")]
    [cluster] = duplicate_message_clusters(items)
    assert cluster == {
        "key": _node_hash("x\ufffd"),
        "kind": "message-content",
        "count": 3,
        "tokens": 3,
        "ordinals": [1, 2, 3],
        "seqs": [1, 2, 3],
    }


def _naive_clusters(items: list[ResolvedItem]) -> list[dict[str, object]]:
    """The reference's order written plainly: every group of two or more, fully sorted."""
    groups: dict[str, list[ResolvedItem]] = {}
    for item in items:
        groups.setdefault(_node_hash(item.text), []).append(item)
    return _naive_top_five(groups, "message-content")


def _naive_top_five(groups: dict[str, list[ResolvedItem]], kind: str) -> list[dict[str, object]]:
    rows = [
        {
            "key": key,
            "kind": kind,
            "count": len(members),
            "tokens": sum(m.tokens for m in members),
            "ordinals": [m.ordinal for m in members][:8],
            "seqs": [m.seq for m in members][:8],
        }
        for key, members in groups.items()
        if len(members) > 1
    ]
    rows.sort(key=lambda r: (-r["tokens"], -r["count"], _collation_key(r["key"])))  # type: ignore[operator]
    return rows[:5]


def test_the_top_five_cut_keeps_the_full_sort_order_including_ties() -> None:
    rng = random.Random(7)
    for _ in range(200):
        texts = [f"t{rng.randrange(12)}" for _ in range(rng.randrange(0, 40))]
        # few distinct token sizes, so that ties on (tokens, count) are common
        items = [_message(i, text, tokens=1 + len(text) % 2) for i, text in enumerate(texts)]
        assert duplicate_message_clusters(items) == _naive_clusters(items)


def test_texts_that_differ_only_in_lone_surrogates_are_one_cluster() -> None:
    """Node hashes a lone surrogate as U+FFFD: those texts are one group, in context order; a lone text is none."""
    rng = random.Random(11)
    pool = ["a\ud800b", "a\udc00b", "a\ufffdb", "x\ud83dy", "x\ufffdy", "plain", "solo\udfff", "é"]
    for _ in range(200):
        texts = [rng.choice(pool) for _ in range(rng.randrange(0, 12))]
        items = [_message(i, text, tokens=1 + i % 3) for i, text in enumerate(texts)]
        assert duplicate_message_clusters(items) == _naive_clusters(items)
    items = [_message(0, "a\ud800b"), _message(1, "plain"), _message(2, "a\ufffdb")]
    [cluster] = duplicate_message_clusters(items)
    assert cluster["ordinals"] == [0, 2]


def _ref_item(ordinal: int, message_id: object, tokens: int) -> ResolvedItem:
    item = _message(ordinal, f"text {ordinal}", tokens=tokens)
    item.message_id = message_id  # type: ignore[assignment]
    return item


def _naive_ref_clusters(items: list[ResolvedItem]) -> list[dict[str, object]]:
    groups: dict[str, list[ResolvedItem]] = {}
    for item in items:
        if item.message_id is not None:
            groups.setdefault(f"message:{item.message_id}", []).append(item)
    return _naive_top_five(groups, "message-ref")


def test_ref_clusters_group_by_the_printed_reference() -> None:
    rng = random.Random(5)
    for _ in range(200):
        ids: list[object] = [rng.choice([None, 1, 2, 3, 12, 40]) for _ in range(rng.randrange(0, 30))]
        if rng.random() < 0.3:  # an id of another type that prints like an int one: the text key decides
            ids.append("12")
        items = [_ref_item(i, message_id, tokens=1 + i % 2) for i, message_id in enumerate(ids)]
        assert duplicate_ref_clusters(items) == _naive_ref_clusters(items)
    items = [_ref_item(0, 12, 5), _ref_item(1, "12", 5), _ref_item(2, 7, 1)]
    [cluster] = duplicate_ref_clusters(items)
    assert (cluster["key"], cluster["ordinals"]) == ("message:12", [0, 1])


def _summary_item(ordinal: int, summary_id: object, tokens: int) -> ResolvedItem:
    from ctxview.model import SummaryRow

    summary = SummaryRow(summary_id=summary_id, kind="leaf", depth=0, content="s")  # type: ignore[arg-type]
    return ResolvedItem(
        ordinal=ordinal, stored_message={"role": "user", "content": "s"}, tokens=tokens, is_message=False, text="s",
        summary=summary,
    )


def _naive_mixed_ref_clusters(items: list[ResolvedItem]) -> list[dict[str, object]]:
    """Messages and summaries grouped by printed reference, each kind named, the groups in first-reference order."""
    groups: dict[str, list[ResolvedItem]] = {}
    for item in items:
        if item.is_message and item.message_id is not None:
            groups.setdefault(f"message:{item.message_id}", []).append(item)
        elif not item.is_message and item.summary is not None:
            groups.setdefault(f"summary:{item.summary.summary_id}", []).append(item)
    rows = [
        {
            "key": key,
            "kind": "message-ref" if key.startswith("message:") else "summary-ref",
            "count": len(members),
            "tokens": sum(m.tokens for m in members),
            "ordinals": [m.ordinal for m in members][:8],
            **({"seqs": [m.seq for m in members if m.seq is not None][:8]} if any(m.seq is not None for m in members)
               else {}),
        }
        for key, members in groups.items()
        if len(members) > 1
    ]
    rows.sort(key=lambda r: (-r["tokens"], -r["count"], _collation_key(r["key"])))  # type: ignore[operator]
    return rows[:5]


def test_message_and_summary_refs_are_counted_apart_and_grouped_in_first_reference_order() -> None:
    rng = random.Random(9)
    for _ in range(300):
        items: list[ResolvedItem] = []
        for i in range(rng.randrange(0, 30)):
            if rng.random() < 0.5:
                items.append(_ref_item(i, rng.choice([None, 1, 2, 3, 7]), tokens=1 + i % 3))
            else:
                items.append(_summary_item(i, rng.choice(["1", "2", "s7", "s9"]), tokens=1 + i % 2))
        if rng.random() < 0.1:  # a summary id that is not text: every reference by its printed key
            items.append(_summary_item(99, 2, tokens=1))
        assert duplicate_ref_clusters(items) == _naive_mixed_ref_clusters(items)
    items = [_ref_item(0, 1, 1), _summary_item(1, "1", 1), _ref_item(2, 5, 1), _summary_item(3, "1", 1)]
    [cluster] = duplicate_ref_clusters(items)  # message 1 and summary "1" are two references
    assert (cluster["key"], cluster["ordinals"]) == ("summary:1", [1, 3])
    assert duplicate_ref_clusters([_ref_item(0, 1, 1), _ref_item(1, 2, 1)]) == []
