"""The engine's values of every message, measured by the render cache's writer and kept in its file.

A run at the whole session (the first run of a budget sweep) measures every message for the engine step:
its serialized tokens (§4.3, under the rules of the line that runs), the §9.3 hash of its JSON and its
pairing ids (§9.7), from one ``JSON.stringify`` each: at 100,000 messages about a second of CPU, in the
first sweep of every database state.  They depend on the message alone, so the writer of the render cache
(a process of its own after a headless command, a thread in the TUI) measures each message it writes,
under both lines' estimates, and the file keeps the values after its messages.  A later run takes them
(``SerializedCache.remember``) for the messages it reads from that file.

They are taken only from a file whose values were measured by the same code (the render cache keeps a digest
of the ``SOURCES`` the measure runs), with one value of each kind per message of the file.
"""

from __future__ import annotations

import marshal
from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ctxview.assembly.live import NO_PAIRING, dense_pairings, pairing_view, sparse_pairings
from ctxview.assembly.tokens import ESTIMATES_OF_JSON, serialized_message_tokens, serialized_message_tokens_1_0
from ctxview.assembly.volatile import h16_of_utf8
from ctxview.jsjson import js_stringify_message_utf8

# the per-message estimates a file keeps, one column each (the 0.15 line's, the 1.0 line's)
ESTIMATES: tuple[Callable[[Any], int], ...] = (serialized_message_tokens, serialized_message_tokens_1_0)
_OF_JSON = tuple(ESTIMATES_OF_JSON[estimate] for estimate in ESTIMATES)
_UNMEASURED = -1  # the tokens of a message the writer could not measure (its values are never taken)


# the modules the measure runs: values the file keeps are taken only where their sources are the ones that measured
# them (the render cache keeps a digest of them beside the values)
SOURCES = ("ctxview.assembly.live", "ctxview.assembly.tokens", "ctxview.assembly.volatile", "ctxview.jsjson", __name__)


class Collected:
    """The values of each message the writer adds, in the file's order."""

    def __init__(self) -> None:
        self.tokens = [array("q") for _ in ESTIMATES]
        self.h16s: list[str] = []
        self.pairings: list[Any] = []

    def add(self, message: Any, encoded: bytes | None = None) -> None:
        """Measure the next message (None: one the writer could not read, left unmeasured); ``encoded``: its JSON
        as ``jsjson.exact_json`` made it, which is its ``JSON.stringify`` (not made again)."""
        try:
            if message is None:
                raise ValueError("no message")
            if encoded is not None:
                text = encoded.decode()
            else:
                text, encoded = js_stringify_message_utf8(message)
            counts = [of_json(message, text) for of_json in _OF_JSON]
            h16, pairing = h16_of_utf8(encoded), pairing_view(message)
        except Exception:  # (a message the engine could not measure either: measured by the run, if ever)
            counts, h16, pairing = [_UNMEASURED] * len(ESTIMATES), "", NO_PAIRING
        for column, count in zip(self.tokens, counts, strict=True):
            column.append(count)
        self.h16s.append(h16)
        self.pairings.append(pairing)

    def blob(self) -> bytes:
        """The values as the file keeps them (``read`` gives them back)."""
        return marshal.dumps(
            (len(self.h16s), [column.tobytes() for column in self.tokens], self.h16s, sparse_pairings(self.pairings))
        )


@dataclass(slots=True)
class Kept:
    """The values a file keeps: one of each kind per message, by the message's index in the file."""

    tokens: list[array[int]]  # per estimate of ``ESTIMATES``
    h16s: list[str]
    pairings: list[Any]

    def of(
        self, indexes: Sequence[int], estimate: Callable[[Any], int]
    ) -> tuple[list[int], list[int], list[str], list[Any]] | None:
        """(positions in ``indexes`` measured by the writer, their tokens under ``estimate``, hashes, pairing ids),
        or None for an estimate the file does not keep."""
        try:
            column = self.tokens[ESTIMATES.index(estimate)]
        except ValueError:
            return None
        counts = list(map(column.__getitem__, indexes))
        positions = [p for p, count in enumerate(counts) if count != _UNMEASURED]
        if len(positions) < len(indexes):  # (a message the writer could not measure: left to the run)
            indexes = [indexes[p] for p in positions]
            counts = [counts[p] for p in positions]
        h16s = list(map(self.h16s.__getitem__, indexes))
        return positions, counts, h16s, list(map(self.pairings.__getitem__, indexes))


def read(blob: bytes, count: int) -> Kept | None:
    """The values ``Collected.blob`` wrote for a file of ``count`` messages; None where they are not that (another
    shape, damaged)."""
    try:
        kept_count, columns, h16s, some = marshal.loads(blob)
    except (ValueError, EOFError, TypeError):
        return None
    if kept_count != count or not isinstance(columns, list):
        return None
    if len(columns) != len(ESTIMATES) or not isinstance(h16s, list) or len(h16s) != count:
        return None
    if not isinstance(some, dict) or not all(type(index) is int and 0 <= index < count for index in some):
        return None
    tokens: list[array[int]] = []
    for raw in columns:
        column = array("q")
        try:
            column.frombytes(raw)
        except (TypeError, ValueError):
            return None
        if len(column) != count:
            return None
        tokens.append(column)
    return Kept(tokens, h16s, dense_pairings(some, count))


def values_kept(items: Sequence[Any]) -> bool:
    """Whether the render cache file the items' messages are read from keeps values this code measured (nothing
    is read: ``kept_for`` reads them)."""
    source = next((item.packed_in for item in items if item.packed_in is not None), None)
    return source is not None and source.has_values()


def kept_for(
    items: Sequence[Any], estimate: Callable[[Any], int]
) -> tuple[list[int], list[int], list[str], list[Any]] | None:
    """(positions in ``items``, tokens under ``estimate``, hashes, pairing ids) of the items' messages whose values
    the render cache file they were read from keeps (``ResolvedItem.packed_in``, ``packed_at``); None: none."""
    groups: dict[int, tuple[Any, list[int], list[int]]] = {}
    for position, item in enumerate(items):
        source, at = item.packed_in, item.packed_at
        if source is not None and at is not None:
            group = groups.get(id(source))
            if group is None:
                group = groups[id(source)] = (source, [], [])
            group[1].append(position)
            group[2].append(at)
    found: list[tuple[list[int], list[int], list[str], list[Any]]] = []
    for source, positions, indexes in groups.values():
        kept = source.kept_values()
        got = kept.of(indexes, estimate) if kept is not None else None
        if got is not None:
            found.append(([positions[p] for p in got[0]], *got[1:]))
    if not found:
        return None
    if len(found) == 1:
        return found[0]
    rows = sorted((row for values in found for row in zip(*values, strict=True)), key=lambda row: row[0])
    positions, tokens, h16s, pairings = (list(column) for column in zip(*rows, strict=True))
    return positions, tokens, h16s, pairings
