"""Errors a user can hit, with messages a person can act on.

The CLI prints them as one line and exits 2; the TUI shows them as a
notification and keeps running.
"""

from __future__ import annotations


class CtxviewError(Exception):
    """Base class: the message is shown to the user as is."""


class DatabaseError(CtxviewError):
    """The file cannot be read as an LCM database (missing, not SQLite, wrong schema)."""


class ConversationNotFound(CtxviewError):
    """The requested conversation id does not exist in the database."""


class InputError(CtxviewError):
    """A parameter, params file or live-input file is malformed."""
