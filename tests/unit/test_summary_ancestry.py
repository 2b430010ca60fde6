"""summaryMaxSourceSeq over summary_parents of any shape: the engine's answer, in time linear in the edges.

The engine asks SQLite a recursive query (``WITH RECURSIVE … UNION``) per summary; the
``UNION`` visits each summary once, so it ends on cycles.  Here the same question is put
to SQLite for every summary of random graphs with cycles and self-loops, and the store's
answer must match it; a cycle is named in the session's warnings.
"""

from __future__ import annotations

import random
import sqlite3
import time
from pathlib import Path

import pytest

from ctxview.store import LcmStore, cycle_warning, source_seq_watermarks
from tests.lcmdb import LcmDbWriter

RECURSIVE_MAX_SEQ = """
    WITH RECURSIVE sources(summary_id) AS (
      SELECT ? UNION SELECT p.parent_summary_id FROM summary_parents p JOIN sources s ON p.summary_id = s.summary_id
    )
    SELECT MAX(m.seq) FROM sources s
    JOIN summary_messages sm ON sm.summary_id = s.summary_id JOIN messages m ON m.message_id = sm.message_id
"""


def closure_answer(roots: list[str], edges: dict[str, list[str]], direct: dict[str, int]) -> dict[str, int | None]:
    """Breadth-first closure of each root, one at a time (quadratic: only for small graphs)."""
    answer: dict[str, int | None] = {}
    for root in roots:
        seen, frontier = {root}, [root]
        while frontier:
            frontier = [p for s in frontier for p in edges.get(s, ()) if p not in seen and not seen.add(p)]
        seqs = [direct[s] for s in seen if s in direct]
        answer[root] = max(seqs) if seqs else None
    return answer


@pytest.mark.parametrize("seed", range(40))
def test_random_graphs_get_the_closure_answer(seed: int) -> None:
    rng = random.Random(seed)
    nodes = [f"s{i}" for i in range(rng.randint(1, 30))]
    edges: dict[str, list[str]] = {}
    for _ in range(rng.randint(0, 60)):
        edges.setdefault(rng.choice(nodes), []).append(rng.choice(nodes))  # self-loops and repeats included
    direct = {n: rng.randint(0, 100) for n in nodes if rng.random() < 0.4}
    roots = rng.sample(nodes, rng.randint(1, len(nodes)))
    value, cycles = source_seq_watermarks(roots, edges, direct)
    expected = closure_answer(nodes, edges, direct)
    assert {n: value[n] for n in value} == {n: expected[n] for n in value}
    assert set(roots) <= set(value)
    in_cycles = {n for cycle in cycles for n in cycle}
    looped = {n for n in value if n in edges.get(n, ()) or any(
        n in closure_nodes(p, edges) for p in edges.get(n, ()))}
    assert in_cycles == looped


def closure_nodes(start: str, edges: dict[str, list[str]]) -> set[str]:
    seen, frontier = {start}, [start]
    while frontier:
        frontier = [p for s in frontier for p in edges.get(s, ()) if p not in seen and not seen.add(p)]
    return seen


def test_a_cycle_is_named_once_with_its_members_in_order() -> None:
    edges = {"a": ["b"], "b": ["c"], "c": ["a"], "d": ["d"]}
    value, cycles = source_seq_watermarks(["a", "d"], edges, {"b": 7})
    assert value == {"a": 7, "b": 7, "c": 7, "d": None}
    assert cycles == [["a", "b", "c"], ["d"]]
    assert cycle_warning(cycles) == (
        "summary ancestry has 2 cycles through 4 summaries in summary_parents (e.g. a → b → c → a);"
        " each summary's sources are counted once, as the engine's recursive query counts them"
    )
    assert cycle_warning([["x\x1b[31m"]]).startswith("summary ancestry has a cycle in summary_parents (e.g. x?[31m →")


@pytest.mark.parametrize("shape", ["chain", "cycle", "star"])
def test_100000_summaries_take_linear_time(shape: str) -> None:
    n = 100_000
    ids = [f"s{i}" for i in range(n)]
    if shape == "star":
        edges = {ids[0]: ids[1:]}
    else:
        edges = {ids[i]: [ids[i + 1]] for i in range(n - 1)}
        if shape == "cycle":
            edges[ids[-1]] = [ids[0]]
    direct = {ids[n // 2]: 42, ids[-1]: 99}
    started = time.process_time()  # CPU time: a shared machine's load does not count against the walk
    value, cycles = source_seq_watermarks(ids[::1000], edges, direct)
    elapsed = time.process_time() - started
    assert value[ids[0]] == 99 and len(value) == n
    assert (len(cycles), len(cycles[0]) if cycles else 0) == ((1, n) if shape == "cycle" else (0, 0))
    assert elapsed < 5  # about 0.3 s of CPU; the walk it replaces took minutes on the cycle


def cyclic_db(path: Path) -> Path:
    """Conversation 1: summaries a…f in context, with a cycle, a self-loop and a branch into the cycle."""
    with LcmDbWriter(path) as w:
        seqs = {}
        for i in range(6):
            seqs[i] = w.message("user", f"m{i}", [], in_context=False)
        for sid in "abcdef":
            w.summary(sid, f"summary {sid}", kind="condensed", in_context=True)
        links = [("a", "b"), ("b", "c"), ("c", "a"), ("d", "d"), ("e", "a"), ("f", "e")]
        w.conn.executemany("INSERT INTO summary_parents VALUES (?, ?, 0)", links)
        w.conn.executemany(
            "INSERT INTO summary_messages VALUES (?, ?, 0)", [("b", seqs[4]), ("d", seqs[2]), ("f", seqs[1])]
        )
    return path


def test_the_store_gives_the_engines_recursive_answer_and_warns(tmp_path: Path) -> None:
    path = cyclic_db(tmp_path / "c.db")
    with LcmStore(path) as store:
        session = store.load_session(1)
    conn = sqlite3.connect(path)
    engine = {sid: conn.execute(RECURSIVE_MAX_SEQ, (sid,)).fetchone()[0] for sid in "abcdef"}
    conn.close()
    assert engine == {"a": 4, "b": 4, "c": 4, "d": 2, "e": 4, "f": 4}
    assert {sid: row.max_source_seq for sid, row in session.summaries.items()} == engine
    assert [w for w in session.warnings if w.startswith("summary ancestry")] == [
        "summary ancestry has 2 cycles through 4 summaries in summary_parents (e.g. a → b → c → a);"
        " each summary's sources are counted once, as the engine's recursive query counts them"
    ]
