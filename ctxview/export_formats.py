"""The export formats by name: what each one is and the file suffix it gets.

Kept apart from ``ctxview.export`` so that the command line can offer the
choices without loading the writers.
"""

from __future__ import annotations

FORMATS: tuple[str, ...] = ("native", "openai", "anthropic", "markdown", "trace", "jsonl")

FORMAT_DESCRIPTIONS: dict[str, str] = {
    "native": "the assembled messages exactly as the reference engine returns them (JSON)",
    "openai": "Chat Completions `messages` (JSON array)",
    "anthropic": 'Messages API request body {"messages": [...]} (JSON)',
    "markdown": "a readable transcript with the run's settings and token totals",
    "trace": "the full decision trace (every item with score, outcome, reason) and a sha256 of the messages",
    "jsonl": "one native message per line",
}

FORMAT_SUFFIXES: dict[str, str] = {
    "native": ".json",
    "openai": ".openai.json",
    "anthropic": ".anthropic.json",
    "markdown": ".md",
    "trace": ".trace.json",
    "jsonl": ".jsonl",
}
