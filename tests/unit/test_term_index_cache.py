"""The term index kept beside the render cache: loaded, it is the index a build gives, and gives the same runs;
a damaged file, or one of other items, is never used."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from ctxview import term_index_cache
from ctxview.assembly.incremental import termindex
from ctxview.assembly.incremental.static import static_of
from ctxview.model import KEPT_OUTCOMES
from ctxview.params_io import default_params
from ctxview.pipeline import SessionAssembler
from ctxview.samples import build_sample
from ctxview.store import LcmStore

PROMPTS = ("deploy", "deploy rollback", "database migration rollback", "kubectl")


def _opened(db: Path) -> SessionAssembler:
    with LcmStore(db) as store:
        return SessionAssembler(store.load_session())


def _index_parts(assembler: SessionAssembler, params: Any) -> tuple[Any, ...]:
    resolved = assembler.resolved(params.timezone)
    items = static_of(assembler.session, resolved, params.timezone).overlay.items
    hit = resolved.cache[f"term-index:{id(items)}"]
    totals, slot, offsets, positions, tfs = hit[1].parts()
    postings = {term: (list(positions[offsets[k] : offsets[k + 1]]), list(tfs[offsets[k] : offsets[k + 1]]))
                for term, k in slot.items()}
    return list(totals), postings, hit[1].item_tokens


def _runs(assembler: SessionAssembler, params: Any) -> list[tuple[Any, ...]]:
    out = []
    for prompt in PROMPTS:
        trace = assembler.run(replace(params, prompt=prompt))
        kept = [d.key for d in trace.decisions if d.outcome in KEPT_OUTCOMES]
        scores = [d.score for d in trace.decisions]
        out.append((trace.summary.final_tokens, kept, scores, trace.messages))
    return out


@pytest.fixture
def session_db(tmp_path: Path) -> Path:
    db = tmp_path / "session.db"
    build_sample(db, "medium", messages=600)
    return db


def _count_builds(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    built: list[int] = []
    original = termindex.TermIndex.__init__

    def counting(self: Any, items: Any) -> None:
        built.append(len(items))
        original(self, items)

    monkeypatch.setattr(termindex.TermIndex, "__init__", counting)
    return built


def test_a_warm_open_loads_the_index_a_build_gives_and_runs_alike(
    cache: Path, session_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    params = replace(default_params(engine=True), token_budget=6000, prompt_aware_eviction=True)
    built = _count_builds(monkeypatch)
    checksums: list[int] = []
    texts_crc = term_index_cache._texts_crc
    monkeypatch.setattr(term_index_cache, "_texts_crc", lambda items: checksums.append(1) or texts_crc(items))
    first = _opened(session_db)
    first.prepare(params)
    assert len(built) == 1
    assert len(checksums) == 1  # (the texts checked once for the load that found nothing and the save after it)
    assert len(list(cache.glob(f"*{term_index_cache.SUFFIX}"))) == 1
    cold_index, cold_runs = _index_parts(first, params), _runs(first, params)

    second = _opened(session_db)
    second.prepare(params)
    assert len(built) == 1  # (loaded, not built)
    assert _index_parts(second, params) == cold_index
    assert _runs(second, params) == cold_runs
    assert _runs(_opened(session_db), params) == cold_runs  # (and as a run that never indexes)


def test_a_damaged_file_or_other_items_are_never_used(
    cache: Path, session_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    params = replace(default_params(engine=True), token_budget=6000, prompt_aware_eviction=True)
    first = _opened(session_db)
    first.prepare(params)
    cold_runs = _runs(first, params)
    (path,) = cache.glob(f"*{term_index_cache.SUFFIX}")

    reopened = _opened(session_db)
    resolved = reopened.resolved(params.timezone)
    items = static_of(reopened.session, resolved, params.timezone).overlay.items
    assert term_index_cache.load(reopened.session, params.timezone, items) is not None
    assert term_index_cache.load(reopened.session, params.timezone, items[:-1]) is None  # (other items)
    changed = list(items)
    changed[3] = replace(changed[3], text=changed[3].text + " changed")
    assert term_index_cache.load(reopened.session, params.timezone, changed) is None  # (another text)

    data = bytearray(path.read_bytes())
    data[-20] ^= 0xFF  # (in the payload: its checksum fails)
    path.write_bytes(bytes(data))
    built = _count_builds(monkeypatch)
    damaged = _opened(session_db)
    damaged.prepare(params)
    assert len(built) == 1  # (built again)
    assert _runs(damaged, params) == cold_runs


def _saved_parts(cache: Path, session_db: Path, change: Any) -> bool:
    """Save the session's index with ``change`` made to its parts; whether a load then takes it."""
    params = default_params(engine=True)
    opened = _opened(session_db)
    opened.prepare(params)
    resolved = opened.resolved(params.timezone)
    items = static_of(opened.session, resolved, params.timezone).overlay.items
    parts = list(termindex.TermIndex(items).parts())
    change(parts)
    made = termindex.TermIndex.of_parts(items, tuple(parts))  # type: ignore[arg-type]
    assert term_index_cache.save(opened.session, params.timezone, items, made)
    return term_index_cache.load(opened.session, params.timezone, items) is not None


@pytest.mark.parametrize(
    ("name", "change"),
    [
        ("as built", lambda parts: None),
        ("a posting past the items", lambda parts: parts[3].__setitem__(0, 10**6)),
        ("a negative posting", lambda parts: parts[3].__setitem__(0, -1)),
        ("offsets not ascending", lambda parts: parts[2].__setitem__(1, parts[2][-1] + 1)),
        ("one term count too few", lambda parts: parts[0].pop()),
        ("a slot past the offsets", lambda parts: parts[1].__setitem__("deploy", len(parts[1]) + 5)),
        ("a posting without a frequency", lambda parts: parts[4].pop()),
    ],
)
def test_parts_that_do_not_make_an_index_of_the_items_are_refused(
    cache: Path, session_db: Path, name: str, change: Any
) -> None:
    assert _saved_parts(cache, session_db, change) == (name == "as built")


def test_a_cut_or_altered_tail_is_refused(cache: Path, session_db: Path) -> None:
    params = default_params(engine=True)
    _opened(session_db).prepare(params)
    (path,) = cache.glob(f"*{term_index_cache.SUFFIX}")
    whole = path.read_bytes()
    reopened = _opened(session_db)
    resolved = reopened.resolved(params.timezone)
    items = static_of(reopened.session, resolved, params.timezone).overlay.items
    assert term_index_cache.load(reopened.session, params.timezone, items) is not None
    path.write_bytes(whole[:-5])  # (the frequencies cut short)
    assert term_index_cache.load(reopened.session, params.timezone, items) is None
    altered = bytearray(whole)
    altered[-5] ^= 0x01  # (a frequency changed: that array's CRC-32 fails)
    path.write_bytes(bytes(altered))
    assert term_index_cache.load(reopened.session, params.timezone, items) is None


def test_nothing_is_kept_with_the_cache_off(
    cache: Path, session_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CTXVIEW_CACHE", "off")
    params = default_params(engine=True)
    _opened(session_db).prepare(params)
    assert not cache.exists() or not list(cache.glob(f"*{term_index_cache.SUFFIX}"))
