"""`arena bench strength --peek`: ismcts shown the hidden cards, to measure what they are worth. The
search is shown the truth, and only the bench can show it: no bot can ask for it."""

from __future__ import annotations

import inspect
import json
import random

from click.testing import CliRunner

from arena.analysis.ismcts import search
from arena.analysis.worlds import Knowledge, World
from arena.bench.peek import PEEKS, true_order
from arena.cli import cli
from arena.engine import Match, Rules
from arena.sdk import sim


def _phase_one(rules: Rules, seed: int) -> list[tuple[Knowledge, list[int], int, list[int]]]:
    """Every phase-1 turn of a random deal: the mover's knowledge, the true order of what it cannot see,
    and, read from the deal then, the opponent's hand and the stock (draw order)."""
    m = Match(rules, seed)
    deal = m.start_deal()
    rng = random.Random(seed)
    out = []
    while deal.stock_count:
        seat = deal.to_move
        assert seat is not None
        k = Knowledge.from_view(m.view(seat), rules)
        out.append((k, true_order(deal, seat), deal.hands[1 - seat], deal.stock))
        m.play(rng.choice(deal.legal_cards()))
    return out


def test_the_true_order_is_what_the_mover_cannot_see_in_its_places() -> None:
    for rules in (Rules(), Rules(trumps=True)):
        for seed in range(3):
            for k, order, opponent, stock in _phase_one(rules, seed):
                assert sorted(order) == sorted(c for c in range(32) if k.unknown >> c & 1)
                size = k.opponent_hand_size
                assert sum(1 << c for c in order[:size]) == opponent
                assert order[size:] == (stock[:-1] if k.trump_card is not None else stock)  # top first


def _last_trick_lead(rules: Rules, seed: int) -> tuple[Match, Knowledge, list[int]]:
    """A lead in the last trick of phase 1: with every hidden card known, phase 2 follows the draw."""
    m = Match(rules, seed)
    deal = m.start_deal()
    rng = random.Random(seed)
    while not (deal.stock_count == 2 and deal.table is None):
        m.play(rng.choice(deal.legal_cards()))
    seat = deal.to_move
    assert seat is not None
    return m, Knowledge.from_view(m.view(seat), rules), true_order(deal, seat)


def test_a_search_shown_the_cards_plays_the_best_card_of_the_true_deal() -> None:
    """In the last trick of phase 1, a search that knows where every card is finds the lead whose worst
    reply leaves it the most honours in the real deal, solved exactly (so in either peek: with the
    opponent's hand known, the one hidden stock card is known too)."""
    for seed, rules in enumerate(
        (Rules(), Rules(trumps=True), Rules(trumps=True, must_head_phase2=True)) * 4
    ):
        m, k, order = _last_trick_lead(rules, seed)
        assert m.deal is not None
        world = World.from_deal(m.deal)
        truth = {}
        for lead in world.legal_cards():
            led = sim.fork(world)
            led.play(lead)
            replies = []
            for reply in led.legal_cards():
                answered = sim.fork(led)
                answered.play(reply)
                replies.append(sim.final_honours(answered, k.seat))
            truth[lead] = min(replies)
        for peek in PEEKS.values():
            stats = search(k, seed, 4000, 0.7, 0.3, peek=peek, order=order)
            card = max(stats, key=lambda c: stats[c][0])
            assert truth[card] == max(truth.values()), (seed, peek, card, truth)


def test_no_bot_can_ask_to_peek() -> None:
    """The SDK's search has no peek: only arena.bench (never bound into the sandbox) passes one."""
    params = inspect.signature(sim.ismcts).parameters
    assert "peek" not in params and "order" not in params


def test_bench_strength_peek_adds_the_two_rows_on_the_same_deals() -> None:
    runner = CliRunner()
    out = runner.invoke(cli, ["bench", "strength", "--deals", "1", "--bots", "tactician", "--peek", "--json"])
    assert out.exit_code == 0, out.output
    rows = json.loads(out.output)["bots"]
    assert list(rows) == ["tactician", "ismcts+hand", "ismcts+all"]
    assert all("vs_baseline" in rows[name] for name in PEEKS)  # paired with tactician on the same deal
    plain = runner.invoke(cli, ["bench", "strength", "--deals", "1", "--bots", "tactician", "--json"])
    assert list(json.loads(plain.output)["bots"]) == ["tactician"]
    assert "--peek" in runner.invoke(cli, ["bench", "strength", "--help"]).output
