"""The reference LCM assembler, one module per stage; pure, no UI imports."""

from __future__ import annotations
