"""What makes repeated runs of one prompt cheap gives exactly what the plain forms give."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxview.assembly.volatile import protected_by_hash, protected_from_newest
from ctxview.jsjson import h16
from ctxview.model import Params
from ctxview.pipeline import SessionAssembler
from ctxview.samples import build_sample
from ctxview.store import LcmStore

TEXTS = ["a", "b", "c", "d"]


@settings(max_examples=300, deadline=None)
@given(
    assembled=st.lists(st.sampled_from(TEXTS), max_size=12),
    wanted=st.lists(st.sampled_from([*TEXTS, "missing"]), max_size=5),
)
def test_scanning_from_the_newest_protects_what_hashing_every_message_protects(
    assembled: list[str], wanted: list[str]
) -> None:
    messages = [{"role": "user", "content": text} for text in assembled]
    hashes = [h16([{"role": "user", "content": text}]) for text in wanted]
    hashed: list[int] = []

    def hash_of(message: object) -> str:
        hashed.append(1)
        return h16([message])

    expected = protected_by_hash([h16([m]) for m in messages], hashes)
    assert protected_from_newest(messages, hashes, hash_of) == expected
    assert protected_from_newest(messages, iter(hashes), hash_of) == expected


def test_the_scan_stops_at_the_oldest_wanted_message() -> None:
    messages = [{"role": "user", "content": str(i)} for i in range(10)]
    hashed: list[int] = []

    def hash_of(message: dict[str, str]) -> str:
        hashed.append(int(message["content"]))
        return h16([message])

    assert protected_from_newest(messages, [h16([messages[9]]), h16([messages[7]])], hash_of) == {7, 9}
    assert hashed == [9, 8, 7]


def _index_built(assembler: SessionAssembler) -> bool:
    resolved = assembler.resolved("UTC")
    return any(key.startswith("term-index:") for key in resolved.cache)


@pytest.mark.parametrize("engine", [False, True])
def test_one_prompt_at_many_budgets_reuses_its_scores_and_builds_no_index(
    tmp_path_factory: pytest.TempPathFactory, engine: bool
) -> None:
    path = tmp_path_factory.mktemp("reuse-one") / "medium.db"
    build_sample(path, "medium", messages=600)
    with LcmStore(path) as store:
        warm = SessionAssembler(store.load_session())
    params = Params(prompt="database migration rollback", prompt_aware_eviction=True, engine=engine)
    budgets = [1, 900, 2_500, 6_000, 14_000, 40_000, 10_000_000]
    for budget in budgets:
        at = replace(params, token_budget=budget)
        trace = warm.run(at)
        with LcmStore(path) as store:
            cold = SessionAssembler(store.load_session()).run(at)
        assert trace.summary == cold.summary
        assert list(trace.decisions) == list(cold.decisions)
        assert trace.messages == cold.messages
    assert not _index_built(warm)  # a budget edit is not a second prompt
    warm.run(replace(params, prompt="deploy helm"))
    assert _index_built(warm)  # the second distinct prompt builds it
    again = warm.run(replace(params, token_budget=2_500))
    with LcmStore(path) as store:
        cold = SessionAssembler(store.load_session()).run(replace(params, token_budget=2_500))
    assert again.summary == cold.summary and list(again.decisions) == list(cold.decisions)
