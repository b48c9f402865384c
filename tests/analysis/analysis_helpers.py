"""Random phase-2 positions across the rules variants, for the solver's tests; knowledge of deals that differ
only in hidden cards, for the samplers' and searches'."""

from __future__ import annotations

import random

from arena.analysis import Position
from arena.analysis.worlds import Knowledge
from arena.engine import Deal, Match, Rules

VARIANTS = [
    Rules(),
    Rules(trumps=True),
    Rules(must_head_phase2=True),
    Rules(trumps=True, must_head_phase2=True),
    Rules(hand_size=5, trumps=True),
    Rules(hand_size=4, must_head_phase2=True),
]


def random_endgame(rng: random.Random, rules: Rules, extra_plays: int | None = None) -> Deal:
    """A deal played at random through phase 1, then `extra_plays` more random cards (random if None)."""
    deck = list(range(32))
    rng.shuffle(deck)
    deal = Deal(rules, rng.randrange(2), deck)
    while deal.phase == 1:
        legal = deal.legal_cards()
        deal.play(legal[rng.randrange(len(legal))])
    n = rng.randrange(2 * rules.hand_size) if extra_plays is None else extra_plays
    for _ in range(n):
        legal = deal.legal_cards()
        deal.play(legal[rng.randrange(len(legal))])
    return deal


def random_position(rng: random.Random, max_cards: int = 6) -> Position:
    """A phase-2 position with at most `max_cards` cards in the leader's hand, any variant."""
    rules = rng.choice(VARIANTS)
    size = rules.hand_size
    skip = 2 * max(0, size - max_cards)
    deal = random_endgame(rng, rules, skip + rng.randrange(2 * min(size, max_cards)))
    return Position.from_deal(deal)


def core_args(pos: Position) -> tuple[int, int, int, int, bool]:
    """The raw search arguments of a position (leader's hand, follower's hand, table, trump, must_head)."""
    return (
        pos.hands[pos.leader],
        pos.hands[1 - pos.leader],
        -1 if pos.table is None else pos.table,
        -1 if pos.trump is None else pos.trump,
        pos.must_head,
    )


def hidden_twins(rules: Rules) -> list[Knowledge]:
    """The non-dealer's knowledge (on move) of two deals that differ only in cards it cannot see: a
    dealer's card and the stock's last hidden card swapped."""
    deck = list(range(32))
    random.Random(4).shuffle(deck)
    swapped = list(deck)
    swapped[2], swapped[31] = deck[31], deck[2]
    knows = []
    for d in (deck, swapped):
        m = Match(rules, 1)
        m.start_deal(deck=d, dealer=0)
        knows.append(Knowledge.from_view(m.view(1), rules))
    return knows
