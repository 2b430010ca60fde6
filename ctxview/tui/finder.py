"""The items filter (``f``): a query over compact per-item columns, fast on 100,000 items.

A query is words separated by spaces; every term must hold (terms combine with AND):

* a plain word matches the item's text (case-insensitive substring);
* ``outcome:evicted`` the outcome (a prefix: it also matches ``evicted-for-live``);
* ``kind:toolResult`` the table's kind column (a prefix: ``kind:condensed``), or the item kind
  (``message``, ``summary``, ``live``);
* ``role:user`` the role the item is emitted with;
* ``tokens>500``, ``tokens<20``, ``tokens>=…``, ``tokens<=…``, ``tokens=…`` its token estimate;
* ``changed`` the items whose outcome the last edit changed.

Text, kind and role do not depend on the parameters, so ``ItemFacts`` reads them once per
session (building every decision once, off the UI thread); each new trace then needs only
its outcome, tokens and key columns, which it has without building decisions.
Kept free of Textual.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field

from ctxview.errors import InputError
from ctxview.model import Trace, column

_COMPARE: dict[str, Callable[[int, int], bool]] = {
    ">": operator.gt,
    "<": operator.lt,
    ">=": operator.ge,
    "<=": operator.le,
    "=": operator.eq,
}
_TOKENS = re.compile(r"^tokens(>=|<=|>|<|=)([\d,_]+)$")
_FIELDS = ("outcome", "kind", "role")


@dataclass(frozen=True, slots=True)
class ItemQuery:
    """A parsed filter; ``text`` is what the user typed."""

    text: str
    words: tuple[str, ...] = ()  # lower case
    fields: tuple[tuple[str, str], ...] = ()  # (field, lower-case value)
    tokens: tuple[tuple[str, int], ...] = ()  # (comparison, number)
    changed: bool = False

    @property
    def needs_text(self) -> bool:
        """True when the query reads item text, kind or role (``ItemFacts`` must be ready)."""
        return bool(self.words) or any(name in ("kind", "role") for name, _ in self.fields)


def parse_query(text: str) -> ItemQuery:
    """Parse a filter line; raises InputError with a message a person can act on."""
    words: list[str] = []
    fields: list[tuple[str, str]] = []
    tokens: list[tuple[str, int]] = []
    changed = False
    for term in text.split():
        lower = term.lower()
        name, colon, value = lower.partition(":")
        number = _TOKENS.match(lower)
        if lower == "changed":
            changed = True
        elif number is not None:
            tokens.append((number[1], int(number[2].replace(",", "").replace("_", ""))))
        elif lower.startswith("tokens") and lower[6:7] in ("<", ">", "="):
            raise InputError(f"{term!r}: write tokens>500, tokens<20 or tokens=48")
        elif colon and name in _FIELDS:
            if not value:
                raise InputError(f"{term!r}: say which {name}, e.g. {name}:{_EXAMPLES[name]}")
            fields.append((name, value.replace(" ", "-")))
        else:
            words.append(lower)
    return ItemQuery(text.strip(), tuple(words), tuple(fields), tuple(tokens), changed)


_EXAMPLES = {"outcome": "evicted", "kind": "toolResult", "role": "user"}


@dataclass(slots=True)
class ItemFacts:
    """The parameter-independent columns of a session's items, by decision key: what a filter reads."""

    position: dict[str, int] = field(default_factory=dict)  # decision key → row of the lists below
    texts: list[str] = field(default_factory=list)  # lower case
    kinds: list[str] = field(default_factory=list)  # "<label> <kind>", lower case
    roles: list[str] = field(default_factory=list)  # lower case ("" when none)

    @classmethod
    def of(cls, trace: Trace) -> ItemFacts:
        """Read the facts of every decision of ``trace`` (builds each decision once: run it in a thread)."""
        decisions = trace.decisions
        keys = column(decisions, "key")
        labels = column(decisions, "label")
        kinds = column(decisions, "kind")
        roles = column(decisions, "role")
        texts = column(decisions, "text")
        return cls(
            position={key: i for i, key in enumerate(keys)},
            texts=[text.lower() for text in texts],
            kinds=[f"{label} {kind}".lower() for label, kind in zip(labels, kinds, strict=True)],
            roles=[(role or "").lower() for role in roles],
        )

    def covers(self, keys: Sequence[str]) -> bool:
        return all(key in self.position for key in keys)


def matching(
    trace: Trace, query: ItemQuery, facts: ItemFacts | None, changed: Collection[str]
) -> list[int]:
    """Indexes of the decisions of ``trace`` that satisfy every term of ``query``, in decision order.

    ``facts`` may be None only when the query does not read text, kind or role.  An item the
    facts do not know (a live input added by a reload) matches no text term.
    """
    decisions = trace.decisions
    keys = column(decisions, "key")
    candidates: list[int] = list(range(len(keys)))
    if query.changed:
        candidates = [i for i in candidates if keys[i] in changed]
    for name, value in query.fields:
        if name == "outcome":
            outcomes = column(decisions, "outcome")
            candidates = [i for i in candidates if outcomes[i].startswith(value)]
    for comparison, number in query.tokens:
        tokens = column(decisions, "tokens")
        compare = _COMPARE[comparison]
        candidates = [i for i in candidates if compare(tokens[i], number)]
    text_fields = [(name, value) for name, value in query.fields if name != "outcome"]
    if query.words or text_fields:
        if facts is None:
            raise ValueError("this query reads item text: ItemFacts are needed")
        position = facts.position
        rows = [(i, position.get(keys[i])) for i in candidates]
        known = [(i, row) for i, row in rows if row is not None]
        for name, value in text_fields:
            if name == "kind":
                kinds = facts.kinds
                known = [(i, row) for i, row in known if any(part.startswith(value) for part in kinds[row].split())
                         or kinds[row].startswith(value)]
            else:
                roles = facts.roles
                known = [(i, row) for i, row in known if roles[row] == value]
        texts = facts.texts
        for word in query.words:
            known = [(i, row) for i, row in known if word in texts[row]]
        candidates = [i for i, _ in known]
    return candidates
