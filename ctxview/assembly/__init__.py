"""The reference LCM assembler, one module per stage; pure, no UI imports.

Where things are (the spec section each module reproduces):

- ``assembler.py`` runs §1.2 → §8 in order and keeps what a run decided
  (``AssemblerResult``); ``engine.py`` runs the engine step after it (§9.2).
- the steps: ``resolve.py`` (§1.2, §3) with ``render.py`` (§2, §3),
  ``tokens.py`` (§4), ``fresh_tail.py`` (§5), ``scoring.py`` (§6.2),
  ``select.py`` (§6: every selection rule, by name), ``postprocess.py``
  (§7.1–§7.3), ``tool_pairs.py`` (§7.4, §7.5), ``diagnostics.py`` (§8),
  ``focus.py`` (§10.1), ``stubs.py`` (§10.2), ``prompt_recall.py`` (§10.3),
  ``fallbacks.py`` (§10.5, §10.6), ``volatile.py`` with ``live.py`` and
  ``decoration.py`` (§9.3–§9.7, Appendices A and B), ``live_intercept.py``
  (§9.2 step 3), ``clamp.py`` (§9.8, §9.9), ``lookup.py`` (§9.2 step 2),
  ``rules.py`` (which engine line's rules apply).
- ``decisions.py``: every ``Decision`` and its reason, built by named
  constructors; ``ranking.py``: the ``Ranker`` protocol through which an
  opt-in scorer ranks the evictable items (the scorers implement it; this
  package never imports them).
- ``incremental/``: what makes a warm re-assembly cheap (term index, chunked
  repair, per-list caches, the lazy decision list and its columns); each is
  pinned to the plain path by a test.
"""

from __future__ import annotations
