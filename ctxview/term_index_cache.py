"""A session's term index, kept beside the render cache: a warm open loads it instead of building it.

The term index (``assembly.incremental.termindex``) is what makes a keystroke in the prompt cheap; the TUI
builds it in the background once the first trace is on screen (1.5–2.7 s at 100,000 items), and until it is
there a searchable keystroke scores every item (0.4–1.4 s).  It depends on nothing but the items' texts, in
their order, and the tokenizer: so it is kept in a file next to the render cache, under a checksum of those
texts and a digest of the tokenizer's code, and taken only when both match (at 100,000 items the next open
loads its ~14 MB in ~0.3 s, the texts' checksum included).  Any other file, a damaged one, or one that does
not fit the items, is ignored and the index built as before.  ``CTXVIEW_CACHE=off`` turns it off with the
render cache.
"""

from __future__ import annotations

import functools
import hashlib
import marshal
import operator
import os
import sys
import zlib
from array import array
from collections.abc import Sequence
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ctxview import render_cache
from ctxview.assembly.incremental.termindex import TermIndex

if TYPE_CHECKING:
    from ctxview.assembly.resolve import ResolvedItem
    from ctxview.model import Session

FORMAT = 1
SUFFIX = ".terms"
_MAGIC = b"ctxview-terms\n"
# the modules the index's contents follow: the index itself and the tokenizer (``resolve.tokenize``)
_SOURCES = ("ctxview.assembly.incremental.termindex", "ctxview.assembly.resolve", __name__)


@functools.cache
def _code_version() -> str:
    return render_cache.sources_digest(f"{FORMAT}", _SOURCES)


_ARRAYS = ("q", "q", "i")  # the term counts, the slots' offsets, the postings' positions (then the frequencies)


def _place(session: Session, timezone: str, items: Sequence[ResolvedItem]) -> tuple[Path, bytes] | None:
    """(the file, the header it must have) for these items, or None where nothing is kept for this session."""
    identity = session.cache_identity
    directory = render_cache.cache_dir()
    if identity is None or directory is None or not render_cache.enabled() or len(items) < render_cache.min_messages():
        return None
    texts = _texts_crc(items)
    sizes = tuple(array(code).itemsize for code in (*_ARRAYS, "B", "I"))
    header = marshal.dumps((_code_version(), sys.byteorder, sizes, len(items), *texts))
    conversation = session.conversation.conversation_id
    name = hashlib.sha256(f"{identity[0]}\0{conversation}\0{timezone}".encode()).hexdigest()[:32]
    return directory / f"{name}{SUFFIX}", header


def _texts_crc(items: Sequence[ResolvedItem]) -> tuple[int, int]:
    """(bytes, CRC-32) of the items' texts as UTF-8, each followed by a NUL: a few thousand at a time (the
    texts of 100,000 items are ~25 MB, never joined at once)."""
    crc = size = 0
    for start in range(0, len(items), _TEXTS_AT_ONCE):
        chunk = "".join(item.text + "\0" for item in items[start : start + _TEXTS_AT_ONCE]).encode(
            "utf-8", "surrogatepass"
        )
        crc = zlib.crc32(chunk, crc)
        size += len(chunk)
    return size, crc


_TEXTS_AT_ONCE = 4096


class Kept:
    """The kept index of one session and time zone: ``load`` and then, where none fitted, ``save`` of the index built
    instead, with the file and its header (the items' texts' checksum: ~50 ms at 100,000 items) found once for
    the items both are given."""

    def __init__(self, session: Session, timezone: str) -> None:
        self.session = session
        self.timezone = timezone
        self._placed: tuple[Sequence[ResolvedItem], tuple[Path, bytes] | None] | None = None

    def _place(self, items: Sequence[ResolvedItem]) -> tuple[Path, bytes] | None:
        placed = self._placed
        if placed is None or placed[0] is not items:
            placed = self._placed = (items, _place(self.session, self.timezone, items))
        return placed[1]

    def load(self, items: Sequence[ResolvedItem]) -> TermIndex | None:
        """The kept index of ``items`` (None: none that fits them)."""
        place = self._place(items)
        if place is None:
            return None
        opened = render_cache.open_entry(place[0], _MAGIC, place[1])
        if opened is None:
            return None
        payload, fd, tail = opened
        try:
            stored = marshal.loads(payload)
            del payload
            parts = _parts(stored, fd, tail, len(items))
        except (ValueError, EOFError, TypeError, OverflowError, MemoryError, OSError):
            return None
        finally:
            os.close(fd)
        return None if parts is None else TermIndex.of_parts(items, parts)

    def save(self, items: Sequence[ResolvedItem], index: TermIndex) -> bool:
        """Keep ``index`` (of ``items``) for the next open of this database state; False: not written.

        The arrays are written from their own memory after a small payload (the slots, and each array's type,
        length and CRC-32), so writing one costs no copy of them."""
        place = self._place(items)
        if place is None:
            return False
        totals, slot, offsets, positions, tfs = index.parts()
        arrays = (totals, offsets, positions, tfs)
        try:
            payload = marshal.dumps((slot, [(a.typecode, len(a), zlib.crc32(a)) for a in arrays]))
            render_cache.write_entry(place[0], _MAGIC, place[1], payload, [memoryview(a).cast("B") for a in arrays])
            render_cache.prune(place[0].parent, SUFFIX)
        except (OSError, ValueError):
            return False
        return True


def load(session: Session, timezone: str, items: Sequence[ResolvedItem]) -> TermIndex | None:
    """``Kept(session, timezone).load(items)``."""
    return Kept(session, timezone).load(items)


def save(session: Session, timezone: str, items: Sequence[ResolvedItem], index: TermIndex) -> bool:
    """``Kept(session, timezone).save(items, index)``."""
    return Kept(session, timezone).save(items, index)


def _parts(stored: Any, fd: int, at: int, count: int) -> Any:
    """The index's parts from what ``save`` wrote (each array read from the file's tail into its own memory and
    checked), or None where they do not make an index of ``count`` items."""
    if not isinstance(stored, tuple) or len(stored) != 2:
        return None
    slot, table = stored
    if (
        not isinstance(slot, dict) or not isinstance(table, list) or len(table) != 4
        or [kind for kind, _, _ in table] not in ([*_ARRAYS, "B"], [*_ARRAYS, "I"])
    ):
        return None
    arrays = []
    for kind, length, crc in table:
        made = array(kind)
        size = length * made.itemsize
        data = os.pread(fd, size, at)
        if len(data) != size:
            return None
        made.frombytes(data)
        del data
        if zlib.crc32(made) != crc:
            return None
        arrays.append(made)
        at += size
    totals, offsets, positions, tfs = arrays
    if (
        len(totals) != count or len(offsets) != len(slot) + 1 or len(positions) != len(tfs)
        or (offsets and (offsets[0] != 0 or offsets[-1] != len(positions)))
        or not all(map(operator.le, offsets, islice(offsets, 1, None)))  # (ascending, at C speed)
        or not set(map(type, slot)) <= {str} or not set(map(type, slot.values())) <= {int}
        or (slot and (min(slot.values()) < 0 or max(slot.values()) >= len(slot)))
        or (positions and (min(positions) < 0 or max(positions) >= count))
        or (totals and min(totals) < 0)
    ):
        return None
    return totals, slot, offsets, positions, tfs
