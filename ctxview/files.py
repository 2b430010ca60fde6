"""Reading the files people name and writing the files they ask for.

Reading: every way a named file cannot be read is one ``InputError`` line,
worded for the kind of file it is; what is not a regular file is refused
before it is opened (a named pipe would block the command forever).

Writing: a file appears whole or not at all (a temporary sibling, then a
rename), and a file nobody asked to replace is never clobbered.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from ctxview.errors import InputError

# --- reading -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Wording:
    """How errors about one kind of input file read.

    Each message is a template with ``{what}`` and ``{path}``; ``not_regular``
    also gets ``{kind}`` (e.g. "a named pipe"), ``not_text`` ``{byte}`` (the
    offset of the first bad byte) and ``unreadable`` ``{reason}`` (the system's
    words, e.g. "Permission denied").
    """

    what: str
    missing: str = "{what} not found: {path}"
    directory: str = "{what} is a directory, not a file: {path}"
    not_regular: str = "{what} is not a regular file ({kind}): {path}"
    not_text: str = "{what} is not UTF-8 text: {path} (byte {byte})"
    unreadable: str = "cannot read {what} {path}: {reason}"

    def error(self, template: str, path: str | os.PathLike[str], **values: object) -> InputError:
        return InputError(template.format(what=self.what, path=os.fspath(path), **values))


def file_kind(mode: int) -> str:
    """What a file that is not a regular file is, in words."""
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a named pipe"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    return "a special file"


@contextlib.contextmanager
def open_regular(path: str | os.PathLike[str], wording: Wording) -> Iterator[BinaryIO]:
    """Open a regular file for reading in binary mode; anything else is an ``InputError`` in ``wording``.

    The file type is checked before opening (``stat`` follows symlinks; a loop
    is an error like any other) and again on the open descriptor, which is
    opened non-blocking so that a file swapped for a pipe meanwhile cannot hang.
    """
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise wording.error(wording.missing, path) from None
    except OSError as exc:
        raise wording.error(wording.unreadable, path, reason=exc.strerror or exc) from None
    _check_regular(mode, path, wording)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except FileNotFoundError:
        raise wording.error(wording.missing, path) from None
    except OSError as exc:
        raise wording.error(wording.unreadable, path, reason=exc.strerror or exc) from None
    try:
        _check_regular(os.fstat(fd).st_mode, path, wording)
        handle = os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    with handle:
        try:
            yield handle
        except OSError as exc:
            raise wording.error(wording.unreadable, path, reason=exc.strerror or exc) from None


def _check_regular(mode: int, path: str | os.PathLike[str], wording: Wording) -> None:
    if stat.S_ISREG(mode):
        return
    if stat.S_ISDIR(mode):
        raise wording.error(wording.directory, path)
    raise wording.error(wording.not_regular, path, kind=file_kind(mode))


def not_regular_reason(path: str | os.PathLike[str]) -> str | None:
    """Why ``path`` is not a regular file (following symbolic links), or None when it is one.

    The one check behind every file ctxview reads (the open helpers here do it
    again on the open descriptor); worded to follow the file's name.
    """
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return "no such file" if not os.path.islink(path) else "a symbolic link to a missing file"
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "is a symbolic link loop, not a regular file"
        return f"cannot be read ({exc.strerror or exc})"
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "is a directory"
    return f"is {file_kind(mode)}, not a regular file"


def open_regular_fd(path: str | os.PathLike[str]) -> int:
    """A read-only descriptor of a regular file, opened non-blocking (a FIFO swapped in cannot hang the open).

    Raises ``OSError`` when ``path`` cannot be opened or is not a regular file once open.
    """
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
                 | getattr(os, "O_BINARY", 0))
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise OSError(errno.EINVAL, f"not a regular file ({file_kind(mode)})")
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_regular_bytes(path: str | os.PathLike[str]) -> bytes:
    """The bytes of a regular file; ``OSError`` for anything else (for readers that word errors themselves)."""
    fd = open_regular_fd(path)
    with os.fdopen(fd, "rb") as handle:
        return handle.read()


def read_head(path: str | os.PathLike[str], size: int, wording: Wording) -> bytes:
    """The first ``size`` bytes of a regular file (fewer when it is shorter)."""
    with open_regular(path, wording) as handle:
        return handle.read(size)


def read_text(path: str | os.PathLike[str], wording: Wording, *, encoding: str = "utf-8") -> str:
    """The text of a regular file, newlines read as Python's text mode reads them (``\\r\\n`` and ``\\r`` as ``\\n``).

    ``encoding`` is ``"utf-8"`` or ``"utf-8-sig"`` (a leading byte-order mark dropped).
    """
    with open_regular(path, wording) as handle:
        data = handle.read()
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as exc:
        raise wording.error(wording.not_text, path, byte=exc.start) from None
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


# --- writing -------------------------------------------------------------------------------


@contextlib.contextmanager
def replacing(target: Path, *, overwrite: bool, exists_message: str) -> Iterator[Path]:
    """A temporary sibling of ``target`` to write; when the block ends without error it becomes ``target``.

    Without ``overwrite`` a file at ``target`` (even one that appeared
    meanwhile) is left alone: ``InputError(exists_message)``.  Whatever
    happens, the temporary file (and an SQLite ``-journal`` of it) is gone
    afterwards.  ``OSError`` is left to the caller, who knows how to word it.
    """
    import tempfile  # only writers need it

    fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    temporary = Path(name)
    try:
        yield temporary
        if overwrite:
            os.replace(temporary, target)
        else:
            rename_no_clobber(temporary, target, exists_message=exists_message)
    finally:
        for leftover in (temporary, Path(f"{temporary}-journal")):
            with contextlib.suppress(OSError):
                leftover.unlink(missing_ok=True)


def write_bytes_atomically(target: Path, data: bytes, *, overwrite: bool, exists_message: str) -> None:
    """Write ``data`` to ``target`` through ``replacing``, synced to disk, with the usual mode of a new file."""
    with replacing(target, overwrite=overwrite, exists_message=exists_message) as temporary:
        with open(temporary, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        with contextlib.suppress(OSError):  # mkstemp makes 0600 files
            os.chmod(temporary, 0o666 & ~_umask())


def rename_no_clobber(source: Path, target: Path, *, exists_message: str) -> None:
    """Move a finished ``source`` to ``target`` unless a file appeared there meanwhile.

    A hard link fails atomically when ``target`` exists; on file systems without
    hard links an existence check then a rename is the best there is.
    """
    try:
        os.link(source, target)
    except FileExistsError:
        raise InputError(exists_message) from None
    except OSError:
        if target.exists():
            raise InputError(exists_message) from None
        os.replace(source, target)
        return
    source.unlink()


def _umask() -> int:
    """The process umask, read without changing it (the TUI writes from a worker thread)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    return 0o022
