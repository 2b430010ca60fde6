"""Exports of an assembled context: to replay it, attach it to a report, diff it.

Every format is a pure function of a Trace (``render(trace, fmt)``), so the
CLI, the TUI's export dialog and the tests produce byte-identical output for
the same run.  ``formats`` is the table of formats; each renderer is its own
module, loaded only when its format is rendered:

- ``native``: ``native`` (the parity message list exactly as the reference
  engine returns it) and ``jsonl`` (one message per line), and the messages' hash;
- ``openai`` and ``anthropic``: request payloads those APIs accept (every tool
  call answered exactly once, no empty blocks, Anthropic roles alternating),
  both built from the normalized turns of ``turns``;
- ``markdown``: a transcript for people; ``trace``: the whole decision record;
- ``jsontext``: JSON text with JavaScript's number formatting;
- ``write``: ``write_export`` writes any of them atomically.

Importing this package loads only the table and the writer, so the command
line can offer the choices cheaply.
"""

from __future__ import annotations

from ctxview.export.formats import EXPORT_FORMATS, FORMATS, Format, format_named, render, suggested_filename
from ctxview.export.write import write_export

__all__ = ["EXPORT_FORMATS", "FORMATS", "Format", "format_named", "render", "suggested_filename", "write_export"]
