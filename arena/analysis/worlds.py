"""Worlds consistent with one seat's view: the hidden cards dealt out again, the deal replayed to now.

A seat sees its hand, every card played, its own draws, the stock count and the turned trump
(docs/rules.md §8). Everything else, the opponent's hand and the order of the stock, is free. A world
is a full 32-card deck that gives exactly that view: `sample_deal` builds one and replays the deal's
plays through the engine, so the result is an engine `Deal` at the current position, ready to be
played forward or solved.

Why the hidden cards are uniform: any opponent hand drawn from the unseen cards has a history that
explains the opponent's plays (each played card held in time), and the number of such histories is the
same for every hand, so uniform sampling is the exact posterior for an opponent whose policy we do not
model. Phase 1 carries no constraint (any card may be played) and in phase 2 the stock is empty, so
every unseen card is in the opponent's hand: the world is unique. Two things are fixed: with trumps
the turned card lies at the bottom of the stock (drawn last, by the loser of the last phase-1 trick),
and the seat's own draws are known.

This is the one world sampler of the arena: `arena.sdk.sim` (bots) and the replay analysis both use it.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from arena.engine.cards import FULL_DECK, cards_of, mask_of
from arena.engine.deal import Deal
from arena.engine.rules import Rules
from arena.engine.tables import DEAL_POSITIONS
from arena.engine.view import View


class WorldError(ValueError):
    """Knowledge that no deal can produce (wrong counts, a card twice, the trump card unknown)."""


@dataclass(frozen=True, slots=True)
class Knowledge:
    """One seat's information set within a deal, as engine ints (cards 0..31, hands as masks)."""

    rules: Rules
    seat: int
    dealer: int
    leader: int  # who leads (or led) the current trick
    to_move: int | None
    hand: int  # the seat's hand, a mask
    tricks: tuple[tuple[int, int, int, int], ...]  # (leader, lead, follow, winner) per finished trick
    table: int | None  # the card led in the current trick, if any
    drawn: tuple[int, ...]  # the seat's own draws, in order (one per finished phase-1 trick)
    stock_count: int
    trump_card: int | None = None  # the turned trump card (trumps variant), remembered after it is drawn
    multiplier: int = 1
    pot: int = 0
    index: int = 0

    @classmethod
    def from_engine_view(cls, view: View, rules: Rules, trump_card: int | None = None) -> Knowledge:
        """From `arena.engine.view.View`. The view names the trump card only while it lies under the
        stock: once it is drawn pass the remembered card (the deal's first view has it)."""
        return cls(
            rules=rules, seat=view.seat, dealer=view.dealer, leader=view.leader, to_move=view.to_move,
            hand=mask_of(view.hand), tricks=view.tricks, table=view.table, drawn=view.drawn,
            stock_count=view.stock_count,
            trump_card=view.trump_card if view.trump_card is not None else trump_card,
            multiplier=view.multiplier, pot=view.pot, index=view.deal_index,
        )  # fmt: skip

    @classmethod
    def of_deal(cls, deal: Deal, seat: int) -> Knowledge:
        """What `seat` knows of a live engine deal (for benchmarks and tests: a projection, as build_view)."""
        return cls(
            rules=deal.rules, seat=seat, dealer=deal.dealer, leader=deal.leader, to_move=deal.to_move,
            hand=deal.hands[seat], tricks=tuple((t.leader, t.lead, t.follow, t.winner) for t in deal.tricks),
            table=deal.table, drawn=tuple(deal.drawn[seat]), stock_count=deal.stock_count,
            trump_card=deal.trump_card, multiplier=deal.multiplier, pot=deal.pot, index=deal.index,
        )  # fmt: skip

    @property
    def played(self) -> int:
        """Every card face up so far (the tricks and the card on the table), a mask."""
        mask = mask_of(c for _, lead, follow, _ in self.tricks for c in (lead, follow))
        return mask | (1 << self.table if self.table is not None else 0)

    @property
    def unseen(self) -> int:
        """The cards the seat cannot place: the opponent's hand and the stock, a mask."""
        return FULL_DECK & ~self.hand & ~self.played


def _draw_tricks(k: Knowledge) -> int:
    """How many finished tricks had draws (the phase-1 tricks played so far)."""
    return min(len(k.tricks), k.rules.phase1_tricks)


def check(k: Knowledge) -> None:
    """WorldError unless the knowledge can come from a real deal (counts, overlaps, the trump card)."""
    h = k.rules.hand_size
    if k.hand & k.played:
        raise WorldError(f"cards both in hand and played: {cards_of(k.hand & k.played)}")
    drawn_tricks = _draw_tricks(k)
    if len(k.drawn) != drawn_tricks:
        raise WorldError(f"{len(k.drawn)} cards drawn after {drawn_tricks} phase-1 tricks")
    if k.stock_count != 2 * (k.rules.phase1_tricks - drawn_tricks):
        raise WorldError(f"a stock of {k.stock_count} after {len(k.tricks)} tricks")
    if k.rules.trumps and k.trump_card is None:
        raise WorldError("trumps variant: the turned trump card is needed (remember it from the deal start)")
    mine = sum(1 for t in k.tricks for c, who in ((t[1], t[0]), (t[2], 1 - t[0])) if who == k.seat)
    if k.table is not None and k.leader == k.seat:
        mine += 1
    if mine + k.hand.bit_count() - len(k.drawn) != h:
        raise WorldError(f"the seat's cards do not add up to a hand of {h}")


def sample_deal(k: Knowledge, rng: random.Random) -> Deal:
    """One world: an engine Deal at the current position whose view for `k.seat` is the real one.

    The unseen cards are shuffled by `rng` (so the same generator state gives the same world)."""
    check(k)
    rules, seat, opp = k.rules, k.seat, 1 - k.seat
    h = rules.hand_size
    trump = k.trump_card if rules.trumps else None
    unseen = k.unseen
    trump_in_stock = trump is not None and k.stock_count > 0
    if trump_in_stock:
        if not unseen >> trump & 1:
            raise WorldError("the trump card is seen but the stock still holds it")
        unseen &= ~(1 << trump)
    pool = cards_of(unseen)
    rng.shuffle(pool)
    future = pool[len(pool) - (k.stock_count - trump_in_stock) :] + ([trump] if trump_in_stock else [])
    opp_hand = pool[: len(pool) - (k.stock_count - trump_in_stock)]

    # Who played what, in order: each seat's cards over time.
    played: tuple[list[int], list[int]] = ([], [])
    for leader, lead, follow, _ in k.tricks:
        played[leader].append(lead)
        played[1 - leader].append(follow)
    if k.table is not None:
        played[k.leader].append(k.table)
    drawn_tricks = _draw_tricks(k)
    # The opponent held its played cards in time: its first h plays were dealt to it, later plays and
    # its current hand were drawn in order. The trump card, when it drew it, was its last draw.
    seq = played[opp] + opp_hand
    last_draw_is_trump = (
        trump is not None and drawn_tricks == rules.phase1_tricks and k.tricks[drawn_tricks - 1][3] == seat
    )
    if last_draw_is_trump:
        seq.remove(trump)
    opp_initial = seq[:h]
    opp_draws = seq[h:] + ([trump] if last_draw_is_trump else [])
    my_initial = cards_of((mask_of(played[seat]) | k.hand) & ~mask_of(k.drawn))
    if len(opp_initial) != h or len(opp_draws) != drawn_tricks or len(my_initial) != h:
        raise WorldError("the seats' cards do not add up to the hands and draws of a deal")

    draw_order: list[int] = []
    for t in range(drawn_tricks):
        mine, theirs = k.drawn[t], opp_draws[t]
        draw_order += [mine, theirs] if k.tricks[t][3] == seat else [theirs, mine]
    draw_order += future
    stock_part = [draw_order[-1], *draw_order[:-1]] if trump is not None else draw_order
    non_pos, dealer_pos = DEAL_POSITIONS[h]
    deck = [0] * 32
    hands = {k.dealer: my_initial if seat == k.dealer else opp_initial}
    hands[1 - k.dealer] = opp_initial if seat == k.dealer else my_initial
    for pos, card in zip(dealer_pos, hands[k.dealer], strict=True):
        deck[pos] = card
    for pos, card in zip(non_pos, hands[1 - k.dealer], strict=True):
        deck[pos] = card
    deck[2 * h :] = stock_part
    deal = Deal(rules, k.dealer, deck, k.multiplier, k.pot, k.index)
    for _, lead, follow, _ in k.tricks:
        deal.play(lead)
        deal.play(follow)
    if k.table is not None:
        deal.play(k.table)
    return deal


def sample_deals(k: Knowledge, n: int, rng: random.Random) -> list[Deal]:
    """`n` worlds from one generator (in phase 2 they are all the same world)."""
    return [sample_deal(k, rng) for _ in range(n)]
