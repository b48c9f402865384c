"""Simulation for search bots: worlds consistent with your view, played forward, and the exact solver.

    from arena.sdk import sim

    class Mine(Bot):
        def on_deal_start(self, deal):
            self.trump = deal.trump_card or None      # the turned trump: the view drops it once drawn
        def play(self, view):
            for world in sim.worlds(view, self.rules, 20, self.rng, self.trump):
                ...                                    # an engine Deal at this very position
                values = sim.solve(world)              # phase 2: exact, card -> my side's final honours

A world is an `arena.engine.deal.Deal` whose hidden cards (the opponent's hand, the stock order) are
dealt out again uniformly among those that fit what you saw (`arena.analysis.worlds`), with the deal's
plays replayed through the engine, so you can `play()` or `playout()` it, or `fork()` it first.
Cards are engine ints here (`card()` and `code()` convert); `view.legal` holds text codes.

The engine and the solver are bound into the sandbox next to the SDK, so this works there as it does
on your machine. Nothing here reads the clock: with the same generator the same worlds come out.
"""

from __future__ import annotations

import random
from copy import copy

from arena.analysis.worlds import Knowledge, WorldError, check, sample_deal
from arena.engine.cards import HONOUR, card_code, cards_of, parse_card
from arena.engine.deal import Deal
from arena.engine.rules import Rules
from arena.engine.tables import FOLLOWER_WINS
from arena.proto import referee_pb2 as pb
from arena.sdk.view import View

__all__ = [
    "Deal",
    "Knowledge",
    "WorldError",
    "card",
    "code",
    "fork",
    "greedy",
    "knowledge",
    "play_forward",
    "rules_of",
    "solve",
    "worlds",
]


def card(text: str) -> int:
    """'TS' -> the engine's int for the card."""
    return parse_card(text)


def code(c: int) -> str:
    """The engine's int -> 'TS'."""
    return card_code(c)


def rules_of(rules: pb.Rules | None) -> Rules:
    """The engine's rules from the Welcome's `Rules` (the options that shape a deal; unset means default)."""
    if rules is None:
        return Rules()
    return Rules(
        scoring=rules.scoring or "tendler",
        hand_size=rules.hand_size or 6,
        trumps=rules.trumps,
        must_head_phase2=rules.must_head_phase2,
    )


def knowledge(view: View, rules: pb.Rules | Rules | None, trump_card: str | None = None) -> Knowledge:
    """Your view as the sampler's `Knowledge`. With trumps, pass the turned card (DealStart.trump_card)
    once it has left the stock; the view alone no longer names it when the opponent drew it."""
    engine_rules = rules if isinstance(rules, Rules) else rules_of(rules)
    trump = view.trump_card or trump_card or None
    drawn = tuple(parse_card(c) for c in view.drawn)
    tricks = tuple((t.leader, parse_card(t.lead), parse_card(t.follow), t.winner) for t in view.tricks)
    if engine_rules.trumps and not trump and len(tricks) >= engine_rules.phase1_tricks and drawn:
        last = tricks[engine_rules.phase1_tricks - 1]
        if last[3] != view.seat:
            trump = code(drawn[-1])  # I lost the last phase-1 trick, so I drew the turned card
    k = Knowledge(
        rules=engine_rules, seat=view.seat, dealer=view.dealer, leader=view.leader, to_move=view.seat,
        hand=sum(1 << parse_card(c) for c in view.hand), tricks=tricks,
        table=parse_card(view.lead_card) if view.lead_card else None, drawn=drawn,
        stock_count=view.stock_size, trump_card=parse_card(trump) if trump else None,
        multiplier=view.multiplier, pot=view.pot, index=max(0, view.deal_number - 1),
    )  # fmt: skip
    check(k)
    return k


def worlds(
    view: View | Knowledge,
    rules: pb.Rules | Rules | None,
    n: int,
    rng: random.Random,
    trump_card: str | None = None,
) -> list[Deal]:
    """`n` worlds consistent with your view, each an engine Deal at the current position."""
    k = view if isinstance(view, Knowledge) else knowledge(view, rules, trump_card)
    return [sample_deal(k, rng) for _ in range(n)]


def fork(deal: Deal) -> Deal:
    """An independent copy of a deal to play forward (the original is left as it is)."""
    twin = copy(deal)
    twin.hands = list(deal.hands)
    twin.honours = list(deal.honours)
    twin._records = list(deal.tricks)  # also builds a playout's pending tricks first
    twin._pending = None
    return twin


def solve(deal: Deal) -> dict[int, int]:
    """Once the stock is empty: for each legal card, the honours the mover's side ends the deal with
    under best play by both sides (the arena's exact solver, `arena.analysis.solver.solve`)."""
    from arena.analysis.solver import solve as exact

    return exact(deal)


def greedy(deal: Deal) -> int:
    """A quick card for the side to move, for playing worlds forward (it sees both hands, as a world
    does). The leader cashes an honour the other hand cannot beat, else leads its cheapest card. The
    follower takes a led honour with its cheapest winning card; on a blank lead it cashes an honour that
    the other hand could take later, else throws its cheapest blank, and wins rather than give an honour
    away. Cheapest: blanks before honours, other suits before trumps, low before high. Deterministic and
    legal in every phase and variant."""
    trump = deal.trump_suit
    wins = FOLLOWER_WINS[trump]
    seat = deal.to_move
    assert seat is not None
    other = cards_of(deal.hands[1 - seat])

    def cost(c: int) -> tuple[int, bool, int]:
        return HONOUR[c], c >> 3 == trump, c & 7

    def beaten(c: int) -> bool:
        return any(wins[c << 5 | f] for f in other)

    legal = cards_of(deal.legal_mask())
    lead = deal.table
    if lead is None:
        sure = [c for c in legal if HONOUR[c] and not beaten(c)]
        return min(sure or legal, key=cost)
    winners = [c for c in legal if wins[lead << 5 | c]]
    if winners and HONOUR[lead]:
        return min(winners, key=cost)
    exposed = [c for c in winners if HONOUR[c] and beaten(c)]
    if exposed:
        return min(exposed, key=cost)
    blanks = [c for c in legal if not HONOUR[c] and not wins[lead << 5 | c]]
    return min(blanks or winners or legal, key=cost)


def play_forward(deal: Deal, policy=greedy, to_phase2: bool = True) -> Deal:
    """Play `deal` on with `policy` for both sides: until the stock is empty and a trick is about to
    start (then `solve` can take over), or to the end of the deal. Returns the same deal."""
    while not deal.done and (not to_phase2 or deal.stock_count or deal.table is not None):
        deal.play(policy(deal))
    return deal
