"""Deterministic sample LCM session databases that ctxview can open without a real agent.

A small hand-written ``demo`` (one debugging conversation with every kind of item the
assembler treats differently) and generated ``medium`` / ``large`` sessions for scale.  Every
message is stored the way the engine's ingest stores it (spec §2.7, Appendix A), with fixed
ids and timestamps, so two builds of the same kind and seed hold identical rows.

Modules: ``build`` (build_sample), ``writer`` (rows, ids, times, the SQLite file),
``schema`` (the LCM DDL), ``demo`` and ``demo_texts`` (the demo script and its live window),
``topics`` and ``generated`` (the medium/large generator), ``paths`` (finding a demo DB).
"""

from __future__ import annotations

from ctxview.model import Params
from ctxview.samples.build import SAMPLE_KINDS, build_sample
from ctxview.samples.demo import DEMO_CONVERSATION_ID, demo_live_messages, write_demo_live_json
from ctxview.samples.paths import ensure_demo_db
from ctxview.samples.writer import SampleInfo

# Where the demo shows eviction at work: a tight budget, a prompt about the rollback, prompt-aware
# selection.  ``ctxview --demo`` opens with them; tests and the screenshots use them (with
# the demo's live window: ``replace(DEMO_PARAMS, live_messages=tuple(demo_live_messages()))``).
DEMO_PARAMS = Params(
    token_budget=2000, prompt="helm rollback failed deploy", prompt_aware_eviction=True, fresh_tail_count=8
)

__all__ = [
    "DEMO_CONVERSATION_ID",
    "DEMO_PARAMS",
    "SAMPLE_KINDS",
    "SampleInfo",
    "build_sample",
    "demo_live_messages",
    "ensure_demo_db",
    "write_demo_live_json",
]
