"""Two settings on one session, item by item: what A keeps that B does not, and where their messages part.

The prefix is the diff's (``ctxview.diff``): the first message at which the two
final lists differ.  Kept means the trace's kept outcomes (``Decision.is_kept``);
an item B keeps and A does not is *gained*, the reverse *lost*.
"""

from __future__ import annotations

from dataclasses import dataclass

from ctxview.diff import shared_prefix
from ctxview.model import KEPT_OUTCOMES, Trace, column, count_text, outcome_text


@dataclass(frozen=True, slots=True)
class CompareRow:
    key: str
    item: str  # ordinal, or L<n> for a live input
    label: str
    tokens: int
    outcome_a: str | None  # None: the item is not in A (a live input only one side has)
    outcome_b: str | None

    @property
    def kept_a(self) -> bool:
        return self.outcome_a in KEPT_OUTCOMES

    @property
    def kept_b(self) -> bool:
        return self.outcome_b in KEPT_OUTCOMES

    @property
    def differs(self) -> bool:
        return self.outcome_a != self.outcome_b

    @property
    def mark(self) -> str:
        """``+`` B keeps it and A does not, ``−`` the reverse, ``•`` another outcome change, blank: the same."""
        if not self.differs:
            return ""
        if self.kept_b and not self.kept_a:
            return "+"
        if self.kept_a and not self.kept_b:
            return "−"
        return "•"


@dataclass(frozen=True, slots=True)
class Comparison:
    a: Trace
    b: Trace
    rows: list[CompareRow]
    kept_tokens_a: int  # Σ item tokens of the kept items
    kept_tokens_b: int
    gained: int  # items B keeps and A does not
    lost: int  # items A keeps and B does not
    first_difference: int | None  # first differing message of the final lists (None: identical)
    prefix_tokens: int

    @property
    def differing(self) -> list[int]:
        """Row indexes whose outcome differs."""
        return [index for index, row in enumerate(self.rows) if row.differs]

    def header(self) -> str:
        """``kept tokens A 1,525 · B 1,954 (+429) · … · B gains 5 items, loses 2 · … first differing message 2``."""
        delta = self.kept_tokens_b - self.kept_tokens_a
        final_a, final_b = self.a.summary.final_tokens, self.b.summary.final_tokens
        parts = [
            f"kept tokens A {self.kept_tokens_a:,} · B {self.kept_tokens_b:,} ({delta:+,})",
            f"sent A {final_a:,} · B {final_b:,} tokens",
            f"B gains {count_text(self.gained, 'item')}, loses {self.lost:,}",
        ]
        changed = sum(1 for row in self.rows if row.differs)
        parts.append(f"{count_text(changed, 'row')} differ")
        if self.first_difference is None:
            parts.append("assembled messages identical")
        else:
            # numbered from 0, as the inspector's assembled pane numbers them
            parts.append(f"first differing message {self.first_difference} (~{self.prefix_tokens:,} tokens shared)")
        return " · ".join(parts)


def compare_traces(a: Trace, b: Trace) -> Comparison:
    """Every item of either run with both outcomes, in the order of the items table (ordinals, then live)."""
    def table(trace: Trace) -> dict[str, tuple[str, str, int, str]]:
        d = trace.decisions
        keys, labels, tokens, outcomes = (column(d, n) for n in ("key", "label", "tokens", "outcome"))
        ordinals, lives = column(d, "ordinal"), column(d, "live_index")
        return {
            key: (str(o) if o is not None else f"L{li}", label, tok, outcome)
            for key, o, li, label, tok, outcome in zip(keys, ordinals, lives, labels, tokens, outcomes, strict=True)
        }

    left, right = table(a), table(b)
    order = list(left) + [key for key in right if key not in left]
    rows: list[CompareRow] = []
    kept_a = kept_b = gained = lost = 0
    for key in order:
        mine, theirs = left.get(key), right.get(key)
        shown = theirs or mine
        assert shown is not None
        row = CompareRow(key, shown[0], shown[1], shown[2], mine[3] if mine else None, theirs[3] if theirs else None)
        rows.append(row)
        if row.kept_a:
            kept_a += mine[2] if mine else 0
        if row.kept_b:
            kept_b += theirs[2] if theirs else 0
        gained += row.kept_b and not row.kept_a
        lost += row.kept_a and not row.kept_b
    first, prefix_tokens = shared_prefix(a.messages, b.messages)
    return Comparison(a, b, rows, kept_a, kept_b, gained, lost, first, prefix_tokens)


def outcome_cell(outcome: str | None) -> str:
    return "(absent)" if outcome is None else outcome_text(outcome)
