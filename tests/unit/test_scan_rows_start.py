"""``LazyDecisionList.scan_rows(fields, start)``: the rows from a chunk on, as a whole scan gives them."""

from __future__ import annotations

import pytest

from ctxview.assembly.decisions import ROW_FIELDS
from ctxview.assembly.incremental.decision_list import CHUNK
from tests.export_support import run_case


@pytest.mark.parametrize("fields", [ROW_FIELDS, ("ordinal", "outcome", "key")])  # the row builder's; others
@pytest.mark.parametrize("start", [0, CHUNK, 3 * CHUNK, "the last chunk"])
def test_the_rows_from_a_chunk_are_the_tail_of_a_whole_scan(fields: tuple[str, ...], start: int | str) -> None:
    decisions = run_case("017").decisions  # 400 items and 4 live inputs after them
    count = decisions.base_count  # type: ignore[attr-defined]
    at = (count - 1) // CHUNK * CHUNK if isinstance(start, str) else start
    whole = list(run_case("017").decisions.scan_rows(fields))  # type: ignore[attr-defined]
    assert len(whole) == len(decisions) > count
    assert list(decisions.scan_rows(fields, at)) == whole[at:]  # type: ignore[attr-defined]


def test_rows_of_chunks_read_before_come_from_their_decisions() -> None:
    decisions = run_case("017").decisions
    whole = list(run_case("017").decisions.scan_rows(ROW_FIELDS))  # type: ignore[attr-defined]
    decisions[2 * CHUNK + 5].reason = "read and changed"  # (a chunk built, then kept)
    rows = list(decisions.scan_rows(ROW_FIELDS, CHUNK))  # type: ignore[attr-defined]
    assert rows[CHUNK + 5][ROW_FIELDS.index("reason")] == "read and changed"
    rows[CHUNK + 5][ROW_FIELDS.index("reason")] = whole[2 * CHUNK + 5][ROW_FIELDS.index("reason")]
    assert rows == whole[CHUNK:]


@pytest.mark.parametrize("start", [1, CHUNK + 1, -CHUNK, "past the items"])
def test_a_start_inside_a_chunk_or_outside_the_items_is_refused(start: int | str) -> None:
    decisions = run_case("017").decisions
    at = (decisions.base_count // CHUNK + 1) * CHUNK if isinstance(start, str) else start  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="scan_rows starts at a chunk"):
        next(iter(decisions.scan_rows(ROW_FIELDS, at)))  # type: ignore[attr-defined]
