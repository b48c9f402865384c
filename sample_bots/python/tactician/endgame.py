"""Exact play once the stock is empty.

When the stock runs out every card is placed: mine are in my hand, the played ones are face up,
so the opponent holds exactly the rest. Phase 2 (at most six tricks, follow suit) is then a small
perfect-information game, which a memoised minimax solves in well under a second. The objective is
the signed Tendler value of the deal (reaching 11, 15 or 20 matters more than one more point),
with my final honours as the tie-break so that the bot still grabs points when the value is
already decided.
"""

from __future__ import annotations

from elfcards import Position, beats, deal_value, legal_follow, points


def _utility(my_final: int) -> int:
    return deal_value(my_final) * 32 + my_final


class _Solver:
    def __init__(self, trump: int | None, must_head: bool) -> None:
        self.trump = trump
        self.must_head = must_head
        self.memo: dict[tuple[frozenset[int], frozenset[int], bool, int], int] = {}

    def trick(
        self, me: frozenset[int], opp: frozenset[int], lead: int, follow: int, me_led: bool, pts: int
    ) -> int:
        """Value after a complete trick: score it, then play on with the winner leading."""
        follower_wins = beats(follow, lead, self.trump)
        me_wins = follower_wins != me_led
        if me_wins:
            pts += points(lead) + points(follow)
        return self.start(me, opp, me_wins, pts)

    def start(self, me: frozenset[int], opp: frozenset[int], me_leads: bool, pts: int) -> int:
        """Value of the position at the start of a trick, with best play on both sides."""
        if not me:
            return _utility(pts)
        key = (me, opp, me_leads, pts)
        hit = self.memo.get(key)
        if hit is not None:
            return hit
        if me_leads:
            best = max(self.answer_opp(me - {c}, opp, c, pts) for c in me)
        else:
            best = min(self.answer_me(me, opp - {c}, c, pts) for c in opp)
        self.memo[key] = best
        return best

    def answer_opp(self, me: frozenset[int], opp: frozenset[int], lead: int, pts: int) -> int:
        """I led `lead`; the opponent picks the reply that is worst for me."""
        replies = legal_follow(opp, lead, True, self.trump, self.must_head)
        return min(self.trick(me, opp - {f}, lead, f, True, pts) for f in replies)

    def answer_me(self, me: frozenset[int], opp: frozenset[int], lead: int, pts: int) -> int:
        """The opponent led `lead`; I pick my best legal reply."""
        replies = legal_follow(me, lead, True, self.trump, self.must_head)
        return max(self.trick(me - {f}, opp, lead, f, False, pts) for f in replies)


def solve(pos: Position) -> int | None:
    """The best card in phase 2, or None when the position is not fully known (it then is not a
    phase-2 position, or the view was incomplete)."""
    if not pos.phase2:
        return None
    opp = pos.unseen
    if pos.lead is None and len(opp) != len(pos.hand):
        return None
    if pos.lead is not None and len(opp) != len(pos.hand) - 1:
        return None
    solver = _Solver(pos.trump, pos.must_head)
    best_card, best_value = None, None
    for card in sorted(pos.legal):
        rest = pos.hand - {card}
        if pos.lead is None:
            value = solver.answer_opp(rest, opp, card, pos.my_points)
        else:
            value = solver.trick(rest, opp, pos.lead, card, False, pos.my_points)
        if best_value is None or value > best_value:
            best_card, best_value = card, value
    return best_card
