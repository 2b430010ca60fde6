"""What a budget sweep's run at the whole session learns, kept across processes beside the render cache.

The sweep's dearest step is its run at the top of the range, where every item is selected: each
tool-id chunk is cleaned up and repaired (§7.1–§7.4) and every message is measured for the engine
(serialized tokens, hash, pairing ids).  Neither depends on the budget or the prompt, only on the
session, the fresh tail's cut and the engine line, and nearly every chunk comes back unchanged (its
items' own messages, nothing recorded).  So after a sweep of a session the render cache keeps
(``render_cache.MIN_MESSAGES`` messages or more), this module writes, next to that cache, which
whole chunks came back unchanged at the sweep's cut and the engine's values of every message that
was sent as it was resolved, with those messages themselves (read a few thousand at a time, they come in
half the time of unpacking each from the render cache); the next sweep of the same database state
(another process, another prompt) takes them instead of computing them again.

A file is used only for the same database state (``render_cache.database_identity``, the one the
session was read at), conversation, time zone, engine line and item count, for the same ctxview
code (the render cache's digest and one over the modules these values come from), and when its
checksum holds; anything else, or any failure, means the values are computed as usual.  Chunks
are taken only at the cut they were flagged at; a chunk not flagged is cleaned up as before.
``CTXVIEW_CACHE=off`` turns it off with the render cache.

A small file beside it (``CUT_SUFFIX``) keeps where the serialized clamp cut at the top of a range
(``sweep.budget_range``): when the clamp cuts at the whole session's assembler size, the range's top
is the serialized size before that cut, which only a run at the whole session measures.  Kept per
run (every parameter and the source of every core module, not only of those above) as soon as a
sweep learns it, it saves the next sweep of the same database state with the same parameters that
run: its budgets are known without it.
"""

from __future__ import annotations

import functools
import hashlib
import marshal
import os
import weakref
import zlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ctxview import render_cache
from ctxview.assembly.live import dense_pairings, sparse_pairings
from ctxview.assembly.resolve import adopt_messages, messages_of
from ctxview.gc_pause import gc_paused
from ctxview.jserrors import JSError

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ctxview.assembly.incremental.chunked_repair import ChunkPlan
    from ctxview.assembly.volatile import SerializedCache
    from ctxview.model import Params
    from ctxview.pipeline import SessionAssembler

FORMAT = 2
SUFFIX = ".sweep"
_MAGIC = b"ctxview-sweep\n"
CUT_SUFFIX = ".sweepcut"
_CUT_MAGIC = b"ctxview-sweep-cut\n"
CUTS_KEPT = 64  # runs per file (the newest)
# the measured messages are marshalled this many at a time: each ``marshal`` call keeps a table of every object it
# has seen, and one call for 100,000 messages took twice as long to write and a third longer to read
MESSAGES_PER_BLOB = 4096

# the modules whose rules the kept values follow: clean-up, repair, chunking, the engine's measures
_SOURCES = (
    "ctxview.assembly.postprocess", "ctxview.assembly.tool_pairs", "ctxview.assembly.incremental.chunked_repair",
    "ctxview.assembly.incremental.static", "ctxview.assembly.volatile", "ctxview.assembly.tokens",
    "ctxview.assembly.rules", "ctxview.assembly.focus", __name__,
)


@functools.cache
def _code_version() -> str:
    return render_cache.sources_digest(f"{FORMAT}\0{render_cache._code_version()}", _SOURCES)


@functools.cache
def _run_code_version() -> str:
    """A digest of every core module's source (all but the TUI's): a whole run may depend on any of them."""
    import ctxview

    root = Path(ctxview.__file__).resolve().parent
    digest = hashlib.sha256(_code_version().encode())
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root)
        if relative.parts[0] == "tui":
            continue
        digest.update(f"\0{relative.as_posix()}\0".encode())
        try:
            digest.update(path.read_bytes())
        except OSError:
            digest.update(b"?")
    return digest.hexdigest()


def _run_key(params: Params) -> str | None:
    """What identifies a run of a session (with the file's header): every parameter and the code; None where
    a parameter reads something outside the database (a citations file) or does not print the same twice."""
    if params.citations_path is not None:
        return None
    text = repr(params)
    if " at 0x" in text:
        return None
    return hashlib.sha256(f"{_run_code_version()}\0{text}".encode()).hexdigest()


# per engine memo (one per loaded session and engine line): run key → the serialized size before the clamp's cut
_CUTS: weakref.WeakKeyDictionary[SerializedCache, dict[str, int]] = weakref.WeakKeyDictionary()


class _Target:
    """The session's plan and engine memo for a sweep's params, and where their file lives."""

    def __init__(self, assembler: SessionAssembler, params: Params) -> None:
        from ctxview.assembly.incremental.static import chunk_plan_of, static_of

        session = assembler.session
        rules = assembler.rules(params)[0]
        resolved = assembler.resolved(params.timezone, rules.sender_metadata)
        static = static_of(session, resolved, params.timezone)
        self.plan: ChunkPlan = chunk_plan_of(static, resolved)
        self.memo: SerializedCache = assembler.engine_memo(rules)
        conversation = session.conversation.conversation_id
        self.header = marshal.dumps(
            (_code_version(), session.cache_identity, conversation, params.timezone, rules.line,
             rules.sender_metadata, len(self.plan.items), len(self.plan.start))
        )
        directory = render_cache.cache_dir()
        assert directory is not None and session.cache_identity is not None  # (checked by ``_target``)
        name = hashlib.sha256(
            f"{session.cache_identity[0]}\0{conversation}\0{params.timezone}\0{rules.line}".encode()
        ).hexdigest()[:32]
        self.directory = directory
        self.path = directory / f"{name}{SUFFIX}"


def _target(assembler: SessionAssembler, params: Params) -> _Target | None:
    session = assembler.session
    if (
        session.cache_identity is None
        or not render_cache.enabled()
        or render_cache.cache_dir() is None
        or len(session.messages) < render_cache.min_messages()
    ):
        return None
    try:
        return _Target(assembler, params)
    except JSError:  # the engine cannot resolve this session: nothing to keep
        return None


def known_cut(assembler: SessionAssembler, params: Params) -> int | None:
    """The serialized size before the clamp's cut (``serializedTokensBefore``) of the run at ``params``, as
    ``note_cut`` told it in this process or in an earlier one for this database state; None: not known."""
    target = _target(assembler, params)
    key = _run_key(params) if target is not None else None
    if target is None or key is None:
        return None
    return _cuts(target).get(key)


def note_cut(assembler: SessionAssembler, params: Params, before: int) -> bool:
    """Keep the clamp's cut of the run at ``params``, in this process and in the file (False: not written)."""
    target = _target(assembler, params)
    key = _run_key(params) if target is not None else None
    if target is None or key is None:
        return False
    cuts = _cuts(target)
    cuts.pop(key, None)
    cuts[key] = before  # (the newest last)
    while len(cuts) > CUTS_KEPT:
        del cuts[next(iter(cuts))]
    try:
        render_cache.write_entry(_cut_path(target), _CUT_MAGIC, target.header, marshal.dumps(cuts))
        render_cache.prune(target.directory, CUT_SUFFIX)
    except (OSError, ValueError):
        return False
    return True


def _cut_path(target: _Target) -> Path:
    return target.path.with_suffix(CUT_SUFFIX)


def _cuts(target: _Target) -> dict[str, int]:
    """The cuts known for the target's session and line: read from its file on first use."""
    cuts = _CUTS.get(target.memo)
    if cuts is None:
        cuts = _CUTS[target.memo] = _read_cuts(target)
    return cuts


def _read_cuts(target: _Target) -> dict[str, int]:
    payload = render_cache.read_entry(_cut_path(target), _CUT_MAGIC, target.header)
    if payload is None:
        return {}  # none, or of another database state, code, time zone or engine line, or damaged
    try:
        stored = marshal.loads(payload)
    except (ValueError, EOFError, TypeError):
        return {}
    if not isinstance(stored, dict) or not all(type(k) is str and type(v) is int for k, v in stored.items()):
        return {}
    return stored


def prime(assembler: SessionAssembler, params: Params) -> bool:
    """Take what an earlier sweep of this database state kept, before the run at the whole session.

    True when a file was found and taken (the chunk flags and every kept message measure).
    """
    target = _target(assembler, params)
    if target is None or target.plan.kept_across:
        return False
    # what is read and unpacked here lives as long as the session: built with the collector paused (each
    # collection on the way walked the whole session: ~0.5 s of 0.8 at 100,000 items) and kept out of its way
    with gc_paused(keep=True):
        payload = _read(target)
        if payload is None:
            return False
        cut, orphan_ordinal, flags, positions, tokens, h16s, pairings, kept_messages = payload
        plan = target.plan
        if not plan.assume_unchanged(cut, orphan_ordinal, flags):
            return False
        measured = list(map(plan.items.__getitem__, positions))
        # (the run at the whole session unpacks them anyway: here as the file keeps them, or else in blocks of the
        # render cache file)
        if kept_messages is not None:
            messages = adopt_messages(measured, kept_messages)
        else:
            messages = messages_of(measured)
        target.memo.remember(messages, tokens, h16s, pairings)
    plan.kept_across = True
    return True


def save(assembler: SessionAssembler, params: Params, *, background: bool = False) -> bool:
    """Keep what this process's run at the whole session learned, unless it came from a file already.

    False (nothing written) when there was no such run, the session is not one the render cache keeps,
    or the file cannot be written.  ``background``: written by a process of its own that this one does not
    wait for, where one can be started and ``render_cache.write_in_background`` allows it (only the next
    sweep reads the file: at 100,000 items its ~36 MB took 0.3–1 s of the first sweep); then True once
    that process is started.
    """
    unsaved = _unsaved(assembler, params)
    if unsaved is None:
        return False
    if background and _start_writer(*unsaved):
        return True
    return _write(*unsaved)


def start_save(assembler: SessionAssembler, params: Params, *, leave: Sequence[int] = ()) -> bool:
    """``save`` in a process of its own, or nothing: True once that process is started (a sweep's forked share,
    leaving when its runs are sent, writes the file so that the share that stays does not fork for it).
    ``leave``: descriptors that process must not hold (the pipe the share's runs go back through)."""
    unsaved = _unsaved(assembler, params)
    return unsaved is not None and _start_writer(*unsaved, leave)


def _unsaved(assembler: SessionAssembler, params: Params) -> tuple[_Target, tuple[int, float]] | None:
    """(where, the run at the whole session) of what this process learned and nobody keeps yet; None: nothing."""
    target = _target(assembler, params)
    if target is None or target.plan.kept_across:
        return None
    whole = target.plan.whole_run()
    return None if whole is None else (target, whole)


def saved_elsewhere(assembler: SessionAssembler, params: Params) -> None:
    """Another process started writing what this one would ``save`` (``start_save`` there): not again here."""
    target = _target(assembler, params)
    if target is not None:
        target.plan.kept_across = True


def _start_writer(target: _Target, whole: tuple[int, float], leave: Sequence[int] = ()) -> bool:
    if not render_cache.write_in_background():
        return False
    from ctxview.assembly.forked_map import run_detached

    if not run_detached(functools.partial(_write, target, whole), close=leave):
        return False
    target.plan.kept_across = True  # (written there: not again here)
    return True


def _write(target: _Target, whole: tuple[int, float]) -> bool:
    plan = target.plan
    cut, orphan_ordinal = whole
    flags = plan.unchanged_chunks(cut, orphan_ordinal)
    items = plan.items
    packed = [item.stored_message for item in items]
    known_tokens, known_h16, known_pairing = target.memo.known([m if isinstance(m, dict) else None for m in packed])
    positions = [
        p for p, (t, h, pairing) in enumerate(zip(known_tokens, known_h16, known_pairing, strict=True))
        if t is not None and h is not None and pairing is not None
    ]
    pairings = [known_pairing[p] for p in positions]
    values = (
        cut, orphan_ordinal, flags, positions, [known_tokens[p] for p in positions],
        [known_h16[p] for p in positions], sparse_pairings(pairings),
    )  # (most messages issue and answer no call: only the others' pairing ids are written, by index)
    # the measured messages too (each a dict: measured for that very object), in blocks after the payload (each read
    # and checked by itself: never all their bytes at once), unless marshal cannot hold one (then the values only)
    blocks: list[bytes] | None = []
    try:
        for start in range(0, len(positions), MESSAGES_PER_BLOB):
            blocks.append(marshal.dumps([packed[p] for p in positions[start : start + MESSAGES_PER_BLOB]]))
    except ValueError:
        blocks = None
    try:
        table = None if blocks is None else [(len(block), zlib.crc32(block)) for block in blocks]
        payload = marshal.dumps((*values, table))
    except ValueError:
        return False
    try:
        render_cache.write_entry(target.path, _MAGIC, target.header, payload, blocks or ())
        render_cache.prune(target.directory, SUFFIX)
    except OSError:
        return False
    plan.kept_across = True
    return True


def _read(target: _Target) -> tuple[Any, ...] | None:
    opened = render_cache.open_entry(target.path, _MAGIC, target.header)
    if opened is None:
        return None  # none, or of another database state, code, time zone or engine line, or damaged
    payload, fd, tail = opened
    try:
        stored = _values(target, payload)
        return None if stored is None else (*stored[:-1], _messages(fd, tail, stored[-1], len(stored[3])))
    finally:
        os.close(fd)


def _values(target: _Target, payload: memoryview) -> tuple[Any, ...] | None:
    try:
        stored = marshal.loads(payload)
    except (ValueError, EOFError, TypeError):
        return None
    if not isinstance(stored, tuple) or len(stored) != 8:
        return None
    cut, orphan_ordinal, flags, positions, tokens, h16s, some_pairings, table = stored
    count = len(target.plan.items)
    if (
        not isinstance(cut, int) or not isinstance(orphan_ordinal, int | float) or not isinstance(flags, bytes)
        or not isinstance(positions, list) or not isinstance(some_pairings, dict)
        or not len(positions) == len(tokens) == len(h16s)
        or not _indexes_below(positions, count) or not _indexes_below(list(some_pairings), len(positions))
        or not (table is None or (isinstance(table, list) and set(map(type, table)) <= {tuple}))
    ):
        return None
    return cut, orphan_ordinal, flags, positions, tokens, h16s, dense_pairings(some_pairings, len(positions)), table


def _messages(fd: int, tail: int, table: list[tuple[int, int]] | None, count: int) -> list[dict[str, Any]] | None:
    """The ``count`` measured messages from the blocks after the payload (``table``: each block's length and
    CRC-32), or None where there are none or any block does not read back as written (then the prime unpacks
    them from the render cache)."""
    if table is None or not hasattr(os, "pread"):
        return None
    messages: list[dict[str, Any]] = []
    at = tail
    try:
        for size, crc in table:
            block = os.pread(fd, size, at)
            at += size
            if len(block) != size or zlib.crc32(block) != crc:
                return None
            messages.extend(marshal.loads(block))
    except (OSError, ValueError, EOFError, TypeError, MemoryError):  # (a length no block can have: MemoryError)
        return None
    if len(messages) != count or not set(map(type, messages)) <= {dict}:
        return None
    return messages


def _indexes_below(values: list[Any], count: int) -> bool:
    """Every value an ``int`` from 0 to ``count - 1``."""
    return set(map(type, values)) <= {int} and (not values or (min(values) >= 0 and max(values) < count))
