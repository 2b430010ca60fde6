"""Where the demo database comes from when none is given: the repository's copy or a user cache."""

from __future__ import annotations

import os
from pathlib import Path

from ctxview.errors import InputError
from ctxview.samples.build import build_sample
from ctxview.samples.demo import DEMO_FORMAT_VERSION


def repo_demo_path() -> Path:
    """sample_sessions/demo.db of a source checkout (absent in an installed wheel)."""
    return Path(__file__).resolve().parents[2] / "sample_sessions" / "demo.db"


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME")
    root = Path(base) if base and Path(base).is_absolute() else Path.home() / ".cache"
    return root / "ctxview"


def ensure_demo_db() -> Path:
    """Path of a demo database: the repository's copy, else one built once into the user cache."""
    committed = repo_demo_path()
    if committed.is_file():
        return committed
    cached = cache_dir() / f"demo-v{DEMO_FORMAT_VERSION}.db"
    if cached.is_file():
        return cached
    cached.parent.mkdir(parents=True, exist_ok=True)
    try:
        build_sample(cached, "demo")
    except InputError:
        if not cached.is_file():  # lost a race with another process: its copy is as good as ours
            raise
    return cached
