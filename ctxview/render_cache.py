"""Rendered messages kept across runs, outside the inspected database (issue 19).

Rendering every stored message (parsing each part's metadata, rebuilding its blocks,
encoding the content to count its tokens) is the largest single cost of opening a big
session, and it gives the same answer every time the database is the same.  So once a
session of at least ``MIN_MESSAGES`` messages has been rendered, the results (each message as JSON,
or ``marshal`` bytes where JSON would not give it back equal, beside the facts every run reads of it and
the engine's values of it, and the context items and messages as the store read them) are written to one
file per database and conversation under the user's cache directory (``$CTXVIEW_CACHE_DIR``, else
``$XDG_CACHE_HOME/ctxview/renders``, else ``~/.cache/ctxview/renders``), never next to the database.

A cached render is used only when nothing about the database can have changed: the file
records the database's real path, device, inode, size and modification time, its header's
change counter, the same for its ``-wal`` (and that file's header), a digest of the rendering code and
the engine line's rule for sender metadata; each is compared exactly, and a checksum over the
payload rejects a torn or altered file.  A database read live beside a writer is never
cached.  Any failure (no home, a read-only cache directory, a corrupt file) means the
messages are rendered as usual.  ``CTXVIEW_CACHE=off`` turns the cache off.

A headless command writes its file from a process of its own once its output is out, which goes on after
the command has exited (``write_in_background``): at 100,000 messages the write takes over a second nobody
needs to wait for.
"""

from __future__ import annotations

import functools
import hashlib
import marshal
import os
import stat
import weakref
import zlib
from array import array
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ctxview import __version__
from ctxview.jsjson import exact_json, load_exact_json

if TYPE_CHECKING:  # the store imports this module: a command that renders nothing never loads the renderer
    from ctxview.assembly.render import RenderedMessage
    from ctxview.message_values import Kept
    from ctxview.model import MessageRow, Session

FORMAT = 9  # 2: messages kept as marshal bytes, with the facts read of every item; 3, 4: and the rows;
# 5: the messages in the file's tail, read one by one (``MessageFile``); rows without content and times;
# 6: the payload under a CRC-32; 7: the payload in parts (the facts and rows a few thousand at a time);
# 8: the engine's values of each message after them (``message_values``); 9: messages kept as JSON where
# orjson gives them back equal (they unpack in two thirds of marshal's time), else as marshal bytes
MIN_MESSAGES = 2000  # below this, rendering is quicker than reading a file
KEEP_FILES = 16  # the newest cache files kept; older ones are removed when one is written
KEEP_BYTES = 1 << 30  # … and no more of them than fit in this many bytes together
_MAGIC = b"ctxview-renders\n"
_HEADER_BYTES = 100  # SQLite's database header; the -wal header is 32 bytes

Identity = tuple[Any, ...]


def min_messages() -> int:
    """The smallest session worth caching (``CTXVIEW_CACHE_MIN_MESSAGES`` overrides it, for tests)."""
    try:
        return int(os.environ.get("CTXVIEW_CACHE_MIN_MESSAGES", MIN_MESSAGES))
    except ValueError:
        return MIN_MESSAGES


def enabled() -> bool:
    return os.environ.get("CTXVIEW_CACHE", "").strip().lower() not in ("off", "0", "no", "false")


def write_in_background() -> bool:
    """Whether a file only a later run reads may be written by a process of its own, which the command does not
    wait for (the default); ``CTXVIEW_CACHE_WRITE=wait`` writes it before going on (a script that needs the file
    there as soon as the command returns, or a test)."""
    return os.environ.get("CTXVIEW_CACHE_WRITE", "").strip().lower() != "wait"


def cache_dir() -> Path | None:
    """Where render caches live, or None when there is no usable place."""
    explicit = os.environ.get("CTXVIEW_CACHE_DIR")
    if explicit:
        return Path(explicit) if Path(explicit).is_absolute() else None
    base = os.environ.get("XDG_CACHE_HOME")
    try:
        root = Path(base) if base and Path(base).is_absolute() else Path.home() / ".cache"
    except RuntimeError:  # no home directory
        return None
    return root / "ctxview" / "renders"


def _file_state(path: str) -> tuple[Any, ...] | None:
    """(device, inode, size, mtime_ns, header bytes) of a regular file; None when it is anything else."""
    try:
        # O_NONBLOCK: a named pipe put in the file's place between two looks never blocks the open
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return None
        header = os.read(fd, _HEADER_BYTES)
    except OSError:
        return None
    finally:
        os.close(fd)
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, header)


def database_identity(path: str | os.PathLike[str]) -> Identity | None:
    """What a cached render is tied to: the database file and its ``-wal`` as they are now.

    The header holds SQLite's change counter (bumped by every commit in rollback mode); a ``-wal``
    adds its own size, time and header (salts change when it restarts).  None when the path is not
    a regular file.
    """
    real = os.path.realpath(path)
    main = _file_state(real)
    if main is None:
        return None
    wal = _file_state(real + "-wal") if os.path.lexists(real + "-wal") else ("absent",)
    return (real, main, wal)


def _file_for(directory: Path, identity: Identity, conversation_id: int, sender_metadata: bool) -> Path:
    name = hashlib.sha256(f"{identity[0]}\0{conversation_id}\0{int(sender_metadata)}".encode()).hexdigest()[:32]
    return directory / f"{name}.renders"


@functools.cache
def _code_version() -> str:
    """A digest of the code a cache file depends on: renders or rows made by other code are never reused.

    ``__version__`` alone would let a renderer fixed between two releases reuse renders of the old one;
    the rows as read depend on the store's reading rules (and the item facts on the resolver's).
    """
    # (the sources are read, not imported: the store, one of them, imports this module)
    return sources_digest(
        f"{FORMAT}\0{__version__}",
        ("ctxview.assembly.render", "ctxview.assembly.resolve", "ctxview.assembly.tokens", "ctxview.dbvalues",
         "ctxview.jsjson", "ctxview.model", "ctxview.store", __name__),
    )


def sources_digest(seed: str, modules: tuple[str, ...]) -> str:
    """A digest of ``seed`` and the source of each module (found, not imported): a cache's code version."""
    import importlib.util

    digest = hashlib.sha256(seed.encode())
    for name in modules:
        try:
            spec = importlib.util.find_spec(name)
            digest.update(Path(spec.origin if spec is not None and spec.origin else "").read_bytes())
        except (OSError, ImportError, ValueError):
            digest.update(name.encode())
    return digest.hexdigest()


@functools.cache
def _values_version() -> str:
    """A digest of the code that measures the values the file keeps after its messages."""
    from ctxview.message_values import SOURCES

    return sources_digest(f"{FORMAT}", SOURCES)


def _header(identity: Identity, conversation_id: int, sender_metadata: bool) -> bytes:
    return marshal.dumps((_code_version(), identity, conversation_id, sender_metadata))


READ_BLOCK = 1 << 22  # bytes of packed messages ``MessageFile.messages`` reads at once


class MessageFile:
    """The packed messages of a render cache file, each read from the file when a run unpacks it.

    A session of 100,000 messages would hold ~40 MB of packed messages that it mostly never reads.  Each
    message is checked (its length and CRC-32) as it is read; one that no longer reads back (the file
    was altered in place) is rendered again by ``render_again`` (message id → the message), which the
    store sets.  The descriptor is closed when the last item that refers to the file is gone.
    """

    def __init__(
        self, fd: int, base: int, offsets: array[int], crcs: array[int], as_json: bytes = b"",
        values_at: tuple[Any, ...] | None = None,
    ) -> None:
        if len(offsets) != len(crcs) + 1 or len(as_json) not in (0, len(crcs)):
            raise ValueError("a damaged message table")
        self._fd = fd
        self._base = base
        self._offsets = offsets
        self._crcs = crcs
        self._as_json = as_json or bytes(len(crcs))  # per message: 1 where it is kept as JSON, else marshal bytes
        self._values_at = values_at  # (start, length, CRC-32, measuring code's digest) of the messages' values
        self.render_again: Callable[[int], dict[str, Any]] | None = None
        weakref.finalize(self, os.close, fd)

    def __len__(self) -> int:
        return len(self._crcs)

    def has_values(self) -> bool:
        """Whether the file keeps the messages' values, measured by this code (read by ``kept_values``)."""
        at = self._values_at
        return isinstance(at, tuple) and len(at) == 4 and at[3] == _values_version()

    def kept_values(self) -> Kept | None:
        """The engine's values of every message, as the writer measured them (``message_values``); None where
        the file has none, they were measured by other code, or they do not read back as written."""
        if not self.has_values():
            return None
        start, length, crc, _version = self._values_at  # type: ignore[misc]
        if type(start) is not int or type(length) is not int or start != self._offsets[-1] or length < 0:
            return None
        try:
            blob = os.pread(self._fd, length, self._base + start)
        except OSError:
            return None
        if len(blob) != length or zlib.crc32(blob) != crc:
            return None
        from ctxview.message_values import read

        return read(blob, len(self))

    def message(self, index: int, message_id: int) -> dict[str, Any]:
        """The packed message at ``index`` (of message ``message_id``), unpacked."""
        start, stop = self._offsets[index], self._offsets[index + 1]
        try:
            data = os.pread(self._fd, stop - start, self._base + start)
        except OSError:
            data = b""
        message = self._checked(index, data)
        if message is not None:
            return message
        if self.render_again is None:
            raise OSError(f"the render cache file changed while in use (message {message_id})")
        return self.render_again(message_id)

    def _checked(self, index: int, data: bytes) -> dict[str, Any] | None:
        """The message at ``index`` unpacked from ``data`` as read, or None where ``data`` is not what was
        written there (its length or CRC-32 differ) or does not unpack to a message."""
        if len(data) != self._offsets[index + 1] - self._offsets[index] or zlib.crc32(data) != self._crcs[index]:
            return None
        try:
            message = load_exact_json(data) if self._as_json[index] else marshal.loads(data)
        except (ValueError, EOFError, TypeError):
            return None
        return message if type(message) is dict else None

    def messages(self, indexes: Sequence[int], message_ids: Sequence[int]) -> list[dict[str, Any]]:
        """``message`` of each index (ascending ones are read a block at a time: one ``pread`` per message
        cost as much as unpacking it), each checked as ``message`` checks it, and read by it where not."""
        out: list[dict[str, Any]] = []
        offsets = self._offsets
        at = 0
        while at < len(indexes):
            first = indexes[at]
            end = at + 1  # indexes[at:end] ascend and span at most READ_BLOCK bytes of the file
            while (
                end < len(indexes) and indexes[end] > indexes[end - 1]
                and offsets[indexes[end] + 1] - offsets[first] <= READ_BLOCK
            ):
                end += 1
            start = offsets[first]
            try:
                block = os.pread(self._fd, offsets[indexes[end - 1] + 1] - start, self._base + start)
            except OSError:
                block = b""
            for index, message_id in zip(indexes[at:end], message_ids[at:end], strict=True):
                message = self._checked(index, block[offsets[index] - start : offsets[index + 1] - start])
                out.append(message if message is not None else self.message(index, message_id))
            at = end
        return out


class CachedRenders(dict[int, Any]):
    """Message id → its cached render (``fields_of``, the message itself replaced by its index in
    ``messages``), or None for a skipped message."""

    __slots__ = ("messages",)

    def __init__(self, renders: dict[int, Any], messages: MessageFile) -> None:
        super().__init__(renders)
        self.messages = messages

    def render_from(self, rows: Mapping[int, MessageRow], sender_metadata: bool) -> None:
        """Render a message again from ``rows`` (its parts read from the database) when the file no longer
        gives it back."""
        self.messages.render_again = partial(_render_again, rows, sender_metadata)


def _render_again(rows: Mapping[int, MessageRow], sender_metadata: bool, message_id: int) -> dict[str, Any]:
    from ctxview.assembly.render import render_message

    render = render_message(rows[message_id], sender_metadata)
    if render is None:
        raise OSError(f"message {message_id} no longer renders as the render cache says")
    return render.message


def load(identity: Identity | None, conversation_id: int, sender_metadata: bool) -> CachedRenders | None:
    """The cached renders for this exact database state, or None."""
    payload = load_payload(identity, conversation_id, sender_metadata)
    return payload[0] if payload is not None else None


def load_payload(
    identity: Identity | None, conversation_id: int, sender_metadata: bool
) -> tuple[CachedRenders, Any] | None:
    """(renders, rows) for this exact database state, or None; rows (``rows_of``) may be None."""
    directory = cache_dir()
    if identity is None or directory is None or not enabled() or not hasattr(os, "pread"):
        return None
    path = _file_for(directory, identity, conversation_id, sender_metadata)
    opened = open_entry(path, _MAGIC, _header(identity, conversation_id, sender_metadata))
    if opened is None:
        return None  # none, or of another database state, ctxview version or engine rule, or damaged
    payload, fd, tail = opened
    try:
        *parts, last = _parts(payload)
        (facts, item_parts, message_parts), rest, offsets, crcs, as_json, values_at = marshal.loads(last)
        if type(as_json) is not bytes:
            raise ValueError("a damaged message table")
        messages = MessageFile(fd, tail, array("q", offsets), array("I", crcs), as_json, values_at)
        renders = CachedRenders({}, messages)
    except (ValueError, EOFError, TypeError):
        os.close(fd)
        return None
    try:  # (from here the descriptor is closed with the message file)
        for part in parts[:facts]:  # (each part's facts straight into the one dict: never a copy of them all)
            renders.update(_loaded(part, dict))
        rows = None
        if rest is not None and item_parts is not None and message_parts is not None:
            message_start = facts + item_parts
            if message_start + message_parts != len(parts):
                return None
            rows = (_joined(parts[facts:message_start]), _joined(parts[message_start:]), *rest)
    except (ValueError, EOFError, TypeError):
        return None
    return renders, rows


def _loaded(part: memoryview, kind: type) -> Any:
    """A part unmarshalled; ``ValueError`` where it is not a ``kind``."""
    value = marshal.loads(part)
    if type(value) is not kind:
        raise ValueError("a part of another kind")
    return value


def _joined(parts: list[memoryview]) -> list[Any]:
    """The rows of these parts (lists), in one list."""
    rows: list[Any] = []
    for part in parts:
        rows.extend(_loaded(part, list))
    return rows


def _parts(payload: memoryview) -> list[memoryview]:
    """The payload's parts as ``_framed`` wrote them, each without its length; ``ValueError`` where they do not
    fill it exactly (or there are none)."""
    parts = []
    at = 0
    while at < len(payload):
        size = int.from_bytes(payload[at : at + 8], "big")
        at += 8
        if size > len(payload) - at:
            raise ValueError("a torn part")
        parts.append(payload[at : at + size])
        at += size
    if not parts:
        raise ValueError("no parts")
    return parts


def rows_of(session: Session) -> Any:
    """The session's context items and messages as the store read them, with the warnings about them and
    two sums over every context row: what the store needs to rebuild them without reading those tables
    (``LcmStore._cached_rows``), but the messages' content and creation times (read again when asked for:
    ``model.RowTexts``)."""
    raw = session.stored_message_ids
    return (
        [(row.ordinal, row.item_type, row.message_id, row.summary_id) for row in session.items],
        [
            (m.message_id, m.seq, m.role, m.token_count, m.large_content, m.sender_metadata, raw.get(mid, mid))
            for mid, m in session.messages.items()
        ],
        session.row_warnings,
        session.stored_sums,
    )


def fields_of(render: RenderedMessage | tuple[Any, ...] | None) -> Any:
    """What the cache keeps of a render: the message as ``marshal`` bytes (unpacked only when read) and the
    facts the assembler reads of every item, so that reading them never unpacks it
    (``resolve.pack_render``; a render packed already is kept as it is).

    Raises ``ValueError`` for a message ``marshal`` cannot hold (such a message is not cached).
    """
    if render is None or type(render) is tuple:
        return render
    from ctxview.assembly.resolve import pack_render

    return pack_render(render)


def save(
    identity: Identity | None,
    conversation_id: int,
    sender_metadata: bool,
    renders: Mapping[int, Any],
    source: str | os.PathLike[str],
    rows: Any = None,
) -> bool:
    """Write the renders (and ``rows``, from ``rows_of``) for this database state; False (and nothing
    written) when it cannot be done.  ``rows`` may be a function giving them: called once the renders are
    written, it builds them in the memory those let go of.

    ``source`` is checked again first: a database that changed while it was read is not cached.
    """
    directory = cache_dir()
    if identity is None or directory is None or not enabled() or database_identity(source) != identity:
        return False
    header = _header(identity, conversation_id, sender_metadata)
    target = _file_for(directory, identity, conversation_id, sender_metadata)
    tail = _Tail()
    try:
        write_entry(target, _MAGIC, header, _payload(renders, rows, tail), tail.pieces())
        prune(directory)
    except OSError:
        return False
    return True


# the renders' facts (or rows) marshalled and written at a time: the writer never holds all of them twice over, as
# objects and as bytes (with marshal's table of every object it met, ~30 MB for 100,000 message rows), on top of
# the command's memory it inherits
PER_PART = 4096


class _Tail:
    """The packed messages written after the payload, as JSON where it reads back equal, and where each ends, its
    CRC-32 and its form (``MessageFile``); then the engine's values of each (``message_values``, measured as the
    message is added, from the same JSON).

    Only the renders' own ``marshal`` bytes are held: a message's JSON is made to learn its size and CRC-32, let
    go, and made again as it is written (held, 100,000 small JSON bytes objects took ~400 MB of the writer's
    heap for 36 MB, its freed pieces too small for the next ones; copied into blocks, ~50 MB).
    """

    def __init__(self) -> None:
        from ctxview.message_values import Collected  # (only a writer measures)

        self.packed: list[bytes] = []
        self.offsets = array("q", (0,))
        self.crcs = array("I")
        self.as_json = bytearray()
        self.values = Collected()
        self._values_blob = b""

    def add(self, packed: bytes) -> int:
        """Append a message given as its ``marshal`` bytes; its index."""
        try:
            message = marshal.loads(packed)
        except (ValueError, EOFError, TypeError):
            message = None
        as_json = exact_json(message) if message is not None else None
        self.values.add(message, as_json)
        piece = packed if as_json is None else as_json
        self.packed.append(packed)
        self.as_json.append(as_json is not None)
        self.offsets.append(self.offsets[-1] + len(piece))
        self.crcs.append(zlib.crc32(piece))
        return len(self.crcs) - 1

    def close(self) -> tuple[int, int, int, str]:
        """Make the messages' values (written after the last message); where they are, as ``MessageFile`` reads
        them."""
        blob = self._values_blob = self.values.blob()
        return self.offsets[-1], len(blob), zlib.crc32(blob), _values_version()

    def pieces(self) -> Iterator[bytes]:
        """Each message as the table describes it, then the values (read once the payload is written)."""
        for packed, as_json, crc in zip(self.packed, self.as_json, self.crcs, strict=True):
            if not as_json:
                yield packed
                continue
            piece = exact_json(marshal.loads(packed), check=False)  # (found to come back equal when added)
            if piece is None or zlib.crc32(piece) != crc:  # (the same message, the same code: never; then no file)
                raise OSError("a message's JSON came out otherwise the second time")
            yield piece
        yield self._values_blob


def _payload(renders: Mapping[int, Any], rows: Any, tail: _Tail) -> Iterator[bytes]:
    """The payload (``_framed`` parts), made as it is written: the facts of ``PER_PART`` renders at a time (their
    messages go to ``tail``), the context item rows and message rows as many at a time (``rows`` called only
    then, in the memory the parts before let go of), then what ``load_payload`` needs to read them: how many
    parts of each, the rest of the rows (None: no rows) and the message table."""
    facts = yield from _facts_parts(renders, tail)
    if callable(rows):
        rows = rows()
    item_parts: int | None = 0
    message_parts: int | None = 0
    rest: list[Any] | None = None
    if rows is not None:
        item_rows, message_rows, *rest = rows
        item_parts = yield from _listed_parts(item_rows)
        if item_parts is not None:
            message_parts = yield from _listed_parts(message_rows)
    del rows
    table = (tail.offsets.tobytes(), tail.crcs.tobytes(), bytes(tail.as_json), tail.close())
    try:
        last = marshal.dumps(((facts, item_parts, message_parts), rest, *table))
    except ValueError:  # rows with a value marshal cannot hold: the rows are read from the database each time
        last = marshal.dumps(((facts, item_parts, message_parts), None, *table))
    yield from _framed(last)


def _facts_parts(renders: Mapping[int, Any], tail: _Tail) -> Generator[bytes, None, int]:
    """The renders' facts, ``PER_PART`` a time (each a message id → facts dict), their messages added to
    ``tail``; returns how many parts."""
    parts = 0
    part: dict[int, Any] = {}
    for mid, render in renders.items():
        try:
            fields = fields_of(render)
        except ValueError:  # a value marshal cannot hold (a JS number kept as text): that message is left out
            continue
        if fields is None:
            part[mid] = None
        elif type(fields[0]) is bytes:  # (the message goes to the file's tail; its facts keep its index)
            part[mid] = (tail.add(fields[0]), *fields[1:])
        if len(part) >= PER_PART:
            yield from _framed(_marshalled_part(part))
            parts += 1
            part = {}
    if part:
        yield from _framed(_marshalled_part(part))
        parts += 1
    return parts


def _listed_parts(rows: list[Any]) -> Generator[bytes, None, int | None]:
    """``rows`` ``PER_PART`` at a time (each a list); returns how many parts, or None where marshal cannot hold
    one (the parts written before are then never read)."""
    parts = 0
    for start in range(0, len(rows), PER_PART):
        try:
            blob = marshal.dumps(rows[start : start + PER_PART])
        except ValueError:
            return None
        yield from _framed(blob)
        parts += 1
    return parts


def _marshalled_part(part: dict[int, Any]) -> bytes:
    try:
        return marshal.dumps(part)
    except ValueError:  # facts with a value marshal cannot hold: those messages are left out
        from ctxview.assembly.forked_map import marshallable

        return marshal.dumps({mid: fields for mid, fields in part.items() if marshallable(fields)})


def _framed(blob: bytes) -> tuple[bytes, bytes]:
    """A part of a payload as written: its length, then its bytes (``_parts`` reads them back)."""
    return len(blob).to_bytes(8, "big"), blob


def read_entry(path: Path, magic: bytes, header: bytes) -> memoryview | None:
    """The payload of a cache file written by ``write_entry`` with this very ``header``; None when there is
    none, it is not a regular file, its header differs or its checksum fails."""
    opened = open_entry(path, magic, header)
    if opened is None:
        return None
    payload, fd, _tail = opened
    os.close(fd)
    return payload


def open_entry(path: Path, magic: bytes, header: bytes) -> tuple[memoryview, int, int] | None:
    """(payload, an open descriptor of the file, where its tail starts) of a cache file ``write_entry`` wrote
    with this very ``header``, reading neither more than the payload nor the tail; None as ``read_entry``.

    The caller closes the descriptor.  The checksum covers the payload only: a reader of the tail checks
    what it reads (``MessageFile``).
    """
    try:
        # O_NONBLOCK: a named pipe put in the file's place never blocks the open
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError("not a regular file")
        with os.fdopen(os.dup(fd), "rb") as handle:
            start = len(magic) + 8
            lead = handle.read(start)
            if len(lead) != start or not lead.startswith(magic) or int.from_bytes(lead[len(magic) :], "big") != len(
                header
            ):
                raise OSError("another kind of file")
            if handle.read(len(header)) != header:
                raise OSError("another state, version or rule")
            digest = handle.read(DIGEST_BYTES)
            size = int.from_bytes(handle.read(8), "big")
            payload = handle.read(size)
        if len(payload) != size or _digest(payload) != digest:
            raise OSError("torn or altered")
    except (OSError, ValueError):
        os.close(fd)
        return None
    return memoryview(payload), fd, start + len(header) + DIGEST_BYTES + 8 + size


DIGEST_BYTES = 4  # a cache file's payload checksum, after its header


def _digest(payload: bytes | memoryview) -> bytes:
    """CRC-32: it guards against a torn or altered file, not an attack (the directory is the user's own), and
    reads a 31 MB payload in a fifth of BLAKE2b's time."""
    return zlib.crc32(payload).to_bytes(DIGEST_BYTES, "big")


_TEMPORARY = ".entry-"  # the name a file being written starts with


def write_entry(
    target: Path, magic: bytes, header: bytes, payload: bytes | Iterable[bytes], tail: Iterable[bytes] = ()
) -> None:
    """Write a cache file atomically (a reader sees the old file or the whole new one), private to the user:
    ``payload`` under a checksum (given as bytes, or as pieces written one after the other as they are made),
    then the pieces of ``tail`` one after the other (read piecemeal, each piece checked by its reader; a list
    may grow while ``payload``'s pieces are made).

    Raises ``OSError`` when it cannot be written (nothing is left behind)."""
    import tempfile  # only a run that writes a cache needs it

    target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd, temporary = tempfile.mkstemp(dir=target.parent, prefix=_TEMPORARY)
    try:
        with os.fdopen(fd, "wb") as handle:
            lead = magic + len(header).to_bytes(8, "big") + header
            handle.write(lead + bytes(DIGEST_BYTES + 8))  # (the checksum and size, once the payload is written)
            crc = size = 0
            for piece in (payload,) if isinstance(payload, bytes) else payload:
                handle.write(piece)
                crc = zlib.crc32(piece, crc)
                size += len(piece)
            for piece in tail:
                handle.write(piece)
            handle.seek(len(lead))
            handle.write(crc.to_bytes(DIGEST_BYTES, "big") + size.to_bytes(8, "big"))
        os.replace(temporary, target)
    except BaseException:
        os.unlink(temporary)
        raise


# a half-written file (``write_entry``'s temporary) this old was left by a writer that was killed
STALE_ENTRY_SECONDS = 3600


def prune(directory: Path, suffix: str = ".renders") -> None:
    """Keep the newest cache files ending in ``suffix``: at most ``KEEP_FILES``, and no more than ``KEEP_BYTES``
    (the newest always); remove what killed writers left (``STALE_ENTRY_SECONDS``)."""
    import time

    files = []
    stale_before = time.time_ns() - STALE_ENTRY_SECONDS * 1_000_000_000
    for entry in os.scandir(directory):
        if entry.name.endswith(suffix) and entry.is_file(follow_symlinks=False):
            info = entry.stat(follow_symlinks=False)
            files.append((info.st_mtime_ns, info.st_size, entry.path))
        elif entry.name.startswith(_TEMPORARY) and entry.is_file(follow_symlinks=False):
            if entry.stat(follow_symlinks=False).st_mtime_ns < stale_before:
                try:
                    os.unlink(entry.path)
                except OSError:
                    pass
    kept = total = 0
    for _mtime, size, path in sorted(files, reverse=True):
        kept += 1
        total += size
        if kept > KEEP_FILES or (kept > 1 and total > KEEP_BYTES):
            try:
                os.unlink(path)
            except OSError:
                pass
