"""``ForkedText``: the text a forked process makes, written here as it made it, or False when it failed."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator

import pytest

from ctxview.assembly.forked_map import ForkedText

PARENT = os.getpid()


def _pieces() -> Iterator[str]:
    yield "made by "
    yield str(os.getpid())
    yield ": é, 😀 and a lone \ud800"


def test_the_child_makes_the_text_and_this_process_writes_it() -> None:
    later = ForkedText(_pieces)
    written: list[str] = []
    assert later.write_to(written.append) is True
    text = "".join(written)
    pid = int(text.removeprefix("made by ").split(":")[0])
    assert pid != PARENT
    assert text == f"made by {pid}: é, 😀 and a lone \ud800"


def test_skip_drops_the_first_characters() -> None:
    written: list[str] = []
    assert ForkedText(lambda: [",", "ab", "c"]).write_to(written.append, skip=1) is True
    assert "".join(written) == "abc"


def test_a_text_longer_than_any_pipe_and_blocks_comes_back_whole() -> None:
    piece = "x" * 1000 + "é" * 999 + "😀"  # multi-byte characters across every 1 MiB block boundary
    written: list[str] = []
    assert ForkedText(lambda: [piece] * 3000).write_to(written.append) is True
    assert "".join(written) == piece * 3000
    assert len(written) > 1  # copied a block at a time, not read whole


def _failing() -> Iterator[str]:
    yield "half of it"
    raise RuntimeError("the child failed")


def test_a_failed_child_writes_nothing_and_says_so() -> None:
    written: list[str] = []
    assert ForkedText(_failing).write_to(written.append) is False
    assert written == []


def _forever() -> Iterator[str]:
    time.sleep(60)
    yield "never"


def test_cancel_ends_a_child_that_is_still_at_work() -> None:
    later = ForkedText(_forever)
    started = time.monotonic()
    later.cancel()
    assert time.monotonic() - started < 10
    later.cancel()  # (twice is harmless: the child is not killed again once waited for)


def _written_back(file: object) -> bytes:
    fileno = file.fileno()  # type: ignore[attr-defined]
    os.write(fileno, b"ab\xc3\xa9")
    file.seek(0)  # type: ignore[attr-defined]
    return file.read()  # type: ignore[attr-defined,no-any-return]


def test_the_unnamed_file_gives_back_what_was_written_to_its_descriptor() -> None:
    from ctxview.assembly.forked_map import unnamed_file

    with unnamed_file() as file:
        assert _written_back(file) == b"ab\xc3\xa9"


def test_without_memfd_the_unnamed_file_is_a_temporary_file(monkeypatch: pytest.MonkeyPatch) -> None:
    from ctxview.assembly import forked_map

    def refused(name: str, flags: int = 0) -> int:
        raise OSError("no memfd here")

    monkeypatch.setattr(os, "memfd_create", refused, raising=False)
    with forked_map.unnamed_file() as file:
        assert _written_back(file) == b"ab\xc3\xa9"
    monkeypatch.delattr(os, "memfd_create", raising=False)
    with forked_map.unnamed_file() as file:
        assert _written_back(file) == b"ab\xc3\xa9"
    written: list[str] = []
    assert ForkedText(lambda: ["made", " without memfd"]).write_to(written.append) is True
    assert "".join(written) == "made without memfd"
