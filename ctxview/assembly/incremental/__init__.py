"""What makes a warm re-assembly cheap, kept apart from the reference steps it speeds up.

Every module here remembers something across runs of one session (the term
index, the per-chunk clean-up and repair, the parameter-independent plan and
shape of the resolved items, the JSON of messages already hashed) or defers
work nobody may read (the lazy decision list).  None of them changes a result:
each is pinned to the plain reference path by a test (``test_termindex``,
``test_chunked_repair``, ``test_decision_list`` and the warm-against-cold
``test_warm_caches``).
"""

from __future__ import annotations
