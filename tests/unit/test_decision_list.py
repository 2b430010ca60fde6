"""LazyDecisionList: a lazy sequence that behaves like the list of decisions it stands for."""

from __future__ import annotations

import copy
import pickle

import pytest

from ctxview.assembly.incremental.decision_list import CHUNK, LazyDecisionList
from ctxview.model import Decision, column, index_of


def decision(i: int, *, live: bool = False) -> Decision:
    return Decision(
        key=f"l:{i}" if live else f"o:{i}",
        ordinal=None if live else i,
        live_index=i if live else None,
        kind="live" if live else "message",
        label="user",
        role="user",
        source_role="user",
        message_id=i,
        seq=i,
        summary_id=None,
        tokens=i * 10,
        serialized_tokens=None,
        score=None,
        matched_terms=(),
        segment="live" if live else "evictable",
        selected=False,
        outcome="live-ignored" if live else "evicted",
        reason=f"reason {i}",
    )


def make(count: int, calls: list[tuple[int, int]] | None = None) -> LazyDecisionList:
    def build(start: int, stop: int) -> list[Decision]:
        if calls is not None:
            calls.append((start, stop))
        return [decision(i) for i in range(start, stop)]

    return LazyDecisionList(
        count,
        build,
        columns={"outcome": lambda: ["evicted"] * count, "key": lambda: [f"o:{i}" for i in range(count)]},
        index_of_key=lambda: {f"o:{i}": i for i in range(count)},
    )


def test_reads_like_a_list_and_builds_one_chunk_per_read_range() -> None:
    calls: list[tuple[int, int]] = []
    decisions = make(CHUNK * 2 + 5, calls)
    assert len(decisions) == CHUNK * 2 + 5 and calls == []
    assert decisions[3].key == "o:3" and calls == [(0, CHUNK)]
    assert decisions[3] is decisions[3]
    assert decisions[-1].key == f"o:{CHUNK * 2 + 4}" and calls[-1] == (CHUNK * 2, CHUNK * 2 + 5)
    assert [d.key for d in decisions[CHUNK - 1 : CHUNK + 1]] == [f"o:{CHUNK - 1}", f"o:{CHUNK}"]
    assert decisions == [decision(i) for i in range(CHUNK * 2 + 5)]
    assert len(calls) == 3  # every chunk built exactly once
    with pytest.raises(IndexError):
        decisions[CHUNK * 2 + 5]


def test_overrides_resets_and_appended_decisions() -> None:
    decisions = make(10)
    decisions.reset_field("output_index", None)
    decisions.override(2, {"outcome": "clamped", "reason": "cut"})
    decisions.override_keys({"o:3": {"outcome": "evicted-for-live"}, "missing": {"outcome": "kept"}})
    decisions.extend([decision(0, live=True)])
    decisions.override_keys({"l:0": {"output_index": 7}})
    assert decisions.column("outcome") == [*(["evicted"] * 2), "clamped", "evicted-for-live", *(["evicted"] * 6),
                                           "live-ignored"]
    assert [d.outcome for d in decisions] == decisions.column("outcome")
    assert decisions[2].reason == "cut" and decisions[10].output_index == 7
    decisions.override(4, {"outcome": "kept"})  # after the chunk was built: applied to the built decision too
    assert decisions[4].outcome == "kept" and decisions.column("outcome")[4] == "kept"
    assert decisions.overridden("outcome") == {2: "clamped", 3: "evicted-for-live", 4: "kept"}
    assert decisions.index_of("o:9") == 9 and decisions.index_of("l:0") == 10 and decisions.index_of("o:99") is None


def test_fork_shares_the_run_but_not_the_changes() -> None:
    base = make(5)
    one, two = base.fork(), base.fork()
    one.override(0, {"outcome": "kept"})
    assert one[0].outcome == "kept" and two[0].outcome == "evicted" and base[0].outcome == "evicted"
    assert one[1] is not two[1]
    with pytest.raises(RuntimeError):
        one.fork()


def test_copies_and_pickles_are_plain_lists() -> None:
    decisions = make(3)
    assert copy.deepcopy(decisions) == [decision(i) for i in range(3)]
    assert type(pickle.loads(pickle.dumps(decisions))) is list


def test_helpers_accept_plain_lists() -> None:
    plain = [decision(i) for i in range(3)]
    assert column(plain, "key") == ["o:0", "o:1", "o:2"]
    assert index_of(plain, "o:2") == 2 and index_of(plain, "o:7") is None


@pytest.mark.parametrize("read_first", [False, True])
def test_map_field_sets_values_by_key_and_overrides_still_win(read_first: bool) -> None:
    decisions = make(CHUNK + 3)
    if read_first:  # the mapping reaches decisions built before it was set too
        assert decisions[1].outcome == "evicted" and decisions[CHUNK + 1].outcome == "evicted"
    decisions.override(2, {"outcome": "evicted-for-live"})
    decisions.map_field("outcome", {"o:1": "clamped", "o:2": "clamped", f"o:{CHUNK + 1}": "prefill-stripped"})
    assert [d.outcome for d in decisions][:4] == ["evicted", "clamped", "evicted-for-live", "evicted"]
    assert decisions[CHUNK + 1].outcome == "prefill-stripped"
    assert decisions.column("outcome") == [d.outcome for d in decisions]
