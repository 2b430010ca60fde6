"""Read-only views of what an LCM database holds beside the context: every message, briefs, files, transcripts.

These are the data halves of the lcm-tui-style screens (``ctxview.tui.screens``): no
Textual, so the CLI and tests use them as they are.  They read through an already open
read-only connection (``LcmStore.connection``) and never write.  What is missing or
inconsistent in the database is a note, never an exception.
"""
