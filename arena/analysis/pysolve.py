"""The pure-Python search: alpha-beta with a transposition table, move ordering and equivalent cards.

Masks only. `a` is the leader's hand, `b` the follower's, `table` the card led (-1 at a trick's start),
`trump` a suit 0..3 or -1. Values are future honours (captured from here on). The compiled core
(`_core.c`) implements the same functions and must give identical answers (tests/analysis/test_core.py).

- `root_values` answers for every legal card of the side to move;
- `minimax_values` is the plain minimax (no pruning, no table): the brute force the solver is checked
  against and the baseline of `arena bench solver`.
"""

from __future__ import annotations

from arena.engine.cards import ABOVE, HONOUR, HONOUR_MASK, SUIT_MASK, SUIT_OF_CARD_MASK
from arena.engine.tables import FOLLOWER_WINS

INF = 99
# LOWER[c]: the cards of c's suit below c.
LOWER = tuple(SUIT_OF_CARD_MASK[c] & ((1 << c) - 1) for c in range(32))


def legal_follows(b: int, lead: int, trump: int, must_head: bool) -> int:
    """The follower's legal cards in phase 2 (docs/rules.md §3, §7)."""
    same = b & SUIT_OF_CARD_MASK[lead]
    if same:
        if must_head:
            higher = same & ABOVE[lead]
            if higher:
                return higher
        return same
    if trump >= 0:
        trumps = b & SUIT_MASK[trump]
        if trumps:
            return trumps
    return b


def _hon(m: int) -> int:
    return (m & HONOUR_MASK).bit_count()


def representatives(cards: int, live: int) -> int:
    """One card per run of equivalent cards: a card is dropped when the next live card below it in its
    suit is also among `cards` and has the same honour value (the two then play alike in any line)."""
    out = 0
    m = cards
    while m:
        low = m & -m
        c = low.bit_length() - 1
        m ^= low
        below = live & LOWER[c]
        if below:
            prev = below.bit_length() - 1
            if cards >> prev & 1 and HONOUR[prev] == HONOUR[c]:
                continue
        out |= low
    return out


def _bits(m: int) -> list[int]:
    out = []
    while m:
        low = m & -m
        out.append(low.bit_length() - 1)
        m ^= low
    return out


class Searcher:
    """One search's state: the variant and the transposition table (key a << 32 | b -> (lower, upper))."""

    __slots__ = ("trump", "must_head", "wins", "tt", "nodes")

    def __init__(self, trump: int, must_head: bool) -> None:
        self.trump = trump
        self.must_head = must_head
        self.wins = FOLLOWER_WINS[None if trump < 0 else trump]
        self.tt: dict[int, tuple[int, int]] = {}
        self.nodes = 0

    def lead_order(self, a: int, b: int) -> list[int]:
        """Leads worth trying first: cards that beat everything the follower holds in their suit
        (highest honours first), then the rest, low cards first."""
        reps = representatives(a, a | b)
        good: list[int] = []
        rest: list[int] = []
        for c in _bits(reps):
            (good if not b & ABOVE[c] else rest).append(c)
        good.sort(key=lambda c: -HONOUR[c])
        return good + rest

    def value(self, a: int, b: int, alpha: int, beta: int) -> int:
        """The leader's future honours at a trick's start (fail-soft alpha-beta)."""
        if not a:
            return 0
        self.nodes += 1
        key = a << 32 | b
        entry = self.tt.get(key)
        total = _hon(a | b)
        lo, hi = (0, total) if entry is None else entry
        if lo >= beta or lo == hi:
            return lo
        if hi <= alpha:
            return hi
        alpha = max(alpha, lo)
        beta = min(beta, hi)
        if a & (a - 1) == 0:  # one card each: no choice left
            lead = a.bit_length() - 1
            pair = lead << 5 | (b.bit_length() - 1)
            v = 0 if self.wins[pair] else total
            self.tt[key] = (v, v)
            return v
        best = -INF
        a0, b0 = alpha, beta
        for lead in self.lead_order(a, b):
            v = self.after_lead(a ^ 1 << lead, b, lead, alpha, beta)
            if v > best:
                best = v
                if v > alpha:
                    alpha = v
                    if alpha >= beta:
                        break
        if best <= a0:
            self.tt[key] = (lo, best)
        elif best >= b0:
            self.tt[key] = (best, hi)
        else:
            self.tt[key] = (best, best)
        return best

    def after_lead(self, a: int, b: int, lead: int, alpha: int, beta: int) -> int:
        """The leader's future honours (this trick included) once `lead` is on the table."""
        wins = self.wins
        legal = legal_follows(b, lead, self.trump, self.must_head)
        reps = representatives(legal, a | b | 1 << lead)
        # Follower's ordering: the cheapest card that takes the trick, then the cheapest loser.
        takers: list[int] = []
        losers: list[int] = []
        for f in _bits(reps):
            (takers if wins[lead << 5 | f] else losers).append(f)
        takers.sort(key=lambda f: (HONOUR[f], f))  # a non-honour taker first, then low
        losers.sort(key=lambda f: (HONOUR[f], f))
        best = INF
        lead_hon = HONOUR[lead]
        for f in takers + losers:
            nb = b ^ 1 << f
            pts = lead_hon + HONOUR[f]
            if wins[lead << 5 | f]:
                rest = _hon(a | nb)
                v = rest - self.value(nb, a, rest - beta, rest - alpha)
            else:
                v = pts + self.value(a, nb, alpha - pts, beta - pts)
            if v < best:
                best = v
                if v < beta:
                    beta = v
                    if alpha >= beta:
                        break
        return best


def root_values(a: int, b: int, table: int, trump: int, must_head: bool) -> dict[int, int]:
    """card -> the mover's future honours under best play, for every legal card of the side to move.

    The mover is the leader when `table` is -1, else the follower (and `a` is the leader's hand
    without the card led)."""
    s = Searcher(trump, must_head)
    out: dict[int, int] = {}
    if table < 0:
        for lead in _bits(a):
            out[lead] = s.after_lead(a ^ 1 << lead, b, lead, -INF, INF)
        return out
    legal = legal_follows(b, table, trump, must_head)
    for f in _bits(legal):
        nb = b ^ 1 << f
        rest = _hon(a | nb)
        pts = HONOUR[table] + HONOUR[f]
        if s.wins[table << 5 | f]:
            out[f] = pts + s.value(nb, a, -INF, INF)
        else:
            out[f] = rest - s.value(a, nb, -INF, INF)
    return out


# -- the plain minimax: no pruning, no table ----------------------------------------------------------
def _mm_value(a: int, b: int, wins: tuple[bool, ...], trump: int, must_head: bool) -> int:
    if not a:
        return 0
    best = -1
    for lead in _bits(a):
        v = _mm_after(a ^ 1 << lead, b, lead, wins, trump, must_head)
        if v > best:
            best = v
    return best


def _mm_after(a: int, b: int, lead: int, wins: tuple[bool, ...], trump: int, must_head: bool) -> int:
    best = INF
    for f in _bits(legal_follows(b, lead, trump, must_head)):
        nb = b ^ 1 << f
        if wins[lead << 5 | f]:
            v = _hon(a | nb) - _mm_value(nb, a, wins, trump, must_head)
        else:
            v = HONOUR[lead] + HONOUR[f] + _mm_value(a, nb, wins, trump, must_head)
        if v < best:
            best = v
    return best


def minimax_values(a: int, b: int, table: int, trump: int, must_head: bool) -> dict[int, int]:
    """The same answers as `root_values`, by exhaustive minimax."""
    wins = FOLLOWER_WINS[None if trump < 0 else trump]
    out: dict[int, int] = {}
    if table < 0:
        for lead in _bits(a):
            out[lead] = _mm_after(a ^ 1 << lead, b, lead, wins, trump, must_head)
        return out
    for f in _bits(legal_follows(b, table, trump, must_head)):
        nb = b ^ 1 << f
        if wins[table << 5 | f]:
            out[f] = HONOUR[table] + HONOUR[f] + _mm_value(nb, a, wins, trump, must_head)
        else:
            out[f] = _hon(a | nb) - _mm_value(a, nb, wins, trump, must_head)
    return out
