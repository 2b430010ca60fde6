"""A first sweep's run at the whole session, shared with a forked process on the idle core.

The run at the whole session that starts a sweep of a database state no earlier sweep kept
(``sweep_cache``) spends its time on two things no other step needs first: learning which tool-id
chunks come back unchanged (``ChunkPlan.whole_selection_flags``: unpacking, clean-up and repair of
every item) and measuring every message for the engine (serialized tokens, the §9.3 hash, pairing
ids: a ``JSON.stringify`` of each).  A forked copy of this process shares both:

* it measures messages from the last one down, a batch at a time, from the moment it starts;
* when the run reaches its clean-up (``ChunkPlan.whole_learner``), both learn the chunk flags, this
  process from the first chunk up and the child from the last down, until they meet;
* when the run reaches its engine step (the memo's first whole-list read: ``SerializedCache.defer``),
  this process measures from the first message up until it meets the child's claim, then takes the
  child's values (``remember``).

Both sides claim their next batch in a small shared map the other reads before its own next one, so
a slow child (the other core busy) is never waited for longer than a batch.  Every value and flag is
the one this process would compute (the same functions, messages with the same JSON text); a child
that fails or sends nothing usable changes nothing: this process computes what is missing itself.

Where the render cache file the messages were read from keeps their values (``message_values``), nothing is
measured: this process reads them, and unpacks every message, as it starts learning the chunk flags (the
child meanwhile learns a larger share of them), and gives the values to the memo at the engine step; the
child only learns flags.  With no fork (another thread in this process, one core) they are taken all the
same (``KeptValues``).
"""

from __future__ import annotations

import gc
import marshal
import mmap
import os
import select
import signal
import struct
import time
from typing import TYPE_CHECKING, Any

from ctxview.assembly.forked_map import fork_with_pipe, look_again
from ctxview.assembly.live import dense_pairings, sparse_pairings
from ctxview.assembly.resolve import messages_of
from ctxview.assembly.volatile import SerializedCache
from ctxview.jserrors import JSError
from ctxview.message_values import kept_for, values_kept

if TYPE_CHECKING:
    from ctxview.assembly.incremental.chunked_repair import ChunkPlan
    from ctxview.assembly.resolve import ResolvedItem
    from ctxview.model import Params
    from ctxview.pipeline import SessionAssembler

BATCH = 2048  # messages measured between two looks at the other process's claim (~20–40 ms)
# the shared map: this process measures below FRONT, the child from BACK up; REQUEST: 1 flags wanted (at CUT,
# ORPHAN: this process learns the chunks below CHUNK_FRONT, the child from CHUNK_BACK up), 2 nothing more
CHUNK_BATCH = 2048  # chunks whose flags are learned between two looks at the other process's claim
_FRONT, _BACK, _REQUEST, _CUT, _ORPHAN, _CHUNK_FRONT, _CHUNK_BACK = 0, 8, 16, 24, 32, 40, 48
_FLAGS, _VALUES = b"F", b"V"  # the child's messages on the pipe: kind, length, payload
_HEADER = struct.Struct("<cq")


class MeasuringFork:
    """A forked process sharing the whole session's run: ``learn`` (the chunk flags), ``take`` (the values)."""

    def __init__(
        self, plan: ChunkPlan, all_results: Any, memo: SerializedCache, pid: int, fd: int, shared: mmap.mmap,
        *, kept: bool = False,
    ) -> None:
        self.kept = kept  # the render cache file keeps the values: the child measures nothing, they are read here
        self._kept_values: FileValues | None = None  # (read by ``_read_kept``)
        self.plan = plan
        self.items = list(plan.items)
        self.all_results = all_results
        self.memo = memo
        self.pid = pid
        self.fd = fd
        self.shared = shared
        self.taken: bool | None = None  # None: not yet; then whether the child's values were remembered
        self.measured_here = 0  # messages this process measured itself meanwhile
        self.flags_from_child = 0  # chunks whose flags the child learned
        self._values: bytes | None = None  # the child's values, when they came while waiting for its flags

    def learn(self, plan: ChunkPlan, cut: int, orphan_ordinal: float, all_results: Any) -> bytes:
        """``plan.whole_selection_flags`` of every chunk: this process learns them from the first chunk up, a
        batch at a time, and the child from the last down, until they meet (a batch of the child's at most is
        waited for; if it sends nothing usable, this process learns the rest itself)."""
        chunks = len(plan.start)
        if (
            plan is not self.plan or all_results is not self.all_results or self.taken is not None or self.fd < 0
            or not self.items
        ):
            return plan.whole_selection_flags(cut, orphan_ordinal, all_results)
        shared = self.shared
        struct.pack_into("<qd", shared, _CUT, cut, orphan_ordinal)
        _set(shared, _CHUNK_BACK, chunks)
        _set(shared, _REQUEST, 1)
        if self._read_kept() is not None:
            # (both now, the child claiming the chunks this process does not reach meanwhile): the values, and
            # every message unpacked, which the run reads next whoever learns its chunk's flags (else the child
            # would wait idle while this process unpacks those of its chunks, having nothing to measure)
            messages_of(self.items)
        head = bytearray()
        front = 0
        while True:
            back = _get(shared, _CHUNK_BACK)
            if front >= back:
                break
            end = min(front + CHUNK_BATCH, back)
            _set(shared, _CHUNK_FRONT, end)
            head += plan.whole_selection_flags(cut, orphan_ordinal, all_results, range(front, end))
            front = end
        tail = self._receive(_FLAGS)
        first = int.from_bytes(tail[:8], "little") if tail is not None and len(tail) >= 8 else chunks + 1
        if first > front or len(tail or b"") - 8 != chunks - first:  # (none, or a gap: learned here)
            return bytes(head) + plan.whole_selection_flags(cut, orphan_ordinal, all_results, range(front, chunks))
        assert tail is not None
        self.flags_from_child = chunks - front
        return bytes(head) + tail[8 + front - first :]

    def take(self) -> bool:
        """Measure from the first message up until the child's claim is reached (or the child is done), then
        give the child's values to the memo (False: none usable; nothing of the child's remembered)."""
        if self.taken is not None:
            return self.taken
        self.taken = False
        items = self.items
        if self.kept:
            if not self.shared.closed:
                _set(self.shared, _REQUEST, 2)  # (nothing more to ask: the child may leave)
            kept = self._read_kept()
            self.taken = kept is not None and _remember_kept(self.memo, items, kept)
            return self.taken  # (messages the file does not give are measured by the memo as the run reads them)
        front = 0
        payload = self._values
        if payload is None and self.fd >= 0:
            while not select.select([self.fd], [], [], 0)[0]:  # (readable: the child's values, or it is gone)
                back = _get(self.shared, _BACK)
                if front >= back:
                    break
                end = min(front + BATCH, back)
                _set(self.shared, _FRONT, end)
                batch = messages_of(items[front:end])
                self.memo.h16_of_all(batch)  # (the tokens on the way: one stringify each)
                self.memo.pairing_of_all(batch)
                self.measured_here += end - front
                front = end
            payload = self._receive(_VALUES)
        if not self.shared.closed:
            _set(self.shared, _REQUEST, 2)  # (nothing more to ask: the child may leave)
        values = _values(payload or b"", len(items))
        if values is None:
            return False
        first, tokens, h16s, pairings = values
        self.taken = self.memo.remember(messages_of(items[first:]), tokens, h16s, pairings)
        return self.taken

    def _read_kept(self) -> FileValues | None:
        """The values the render cache file keeps of most messages (read once), None: none usable."""
        if self.kept and self._kept_values is None:
            self._kept_values = _kept_of_most(self.items, self.memo)
        return self._kept_values

    def _receive(self, kind: bytes) -> bytes | None:
        """The child's next message of ``kind`` (a values message on the way is kept); None: none came."""
        while self.fd >= 0:
            header = self._read(_HEADER.size)
            if header is None:
                break
            got, length = _HEADER.unpack(header)
            payload = self._read(length)
            if payload is None:
                break
            if got == kind:
                return payload
            if got == _VALUES:
                self._values = payload
        return None

    def _read(self, size: int) -> bytes | None:
        chunks: list[bytes] = []
        while size > 0:
            chunk = os.read(self.fd, min(size, 1 << 20))
            if not chunk:
                return None
            chunks.append(chunk)
            size -= len(chunk)
        return b"".join(chunks)

    def close(self) -> None:
        """Let the child go (or end it, when its values were never taken: the run stopped before its engine
        step) and stop sharing the plan's clean-up."""
        if self.memo.deferred() == self.take:
            self.memo.defer(None)
        if self.plan.whole_learner == self.learn:
            self.plan.whole_learner = None
        if self.taken is None:
            self.taken = False
            if self.pid > 0:
                try:
                    os.kill(self.pid, signal.SIGKILL)
                except OSError:
                    pass
        if not self.shared.closed:
            _set(self.shared, _REQUEST, 2)
            self.shared.close()
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
        if self.pid > 0:
            try:
                os.waitpid(self.pid, 0)
            except ChildProcessError:
                pass
            self.pid = 0
            look_again()  # (the child's busy core says nothing of whether the next fork finds one idle)


class KeptValues:
    """The render cache file's values of the whole session's messages, given to the engine memo at its first
    whole-list read (``defer``), with no process forked."""

    def __init__(self, memo: SerializedCache, items: list[ResolvedItem], kept: FileValues) -> None:
        self.memo = memo
        self.items = items
        self.kept = kept
        self.taken: bool | None = None

    def take(self) -> bool:
        if self.taken is None:
            self.taken = _remember_kept(self.memo, self.items, self.kept)
        return self.taken

    def close(self) -> None:
        if self.memo.deferred() == self.take:
            self.memo.defer(None)


# (positions in the items, their tokens, hashes and pairing ids): ``message_values.kept_for``
FileValues = tuple[list[int], list[int], list[str], list[Any]]


def _kept_of_most(items: list[ResolvedItem], memo: SerializedCache) -> FileValues | None:
    """The render cache file's values of the items' messages where it keeps those of most of them."""
    kept = kept_for(items, memo.estimate)
    return kept if kept is not None and 2 * len(kept[0]) >= len(items) else None


def _remember_kept(memo: SerializedCache, items: list[ResolvedItem], kept: FileValues) -> bool:
    positions, tokens, h16s, pairings = kept
    return memo.remember(messages_of(list(map(items.__getitem__, positions))), tokens, h16s, pairings)


def start(assembler: SessionAssembler, params: Params, *, fork: bool = True) -> MeasuringFork | KeptValues | None:
    """Share the next run at the whole session with a forked process (``fork``: its clean-up through the plan's
    ``whole_learner``, its measures through the engine memo's ``defer``), or else (``fork`` False, or the fork
    failed) give that run the values the render cache file keeps of most messages (``KeptValues``); None
    (nothing started) where the memo already holds most messages, the session cannot be resolved, or neither
    helps.  The caller makes sure forking is safe (no other thread) and calls ``close`` when the run is over."""
    from ctxview.assembly.incremental.static import chunk_plan_of, static_of

    try:
        rules = assembler.rules(params)[0]
        resolved = assembler.resolved(params.timezone, rules.sender_metadata)
        static = static_of(assembler.session, resolved, params.timezone)
    except JSError:
        return None
    plan = chunk_plan_of(static, resolved)
    items = list(plan.items)
    memo = assembler.engine_memo(rules)
    if not items or 2 * memo.size() >= len(items):
        return None
    if not fork:
        kept = _kept_of_most(items, memo)
        if kept is None:
            return None
        taking = KeptValues(memo, items, kept)
        memo.defer(taking.take)
        return taking
    kept_in_file = values_kept(items)  # (read once the run needs them: the child measures nothing)
    shared = mmap.mmap(-1, 56)  # (anonymous and shared: both processes see each other's claims)
    _set(shared, _BACK, len(items))
    parent = os.getpid()  # (this process: the child waits for its requests while it lives)

    def work(write: int) -> None:  # in the child: share the work, then leave (nothing of this process's on the way)
        gc.disable()  # (short-lived: a collection would only walk, and copy, the inherited heap)
        with os.fdopen(write, "wb") as out:
            _child(plan, static.all_results, items, memo.estimate, shared, out, parent, measure=not kept_in_file)

    started = fork_with_pipe(work)
    if started is None:
        shared.close()
        return start(assembler, params, fork=False)
    pid, read = started
    forked = MeasuringFork(plan, static.all_results, memo, pid, read, shared, kept=kept_in_file)
    memo.defer(forked.take)
    plan.whole_learner = forked.learn
    return forked


def _child(
    plan: ChunkPlan, all_results: Any, items: list[ResolvedItem], estimate: Any, shared: mmap.mmap, out: Any,
    parent: int, *, measure: bool = True,
) -> None:
    """Measure from the last message down until the parent's claim (unless not ``measure``: the render cache file
    keeps the values); learn the flags it asks for on the way (or after, until told there is nothing more, or
    the parent is gone); send both."""
    served = False

    def serve() -> None:
        nonlocal served
        if served or _get(shared, _REQUEST) != 1:
            return
        served = True
        cut, orphan_ordinal = struct.unpack_from("<qd", shared, _CUT)
        back = len(plan.start)
        parts: list[bytes] = []
        while True:
            low = max(_get(shared, _CHUNK_FRONT), back - CHUNK_BATCH)
            if low >= back:
                break
            _set(shared, _CHUNK_BACK, low)
            parts.append(plan.whole_selection_flags(cut, orphan_ordinal, all_results, range(low, back)))
            back = low
        _send(out, _FLAGS, back.to_bytes(8, "little") + b"".join(reversed(parts)))

    if measure:
        own = SerializedCache(estimate=estimate)
        back = len(items)
        batches: list[tuple[list[int], list[str], list[Any]]] = []  # every value of each batch, from the last down
        while True:
            serve()
            low = max(_get(shared, _FRONT), back - BATCH)
            if low >= back:
                break
            _set(shared, _BACK, low)
            batch = messages_of(items[low:back])
            h16s = own.h16_of_all(batch)  # (the tokens and pairing ids on the way: one stringify each)
            batches.append((own.tokens_of_all(batch), h16s, own.pairing_of_all(batch)))
            back = low
        # (all of them made in the loop: the parent, which has met the claim by now, waits only for the sending)
        _send(out, _VALUES, _measured(batches, back))
    while not served and _get(shared, _REQUEST) != 2 and os.getppid() == parent:  # (the flags may still be asked)
        serve()
        time.sleep(0.002)


def _send(out: Any, kind: bytes, payload: bytes) -> None:
    out.write(_HEADER.pack(kind, len(payload)))
    out.write(payload)
    out.flush()


def _get(shared: mmap.mmap, offset: int) -> int:
    value: int = struct.unpack_from("<q", shared, offset)[0]
    return value


def _set(shared: mmap.mmap, offset: int, value: int) -> None:
    struct.pack_into("<q", shared, offset, value)


def _measured(batches: list[tuple[list[int], list[str], list[Any]]], first: int) -> bytes:
    """(first index, tokens, h16s, pairing ids of the messages that have any, by index from the first) of the
    messages from ``first`` on, measured in ``batches`` (from the last messages down), marshalled."""
    tokens: list[int] = []
    h16s: list[str] = []
    some: dict[int, Any] = {}
    for batch_tokens, batch_h16s, batch_pairings in reversed(batches):
        offset = len(tokens)
        some.update((offset + index, pairing) for index, pairing in sparse_pairings(batch_pairings).items())
        tokens += batch_tokens
        h16s += batch_h16s
    return marshal.dumps((first, tokens, h16s, some))


def _values(payload: bytes, count: int) -> tuple[int, list[int], list[str], list[Any]] | None:
    """The child's values (from which index, and for each message from there on), or None where the payload
    is not what ``_measured`` makes for ``count`` messages."""
    if not payload:
        return None
    try:
        first, tokens, h16s, some = marshal.loads(payload)
    except (ValueError, EOFError, TypeError):
        return None
    if not (
        type(first) is int and 0 <= first <= count and isinstance(tokens, list) and isinstance(h16s, list)
        and isinstance(some, dict) and len(tokens) == len(h16s) == count - first
        and all(type(index) is int and 0 <= index < count - first for index in some)
    ):
        return None
    return first, tokens, h16s, dense_pairings(some, count - first)
