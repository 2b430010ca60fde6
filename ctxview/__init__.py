"""ctxview: a terminal inspector for LLM context windows assembled by LCM-style engines."""

from __future__ import annotations

from ctxview.dataclass_code import install as _install_dataclass_code

__version__ = "0.1.0"

_install_dataclass_code()  # before any module of ours defines a dataclass: their methods compile once, not per start
