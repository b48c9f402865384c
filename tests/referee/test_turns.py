"""The referee's in-place TurnRequests (turns.py) must equal a from-scratch conversion of the engine's
View at every turn: the engine's `Match.view` stays the one source of truth for what a seat may know."""

from __future__ import annotations

import random

import pytest

from arena.engine import Match, Rules
from arena.engine.cards import cards_of
from arena.proto import referee_pb2 as pb
from arena.referee import convert
from arena.referee.clock import SeatClock, TimeControl
from arena.referee.turns import DealTurns, mask_codes

VARIANTS = [
    Rules(max_deals=4),
    Rules(trumps=True, max_deals=4),
    Rules(trumps=True, must_head_phase2=True, hand_size=5, standoff="pot", max_deals=4),
    Rules(hand_size=4, must_head_phase2=True, next_dealer="alternate", deck="german", max_deals=4),
    Rules(trumps=True, hand_size=4, scoring="altenburg", flags=2),
]


def from_scratch(
    m: Match, seat: int, turn_id: int, clock: SeatClock, carried, first: bool
) -> pb.RefereeMessage:
    """The TurnRequest as the referee built it before turns.py: every field from `Match.view`."""
    view = m.view(seat)
    msg = pb.RefereeMessage()
    tr = msg.turn_request
    tr.turn_id = turn_id
    tr.view.CopyFrom(convert.view_to_proto(view, len(m.deals)))
    tr.legal_cards.extend(convert.codes(view.legal))
    tr.move_ms, tr.bank_ms, tr.deadline_ms = (
        int(clock.move * 1000),
        int(clock.bank * 1000),
        int(clock.deadline * 1000),
    )
    if carried is not None:
        convert.fill_trick_result(tr.trick_result, m, carried, seat)
    if first:  # the seat's first turn of the deal carries the DealStart, its hand still as dealt
        ds = tr.deal_start
        ds.deal_number, ds.dealer, ds.stock_size = view.deal_index + 1, view.dealer, view.stock_count
        ds.hand.extend(convert.codes(view.hand))
        ds.trump_card = "" if view.trump_card is None else convert.card_code(view.trump_card)
        ds.lines.extend(view.lines)
        ds.multiplier, ds.pot = view.multiplier, view.pot
    return msg


@pytest.mark.parametrize(
    "rules", VARIANTS, ids=lambda r: f"trumps={r.trumps},h={r.hand_size},head={r.must_head_phase2}"
)
def test_incremental_turn_requests_equal_the_engine_view_at_every_turn(rules: Rules) -> None:
    for seed in range(3):
        m = Match(rules, seed)
        pick = random.Random(seed)  # random legal cards: varied hands, leads, draws and phase 2 rules
        clocks = [SeatClock(TimeControl(move=1.5, bank=7.25)), SeatClock(TimeControl(move=0.25, bank=3.0))]
        turn_id = 0
        turns_checked = 0
        while not m.over:
            deal = m.start_deal()
            turns = DealTurns(m)
            carry = [None, None]
            first = [True, True]
            later = None  # as the runner does: the other seat's view gets the trick after the next request
            while not deal.done:
                seat = deal.to_move
                turn_id += 1
                clocks[seat].charge(pick.random() * 0.5)
                got = turns.request(seat, turn_id, clocks[seat])
                if later is not None:
                    turns.trick_done(*later)
                    later = None
                want = from_scratch(m, seat, turn_id, clocks[seat], carry[seat], first[seat])
                assert got.turn_request.HasField("deal_start") == first[seat]
                carry[seat], first[seat] = None, False
                assert got == want, f"seed {seed} deal {deal.index + 1} turn {turn_id} seat {seat}"
                assert got.SerializeToString(deterministic=True) == want.SerializeToString(deterministic=True)
                turns_checked += 1
                trick = m.play(pick.choice(deal.legal_cards()))
                if trick is not None and not deal.done:
                    turns.trick_done(trick, deal.to_move)
                    later = (trick, 1 - deal.to_move)
                    carry = [trick, trick]
        assert turns_checked == 32 * len(m.deals) > 0  # every card of every deal was a checked turn


def test_mask_codes_lists_a_masks_cards_in_order() -> None:
    rng = random.Random(3)
    for mask in [0, 1, 1 << 31, 0xFFFFFFFF, *(rng.getrandbits(32) for _ in range(200))]:
        assert mask_codes(mask) == convert.codes(cards_of(mask))
