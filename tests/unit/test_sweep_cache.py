"""The sweep's run at the whole session, taken from an earlier process: the same sweep, less work.

A sweep of a session the render cache keeps writes, beside that cache, which whole tool-id chunks
came back unchanged and the engine's values of every message sent as it was resolved.  A later
sweep of the same database state (a fresh load, as in another process) takes them: its results,
top trace included, are exactly those of a sweep that computed everything, and whole chunks flagged
unchanged are not cleaned up again.  A file of another state, or a damaged one, is never used.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from ctxview import render_cache, sweep_cache
from ctxview.assembly.incremental import chunked_repair
from ctxview.assembly.incremental.static import chunk_plan_of, static_of
from ctxview.assembly.volatile import RETRY_MARKER
from ctxview.jsjson import js_stringify
from ctxview.model import Params, Trace
from ctxview.pipeline import SessionAssembler
from ctxview.samples import build_sample
from ctxview.store import LcmStore
from ctxview.sweep import SweepResult, sweep_json, sweep_session

PARAMS = Params(prompt="database migration rollback", prompt_aware_eviction=True)


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "session.db"
    build_sample(path, "medium", messages=400)
    return path


def _load(path: Path) -> SessionAssembler:
    with LcmStore(path) as store:
        return SessionAssembler(store.load_session())


def _swept(assembler: SessionAssembler) -> SweepResult:
    return sweep_session(assembler, PARAMS, points=9, runs=4, workers=1)


def _same(a: SweepResult, b: SweepResult) -> None:
    assert sweep_json(a) == sweep_json(b)
    assert a.top_trace is not None and b.top_trace is not None
    assert a.top_trace.summary == b.top_trace.summary
    assert list(a.top_trace.decisions) == list(b.top_trace.decisions)
    assert js_stringify(a.top_trace.messages) == js_stringify(b.top_trace.messages)
    assert a.top_trace.message_keys == b.top_trace.message_keys
    assert js_stringify(a.top_trace.stage_records()) == js_stringify(b.top_trace.stage_records())  # (§8 hashes too)
    assert a.top_trace.warnings == b.top_trace.warnings


def _sweep_files(directory: Path) -> list[str]:
    return sorted(name for name in os.listdir(directory) if name.endswith(sweep_cache.SUFFIX))


def _plan(assembler: SessionAssembler) -> chunked_repair.ChunkPlan:
    resolved = assembler.resolved(PARAMS.timezone)
    return chunk_plan_of(static_of(assembler.session, resolved, PARAMS.timezone), resolved)


class _Counted:
    """Counts ``ChunkPlan._outcome`` calls (whole clean-ups and repairs of a chunk's selected items) and
    ``ChunkPlan.whole_selection_flags`` passes (one clean-up and repair of every item)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls = 0
        self.passes = 0
        original = chunked_repair.ChunkPlan._outcome
        original_pass = chunked_repair.ChunkPlan.whole_selection_flags

        def counted(plan: chunked_repair.ChunkPlan, *args: object) -> chunked_repair.ChunkOutcome:
            self.calls += 1
            return original(plan, *args)  # type: ignore[arg-type]

        def counted_pass(plan: chunked_repair.ChunkPlan, *args: object) -> bytes:
            self.passes += 1
            return original_pass(plan, *args)  # type: ignore[arg-type]

        monkeypatch.setattr(chunked_repair.ChunkPlan, "_outcome", counted)
        monkeypatch.setattr(chunked_repair.ChunkPlan, "whole_selection_flags", counted_pass)


def test_a_second_process_takes_the_whole_run_and_sweeps_the_same(
    cache: Path, db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    counted = _Counted(monkeypatch)
    first = _load(db)
    computed = _swept(first)
    computed_calls = counted.calls
    assert counted.passes == 1  # (the run at the whole session learned its chunks from one pass)
    assert len(_sweep_files(cache)) == 1
    plan = _plan(first)
    whole = plan.whole_run()
    assert whole is not None
    flags = plan.unchanged_chunks(*whole)
    assert 0 < flags.count(1) < len(flags)  # the sample has chunks of both kinds

    counted.calls = counted.passes = 0
    second = _load(db)
    assert sweep_cache.prime(second, PARAMS)
    told = _plan(second)
    assert told is not plan and told.kept_across
    messages = [told.items[p].message for p in range(len(told.items))]
    tokens, h16s, pairings = second.engine_memo(second.rules(PARAMS)[0]).known(messages)
    measured = [None not in values for values in zip(tokens, h16s, pairings, strict=True)]
    assert sum(measured) > len(messages) // 2  # measured before any run of this process
    assert not sweep_cache.prime(second, PARAMS)  # once
    taken = _swept(second)
    _same(taken, computed)
    assert counted.passes == 0 and counted.calls <= computed_calls  # (the flags came from the file)
    assert _plan(second).unchanged_chunks(*whole) == flags
    assert len(_sweep_files(cache)) == 1  # nothing written again: it was read

    monkeypatch.setenv("CTXVIEW_CACHE", "off")  # and both are what a sweep without any file gives
    cold = _load(db)
    assert not sweep_cache.prime(cold, PARAMS)
    _same(_swept(cold), computed)


def test_a_damaged_or_foreign_file_is_not_used(cache: Path, db: Path, tmp_path: Path) -> None:
    computed = _swept(_load(db))
    (name,) = _sweep_files(cache)
    path = cache / name
    data = bytearray(path.read_bytes())
    header = sweep_cache._Target(_load(db), PARAMS).header
    payload_at = len(sweep_cache._MAGIC) + 8 + len(header) + render_cache.DIGEST_BYTES + 8
    data[payload_at + 10] ^= 0xFF  # in the payload: the checksum no longer holds
    path.write_bytes(bytes(data))
    damaged = _load(db)
    assert not sweep_cache.prime(damaged, PARAMS)
    _same(_swept(damaged), computed)  # (and it writes a good file again)
    assert sweep_cache.prime(_load(db), PARAMS)

    other = tmp_path / "other.db"  # another database, its file in the same place
    build_sample(other, "medium", messages=400)
    stranger = _load(other)
    os.replace(path, sweep_cache._Target(stranger, PARAMS).path)
    assert not sweep_cache.prime(stranger, PARAMS)
    assert not sweep_cache.prime(_load(db), PARAMS)  # (its own file is gone)

    cut_elsewhere = Params(prompt=PARAMS.prompt, prompt_aware_eviction=True, fresh_tail_count=3)
    again = _load(db)
    _swept(again)  # writes the file anew, at the default fresh tail's cut
    moved = _load(db)
    assert sweep_cache.prime(moved, cut_elsewhere)  # the measures hold at any cut; the chunk flags do not
    _same(
        sweep_session(moved, cut_elsewhere, points=9, runs=4, workers=1),
        sweep_session(_load(db), cut_elsewhere, points=9, runs=4, workers=1),
    )


def test_nothing_is_kept_for_a_session_the_render_cache_does_not_keep(
    cache: Path, db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CTXVIEW_CACHE_MIN_MESSAGES", "100000")
    _swept(_load(db))
    assert not cache.exists() or _sweep_files(cache) == []
    monkeypatch.setenv("CTXVIEW_CACHE_MIN_MESSAGES", "0")
    monkeypatch.setenv("CTXVIEW_CACHE", "off")
    _swept(_load(db))
    assert not cache.exists() or _sweep_files(cache) == []


def test_a_range_top_the_clamp_cut_is_kept_per_run_and_not_run_again(
    cache: Path, db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    budgets: list[int] = []
    original = SessionAssembler.run

    def counted(self: SessionAssembler, params: Params) -> Trace:
        budgets.append(params.token_budget)
        return original(self, params)

    monkeypatch.setattr(SessionAssembler, "run", counted)
    computed = _swept(_load(db))
    at_items = computed.total_tokens  # the range's first top: the session's assembler size (nothing reserved)
    top = replace(PARAMS, token_budget=at_items)
    assert at_items in budgets and at_items not in computed.budgets  # the clamp cut there: the range goes on
    first_runs = list(budgets)
    (cut_file,) = sorted(name for name in os.listdir(cache) if name.endswith(sweep_cache.CUT_SUFFIX))

    second = _load(db)  # (another load: what it knows comes from the file)
    assert sweep_cache.known_cut(second, top) == computed.budgets[-1]
    budgets.clear()
    _same(_swept(second), computed)
    assert sorted(budgets) == sorted(b for b in first_runs if b != at_items)  # that one run less

    os.remove(cache / cut_file)  # without the file: run again, and written again
    budgets.clear()
    _same(_swept(_load(db)), computed)
    assert sorted(budgets) == sorted(first_runs)
    assert sweep_cache.known_cut(_load(db), top) == computed.budgets[-1]

    # other params (a live input the engine appends: nothing is cut at the top) are not given that top
    live = replace(PARAMS, live_messages=({"role": "user", "content": RETRY_MARKER + "\n" + "word " * 2000},))
    other = _load(db)
    assert sweep_cache.known_cut(other, replace(live, token_budget=at_items)) is None
    moved = sweep_session(other, live, points=9, runs=4, workers=1)
    monkeypatch.setenv("CTXVIEW_CACHE", "off")
    plain = sweep_session(_load(db), live, points=9, runs=4, workers=1)
    _same(moved, plain)
    assert plain.budgets[-1] != computed.budgets[-1]


def test_a_sweep_shared_with_a_forked_worker_writes_the_file(cache: Path, db: Path) -> None:
    """With a forked worker the file is written (here, once the runs are in, when files are written in the
    foreground) with the values of every message the range's forked measure gave; a later process takes it
    and sweeps the same."""
    first = _load(db)
    alone = _swept(first)
    (name,) = _sweep_files(cache)
    os.remove(cache / name)
    whole = _plan(first).whole_run()
    assert whole is not None
    second = _load(db)
    shared = sweep_session(second, PARAMS, points=9, runs=4, workers=2)
    assert _sweep_files(cache) == [name]
    _same(shared, alone)
    assert _plan(second).unchanged_chunks(*whole) == _plan(first).unchanged_chunks(*whole)
    later = _load(db)
    assert sweep_cache.prime(later, PARAMS)
    _same(_swept(later), alone)
    assert _plan(later).unchanged_chunks(*whole) == _plan(first).unchanged_chunks(*whole)


def test_the_forked_worker_starts_the_writer_and_this_process_forks_none(
    cache: Path, db: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Writing in the background, the sweep's forked worker starts the file's writer once its runs are made
    (it has what this process would write); this process starts none, and a later process takes the file
    and sweeps the same."""
    import time

    from ctxview.assembly import forked_map

    first = _load(db)
    alone = _swept(first)
    (name,) = _sweep_files(cache)
    os.remove(cache / name)
    monkeypatch.setenv("CTXVIEW_CACHE_WRITE", "background")
    starters = tmp_path / "starters"
    plain = forked_map.run_detached

    def recorded(work: Any, **options: Any) -> bool:
        with open(starters, "a") as out:  # (a file: the forked worker's calls are seen here too)
            out.write(f"{os.getpid()}\n")
        return plain(work, **options)

    monkeypatch.setattr(forked_map, "run_detached", recorded)
    second = _load(db)
    sweep_session(second, PARAMS, points=9, runs=4, workers=2)
    started = starters.read_text().split()
    assert len(started) == 1 and int(started[0]) != os.getpid()  # one writer, started by the worker
    assert _plan(second).kept_across  # (this process does not write it again)
    deadline = time.monotonic() + 60
    while _sweep_files(cache) != [name] and time.monotonic() < deadline:  # (written whole, then renamed)
        time.sleep(0.05)
    later = _load(db)
    assert sweep_cache.prime(later, PARAMS)
    _same(_swept(later), alone)


def test_the_sweep_does_not_wait_for_its_workers_writer(cache: Path, db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The writer the forked worker starts holds nothing this process reads to its end (the worker's pipe)."""
    import time

    monkeypatch.setenv("CTXVIEW_CACHE_WRITE", "background")
    plain = sweep_cache._write

    def slow(*args: Any) -> bool:
        time.sleep(10)
        return plain(*args)

    monkeypatch.setattr(sweep_cache, "_write", slow)
    began = time.monotonic()
    sweep_session(_load(db), PARAMS, points=9, runs=4, workers=2)
    assert time.monotonic() - began < 6


def _measured_items(assembler: SessionAssembler) -> list[object]:
    """The items whose messages a sweep's file measures, as ``sweep_cache.prime`` reads them."""
    target = sweep_cache._Target(assembler, PARAMS)
    payload = sweep_cache._read(target)
    assert payload is not None
    return [target.plan.items[p] for p in payload[3]]


def test_the_file_gives_the_measured_messages_in_one_piece(
    cache: Path, db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The messages of every measured item come from the file, not unpacked from the render cache one by one,
    and are what they unpack to; an item already unpacked keeps its own object."""
    from ctxview.pipeline import save_pending_renders

    computed = _swept(_load(db))
    save_pending_renders()  # (the render cache the next loads read)
    fresh = _load(db)
    expected = [item.message for item in _measured_items(fresh)]  # (unpacked from the render cache)
    second = _load(db)
    items = _measured_items(second)
    assert sum(type(item.stored_message) is not dict for item in items) > len(items) // 2  # (packed: not unpacked)
    already = items[len(items) // 2].message  # one unpacked before the file is read

    def unpacked(*_args: object) -> None:
        raise AssertionError("unpacked from the render cache")

    with monkeypatch.context() as patched:
        patched.setattr(render_cache.MessageFile, "messages", unpacked)
        patched.setattr(render_cache.MessageFile, "message", unpacked)
        assert sweep_cache.prime(second, PARAMS)
        assert [item.message for item in items] == expected
    assert items[len(items) // 2].message is already
    memo = second.engine_memo(second.rules(PARAMS)[0])
    tokens, h16s, pairings = memo.known([item.message for item in items])
    assert None not in tokens and None not in h16s and None not in pairings
    _same(_swept(second), computed)


def test_a_file_without_its_messages_unpacks_them_from_the_render_cache(
    cache: Path, db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where ``marshal`` cannot hold a message the file keeps the values only; a later sweep unpacks the
    messages itself and sweeps the same."""
    import marshal

    plain_dumps = marshal.dumps

    def dumps(value: object, *args: int) -> bytes:
        if isinstance(value, list) and value and isinstance(value[0], dict):  # (a block of the messages)
            raise ValueError("unmarshallable object")
        return plain_dumps(value, *args)

    # (kept for both processes: a header made through this wrapper is marshalled with one more reference to it,
    # which sets a flag in its bytes)
    monkeypatch.setattr(sweep_cache.marshal, "dumps", dumps)
    computed = _swept(_load(db))
    second = _load(db)
    payload = sweep_cache._read(sweep_cache._Target(second, PARAMS))
    assert payload is not None and payload[-1] is None  # (the values only)
    assert sweep_cache.prime(second, PARAMS)
    _same(_swept(second), computed)


def test_a_damaged_block_of_messages_is_unpacked_from_the_render_cache(cache: Path, db: Path) -> None:
    """The messages after the values are checked block by block: one that does not read back as written
    leaves them all to the render cache (the values are taken all the same)."""
    from ctxview.pipeline import save_pending_renders

    computed = _swept(_load(db))
    save_pending_renders()
    (name,) = _sweep_files(cache)
    path = cache / name
    data = bytearray(path.read_bytes())
    data[-3] ^= 0xFF  # in the last block of messages (after the checksummed values)
    path.write_bytes(bytes(data))
    damaged = _load(db)
    payload = sweep_cache._read(sweep_cache._Target(damaged, PARAMS))
    assert payload is not None and payload[-1] is None  # (the values only)
    assert sweep_cache.prime(damaged, PARAMS)
    _same(_swept(damaged), computed)
