"""Warm caches never change a decision: a long-lived SessionAssembler against a cold one, after any edits.

One ``SessionAssembler`` per session lives through every example (its resolved
items, term index, plan columns, engine memo and the module-level caches stay
warm across arbitrary parameter sequences); each run is compared with a fresh
assembler on a freshly loaded session with the module caches emptied.  Messages,
keys, decisions (every field), stages and the run summary must be identical,
and the lazy trace's fast columns must equal the fields of its decisions.
"""

from __future__ import annotations

from dataclasses import replace
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxview.assembly import diagnostics, tool_pairs
from ctxview.assembly.decisions import ROW_FIELDS
from ctxview.assembly.incremental import message_json
from ctxview.assembly.incremental.decision_list import CHUNK, LazyDecisionList
from ctxview.jsjson import js_stringify
from ctxview.model import Params, Trace
from ctxview.params_io import build_params, default_params, read_params_file
from ctxview.pipeline import SessionAssembler
from ctxview.samples import build_sample, demo_live_messages, ensure_demo_db
from ctxview.store import LcmStore
from tests.parity.corpus import case_dir

CASES = ["001", "003", "011", "013", "017", "026"]
COLUMNS = ("key", "ordinal", "live_index", "kind", "segment", "selected", "outcome", "tokens", "score")
WORDS = ["helm", "rollback", "database", "migration", "deploy", "error", "the", "kubernetes", "api", "x", "日本"]


def _load(path: Path) -> Any:
    with LcmStore(path) as store:
        return store.load_session()


class _Subject:
    def __init__(self, path: Path, live: tuple[Any, ...] | None) -> None:
        self.path = path
        self.live = live
        self.warm = SessionAssembler(_load(path))
        self.total = sum(item.tokens for item in self.warm.resolved("UTC"))


_SUBJECTS: dict[str, _Subject] = {}


def subject(name: str, tmp_path_factory: pytest.TempPathFactory) -> _Subject:
    if name not in _SUBJECTS:
        if name == "demo":
            _SUBJECTS[name] = _Subject(ensure_demo_db(), tuple(demo_live_messages()))
        elif name == "medium":
            path = tmp_path_factory.mktemp("warm") / "medium.db"
            build_sample(path, "medium", messages=900)
            _SUBJECTS[name] = _Subject(path, None)
        else:
            fields, _ = read_params_file(case_dir(name) / "params.json")
            params = build_params(default_params(engine=True), fields, from_file=True)
            _SUBJECTS[name] = _Subject(case_dir(name) / "session.db", params.live_messages)
    return _SUBJECTS[name]


def cold_run(path: Path, params: Params) -> Trace:
    tool_pairs._FACTS.clear()
    tool_pairs._ALONE.clear()
    message_json.clear()
    diagnostics._STATIC.clear()
    return SessionAssembler(_load(path)).run(params)


def assert_same(warm: Trace, cold: Trace) -> None:
    assert js_stringify(warm.messages) == js_stringify(cold.messages)
    assert warm.message_keys == cold.message_keys
    assert warm.summary == cold.summary
    assert list(warm.decisions) == list(cold.decisions)
    assert repr(warm.stage_records()) == repr(cold.stage_records())  # with the deferred §8 debug record
    assert warm.kept_ordinals == cold.kept_ordinals
    assert warm.warnings == cold.warnings


def assert_columns(trace: Trace) -> None:
    decisions = trace.decisions
    assert isinstance(decisions, LazyDecisionList)
    rows = list(decisions.scan_rows(ROW_FIELDS))  # (the CLI's JSON rows: before the loop below builds decisions)
    assert [[(type(v), v) for v in row] for row in rows] == [
        [(type(getattr(d, name)), getattr(d, name)) for name in ROW_FIELDS] for d in decisions
    ]
    for name in COLUMNS:
        assert decisions.column(name) == [getattr(d, name) for d in decisions], name
    keys = [d.key for d in decisions]
    plain = dict(zip(keys, range(len(keys)), strict=True))
    shared = decisions.key_index()  # (the plan's own key index, with the live inputs' keys on top)
    if shared is not None:
        assert dict(shared) == plain and len(shared) == len(plain)
        assert all(shared.get(key) == index and key in shared for key, index in plain.items())
        assert shared.get("o:-1") is None and "o:-1" not in shared


@st.composite
def edits(draw: st.DrawFn, total: int, live: tuple[Any, ...] | None) -> list[Params]:
    base = default_params(engine=draw(st.booleans()))
    steps = []
    for _ in range(draw(st.integers(1, 5))):
        words = draw(st.lists(st.sampled_from(WORDS), max_size=4))
        prompt = draw(st.one_of(st.none(), st.just(""), st.just(" ".join(words)), st.text(max_size=12)))
        base = replace(
            base,
            token_budget=draw(st.integers(1, max(2, total + total // 5))),
            prompt=prompt,
            fresh_tail_count=draw(st.one_of(st.integers(0, 80), st.floats(0, 30, allow_nan=False))),
            fresh_tail_max_tokens=draw(st.one_of(st.none(), st.integers(0, max(1, total // 3)))),
            prompt_aware_eviction=draw(st.booleans()),
            stub_large_tool_payloads=draw(st.booleans()),
            engine=draw(st.booleans()),
            timezone=draw(st.sampled_from(["UTC", "Asia/Tokyo", "America/New_York"])),
            reserved_tokens=draw(st.integers(0, max(1, total // 4))),
            live_messages=live if draw(st.booleans()) else None,
        )
        steps.append(base)
        if draw(st.booleans()):  # a budget-only edit, the incremental path
            steps.append(replace(base, token_budget=draw(st.integers(1, max(2, total)))))
    return steps


@pytest.mark.parametrize("name", ["demo", *CASES])
def test_warm_assembler_matches_cold_after_any_edits(name: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    subj = subject(name, tmp_path_factory)

    @settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(data=st.data())
    def check(data: st.DataObject) -> None:
        for params in data.draw(edits(subj.total, subj.live)):
            warm = subj.warm.run(params)
            assert_columns(warm)
            assert_same(warm, cold_run(subj.path, params))

    check()


def test_warm_matches_cold_on_a_medium_session(tmp_path_factory: pytest.TempPathFactory) -> None:
    subj = subject("medium", tmp_path_factory)
    total = subj.total
    sequence = [
        Params(token_budget=total // 4, prompt="database migration", prompt_aware_eviction=True),
        Params(token_budget=total // 4, prompt="database migration rollback", prompt_aware_eviction=True),
        Params(token_budget=total // 3, prompt="database migration rollback", prompt_aware_eviction=True),
        Params(token_budget=total // 3, prompt="d", prompt_aware_eviction=True),
        Params(token_budget=total // 8, prompt="deploy", prompt_aware_eviction=False, engine=False),
        Params(token_budget=total * 2, prompt="deploy", prompt_aware_eviction=True, stub_large_tool_payloads=True),
        Params(token_budget=total // 5, prompt="helm kubernetes", prompt_aware_eviction=True, timezone="Asia/Tokyo"),
    ]
    for params in sequence:
        warm = subj.warm.run(params)
        assert_columns(warm)
        assert_same(warm, cold_run(subj.path, params))


def test_lazy_trace_builds_only_what_is_read(tmp_path_factory: pytest.TempPathFactory) -> None:
    subj = subject("medium", tmp_path_factory)
    trace = subj.warm.run(Params(token_budget=subj.total // 4, prompt="database", prompt_aware_eviction=True))
    decisions = trace.decisions
    assert isinstance(decisions, LazyDecisionList)
    assert decisions.built == 0  # the run itself built no Decision
    decisions.column("outcome")
    decisions.column("score")
    assert decisions.built == 0  # nor did the whole-trace columns
    first = decisions[0]
    assert decisions.built == CHUNK and first is decisions[0]
    assert decisions[len(decisions) - 1].key == list(decisions)[-1].key


def test_debug_record_is_deferred_until_stage_records(tmp_path_factory: pytest.TempPathFactory) -> None:
    subj = subject("medium", tmp_path_factory)
    params = Params(token_budget=subj.total // 4, prompt="database", prompt_aware_eviction=True)
    trace = subj.warm.run(params)
    assert "debug" not in trace.stages["assembler"]  # the run hashed nothing for §8
    debug = trace.stage_records()["assembler"]["debug"]
    assert list(debug)[-2:] == ["overflowDiagnostics", "stubStats"]
    assert debug["freshTailCount"] == len([d for d in trace.decisions if d.segment == "fresh-tail"])
    assert trace.stage_records()["assembler"]["debug"] is debug  # built once
    assert list(trace.stages["assembler"])[-1] == "debug"


@pytest.mark.parametrize("name", ["demo", "medium"])
def test_a_prompt_typed_key_by_key_matches_cold_at_every_key(
    name: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """The keystroke path: runs at one fresh tail learn which tool-id chunks come back unchanged, and a run that
    keeps the same items as the one before copies its chunked outcome; every key's trace is still a cold run's."""
    subj = subject(name, tmp_path_factory)
    base = replace(
        default_params(engine=True), token_budget=subj.total // 3, prompt_aware_eviction=True,
        live_messages=subj.live, fresh_tail_count=4,
    )
    kept: list[list[int]] = []
    for end in range(len("database migration") + 1):
        params = replace(base, prompt="database migration"[:end])
        warm = subj.warm.run(params)
        assert_same(warm, cold_run(subj.path, params))
        kept.append(warm.kept_ordinals)
    assert any(a == b for a, b in pairwise(kept))  # (a key that changed nothing kept: the copied outcome)
    assert any(a != b for a, b in pairwise(kept))
