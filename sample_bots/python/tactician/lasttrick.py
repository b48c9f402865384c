"""The last trick of phase 1, played by looking at every way the unseen cards can lie.

With two cards left in the stock only a handful of cards are unseen: the opponent's hand and
those two. Each assignment (which two are in the stock, in which order) fixes the whole of phase 2,
which a fast points-only solver then plays out exactly. The card with the best average wins;
when leading, the opponent is assumed to find its best reply in every assignment (the usual
"perfect information Monte Carlo" simplification). Following looks at every assignment (at most
42); leading, which also searches the replies, at an even spread of 24 of the 56.

The search is bounded in **nodes** (phase-2 positions solved), never in time, so the card depends
only on the position: the same seed replays the same match on any machine, under any load. The
budget is checked between assignments, which are taken in an interleaved order so that any prefix
of them is an even sample. See `choose` for the time cut-off kept only as a last-resort guard.

Measured in self-play over 100 duplicate deal pairs, this one trick lifted the tactician from
parity with itself to winning 56% of deals against its former version (+0.24 lines a deal).
"""

from __future__ import annotations

import time
from itertools import permutations

from elfcards import Position, beats, points

SUIT = tuple(0xFF << (8 * s) for s in range(4))
MAX_LEAD_WORLDS = 24  # leading searches the replies too: an even spread of 24 assignments
# Phase-2 positions solved per decision: the memo's size, so counting costs nothing. Measured over
# 240 decisions (3 rule variants, leading and following) on the busy 2-core test machine at a load
# of 9 to 13: at most 75 ms of CPU and 0.30 s of wall time (a full look needs up to 22,000 nodes,
# 0.16 s of CPU). The budget keeps 90% of the full look's cards.
NODE_BUDGET = 10_000


def _cards(mask: int) -> list[int]:
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


POINTS = tuple(points(c) for c in range(32))


class _PointsSolver:
    """Phase 2 with every card known: the most honours I can still take, both sides playing best.
    Hands are bitmasks; the memo is shared by all the assignments of one decision. Written for
    speed (tables, local names), since one decision solves thousands of phase-2 positions."""

    def __init__(self, trump: int | None, must_head: bool) -> None:
        self.trump = trump
        self.must_head = must_head
        self.memo: dict[tuple[int, int, bool], int] = {}
        # wins[lead][follow]: the follower takes the trick.
        self.wins = [[beats(f, lead, trump) for f in range(32)] for lead in range(32)]
        self._listing: dict[int, list[int]] = {}

    def cards(self, mask: int) -> list[int]:
        found = self._listing.get(mask)
        if found is None:
            found = self._listing[mask] = _cards(mask)
        return found

    def replies(self, hand: int, lead: int) -> list[int]:
        same = hand & SUIT[lead >> 3]
        if same:
            if self.must_head:
                higher = same & ~((2 << lead) - 1)
                if higher:
                    return self.cards(higher)
            return self.cards(same)
        if self.trump is not None and hand & SUIT[self.trump]:
            return self.cards(hand & SUIT[self.trump])
        return self.cards(hand)

    def value(self, me: int, opp: int, me_leads: bool) -> int:
        if not me:
            return 0
        key = (me, opp, me_leads)
        memo = self.memo
        hit = memo.get(key)
        if hit is not None:
            return hit
        wins, value, replies = self.wins, self.value, self.replies
        if me_leads:
            best = -1
            for c in self.cards(me):
                me2 = me & ~(1 << c)
                worst = 99
                for f in replies(opp, c):
                    if wins[c][f]:
                        v = value(me2, opp & ~(1 << f), False)
                    else:
                        v = POINTS[c] + POINTS[f] + value(me2, opp & ~(1 << f), True)
                    if v < worst:
                        worst = v
                        if worst <= best:
                            break  # this lead is already no better than one found
                if worst > best:
                    best = worst
        else:
            best = 99
            for c in self.cards(opp):
                opp2 = opp & ~(1 << c)
                top = -1
                for f in replies(me, c):
                    if wins[c][f]:
                        v = POINTS[c] + POINTS[f] + value(me & ~(1 << f), opp2, True)
                    else:
                        v = value(me & ~(1 << f), opp2, False)
                    if v > top:
                        top = v
                        if top >= best:
                            break  # the opponent already has a lead at least this good
                if top < best:
                    best = top
        memo[key] = best
        return best


def _mask(cards: frozenset[int] | set[int]) -> int:
    m = 0
    for c in cards:
        m |= 1 << c
    return m


def _interleaved(worlds: list[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
    """The assignments round-robin over the card on top of the stock (first world of each top
    card, then the second of each, ...), so that stopping after any number of them still looks at
    every top card about equally often."""
    rank: dict[int, int] = {}
    keyed = []
    for n, world in enumerate(worlds):
        top = world[0]
        keyed.append((rank.get(top, 0), n, world))
        rank[top] = rank.get(top, 0) + 1
    return [world for _, _, world in sorted(keyed)]


def choose(pos: Position, nodes: int = NODE_BUDGET, time_limit: float | None = None) -> int | None:
    """The best card for the last trick of phase 1, or None when this is not that trick.

    It stops looking at further assignments once `nodes` phase-2 positions are solved: the same
    position gives the same card, whatever the machine's speed. `time_limit` (seconds) is only a
    guard against a machine so overloaded that even the node budget would overrun the move clock.
    The tactician sets it to three quarters of the free move time (0.75 s on the default clock,
    never under 0.3 s): ten times the CPU time and over twice the wall time the node budget ever
    took in the measurements above NODE_BUDGET, and twice the longest think (388 ms) of a 200-deal
    match at a load of 24 to 29 on 2 cores, where it never fired. So under normal load it never
    changes the card. `search` says when it fires, and the tactician then logs it: that move may
    differ in a replay.
    """
    return search(pos, nodes, time_limit)[0]


def search(
    pos: Position, nodes: int = NODE_BUDGET, time_limit: float | None = None
) -> tuple[int | None, bool]:
    """`choose`, also saying whether the time guard cut the search short (see `choose`)."""
    deadline = None if time_limit is None else time.perf_counter() + time_limit
    if pos.stock != 2:
        return None, False
    unseen = pos.unseen
    opp_size = len(pos.hand) - (1 if pos.lead is not None else 0)
    if len(unseen) != opp_size + 2:
        return None, False
    solver = _PointsSolver(pos.trump, pos.must_head)
    me_all = _mask(pos.hand)
    worlds = []
    for top, last in permutations(sorted(unseen), 2):
        if pos.trump_card is not None and last != pos.trump_card:
            continue  # the turned trump lies at the bottom: it is drawn last
        worlds.append((top, last, _mask(unseen - {top, last})))
    if not worlds:
        return None, False
    if pos.lead is None and len(worlds) > MAX_LEAD_WORLDS:
        # Leading costs a reply search per world: keep an even, deterministic spread of them.
        step = len(worlds) / MAX_LEAD_WORLDS
        worlds = [worlds[int(i * step)] for i in range(MAX_LEAD_WORLDS)]
    worlds = _interleaved(worlds)

    def trick_value(card: int, lead: int, follow: int, me_led: bool, opp: int, top: int, last: int) -> int:
        me_wins = beats(follow, lead, pos.trump) != me_led
        me = me_all & ~(1 << card)
        opp = opp & ~(1 << (follow if me_led else lead))
        me |= 1 << (top if me_wins else last)
        opp |= 1 << (last if me_wins else top)
        gained = POINTS[lead] + POINTS[follow] if me_wins else 0
        return gained + solver.value(me, opp, me_wins)

    legal = sorted(pos.legal)
    totals = dict.fromkeys(legal, 0)
    cut_by_time = False
    # Worlds outside, cards inside: when the budget runs out every card has been scored on the
    # same worlds, so stopping early still compares like with like.
    for n, (top, last, opp) in enumerate(worlds, 1):
        for card in legal:
            if pos.lead is not None:
                totals[card] += trick_value(card, pos.lead, card, False, opp | (1 << pos.lead), top, last)
            else:
                totals[card] += min(trick_value(card, card, f, True, opp, top, last) for f in _cards(opp))
        if n == len(worlds) or len(solver.memo) >= nodes:
            break
        if deadline is not None and time.perf_counter() > deadline:
            cut_by_time = True  # the node budget would have looked further: a replay may differ
            break
    return max(legal, key=lambda c: totals[c]), cut_by_time
