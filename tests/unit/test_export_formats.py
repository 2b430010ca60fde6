"""The export format table: one declaration per format feeds render(), help texts and file names."""

from __future__ import annotations

import subprocess
import sys

import pytest

from ctxview.errors import InputError
from ctxview.export.formats import (
    EXPORT_FORMATS,
    FORMATS,
    format_help,
    format_list,
    format_named,
    render,
    suggested_filename,
)
from ctxview.model import Trace
from ctxview.report import decision_json, trace_to_json
from tests.export_support import make_trace, run_case

SUFFIXES = {
    "native": ".json",
    "openai": ".openai.json",
    "anthropic": ".anthropic.json",
    "markdown": ".md",
    "trace": ".trace.json",
    "jsonl": ".jsonl",
}


def test_the_table_names_each_format_once_in_the_order_every_list_shows() -> None:
    assert FORMATS == ("native", "openai", "anthropic", "markdown", "trace", "jsonl")
    assert [f.name for f in EXPORT_FORMATS] == list(FORMATS)
    assert {f.name: f.suffix for f in EXPORT_FORMATS} == SUFFIXES


def test_lists_and_help_come_from_the_table() -> None:
    assert format_list() == "native, openai, anthropic, markdown, trace, jsonl"
    assert format_list(last=" or ") == "native, openai, anthropic, markdown, trace or jsonl"
    assert format_help() == (
        "native: the assembled messages exactly as the reference engine returns them (JSON); "
        "openai: Chat Completions `messages` (JSON array); "
        'anthropic: Messages API request body {"messages": [...]} (JSON); '
        "markdown: a readable transcript with the run's settings and token totals; "
        "trace: the full decision trace (every item with score, outcome, reason) and a sha256 of the messages; "
        "jsonl: one native message per line"
    )


def test_file_names_take_the_format_suffix() -> None:
    for name, suffix in SUFFIXES.items():
        assert suggested_filename(name, stem="demo", conversation_id=3) == f"demo-conversation-3{suffix}"
    assert suggested_filename("native") == "ctxview.json"
    assert suggested_filename("nope") == "ctxview.txt"


def test_an_unknown_format_names_the_choices() -> None:
    with pytest.raises(InputError) as caught:
        format_named("yaml")
    assert str(caught.value) == (
        "unknown export format 'yaml'; choose one of: native, openai, anthropic, markdown, trace, jsonl"
    )


def test_every_renderer_loads_and_render_goes_through_the_table() -> None:
    trace = make_trace([{"role": "user", "content": "hi"}])
    for fmt in EXPORT_FORMATS:
        text = fmt.render(trace)
        assert text.endswith("\n")
        assert render(trace, fmt.name) == text


def test_reading_the_table_loads_no_renderer() -> None:
    code = (
        "import sys, ctxview.export, ctxview.export.formats; "
        "print(sorted(m for m in sys.modules if m.startswith('ctxview.export.')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout == "['ctxview.export.formats', 'ctxview.export.write']\n"


# --- one mapping of a decision to JSON --------------------------------------------------------


def test_the_parity_items_are_a_projection_of_the_one_decision_mapping() -> None:
    trace: Trace = run_case("005")  # live inputs, matched terms, a fresh tail
    full = [decision_json(d) for d in trace.decisions]
    document = trace_to_json(trace)
    assert trace_to_json(trace, full) == document
    by_ordinal = {f["ordinal"]: f for f in full if f["ordinal"] is not None}
    items = document["trace"]["items"] + document["trace"]["replacedByFocus"]
    assert {item["segment"] for item in items} >= {"freshTail", "evictable"}
    assert any(item["matchedTerms"] for item in items)
    assert len(document["trace"]["liveInputs"]) == 8
    camel = {"fresh-tail": "freshTail"}
    for item in items:
        source = by_ordinal[item["ordinal"]]
        for name, value in item.items():
            if name == "segment":
                assert value == camel.get(source["segment"], source["segment"])
            elif name == "matchedTerms":
                assert value == [{k: v for k, v in term.items() if k != "note"} for term in source[name]]
            else:
                assert value == source[name]
    by_live = {f["liveIndex"]: f for f in full if f["liveIndex"] is not None}
    for live in document["trace"]["liveInputs"]:
        assert live == {name: by_live[live["liveIndex"]][name] for name in live}
