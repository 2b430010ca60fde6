"""``LazyDecisionList.scan_rows``: the rows the CLI's JSON is written from are the fields of the decisions.

The row builder (``decisions.run_rows``) computes each context item's values without a
``Decision``; the list applies the pipeline's changes (resets, per-key maps, overrides)
to the rows.  Every value must be the decision's own, of the same type (``0``, ``0.0`` and
``False`` are equal in Python but not in JSON), for every parity case of both lines.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from ctxview.assembly.decisions import ROW_FIELDS
from ctxview.assembly.incremental.decision_list import LazyDecisionList
from ctxview.model import Trace
from ctxview.params_io import build_params, default_params, read_params_file
from ctxview.pipeline import SessionAssembler
from ctxview.store import LcmStore
from tests.parity.corpus import case_dir, case_ids


def _typed(rows: list[list[Any]]) -> list[list[tuple[str, str]]]:
    return [[(type(value).__name__, repr(value)) for value in row] for row in rows]


def _rows_of_decisions(trace: Trace) -> list[list[Any]]:
    return [[getattr(d, name) for name in ROW_FIELDS] for d in trace.decisions]


def _run(line: str, case: str, **changes: Any) -> Trace:
    directory = case_dir(case, line)
    fields, conversation = read_params_file(directory / "params.json")
    params = build_params(default_params(), fields, source="params.json", from_file=True)
    with LcmStore(directory / "session.db") as store:
        session = store.load_session(conversation)
    return SessionAssembler(session).run(replace(params, **changes))


CASES = [(line, case) for line in ("0.15", "1.0") for case in case_ids(line)]


@pytest.mark.parametrize(("line", "case"), CASES, ids=[f"{line}-{case}" for line, case in CASES])
def test_rows_are_the_decisions_fields(line: str, case: str) -> None:
    trace = _run(line, case)
    decisions = trace.decisions
    assert isinstance(decisions, LazyDecisionList)
    rows = list(decisions.scan_rows(ROW_FIELDS))  # before anything reads the decisions
    assert _typed(rows) == _typed(_rows_of_decisions(trace))


@pytest.mark.parametrize("case", ["005", "301", "042"])
@pytest.mark.parametrize("budget", [1, 300, 3000])
def test_rows_after_some_decisions_were_read(case: str, budget: int) -> None:
    """Chunks already built are read from their decisions, the others from the row builder."""
    trace = _run("0.15", case, token_budget=budget, prompt_aware_eviction=True, prompt="tool error config")
    decisions = trace.decisions
    assert isinstance(decisions, LazyDecisionList)
    for index in range(0, len(decisions), 3):
        if index % 2:
            decisions[index]
    rows = list(decisions.scan_rows(ROW_FIELDS))
    assert _typed(rows) == _typed(_rows_of_decisions(trace))


def test_other_fields_are_read_from_decisions() -> None:
    trace = _run("0.15", "005")
    decisions = trace.decisions
    assert isinstance(decisions, LazyDecisionList)
    fields = ("label", "key", "outcome")
    assert list(decisions.scan_rows(fields)) == [[d.label, d.key, d.outcome] for d in decisions]


def test_rows_without_a_row_builder_come_from_the_decisions() -> None:
    trace = _run("0.15", "005")
    plain = LazyDecisionList(len(trace.decisions), lambda start, stop: list(trace.decisions[start:stop]))
    assert _typed(list(plain.scan_rows(ROW_FIELDS))) == _typed(_rows_of_decisions(trace))
