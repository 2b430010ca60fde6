"""Writing an export to a file: atomically, never replacing a file unless asked to."""

from __future__ import annotations

from pathlib import Path

from ctxview.errors import InputError
from ctxview.files import write_bytes_atomically


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
        write_bytes_atomically(
            target, data, overwrite=force, exists_message=f"{target} exists; use --force to overwrite"
        )
    except OSError as exc:
        raise InputError(f"cannot write {target}: {exc.strerror or exc}") from None
    return target
