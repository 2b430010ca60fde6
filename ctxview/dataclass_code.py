"""The methods ``dataclasses`` generates, compiled once and kept across runs (as ``.pyc`` files keep modules).

``@dataclass`` writes each class's ``__init__``, ``__repr__``, ``__eq__``, … as source text and compiles it
when the class is defined: ctxview defines ~70 of them on every start, and compiling their ~330 methods was
half of the headless commands' import time (~0.08 s of ~0.15 s).  Compiling is a pure function of the source
text, so the code objects are kept in one ``marshal`` file in the package's ``__pycache__``, keyed by that text
(and by the interpreter's bytecode magic number): a class defined the same way gets the very code it would
have compiled, and a changed class compiles its new text (and adds it) as before.  The file is written at exit
when this process compiled anything new, never when Python writes no bytecode (``PYTHONDONTWRITEBYTECODE``):
there ``python -m ctxview.precompile`` writes it, and ctxview's ``.pyc`` files, ahead.  Set
``CTXVIEW_DATACLASS_CODE=off`` to compile every method as ``dataclasses`` does.
"""

from __future__ import annotations

import atexit
import builtins
import dataclasses
import importlib.util
import marshal
import os
import sys
import zlib
from types import CodeType
from typing import Any

# above this many kept methods the file starts again from this process's (old classes' texts pile up)
MAX_ENTRIES = 6000
_HEADER = b"ctxview dataclass code\n" + importlib.util.MAGIC_NUMBER + bytes([sys.flags.optimize])


def cache_path() -> str:
    """The file that keeps the compiled methods: beside ctxview's own bytecode, one per interpreter version."""
    name = f"dataclass-code.{sys.implementation.cache_tag}.marshal"
    return os.path.join(os.path.dirname(__file__), "__pycache__", name)


class CodeCache:
    """Source text → compiled module code, read from ``path`` once (each code object unpacked when first
    asked for); what is compiled here is added."""

    def __init__(self, path: str) -> None:
        self.path = path
        # (crc32, length) of the text → marshal bytes of (text, code): the key only finds the entry, the text in it
        # decides (another text with the same key is compiled here and takes the entry's place)
        self.known: dict[tuple[int, int], bytes] = _read(path)
        self.new: dict[tuple[int, int], bytes] = {}

    def exec(self, source: Any, globals: dict[str, Any] | None = None, locals: Any = None) -> None:
        """``exec`` as ``dataclasses`` calls it, with the compiled text taken from the cache when it is there."""
        if type(source) is str:
            source = self.code(source)
        builtins.exec(source, globals, locals)

    def code(self, source: str) -> CodeType:
        """``source`` compiled as ``dataclasses``' own ``exec`` compiles it (no ``__future__`` flags)."""
        key = (zlib.crc32(source.encode("utf-8", "surrogatepass")), len(source))
        packed = self.known.get(key)
        if packed is not None:
            try:
                text, code = marshal.loads(packed)
            except (EOFError, ValueError, TypeError):
                text = code = None
            if text == source and type(code) is CodeType:
                return code
        # dont_inherit: the flags dataclasses' own exec uses (none), not this module's __future__ imports
        code = compile(source, "<string>", "exec", dont_inherit=True)
        self.new[key] = self.known[key] = marshal.dumps((source, code))
        return code

    def save(self, *, force: bool = False) -> None:
        """Write the file again if this process compiled anything it lacked (atomically; errors are ignored);
        not where Python writes no bytecode, unless ``force``."""
        if not self.new or (sys.dont_write_bytecode and not force):
            return
        kept = self.known if len(self.known) <= MAX_ENTRIES else self.new
        temporary = f"{self.path}.{os.getpid()}.tmp"
        try:
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            with open(temporary, "wb") as file:
                file.write(_HEADER)
                marshal.dump(kept, file)
            os.replace(temporary, self.path)
        except (OSError, ValueError):
            try:
                os.unlink(temporary)
            except OSError:
                pass
            return
        self.new = {}


def _read(path: str) -> dict[tuple[int, int], bytes]:
    try:
        with open(path, "rb") as file:
            data = file.read()
    except OSError:
        return {}
    if not data.startswith(_HEADER):
        return {}
    try:
        value = marshal.loads(memoryview(data)[len(_HEADER) :])
    except (EOFError, ValueError, TypeError):
        return {}
    return value if type(value) is dict else {}  # (an entry of the wrong shape is compiled again when asked for)


_installed: CodeCache | None = None


def install() -> CodeCache | None:
    """Make ``dataclasses`` compile through the cache (once per process); None where it is turned off or
    this Python's ``dataclasses`` does not compile through ``exec``."""
    global _installed
    if _installed is not None:
        return _installed
    if os.environ.get("CTXVIEW_DATACLASS_CODE", "").lower() in ("off", "0", "no"):
        return None
    if not hasattr(dataclasses, "_create_fn") or "exec" in vars(dataclasses):
        return None  # (another interpreter's dataclasses, or someone else's exec there already)
    cache = CodeCache(cache_path())
    dataclasses.exec = cache.exec  # type: ignore[attr-defined]  # the module's global shadows the builtin
    atexit.register(cache.save)
    _installed = cache
    return cache

