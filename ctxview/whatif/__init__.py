"""What-if tools: questions about a trace that go beyond one run's decisions.

The engine's overflow diagnostics as a table (``diagnose``), context guards for
CI (``check``), the conversation's summary tree (``summary_tree``), live inputs
written by hand with the engine's own markers (``live_inputs``), how much of
the prompt-cache prefix an edit keeps (``cache_prefix``) and two settings side
by side (``compare``).  No Textual here: the CLI and the TUI share these.
"""
