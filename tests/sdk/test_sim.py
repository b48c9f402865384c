"""arena.sdk.sim: the SDK's view of a seat becomes exactly the sampler's knowledge of that seat (so the
worlds a bot samples fit what it saw), forks are independent, and playing forward is legal everywhere."""

from __future__ import annotations

import random

import pytest

from arena.analysis.worlds import Knowledge, World
from arena.bench.strength import fill_turn
from arena.engine import Deal, Match, Rules
from arena.engine.cards import cards_of
from arena.engine.view import build_view
from arena.proto import referee_pb2 as pb
from arena.referee.convert import rules_to_proto
from arena.sdk import View, sim

VARIANTS = [
    Rules(),
    Rules(trumps=True),
    Rules(hand_size=5, trumps=True, must_head_phase2=True),
    Rules(hand_size=4, must_head_phase2=True),
]


def _turns(rules: Rules, seed: int):
    """A deal played at random, yielding the match and the SDK view of the seat on move before each card."""
    rng = random.Random(seed)
    match = Match(rules, seed)
    deal = match.start_deal()
    while not deal.done:
        req = pb.TurnRequest(turn_id=1)
        fill_turn(req, match, deal.to_move)
        yield match, View.from_request(req)
        match.play(rng.choice(deal.legal_cards()))


@pytest.mark.parametrize("rules", VARIANTS, ids=lambda r: str(r.changed() or "default"))
def test_sdk_view_gives_the_seats_knowledge_and_worlds_fit_it(rules: Rules) -> None:
    rng = random.Random(4)
    for seed in range(4):
        for match, view in _turns(rules, seed):
            deal, seat = match.deal, view.seat
            k = sim.knowledge(view, rules_to_proto(rules))
            assert k == Knowledge.from_view(build_view(match, seat), rules)
            for world in sim.worlds(view, rules_to_proto(rules), 3, rng):
                # what the seat sees is as it is; the hidden cards are exactly the unseen ones
                assert world.hands[seat] == deal.hands[seat] and world.table == deal.table
                assert world.leader == deal.leader and world.honours == deal.honours
                assert world.hands[1 - seat].bit_count() == deal.hands[1 - seat].bit_count()
                assert len(world.stock) == deal.stock_count
                hidden = world.hands[1 - seat] | sum(1 << c for c in world.stock)
                assert hidden == deal.hands[1 - seat] | sum(1 << c for c in deal.stock)
                if deal.trump_card is not None and deal.stock_count:
                    assert world.stock[-1] == deal.trump_card  # the turned trump is drawn last
                assert world.legal_cards() == deal.legal_cards()
                if deal.stock_count == 0:  # nothing is hidden any more: the one world is the real one
                    assert world.hands == deal.hands


def test_worlds_spread_the_hidden_cards_evenly() -> None:
    """After the first card of a deal, each unseen card lands in the opponent's hand about 5 times in 25."""
    _, view = next(t for i, t in enumerate(_turns(Rules(), 7)) if i == 1)
    counts: dict[int, int] = {}
    n = 1500
    for world in sim.worlds(view, None, n, random.Random(5)):
        for c in cards_of(world.hands[1 - view.seat]):
            counts[c] = counts.get(c, 0) + 1
    assert len(counts) == 25
    assert all(abs(v - n / 5) < 0.25 * n / 5 for v in counts.values()), counts


def _dealt(rules: Rules, seed: int, plays: int) -> tuple[Deal, World]:
    """The first deal of a seeded match after `plays` first-legal cards, and its world."""
    deal = Match(rules, seed).start_deal()
    for _ in range(plays):
        deal.play(deal.legal_cards()[0])
    return deal, World.from_deal(deal)


def test_fork_is_independent_and_play_forward_is_legal_in_every_variant() -> None:
    """Every card the greedy policy picks is replayed through the engine, which refuses illegal ones."""
    for rules in VARIANTS:
        for seed in range(8):
            deal, world = _dealt(rules, seed, plays=seed * 3)
            before = (list(world.hands), list(world.honours), list(world.stock))
            line = sim.fork(world)
            halfway = sim.play_forward(sim.fork(line))
            assert not halfway.stock and halfway.table is None
            while not line.done:
                card = sim.greedy(line)
                line.play(card)
                deal.play(card)  # raises IllegalMove for a card the rules forbid
                assert line.honours == deal.honours
            assert deal.done and (list(world.hands), list(world.honours), list(world.stock)) == before
            assert sim.final_honours(halfway, 0) + sim.final_honours(halfway, 1) == 20


def test_playout_value_is_play_forward_then_final_honours() -> None:
    """With no random cards, `sim.playout_value` is the greedy play-forward and the exact solve; with
    them, the same seed gives the same value, and the two seats' values make 20."""
    for rules in VARIANTS:
        for seed in range(6):
            _, world = _dealt(rules, seed, plays=seed * 2)
            ahead = sim.play_forward(sim.fork(world))
            for seat in (0, 1):
                assert sim.playout_value(world, seat, seed, 0.0) == sim.final_honours(ahead, seat)
            noisy = [sim.playout_value(world, seat, 99 + seed) for seat in (0, 1)]
            assert sum(noisy) == 20 and noisy[0] == sim.playout_value(world, 0, 99 + seed)


def test_ismcts_from_an_sdk_view_visits_the_legal_cards_and_repeats_with_its_seed() -> None:
    """`sim.ismcts` on the knowledge of an SDK view: one root entry per legal card, the iterations shared
    among them, the mean reward a share of the 20 honours; the same seed, the same search."""
    for rules in VARIANTS:
        for _match, view in _turns(rules, 3):
            if view.phase != 1:
                break
            k = sim.knowledge(view, rules_to_proto(rules))
            stats = sim.ismcts(k, 17, 120, depth=2)
            assert sorted(stats) == sorted(sim.card(c) for c in view.legal)
            assert sum(v for v, _ in stats.values()) == 120
            assert all(0 <= r <= v for v, r in stats.values())
            assert stats == sim.ismcts(k, 17, 120, depth=2)
