"""A first sweep's engine values of every message, measured in a forked process on the idle core.

The run at the whole session that starts a sweep of a database state no earlier sweep kept
(``sweep_cache``) spends about half its time measuring every message for the engine (serialized
tokens, the §9.3 hash, pairing ids: a ``JSON.stringify`` of each) and the other half before the
engine step (unpacking every message, the clean-up and repair).  None of the measures depends on
that first half: a forked copy of this process measures every item's stored message while this one
runs up to the engine step, and the engine's memo takes the values (``SerializedCache.defer`` /
``remember``) at its first whole-list read.  The values are those this process would compute (the
same estimate, messages with the same JSON text); a child that fails or sends nothing usable
changes nothing (the engine measures as usual).

The two meet in the middle: the child measures from the last message down, a batch at a time, and
this process, once it reaches the engine step, measures from the first up instead of waiting, each
claiming its next batch in a small shared map the other reads before its own next one.  Where the
child is slow (the other core busy) this process does most of the work itself, never waiting for
more than the child's batch in hand.
"""

from __future__ import annotations

import gc
import marshal
import mmap
import os
import select
import signal
import struct
from typing import TYPE_CHECKING, Any

from ctxview.assembly.resolve import messages_of
from ctxview.assembly.volatile import SerializedCache
from ctxview.jserrors import JSError

if TYPE_CHECKING:
    from ctxview.assembly.resolve import ResolvedItem
    from ctxview.model import Params
    from ctxview.pipeline import SessionAssembler

_NO_PAIRING: tuple[list[str], str | None] = ([], None)  # (most messages issue and answer no call)
BATCH = 2048  # messages measured between two looks at the other process's claim (~20–40 ms)
_FRONT, _BACK = 0, 8  # offsets in the shared map: this process measures below FRONT, the child from BACK up


class MeasuringFork:
    """A forked process measuring ``items``' messages for ``memo``; ``take`` hands its values to the memo."""

    def __init__(
        self, items: list[ResolvedItem], memo: SerializedCache, pid: int, fd: int, shared: mmap.mmap
    ) -> None:
        self.items = items
        self.memo = memo
        self.pid = pid
        self.fd = fd
        self.shared = shared
        self.taken: bool | None = None  # None: not yet; then whether the child's values were remembered
        self.measured_here = 0  # messages this process measured itself meanwhile

    def take(self) -> bool:
        """Measure from the first message up until the child's claim is reached (or the child is done), then
        give the child's values to the memo (False: none usable; nothing of the child's remembered)."""
        if self.taken is not None:
            return self.taken
        self.taken = False
        items = self.items
        front = 0
        try:
            while not select.select([self.fd], [], [], 0)[0]:  # (readable: the child is done, or gone)
                back = _claim(self.shared, _BACK)
                if front >= back:
                    break
                end = min(front + BATCH, back)
                _set(self.shared, _FRONT, end)
                batch = messages_of(items[front:end])
                self.memo.h16_of_all(batch)  # (the tokens on the way: one stringify each)
                self.memo.pairing_of_all(batch)
                self.measured_here += end - front
                front = end
            payload = self._read()
        finally:
            self._end()
        values = _values(payload, len(items))
        if values is None:
            return False
        first, tokens, h16s, pairings = values
        self.taken = self.memo.remember(messages_of(items[first:]), tokens, h16s, pairings)
        return self.taken

    def _read(self) -> bytes:
        chunks: list[bytes] = []
        while True:
            chunk = os.read(self.fd, 1 << 20)
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)

    def close(self) -> None:
        """End the child if its values were never taken (the run stopped before its engine step)."""
        if self.memo.deferred() == self.take:
            self.memo.defer(None)
        if self.taken is None:
            self.taken = False
            try:
                os.kill(self.pid, signal.SIGKILL)
            except OSError:
                pass
            self._end()

    def _end(self) -> None:
        if not self.shared.closed:
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


def start(assembler: SessionAssembler, params: Params) -> MeasuringFork | None:
    """Fork a process measuring every item's message for the engine memo of ``params``' line, deferred to the
    memo's next whole-list read; None (nothing started) where the memo already holds most of them, the session
    cannot be resolved, or the fork fails.  The caller makes sure forking is safe (no other thread) and
    calls ``close`` when the run is over."""
    from ctxview.assembly.incremental.static import chunk_plan_of, static_of

    try:
        rules = assembler.rules(params)[0]
        resolved = assembler.resolved(params.timezone, rules.sender_metadata)
        static = static_of(assembler.session, resolved, params.timezone)
    except JSError:
        return None
    items = list(chunk_plan_of(static, resolved).items)
    memo = assembler.engine_memo(rules)
    if not items or 2 * memo.size() >= len(items):
        return None
    shared = mmap.mmap(-1, 16)  # (anonymous and shared: both processes see each other's claims)
    _set(shared, _FRONT, 0)
    _set(shared, _BACK, len(items))
    read, write = os.pipe()
    try:
        pid = os.fork()
    except OSError:
        os.close(read)
        os.close(write)
        shared.close()
        return None
    if pid == 0:  # the child: measure, write, leave without running anything of the parent's on the way out
        status = 1
        try:
            os.close(read)
            gc.disable()  # (short-lived: a collection would only walk, and copy, the inherited heap)
            payload = _measured(items, memo.estimate, shared)
            with os.fdopen(write, "wb") as out:
                out.write(payload)
            status = 0
        finally:
            os._exit(status)
    os.close(write)
    fork = MeasuringFork(items, memo, pid, read, shared)
    memo.defer(fork.take)
    return fork


def _claim(shared: mmap.mmap, offset: int) -> int:
    value: int = struct.unpack_from("<q", shared, offset)[0]
    return value


def _set(shared: mmap.mmap, offset: int, value: int) -> None:
    struct.pack_into("<q", shared, offset, value)


def _measured(items: list[ResolvedItem], estimate: Any, shared: mmap.mmap) -> bytes:
    """(first index, tokens, h16s, pairing ids of the messages that have any, by index from the first) of the
    items' messages from the last down to where the parent's claim stopped this process, marshalled."""
    own = SerializedCache(estimate=estimate)
    back = len(items)
    while True:
        low = max(_claim(shared, _FRONT), back - BATCH)
        if low >= back:
            break
        _set(shared, _BACK, low)
        own.h16_of_all(messages_of(items[low:back]))  # (the tokens on the way: one stringify each)
        back = low
    messages = messages_of(items[back:])
    tokens = own.tokens_of_all(messages)
    h16s = own.h16_of_all(messages)
    pairings = own.pairing_of_all(messages)
    some = {index: pairing for index, pairing in enumerate(pairings) if pairing != _NO_PAIRING}
    return marshal.dumps((back, tokens, h16s, some))


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
    pairings: list[Any] = [_NO_PAIRING] * (count - first)  # (one shared value: pairing ids are read, never changed)
    for index, pairing in some.items():
        pairings[index] = pairing
    return first, tokens, h16s, pairings
