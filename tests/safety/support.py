"""Shared helpers of the safety tests: database copies in every journal state, file snapshots.

``wal_copy`` makes the state a running agent leaves on disk: a WAL-mode
database whose newest commits are still in ``-wal`` (not checkpointed), with
its ``-shm`` index — copied while the writer held them, so the copy is
consistent.  ``Snapshot`` records every file of a folder so a test can say
exactly what may and may not change.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
import subprocess
from dataclasses import dataclass
from pathlib import Path

from tests.conftest import settle as settle  # the safety tests wait as every Pilot test does

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "sample_sessions" / "demo.db"
MEDIUM = REPO / "sample_sessions" / "medium.db"
DEMO_LIVE = REPO / "sample_sessions" / "demo-live.json"

WAL_TITLE = "renamed in the WAL"  # conversation 2's title after the un-checkpointed commit
# The -shm file starts with the WAL-index header (two 48-byte copies) and the checkpoint info
# with the reader marks and lock bytes (40 bytes): what SQLite's read protocol itself updates.
SHM_HEADER_BYTES = 136


def plain_copy(src: Path, folder: Path, name: str = "lcm.db") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    shutil.copyfile(src, path)
    return path


def wal_copy(src: Path, folder: Path, *, sidecars: bool, name: str = "lcm.db") -> Path:
    """A WAL-mode copy of ``src``; with ``sidecars`` its -wal holds an un-checkpointed commit."""
    work = folder / ".make"
    work.mkdir(parents=True, exist_ok=True)
    source = work / name
    shutil.copyfile(src, source)
    conn = sqlite3.connect(source)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.close()  # the last connection checkpoints and removes -wal/-shm: a clean WAL database
    if sidecars:
        writer = sqlite3.connect(source)
        writer.execute("PRAGMA wal_autocheckpoint=0")
        writer.execute("UPDATE conversations SET title = ? WHERE conversation_id = 2", (WAL_TITLE,))
        writer.commit()
        writer.execute("SELECT count(*) FROM conversations").fetchone()
        for suffix in ("", "-wal", "-shm"):
            shutil.copyfile(f"{source}{suffix}", folder / f"{name}{suffix}")
        writer.close()
    else:
        shutil.copyfile(source, folder / name)
    shutil.rmtree(work)
    return folder / name


@dataclass(frozen=True)
class Snapshot:
    """Every file in a folder: name → bytes."""

    files: dict[str, bytes]

    @classmethod
    def of(cls, folder: Path) -> Snapshot:
        return cls({p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()})

    def digest(self) -> dict[str, str]:
        return {name: hashlib.sha256(data).hexdigest()[:16] for name, data in self.files.items()}


def assert_untouched(before: Snapshot, after: Snapshot) -> None:
    """The database and its -wal are byte-identical and no file appeared or vanished.

    A -shm that was already there may differ only in its first ``SHM_HEADER_BYTES`` (the
    WAL-index header and reader marks every SQLite reader writes); the rest — the index of
    the WAL frames — and its size stay identical.
    """
    assert sorted(after.files) == sorted(before.files), "a file was created or removed"
    for name, data in before.files.items():
        now = after.files[name]
        if name.endswith("-shm"):
            assert len(now) == len(data), f"{name} changed size"
            assert now[SHM_HEADER_BYTES:] == data[SHM_HEADER_BYTES:], f"{name} changed beyond its header"
        else:
            assert now == data, f"{name} changed"


def read_only_command(folder: Path, argv: list[str]) -> list[str] | None:
    """``argv`` run where ``folder`` cannot be written to, or None when this machine cannot arrange it.

    Preferred: a read-only bind mount in a private user and mount namespace (``unshare -rm``),
    a real read-only file system for root and normal users alike.  Otherwise, as a normal user,
    the folder and its files are made read-only (chmod); root ignores file modes, so as root
    without namespaces the test is skipped.
    """
    unshare = shutil.which("unshare")
    if unshare is not None:
        probe = subprocess.run(
            [unshare, "-rm", "sh", "-c", 'mount --bind -o ro "$0" "$0" && ! touch "$0/.probe" 2>/dev/null', folder],
            capture_output=True,
            timeout=30,
        )
        (folder / ".probe").unlink(missing_ok=True)
        if probe.returncode == 0:
            return [unshare, "-rm", "sh", "-c", 'mount --bind -o ro "$0" "$0" && exec "$@"', folder, *argv]
    if os.name == "posix" and os.geteuid() != 0:
        for file in folder.iterdir():
            file.chmod(0o444)
        folder.chmod(0o555)
        return argv
    return None
