"""Fixtures the unit tests share."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from ctxview.pipeline import save_pending_renders


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A render cache of the test's own, used for sessions of any size."""
    save_pending_renders()  # what other tests left pending goes to their cache, not this one
    directory = tmp_path / "cache"
    monkeypatch.setenv("CTXVIEW_CACHE_DIR", str(directory))
    monkeypatch.setenv("CTXVIEW_CACHE_MIN_MESSAGES", "0")
    monkeypatch.delenv("CTXVIEW_CACHE", raising=False)
    yield directory
    save_pending_renders()
