"""Parity with the reference engines on every packed case (``tests/parity/data``, both engine lines).

Each case runs ``ctxview assemble session.db --params params.json --format json``
once, in-process, and is compared with its ``expected.json`` as the parity
checker compares it, one test per case and check:

* ``assembler``: ``stages.assembler.messages``/``.estimatedTokens``,
  ``selectionMode``, ``freshTailOrdinal``, ``keptOrdinals`` (only where the
  reference took its normal path: in a fallback its assembler result was not used);
* ``final``: ``messages``, ``estimatedTokens``, ``engineOutcome``;
* ``stage-records``: the ``promptRecall``/``volatileAppend``/``serializedClamp``
  (and, in 1.0 files, ``fallbackClamp``) records, where they say more than the
  final stage;
* ``assembler-trace``: the assembler's stats, numeric debug fields and
  per-item trace (tokens, segment, selection, score, ...), normal path only;
* ``decisions``: ctxview's own per-item and per-live-input decisions agree
  with the messages it printed and with its volatile record.

A failure names the case (``1.0-424-final``) and reports the first difference.
"""

from __future__ import annotations

import functools
import json
from typing import Any

import pytest

from tests.parity.checks import (
    ASSEMBLER_FIELDS,
    FINAL_FIELDS,
    CliRun,
    assembler_trace_difference,
    compare_fields,
    decisions_difference,
    run_assemble,
    stage_records_difference,
)
from tests.parity.corpus import CaseFiles, ParityCase, ParityCorpus, corpus_cases, corpus_lines

CASES = corpus_cases()
NORMAL_PATH_CHECKS = ("assembler", "final", "stage-records", "assembler-trace", "decisions")
FALLBACK_CHECKS = ("final", "stage-records", "decisions")


def checks_of(case: ParityCase) -> tuple[str, ...]:
    return NORMAL_PATH_CHECKS if case.compares_assembler else FALLBACK_CHECKS


# every check of a case right after the others, so one cached run serves them all
PARAMS = [pytest.param(case, check, id=f"{case.name}-{check}") for case in CASES for check in checks_of(case)]


@functools.lru_cache(maxsize=1)
def case_run(files: CaseFiles) -> tuple[dict[str, Any], dict[str, Any], CliRun]:
    params = json.loads(files.params.read_text(encoding="utf-8"))
    expected = json.loads(files.expected.read_text(encoding="utf-8"))
    return params, expected, run_assemble(files)


def problem_of(check: str, params: dict[str, Any], expected: dict[str, Any], run: CliRun) -> str:
    actual, error = run.output()
    if actual is None:
        return error
    if check == "assembler":
        return compare_fields(expected, actual, ASSEMBLER_FIELDS)
    if check == "final":
        return compare_fields(expected, actual, FINAL_FIELDS)
    if check == "stage-records":
        return stage_records_difference(expected, actual)
    if check == "assembler-trace":
        return assembler_trace_difference(expected, actual)
    return decisions_difference(actual, params.get("liveMessages"))


@pytest.mark.parametrize(("case", "check"), PARAMS)
def test_parity(parity_corpus: ParityCorpus, case: ParityCase, check: str) -> None:
    params, expected, run = case_run(parity_corpus.files(case))
    problem = problem_of(check, params, expected, run)
    if problem:
        pytest.fail(f"{case.name} [{check}] {problem}", pytrace=False)


def test_both_engine_lines_are_packed() -> None:
    assert corpus_lines() == ["0.15", "1.0"]
    assert all(corpus_cases(line) for line in corpus_lines())


def test_unpacked_cases_are_the_manifests(parity_corpus: ParityCorpus) -> None:
    """Which checks a case gets is decided from the manifest at collection: it must match the files."""
    for line in corpus_lines():
        cases = corpus_cases(line)
        assert parity_corpus.unpacked_case_ids(line) == [case.case_id for case in cases]
        for case in cases:
            files = parity_corpus.files(case)
            expected = json.loads(files.expected.read_text(encoding="utf-8"))
            assert expected["engineOutcome"] == case.engine_outcome, case.name
            assert json.loads(files.params.read_text(encoding="utf-8"))["caseId"] == case.case_id
            assert files.db.read_bytes()[:16] == b"SQLite format 3\x00", case.name
