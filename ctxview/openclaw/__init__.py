"""Where an OpenClaw user's sessions really are: the state directory, the host's live window, the records of turns.

A pure library (no UI, no writes): ``paths`` finds the state directory and the
LCM database as OpenClaw and lossless-claw do, ``config`` reads ``openclaw.json``,
``agents`` lists agents and their sessions (JSONL and SQLite eras) and maps each
to its LCM conversation, ``transcript`` reads a session's entries, ``live_window``
builds the ``messages`` the host passes to the engine's ``assemble``,
``records`` loads what a turn actually sent (trajectory, cache trace) and
``verify`` compares a re-assembly with such a record.  The facts come from
``shared/spec/openclaw-state.md``; bad or partial state becomes a note, never
an exception (only a state directory that cannot be listed at all raises).
"""
