"""``python -m ctxview.precompile``: write ctxview's ``.pyc`` files and its dataclasses' compiled methods ahead.

Python writes both by itself on a first run, except where it writes no bytecode (``PYTHONDONTWRITEBYTECODE``,
``-B``): there every start compiles again whatever changed since the files were last written, which a
benchmark then measures as start-up.
"""

from __future__ import annotations

import compileall
import importlib
import os
import pkgutil

from ctxview import dataclass_code


def precompile() -> int:
    """Compile every module of the package to ``.pyc`` and import each (the TUI's where Textual is
    installed; no ``__main__``), then write the dataclass methods they compiled.  0 when all compiled."""
    package = os.path.dirname(dataclass_code.__file__)
    compiled = compileall.compile_dir(package, quiet=1)
    cache = dataclass_code.install()
    for module in pkgutil.walk_packages([package], prefix="ctxview."):
        if module.name.rpartition(".")[2] == "__main__":
            continue  # (a program, not a library module: importing it runs it)
        try:
            importlib.import_module(module.name)
        except Exception:  # (a module that needs what is not installed: its classes are left out)
            continue
    if cache is not None:
        cache.save(force=True)
    return 0 if compiled else 1


if __name__ == "__main__":
    raise SystemExit(precompile())
