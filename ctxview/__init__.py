"""ctxview: a terminal inspector for LLM context windows assembled by LCM-style engines."""

from __future__ import annotations

__version__ = "0.1.0"
