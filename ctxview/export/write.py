"""Writing an export to a file: atomically, never replacing a file unless asked to."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

from ctxview.errors import InputError
from ctxview.files import rename_no_clobber


def write_export(text: str, path: str | Path, *, force: bool = False) -> Path:
    """Write an export atomically: a temporary sibling, then a rename.

    Refuses to replace an existing file unless ``force``; a failed write
    leaves neither a partial file nor the temporary one behind (an existing
    file it was to replace is left as it was).
    """
    target = Path(path).expanduser()
    if target.is_dir():
        raise InputError(f"{target} is a directory; give a file name")
    if (target.exists() or target.is_symlink()) and not force:
        raise InputError(f"{target} exists; use --force to overwrite")
    directory = target.parent
    if not directory.is_dir():
        raise InputError(f"cannot write {target}: directory {directory} does not exist")
    data = text.encode("utf-8", "backslashreplace")
    try:
        fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=directory)
    except OSError as exc:
        raise InputError(f"cannot write {target}: {exc.strerror or exc}") from None
    tmp = Path(tmp_name)
    try:
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            _set_default_mode(tmp)
            if force:
                os.replace(tmp, target)
            else:
                rename_no_clobber(tmp, target, exists_message=f"{target} exists; use --force to overwrite")
        except OSError as exc:
            raise InputError(f"cannot write {target}: {exc.strerror or exc}") from None
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
    return target


def _set_default_mode(path: Path) -> None:
    """mkstemp makes 0600 files; an export should get the usual mode for new files."""
    with contextlib.suppress(OSError):
        os.chmod(path, 0o666 & ~_umask())


def _umask() -> int:
    """The process umask, read without changing it (the TUI writes from a worker thread)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    return 0o022
