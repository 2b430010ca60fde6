"""The engine's values of every message, kept by the render cache after its messages (``message_values``).

The writer measures each message it writes, under both lines' estimates; a later open reads them back for
the messages it reads from that file: each is the value the engine memo measures for that message.  Values
measured by other code, damaged, or of a message the writer could not measure are never taken; a budget
sweep in one process (the TUI's) takes them instead of measuring, and sweeps exactly the same.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ctxview import message_values, render_cache, sweep_measure
from ctxview.assembly import volatile
from ctxview.assembly.resolve import ResolvedItem, messages_of
from ctxview.assembly.tokens import serialized_message_tokens, serialized_message_tokens_1_0
from ctxview.assembly.volatile import SerializedCache
from ctxview.model import Params
from ctxview.pipeline import SessionAssembler, save_pending_renders
from ctxview.samples import build_sample
from ctxview.store import LcmStore
from ctxview.sweep import budget_range, sweep_session

PARAMS = Params(token_budget=8000, prompt="database migration rollback", prompt_aware_eviction=True)


def _load(db: Path) -> SessionAssembler:
    with LcmStore(db) as store:
        return SessionAssembler(store.load_session())


@pytest.fixture
def db(cache: Path, tmp_path: Path) -> Path:
    """A session whose render cache file is written (by a first open)."""
    path = tmp_path / "session.db"
    build_sample(path, "medium", messages=400)
    _load(path).resolved("UTC")
    save_pending_renders()
    assert list(cache.glob("*.renders"))
    return path


def _items(db: Path) -> list[ResolvedItem]:
    items = [item for item in _load(db).resolved("UTC") if item.is_message]
    assert items and all(item.packed_at is not None for item in items)
    return items


@pytest.mark.parametrize("estimate", [serialized_message_tokens, serialized_message_tokens_1_0])
def test_the_kept_values_are_the_ones_the_memo_measures(db: Path, estimate: Any) -> None:
    items = _items(db)
    kept = message_values.kept_for(items, estimate)
    assert kept is not None
    positions, tokens, h16s, pairings = kept
    assert positions == list(range(len(items)))
    memo = SerializedCache(estimate=estimate)
    messages = messages_of(items)
    assert tokens == memo.tokens_of_all(messages)
    assert h16s == memo.h16_of_all(messages)
    assert pairings == memo.pairing_of_all(messages)
    assert any(calls or answers for calls, answers in pairings)  # (the session issues and answers calls)
    assert message_values.kept_for(items, lambda message: 0) is None  # (an estimate the file does not keep)


def test_values_of_other_code_or_damaged_are_not_taken(db: Path, cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    items = _items(db)
    assert message_values.kept_for(items, serialized_message_tokens) is not None
    with monkeypatch.context() as patched:
        patched.setattr(render_cache, "_values_version", lambda: "other measuring code")
        assert message_values.kept_for(_items(db), serialized_message_tokens) is None
    (path,) = cache.glob("*.renders")
    data = bytearray(path.read_bytes())
    data[-40] ^= 0xFF  # (inside the values, the file's last piece)
    path.write_bytes(bytes(data))
    damaged = _items(db)
    assert message_values.kept_for(damaged, serialized_message_tokens) is None
    assert [message for message in messages_of(damaged)]  # (the messages themselves still read)


def test_a_message_the_writer_could_not_measure_is_left_out() -> None:
    collected = message_values.Collected()
    good = {"role": "user", "content": "hello"}
    for message in (good, None, {"role": "assistant", "content": []}):  # (None: one the writer could not read)
        collected.add(message)
    kept = message_values.read(collected.blob(), 3)
    assert kept is not None
    assert message_values.read(collected.blob(), 4) is None  # (values of another number of messages)
    got = kept.of([2, 1, 0], serialized_message_tokens)
    assert got is not None
    positions, tokens, h16s, _pairings = got
    assert positions == [0, 2]  # (the second asked, the unmeasurable one, is left to the run)
    memo = SerializedCache()
    assert tokens == [memo({"role": "assistant", "content": []}), memo(good)]
    assert h16s[1] == memo.h16(good)


def test_a_sweep_in_one_process_takes_them_and_sweeps_the_same(
    db: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    measured: list[int] = []
    plain = volatile.js_stringify_message_utf8

    def counted(message: Any) -> Any:
        measured.append(1)
        return plain(message)

    def range_measures(assembler: SessionAssembler) -> int:
        """Messages measured by ``budget_range`` in one process, once a first run measured what it sends (with
        nothing an earlier sweep kept: its run at the whole session is made)."""
        for kept in (*cache.glob("*.sweepcut"), *cache.glob("*.sweep")):
            kept.unlink()
        assembler.run(PARAMS)
        before = len(measured)
        budget_range(assembler, PARAMS, workers=1)
        return len(measured) - before

    with monkeypatch.context() as patched:
        patched.setattr(volatile, "js_stringify_message_utf8", counted)
        with_values = range_measures(_load(db))
        patched.setattr(sweep_measure, "kept_for", lambda *args: None)
        without = range_measures(_load(db))
    assert without > 100 and with_values < without // 10  # (only messages the file does not hold are measured)
    taken = sweep_session(_load(db), PARAMS, points=9, runs=4, workers=1)
    monkeypatch.setenv("CTXVIEW_CACHE", "off")
    plain_sweep = sweep_session(_load(db), PARAMS, points=9, runs=4, workers=1)
    taken.elapsed = plain_sweep.elapsed = 0.0
    assert taken == plain_sweep


def test_a_forked_sweep_takes_them_and_its_child_only_learns_flags(
    db: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With a fork, the range's run reads the values (and unpacks every message) as it starts learning the chunk
    flags with the child, which measures nothing; the sweep is the one of a process that measured everything."""
    started: list[Any] = []
    start = sweep_measure.start
    child = sweep_measure._child

    def recorded(assembler: SessionAssembler, params: Params, **options: Any) -> Any:
        fork = start(assembler, params, **options)
        started.append(fork)
        return fork

    def child_measures(*args: Any, measure: bool = True) -> None:
        with open(cache / "child-measures", "w") as out:  # (a file: this runs in the child)
            out.write(str(measure))
        child(*args, measure=measure)

    monkeypatch.setattr(sweep_measure, "start", recorded)
    monkeypatch.setattr(sweep_measure, "_child", child_measures)
    shared = sweep_session(_load(db), PARAMS, points=9, runs=4, workers=2)
    (fork,) = started
    assert isinstance(fork, sweep_measure.MeasuringFork) and fork.kept and fork.taken is True
    assert (cache / "child-measures").read_text() == "False"
    monkeypatch.setenv("CTXVIEW_CACHE", "off")
    plain_sweep = sweep_session(_load(db), PARAMS, points=9, runs=4, workers=1)
    shared.elapsed = plain_sweep.elapsed = 0.0
    assert shared == plain_sweep
