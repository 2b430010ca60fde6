"""``dataclass_code``: a dataclass's methods come from the kept file exactly as ``dataclasses`` compiles them."""

from __future__ import annotations

import dataclasses
import marshal
import sys
import zlib
from pathlib import Path

import pytest

from ctxview import dataclass_code
from ctxview.dataclass_code import CodeCache

SOURCE = "def __create_fn__():\n def answer(x):\n  return x + 1\n return answer"


def _function(cache: CodeCache, source: str = SOURCE):  # type: ignore[no-untyped-def]
    namespace: dict[str, object] = {}
    cache.exec(source, {}, namespace)
    return namespace["__create_fn__"]()  # type: ignore[operator]


def _key(source: str) -> tuple[int, int]:
    return zlib.crc32(source.encode()), len(source)


def test_a_text_compiled_once_is_read_back_from_the_file(tmp_path: Path) -> None:
    path = str(tmp_path / "code.marshal")
    first = CodeCache(path)
    assert _function(first)(41) == 42
    assert list(first.new) == [_key(SOURCE)]
    first.save(force=True)
    assert first.new == {}

    second = CodeCache(path)
    assert list(second.known) == [_key(SOURCE)]
    function = _function(second)
    assert function(1) == 2
    assert second.new == {}  # nothing compiled: the code came from the file
    compiled = compile(SOURCE, "<string>", "exec", dont_inherit=True)
    assert marshal.dumps(second.code(SOURCE)) == marshal.dumps(compiled)


def test_the_code_is_compiled_without_this_modules_future_flags(tmp_path: Path) -> None:
    source = "def __create_fn__():\n def f(x: int) -> int:\n  return x\n return f"
    function = _function(CodeCache(str(tmp_path / "code.marshal")), source)
    assert function.__annotations__ == {"x": int, "return": int}  # objects, not the strings annotations gives


def test_another_text_under_the_same_key_is_compiled_not_taken_from_the_file(tmp_path: Path) -> None:
    path = str(tmp_path / "code.marshal")
    cache = CodeCache(path)
    other = "def __create_fn__():\n def answer(x):\n  return x - 1\n return answer"
    cache.known[_key(SOURCE)] = marshal.dumps((other, compile(other, "<string>", "exec")))
    assert _function(cache)(41) == 42
    assert list(cache.new) == [_key(SOURCE)]


def test_nothing_is_written_where_python_writes_no_bytecode_unless_forced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "cache" / "code.marshal"
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    cache = CodeCache(str(path))
    _function(cache)
    cache.save()
    assert not path.exists()
    cache.save(force=True)
    assert CodeCache(str(path)).known.keys() == {_key(SOURCE)}


@pytest.mark.parametrize("content", [b"", b"not ours", None])
def test_an_unreadable_or_foreign_file_is_no_cache(tmp_path: Path, content: bytes | None) -> None:
    path = tmp_path / "code.marshal"
    if content is None:  # our header, then bytes marshal cannot read
        content = dataclass_code._HEADER + b"\xff\x00"
    path.write_bytes(content)
    cache = CodeCache(str(path))
    assert cache.known == {}
    assert _function(cache)(0) == 1


def test_a_dataclass_made_through_the_cache_is_the_one_dataclasses_makes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def make() -> type:
        @dataclasses.dataclass(frozen=True, slots=True)
        class Point:
            x: int
            y: list[int] = dataclasses.field(default_factory=list)

        return Point

    monkeypatch.delattr(dataclasses, "exec", raising=False)
    plain = make()
    path = str(tmp_path / "code.marshal")
    for _ in range(2):  # compiled here, then read back from the file
        cache = CodeCache(path)
        monkeypatch.setattr(dataclasses, "exec", cache.exec, raising=False)
        cached = make()
        cache.save(force=True)
        assert repr(cached(1, [2])) == repr(plain(1, [2])).replace(plain.__qualname__, cached.__qualname__)
        assert cached(1) == cached(1, []) and cached(1) != cached(2)
        assert hash(cached(1, ())) == hash(cached(1, ()))  # type: ignore[arg-type]
        with pytest.raises(dataclasses.FrozenInstanceError):
            cached(1).x = 2  # type: ignore[misc]
        assert cached.__init__.__annotations__ == plain.__init__.__annotations__
    assert cache.new == {}


def test_ctxview_compiles_its_dataclasses_through_the_cache() -> None:
    installed = dataclass_code.install()
    if installed is None:  # turned off in this environment: then dataclasses' own exec stays
        assert "exec" not in vars(dataclasses)
    else:
        assert dataclasses.exec == installed.exec  # type: ignore[attr-defined]
        assert dataclass_code.install() is installed


@pytest.mark.parametrize(("imported", "patched"), [("ctxview.store", False), ("ctxview.cli", True)])
def test_only_the_command_line_installs_the_cache(imported: str, patched: bool) -> None:
    """A program that imports ctxview as a library keeps ``dataclasses`` as it was; the command's process
    compiles through the cache."""
    import os
    import subprocess

    env = {k: v for k, v in os.environ.items() if k != "CTXVIEW_DATACLASS_CODE"}
    out = subprocess.run(
        [sys.executable, "-c", f"import {imported}, dataclasses; print('exec' in vars(dataclasses))"],
        capture_output=True, text=True, check=True, env=env,
    )
    assert out.stdout.strip() == str(patched)
