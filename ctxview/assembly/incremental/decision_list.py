"""The decisions of one run as a lazy, read-only sequence (the ``DecisionList`` of ``ctxview.model``).

A 100,000-item session cannot afford 100,000 ``Decision`` objects (and their
reason strings) on every keystroke, and no view looks at more than a screenful
of them.  ``LazyDecisionList`` builds decisions in chunks the first time they are
read, with the very code that would have built them eagerly, then applies the
engine's later changes; columns that views scan as a whole (outcomes for the
what-changed diff, tokens for the budget line) come from fast providers that
never build a ``Decision``.  Iterating it builds everything: exports and the
CLI do that once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, overload

from ctxview.model import Decision

CHUNK = 32  # decisions built together: a screenful of rows touches a few chunks, each cheap
ROW_BATCH = 64  # chunks whose rows ``scan_rows`` asks for at once

Builder = Callable[[int, int], list[Decision]]  # (start, stop) → fresh decisions for those positions
ColumnProvider = Callable[[], list[Any]]
# (start, stop) → per position the values of some fields, in a fixed order, as fresh decisions would have
# them; None where only a decision will do
RowBuilder = Callable[[int, int], list[list[Any] | None]]
# a column as a base list shared by the runs of one plan, and the positions where this run's values may differ
ChangesProvider = Callable[[], tuple[list[Any], dict[int, Any]]]


class LazyDecisionList(Sequence[Decision]):
    """``count`` decisions built on demand by ``build``, then ``extra`` ones appended as they are."""

    __slots__ = (
        "_build",
        "_changes",
        "_chunks",
        "_columns",
        "_count",
        "_extra",
        "_index_of_key",
        "_key_maps",
        "_memo",
        "_overrides",
        "_resets",
        "_rows",
    )

    def __init__(
        self,
        count: int,
        build: Builder,
        *,
        columns: dict[str, ColumnProvider] | None = None,
        index_of_key: Callable[[], dict[str, int]] | None = None,
        rows: tuple[tuple[str, ...], RowBuilder] | None = None,
        changes: dict[str, ChangesProvider] | None = None,
    ) -> None:
        self._count = count
        self._rows = rows
        self._changes = dict(changes or {})
        self._build = build
        self._chunks: list[list[Decision] | None] = [None] * ((count + CHUNK - 1) // CHUNK)
        self._columns = dict(columns or {})
        self._extra: list[Decision] = []
        self._overrides: dict[int, dict[str, Any]] = {}
        self._resets: dict[str, Any] = {}
        self._key_maps: dict[str, Mapping[str, Any]] = {}
        self._index_of_key = index_of_key
        self._memo: dict[str, list[Any]] = {}  # columns computed since the last change

    # --- what the pipeline adds ------------------------------------------------------------------

    def reset_field(self, name: str, value: Any) -> None:
        """Every built decision gets ``name = value`` before its overrides (before any is read)."""
        self._resets[name] = value
        self._memo.clear()

    def map_field(self, name: str, values_by_key: Mapping[str, Any]) -> None:
        """Decisions whose key is in ``values_by_key`` get ``name`` from it (after resets, before overrides).

        One mapping instead of an override per decision: a run sets a value on thousands of
        kept items, and only the decisions somebody reads need it.
        """
        self._key_maps[name] = values_by_key
        self._memo.clear()
        for start, chunk in enumerate(self._chunks):  # decisions already built get it now
            if chunk is None:
                continue
            for offset, decision in enumerate(chunk):
                if decision.key in values_by_key:
                    fields = self._overrides.get(start * CHUNK + offset)
                    if fields is None or name not in fields:  # an override still wins
                        setattr(decision, name, values_by_key[decision.key])

    def override(self, index: int, fields: dict[str, Any]) -> None:
        """Fields set on decision ``index`` after it is built (later calls win per field)."""
        if index >= self._count:
            self.override_keys({self._extra[index - self._count].key: fields})
            return
        self._memo.clear()
        existing = self._overrides.get(index)
        if existing is None:
            self._overrides[index] = dict(fields)
        else:
            existing.update(fields)
        self._apply_built(index, fields)

    def _apply_built(self, index: int, fields: dict[str, Any]) -> None:
        """A decision already built gets the fields at once."""
        if 0 <= index < self._count:
            chunk = self._chunks[index // CHUNK]
            if chunk is not None:
                decision = chunk[index % CHUNK]
                for name, value in fields.items():
                    setattr(decision, name, value)

    def override_keys(self, updates: dict[str, dict[str, Any]]) -> None:
        """``override`` by decision key, for many keys at once (unknown keys are ignored)."""
        known = self._index_of_key() if self._index_of_key is not None else None
        overrides = self._overrides
        self._memo.clear()
        for key, fields in updates.items():
            index = known.get(key) if known is not None and key[:2] != "l:" else None
            if index is None:
                index = self.index_of(key)
                if index is None:
                    continue
            if index >= self._count:  # an appended decision is stored as it is: set the fields on it
                decision = self._extra[index - self._count]
                for name, value in fields.items():
                    setattr(decision, name, value)
                continue
            existing = overrides.get(index)
            if existing is None:
                overrides[index] = dict(fields)
            else:
                existing.update(fields)
            if self._chunks[index // CHUNK] is not None:
                self._apply_built(index, fields)

    def fork(self) -> LazyDecisionList:
        """A new list over the same run: same builder and columns, none of this list's changes."""
        if self._extra or self._overrides or self._resets or self._key_maps:
            raise RuntimeError("fork() is for an unchanged list (the assembler's own)")
        return LazyDecisionList(
            self._count,
            self._build,
            columns=self._columns,
            index_of_key=self._index_of_key,
            rows=self._rows,
            changes=self._changes,
        )

    def overridden(self, name: str) -> dict[int, Any]:
        """Position → value of every override that sets ``name``."""
        return {index: fields[name] for index, fields in sorted(self._overrides.items()) if name in fields}

    def extend(self, decisions: Sequence[Decision]) -> None:
        """Append finished decisions (live inputs); they are stored as they are."""
        self._extra.extend(decisions)
        self._memo.clear()

    def key_index(self) -> Mapping[str, int] | None:
        """``dict(zip(column("key"), range(len(self))))`` from the plan's own key index (no map of every key
        per run: ~7 MB at 100,000 items); None when a key was changed or there is no such index."""
        if self._index_of_key is None or "key" in self._key_maps or "key" in self._resets:
            return None
        if any("key" in fields for fields in self._overrides.values()):
            return None
        known = self._index_of_key()
        if not self._extra:
            return known
        appended = {decision.key: self._count + offset for offset, decision in enumerate(self._extra)}
        return _KeyIndex(known, appended)

    def index_of(self, key: str) -> int | None:
        """Position of the decision with ``key`` (context items and appended ones)."""
        if self._index_of_key is not None and key[:2] != "l:":
            found = self._index_of_key().get(key)
            if found is not None:
                return found
        for offset, decision in enumerate(self._extra):
            if decision.key == key:
                return self._count + offset
        if self._index_of_key is None:
            for index in range(self._count):
                if self[index].key == key:
                    return index
        return None

    @property
    def base_count(self) -> int:
        """Decisions of context items (the lazily built part)."""
        return self._count

    # --- reading -----------------------------------------------------------------------------

    def _chunk(self, number: int) -> list[Decision]:
        chunk = self._chunks[number]
        if chunk is None:
            chunk = self._chunks[number] = self._fresh_chunk(number)
        return chunk

    def _fresh_chunk(self, number: int) -> list[Decision]:
        """Chunk ``number`` built anew, with this list's changes applied (not stored)."""
        start = number * CHUNK
        stop = min(self._count, start + CHUNK)
        chunk = self._build(start, stop)
        if len(chunk) != stop - start:
            raise RuntimeError(f"decision builder returned {len(chunk)} decisions for {stop - start} positions")
        resets = self._resets
        key_maps = self._key_maps
        overrides = self._overrides
        for offset, decision in enumerate(chunk):
            for name, value in resets.items():
                setattr(decision, name, value)
            for name, mapping in key_maps.items():
                if decision.key in mapping:
                    setattr(decision, name, mapping[decision.key])
            fields = overrides.get(start + offset)
            if fields:
                for name, value in fields.items():
                    setattr(decision, name, value)
        return chunk

    def scan(self) -> Iterator[Decision]:
        """Every decision in order, like iterating, but without keeping the ones built for it.

        For a single pass over a whole run (the CLI's JSON): a 100,000-item session's
        decisions then never all live at once. Decisions built earlier are shared as they are.
        """
        for number, chunk in enumerate(self._chunks):
            yield from chunk if chunk is not None else self._fresh_chunk(number)
        yield from self._extra

    def scan_rows(self, fields: tuple[str, ...]) -> Iterator[list[Any]]:
        """``[getattr(d, f) for f in fields]`` of every decision in order, like ``scan``, mostly without decisions.

        When ``fields`` are the row builder's (``fields[0]`` the key), a chunk nobody has read
        comes from it, with this list's changes applied to the rows as ``_fresh_chunk`` applies
        them to decisions; other positions are read from their decisions.
        """
        rows = self._rows
        if rows is None or rows[0] != fields or fields[0] != "key":
            for decision in self.scan():
                yield [getattr(decision, name) for name in fields]
            return
        build = rows[1]
        where = {name: i for i, name in enumerate(fields)}
        resets = [(where[name], value) for name, value in self._resets.items() if name in where]
        key_maps = [(where[name], mapping) for name, mapping in self._key_maps.items() if name in where]
        overrides = self._overrides
        chunks = self._chunks
        number = 0
        while number < len(chunks):
            chunk = chunks[number]
            if chunk is not None:
                for decision in chunk:
                    yield [getattr(decision, name) for name in fields]
                number += 1
                continue
            last = number + 1  # a run of unread chunks, built together (up to ROW_BATCH chunks)
            while last < len(chunks) and last - number < ROW_BATCH and chunks[last] is None:
                last += 1
            start = number * CHUNK
            stop = min(self._count, last * CHUNK)
            built = build(start, stop)
            if len(built) != stop - start:
                raise RuntimeError(f"row builder returned {len(built)} rows for {stop - start} positions")
            decisions: dict[int, list[Decision]] = {}  # chunks built for positions without a row
            for offset, row in enumerate(built):
                if row is None:
                    at = start + offset
                    if at // CHUNK not in decisions:
                        decisions[at // CHUNK] = self._fresh_chunk(at // CHUNK)
                    decision = decisions[at // CHUNK][at % CHUNK]
                    yield [getattr(decision, name) for name in fields]
                    continue
                for i, value in resets:
                    row[i] = value
                for i, mapping in key_maps:
                    row[i] = mapping.get(row[0], row[i])
                changed = overrides.get(start + offset) if overrides else None
                if changed:
                    for name, value in changed.items():
                        i = where.get(name)
                        if i is not None:
                            row[i] = value
                yield row
            number = last
        for decision in self._extra:
            yield [getattr(decision, name) for name in fields]

    def __len__(self) -> int:
        return self._count + len(self._extra)

    @overload
    def __getitem__(self, index: int) -> Decision: ...

    @overload
    def __getitem__(self, index: slice) -> list[Decision]: ...

    def __getitem__(self, index: int | slice) -> Decision | list[Decision]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if index < 0 or index >= len(self):
            raise IndexError("decision index out of range")
        if index >= self._count:
            return self._extra[index - self._count]
        return self._chunk(index // CHUNK)[index % CHUNK]

    def __iter__(self) -> Iterator[Decision]:
        for number in range(len(self._chunks)):
            yield from self._chunk(number)
        yield from self._extra

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (LazyDecisionList, list, tuple)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"LazyDecisionList({len(self)} decisions)"

    def __reduce__(self) -> tuple[Any, ...]:
        return (list, (list(self),))  # copies and pickles are plain lists

    @property
    def built(self) -> int:
        """How many context-item decisions have been built so far (for tests and benchmarks)."""
        return sum(len(chunk) for chunk in self._chunks if chunk is not None)

    def column(self, name: str) -> list[Any]:
        """``[getattr(d, name) for d in self]`` without building decisions where a provider exists.

        The list is shared between calls until the decisions change: read it, do not modify it.
        """
        memo = self._memo.get(name)
        if memo is not None:
            return memo
        values = self._column(name)
        self._memo[name] = values
        return values

    def column_changes(self, name: str) -> tuple[list[Any], dict[int, Any], list[Any]] | None:
        """``column(name)`` as three parts: a base list that other runs of the same plan share (the same
        object), the positions where this list's values may differ from it (with those values), and the
        appended decisions' values.  None when no provider gives this form (read ``column`` then).

        Two runs with the same base differ only at positions one of them lists: a diff of 100,000
        outcomes reads a few thousand.  Do not modify the parts.
        """
        provider = self._changes.get(name)
        if provider is None or name in self._resets:
            return None
        base, own = provider()
        changes = dict(own)
        mapping = self._key_maps.get(name)
        if mapping:
            known = self._index_of_key() if self._index_of_key is not None else None
            if known is None or len(known) != self._count:  # (keys not unique: a key is not one position)
                return None
            if "key" in self._key_maps or "key" in self._resets or any("key" in f for f in self._overrides.values()):
                return None  # (the mapping reads the keys as changed, not as the index knows them)
            positions = list(map(known.get, mapping.keys()))  # (the lookups at C speed: thousands per edit)
            if None in positions:
                pairs = zip(positions, mapping.values(), strict=True)
                changes.update((pos, value) for pos, value in pairs if pos is not None)
            else:
                changes.update(zip(positions, mapping.values(), strict=True))
        for index, fields in self._overrides.items():
            if name in fields:
                changes[index] = fields[name]
        return base, changes, [getattr(d, name) for d in self._extra]

    def _column(self, name: str) -> list[Any]:
        provider = self._columns.get(name)
        if provider is None:
            return [getattr(d, name) for d in self]
        mapping = self._key_maps.get(name)
        if name in self._resets:
            values = [self._resets[name]] * self._count
        else:
            values = provider()
            if mapping is None and not self._extra and not any(name in f for f in self._overrides.values()):
                return values  # the provider's list as it is (shared with other runs: read it, never modify it)
            values = list(values)
        if mapping is not None:
            keys = self._column("key") if name != "key" else list(values)  # (also those of appended decisions)
            values = list(map(mapping.get, keys, values))  # (mapping.get(key, value) per pair, at C speed)
        for index, fields in self._overrides.items():
            if name in fields:
                values[index] = fields[name]
        values.extend(getattr(d, name) for d in self._extra)
        return values


class _KeyIndex(Mapping[str, int]):
    """The context items' key index with the appended decisions' keys on top (a later key wins, as in a
    dict built from the whole key column)."""

    __slots__ = ("_appended", "_known")

    def __init__(self, known: Mapping[str, int], appended: dict[str, int]) -> None:
        self._known = known
        self._appended = appended

    def get(self, key: str, default: Any = None) -> Any:
        found = self._appended.get(key)
        if found is not None:
            return found
        return self._known.get(key, default)

    def __getitem__(self, key: str) -> int:
        found = self.get(key)
        if found is None:
            raise KeyError(key)
        return int(found)

    def __contains__(self, key: object) -> bool:
        return key in self._appended or key in self._known

    def __len__(self) -> int:
        return len(self._known) + sum(1 for key in self._appended if key not in self._known)

    def __iter__(self) -> Iterator[str]:
        yield from self._known
        yield from (key for key in self._appended if key not in self._known)
