"""The items table's "why": a decision's reason, terse, for a column a third of the screen wide.

The trace's ``reason`` is the engine's full sentence (exports, ``ctxview check`` and
the detail pane quote it, so it never changes for the table's sake).  The table
needs the same facts in a few cells and without the outcome word, which has its
own column: ``194 tok > 3 left · rank 17/34`` for an item the prompt-aware
walk evicted.  ``terse_reason`` rewrites each sentence form the assembler and the
engine write (``ctxview.assembly.decisions`` / ``engine``) into that form, keeping
every number; a sentence it does not know comes back whole, less its outcome word.
Kept free of Textual.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from ctxview.model import Decision

_N = r"[\d,]+"

# one entry per sentence form: the pattern (anchored at the start) and what it becomes;
# a match's unmatched tail (a ranking note, "; moved after …") is made terse by ``_tail``
_Rule = tuple[re.Pattern[str], Callable[[re.Match[str]], str]]


def _rule(pattern: str, build: Callable[[re.Match[str]], str]) -> _Rule:
    return re.compile(pattern), build


def _walk(m: re.Match[str]) -> str:
    fits = "≤" if m["verb"] == "fit" else ">"
    return f"{m['tok']} tok {fits} {m['left']} left · rank {int(m['rank']):,}/{int(m['of']):,}"


def _ids(text: str) -> str:
    count = len([part for part in text.split(",") if part.strip()])
    return f"{count} tool call{'s' if count != 1 else ''}"


def _short(where: str) -> str:
    return where.replace("live input ", "")


def _for_live(m: re.Match[str]) -> str:
    forcing = m["who"].removeprefix("live input ")
    others = f" +{m['others']}" if m["others"] else ""
    partner = f" · pair {m['partners'].replace('items ', '').replace('item ', '')}" if m["partners"] else ""
    return f"for {forcing}{others} · then {m['after']}/{m['budget']}{' tok' if not partner else ''}{partner}"


_RULES: tuple[_Rule, ...] = (
    # §6 the budget pass
    _rule(
        rf"(?:kept|evicted): score \S+ ranked (?P<rank>\d+)\w\w of (?P<of>\d+); (?P<tok>{_N}) tokens "
        rf"(?P<verb>fit|did not fit) in the (?P<left>{_N}) left of {_N}",
        _walk,
    ),
    _rule(rf"kept: chronological, newest-first walk fit \((?P<tok>{_N}) of (?P<left>{_N}) remaining\)",
          lambda m: f"{m['tok']} tok ≤ {m['left']} left · newest first"),
    _rule(rf"evicted: chronological walk stopped here: (?P<tok>{_N}) tokens did not fit in the (?P<left>{_N}) "
          rf"left of {_N}; everything older is dropped",
          lambda m: f"{m['tok']} tok > {m['left']} left · the walk stops here"),
    _rule(r"evicted: chronological walk stopped at ordinal (?P<stop>\S+) \(did not fit\); everything older is dropped",
          lambda m: f"older than item {m['stop']}, where the walk stopped"),
    _rule(rf"kept: every evictable item fits \((?P<total>{_N}) tokens in the (?P<left>{_N}) left "
          r"after the fresh tail\)",
          lambda m: f"all evictable fit: {m['total']} tok ≤ {m['left']} left"),
    # the fresh tail
    _rule(r"fresh tail: the newest raw message is always protected", lambda m: "the newest raw message"),
    _rule(r"fresh tail: extended back to the latest user turn \(ordinal (?P<o>\d+)\)",
          lambda m: f"back to the latest user turn (item {m['o']})"),
    _rule(r"fresh tail: within the (?P<rest>last .*? raw messages(?: within the [\d,]+-token cap)?)",
          lambda m: m["rest"]),
    _rule(r"fresh tail: (?P<what>summary|item) at or after the tail boundary \(ordinal ≥ (?P<o>\d+)\)",
          lambda m: f"{m['what']} at or after the tail boundary (≥ {m['o']})"),
    # clean-up and the pairing repair (§7)
    _rule(r"dropped: orphan tool result \(its call is not in the context before it\)",
          lambda m: "orphan: its tool call is not before it"),
    _rule(r"dropped: every block was a tool call whose result is not selected \((?P<ids>[^)]*)\)",
          lambda m: f"only {_ids(m['ids'])}, none with a kept result"),
    _rule(r"dropped: duplicate tool result \(another result for the same call is kept\)",
          lambda m: "another result for the same call is kept"),
    _rule(r"dropped: error/aborted turn lost its tool calls \((?P<ids>[^)]*)\)",
          lambda m: f"error/aborted turn lost its {_ids(m['ids'])}"),
    _rule(r"dropped: its tool calls (?P<ids>.*?) duplicate earlier calls; nothing else is left",
          lambda m: f"its {_ids(m['ids'])} repeat earlier calls; nothing else left"),
    _rule(r"dropped: assistant message with empty content", lambda m: "assistant message with empty content"),
    _rule(r"tool calls (?P<ids>.*?) stripped: result not selected",
          lambda m: f"{_ids(m['ids'])} stripped: result not kept"),
    # the engine step (§9)
    _rule(
        rf"evicted to make room for (?P<who>.+?)(?: with (?P<others>\d+) other inputs?)?: the context came to "
        rf"(?P<after>{_N}) serialized tokens after this eviction \(budget (?P<budget>{_N})\)"
        r"(?:; evicted together with its tool partners? (?P<partners>.*))?$",
        _for_live,
    ),
    _rule(rf"cut by the serialized clamp: (?P<before>{_N}) serialized tokens exceeded (?P<pct>90 % of )?the budget "
          rf"(?P<budget>{_N}); only the newest messages fitting (?P<target>{_N}) were kept",
          lambda m: f"{m['before']} > {'90 % of ' if m['pct'] else ''}{m['budget']}: newest {m['target']} kept"),
    _rule(r"trailing assistant message removed after the clamp \(the turn must end on a user\)",
          lambda m: "trailing assistant after the clamp: the turn must end on a user"),
    _rule(r"volatile input already in the context as (?P<what>.+?) \(same signature\); not appended",
          lambda m: f"already in the context as {m['what']}"),
    _rule(r"already persisted: same message as (?P<what>.+)$", lambda m: f"stored already as {m['what']}"),
    _rule(r"(?P<kind>.+?) not in the stored context: appended (?P<where>.+)$",
          lambda m: f"{m['kind']} · {_short(m['where'])}"),
    _rule(r"(?P<kind>.+?): its covering copy was evicted \((?P<gone>[^)]*)\), so it is appended (?P<where>.+)$",
          lambda m: f"{m['kind']} · its copy {m['gone']} was evicted · {_short(m['where'])}"),
)

_STUB = re.compile(rf"stubbed: (?P<before>{_N}) → (?P<after>{_N}) tokens \((?P<what>[^)]*)\); ")
_RANKING_NOTE = re.compile(r"^\([\w-]+: .*\)$")
_OUTCOME_WORD = re.compile(r"^(?:kept|evicted|dropped|fresh tail|stubbed|clamped|replaced)(?::\s*|\s+(?=by ))")


def _tail(rest: str) -> str:
    """What follows a known sentence: a scorer's note, a move after tool results, a large output."""
    rest = rest.strip()
    if _RANKING_NOTE.match(rest):
        return ""  # a scorer's arithmetic: the score and label columns show its result, the detail pane the rest
    rest = rest.lstrip(";").strip()
    if not rest:
        return ""
    rest = rest.replace("moved after the tool results of ", "moved after the results of ")
    return f" · {rest}"


def terse_reason(decision: Decision) -> str:
    """The reason of ``decision`` in the table's words (see the module docstring)."""
    return terse_text(decision.reason)


def terse_text(reason: str) -> str:
    """A reason sentence (as the trace and its JSON carry it) in the table's words."""
    stub = ""
    match = _STUB.match(reason)
    if match is not None:
        stub = f" · stub of {match['before']}"
        reason = reason[match.end():]
    for pattern, build in _RULES:
        found = pattern.match(reason)
        if found is not None:
            return build(found) + _tail(reason[found.end():]) + stub
    return _OUTCOME_WORD.sub("", reason) + stub
