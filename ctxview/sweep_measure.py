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
"""

from __future__ import annotations

import gc
import marshal
import os
import signal
from typing import TYPE_CHECKING, Any

from ctxview.assembly.resolve import messages_of
from ctxview.assembly.volatile import SerializedCache
from ctxview.jserrors import JSError

if TYPE_CHECKING:
    from ctxview.assembly.resolve import ResolvedItem
    from ctxview.model import Params
    from ctxview.pipeline import SessionAssembler

_NO_PAIRING: tuple[list[str], str | None] = ([], None)  # (most messages issue and answer no call)


class MeasuringFork:
    """A forked process measuring ``items``' messages for ``memo``; ``take`` hands its values to the memo."""

    def __init__(self, items: list[ResolvedItem], memo: SerializedCache, pid: int, fd: int) -> None:
        self.items = items
        self.memo = memo
        self.pid = pid
        self.fd = fd
        self.taken: bool | None = None  # None: not yet; then whether values were remembered

    def take(self) -> bool:
        """Wait for the child's values and give them to the memo (False: none usable; nothing remembered)."""
        if self.taken is not None:
            return self.taken
        self.taken = False
        chunks: list[bytes] = []
        try:
            while True:
                chunk = os.read(self.fd, 1 << 20)
                if not chunk:
                    break
                chunks.append(chunk)
        finally:
            self._end()
        values = _values(b"".join(chunks), len(self.items))
        if values is None:
            return False
        tokens, h16s, pairings = values
        self.taken = self.memo.remember(messages_of(self.items), tokens, h16s, pairings)
        return self.taken

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
    read, write = os.pipe()
    try:
        pid = os.fork()
    except OSError:
        os.close(read)
        os.close(write)
        return None
    if pid == 0:  # the child: measure, write, leave without running anything of the parent's on the way out
        status = 1
        try:
            os.close(read)
            gc.disable()  # (short-lived: a collection would only walk, and copy, the inherited heap)
            payload = _measured(items, memo.estimate)
            with os.fdopen(write, "wb") as out:
                out.write(payload)
            status = 0
        finally:
            os._exit(status)
    os.close(write)
    fork = MeasuringFork(items, memo, pid, read)
    memo.defer(fork.take)
    return fork


def _measured(items: list[ResolvedItem], estimate: Any) -> bytes:
    """(tokens, h16s, pairing ids of the messages that have any, by index) of every item's message, marshalled."""
    messages = messages_of(items)
    own = SerializedCache(estimate=estimate)
    h16s = own.h16_of_all(messages)  # (measures the tokens on the way: one stringify each)
    tokens = own.tokens_of_all(messages)
    pairings = own.pairing_of_all(messages)
    some = {index: pairing for index, pairing in enumerate(pairings) if pairing != _NO_PAIRING}
    return marshal.dumps((tokens, h16s, some))


def _values(payload: bytes, count: int) -> tuple[list[int], list[str], list[Any]] | None:
    """The child's values for ``count`` messages, or None where the payload is not what ``_measured`` makes."""
    if not payload:
        return None
    try:
        tokens, h16s, some = marshal.loads(payload)
    except (ValueError, EOFError, TypeError):
        return None
    if not (
        isinstance(tokens, list) and isinstance(h16s, list) and isinstance(some, dict)
        and len(tokens) == len(h16s) == count
        and all(type(index) is int and 0 <= index < count for index in some)
    ):
        return None
    pairings: list[Any] = [_NO_PAIRING] * count  # (one shared value: pairing ids are read, never changed)
    for index, pairing in some.items():
        pairings[index] = pairing
    return tokens, h16s, pairings
