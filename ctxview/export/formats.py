"""The export formats: the one table that the CLI, the TUI's export dialog, help and palette read.

A format is a name, the file suffix an export of it gets, a line for help
texts, and its renderer — ``"module:function"``, a pure function of a Trace
returning the text.  The renderer's module is imported only when the format
is rendered, so reading this table costs nothing.  To add a format: write its
module and add one line to ``EXPORT_FORMATS``.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ctxview.errors import InputError

if TYPE_CHECKING:
    from ctxview.model import Trace


@dataclass(frozen=True, slots=True)
class Format:
    """One export format (``renderer`` is ``"module:function"``, loaded on first use)."""

    name: str
    suffix: str
    description: str
    renderer: str

    def render(self, trace: Trace) -> str:
        """The export's text, ending with a newline."""
        module, _, function = self.renderer.partition(":")
        text: str = getattr(importlib.import_module(module), function)(trace)
        return text


EXPORT_FORMATS: tuple[Format, ...] = (
    Format(
        "native",
        ".json",
        "the assembled messages exactly as the reference engine returns them (JSON)",
        "ctxview.export.native:to_native",
    ),
    Format("openai", ".openai.json", "Chat Completions `messages` (JSON array)", "ctxview.export.openai:to_openai"),
    Format(
        "anthropic",
        ".anthropic.json",
        'Messages API request body {"messages": [...]} (JSON)',
        "ctxview.export.anthropic:to_anthropic",
    ),
    Format(
        "markdown",
        ".md",
        "a readable transcript with the run's settings and token totals",
        "ctxview.export.markdown:to_markdown",
    ),
    Format(
        "trace",
        ".trace.json",
        "the full decision trace (every item with score, outcome, reason) and a sha256 of the messages",
        "ctxview.export.trace:to_trace_json",
    ),
    Format("jsonl", ".jsonl", "one native message per line", "ctxview.export.native:to_jsonl"),
)

FORMATS: tuple[str, ...] = tuple(f.name for f in EXPORT_FORMATS)

_BY_NAME: dict[str, Format] = {f.name: f for f in EXPORT_FORMATS}


def format_named(name: str) -> Format:
    """The format called ``name``; an unknown name is an ``InputError`` that lists the choices."""
    found = _BY_NAME.get(name)
    if found is None:
        raise InputError(f"unknown export format {name!r}; choose one of: {', '.join(FORMATS)}")
    return found


def render(trace: Trace, fmt: str) -> str:
    """The text of one export format, ending with a newline."""
    return format_named(fmt).render(trace)


def suggested_filename(fmt: str, *, stem: str = "ctxview", conversation_id: int | None = None) -> str:
    """A file name for an export, e.g. ``demo-conversation-1.openai.json``."""
    conversation = f"-conversation-{conversation_id}" if conversation_id is not None else ""
    found = _BY_NAME.get(fmt)
    return f"{stem}{conversation}{found.suffix if found is not None else '.txt'}"


def format_list(*, last: str = ", ") -> str:
    """The format names in table order, ``last`` before the final one: ``native, openai, … or jsonl``."""
    if len(FORMATS) < 2:
        return "".join(FORMATS)
    return ", ".join(FORMATS[:-1]) + last + FORMATS[-1]


def format_help() -> str:
    """Every format with its description, for ``--help``: ``native: …; openai: …``."""
    return "; ".join(f"{f.name}: {f.description}" for f in EXPORT_FORMATS)
