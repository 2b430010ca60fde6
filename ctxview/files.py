"""Writing the files people ask for: whole or not at all, never clobbering one they did not.

A file is written to a temporary sibling, then renamed into place; exports
and sample databases both go through ``replacing``.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

from ctxview.errors import InputError

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
