"""arena.sdk.sim: the SDK's view of a seat becomes exactly the sampler's knowledge of that seat (so the
worlds a bot samples fit what it saw), forks are independent, and playing forward is legal everywhere."""

from __future__ import annotations

import random

import pytest

from arena.analysis.worlds import Knowledge
from arena.bench.strength import fill_turn
from arena.engine import Match, Rules
from arena.engine.view import build_view
from arena.proto import referee_pb2 as pb
from arena.referee.convert import rules_to_proto
from arena.sdk import View, sim

VARIANTS = [Rules(), Rules(trumps=True), Rules(hand_size=5, trumps=True, must_head_phase2=True)]


@pytest.mark.parametrize("rules", VARIANTS, ids=lambda r: str(r.changed() or "default"))
def test_sdk_view_gives_the_seats_knowledge_and_worlds_fit_it(rules: Rules) -> None:
    rng = random.Random(4)
    for seed in range(4):
        match = Match(rules, seed)
        deal = match.start_deal()
        trump = sim.code(deal.trump_card) if deal.trump_card is not None else None
        while not deal.done:
            seat = deal.to_move
            req = pb.TurnRequest(turn_id=1)
            fill_turn(req, match, seat)
            k = sim.knowledge(View.from_request(req), rules_to_proto(rules), trump)
            assert k == Knowledge.of_deal(deal, seat)
            (world,) = sim.worlds(k, None, 1, rng)
            twin = Match(rules, seed)
            twin.deal = world
            assert build_view(twin, seat).to_json() == build_view(match, seat).to_json()
            match.play(rng.choice(deal.legal_cards()))


def test_the_trump_card_is_known_when_this_seat_drew_it_and_asked_for_otherwise() -> None:
    """The loser of the last phase-1 trick draws the turned card: its view shows it among its draws.
    The winner, on lead, must have remembered it (the view no longer names it)."""
    rules = Rules(trumps=True)
    rng = random.Random(2)
    for seed in range(4):
        match = Match(rules, seed)
        deal = match.start_deal()
        while deal.phase == 1:
            match.play(rng.choice(deal.legal_cards()))
        for drew_it in (False, True):
            if drew_it:
                match.play(deal.legal_cards()[0])
            seat = deal.to_move
            assert (deal.trump_card in deal.drawn[seat]) is drew_it
            req = pb.TurnRequest(turn_id=1)
            fill_turn(req, match, seat)
            view = View.from_request(req)
            if drew_it:
                assert sim.knowledge(view, rules).trump_card == deal.trump_card
            else:
                with pytest.raises(sim.WorldError, match="trump card is needed"):
                    sim.knowledge(view, rules)
                assert sim.knowledge(view, rules, sim.code(deal.trump_card)).trump_card == deal.trump_card


def test_fork_is_independent_and_greedy_play_is_legal_in_every_variant() -> None:
    for rules in VARIANTS + [Rules(hand_size=4, must_head_phase2=True)]:
        for seed in range(10):
            match = Match(rules, seed)
            deal = match.start_deal()
            for _ in range(seed):
                deal.play(deal.legal_cards()[0])
            before = (list(deal.hands), list(deal.honours), len(deal.tricks))
            twin = sim.play_forward(sim.fork(deal), to_phase2=False)  # Deal.play refuses an illegal card
            assert twin.done and sum(twin.honours) == 20
            assert (deal.hands, deal.honours, len(deal.tricks)) == before
            halfway = sim.play_forward(sim.fork(deal))
            assert halfway.stock_count == 0 and halfway.table is None and not halfway.done
