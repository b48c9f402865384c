"""Annotated deals: the JSON of docs/analysis.md, exact phase-2 marks, honest phase-1 estimates."""

from __future__ import annotations

import random
from typing import Any

from analysis_helpers import VARIANTS

from arena.analysis import solve
from arena.analysis.annotate import annotate_match, knowledge_of, mark
from arena.analysis.worlds import Knowledge
from arena.engine import Deal, Match, Rules, card_code, parse_card

MOVE_KEYS = {"play", "seat", "card", "phase", "exact", "values", "best", "lost"}
ESTIMATE_KEYS = MOVE_KEYS | {"samples", "spread", "lost_stderr"}


def played_match(rules: Rules, seed: int, deals: int = 2) -> list[tuple[int, tuple[int, ...], list[int]]]:
    m = Match(rules, seed)
    rng = random.Random(seed)
    out = []
    for _ in range(deals):
        d = m.start_deal()
        while not d.done:
            m.play(rng.choice(d.legal_cards()))
        out.append((d.dealer, d.deck, d.plays))
        if m.over:
            break
    return out


def check_schema(result: dict[str, Any], samples: int) -> None:
    """Every field of docs/analysis.md, with its type; nothing undocumented."""
    assert set(result) == {"format", "samples", "seed", "deals"} and result["format"] == "elfern-analysis/1"
    for n, d in enumerate(result["deals"]):
        assert set(d) == {"deal", "moves", "lost", "lost_estimate", "honours", "complete"}
        assert d["deal"] == n and len(d["lost"]) == 2 and all(isinstance(x, int) for x in d["lost"])
        for k, mv in enumerate(d["moves"]):
            assert mv["play"] == k and mv["seat"] in (0, 1) and mv["phase"] in (1, 2)
            assert mv["card"] in mv["values"] and set(mv["best"]) <= set(mv["values"])
            parse_card(mv["card"])
            if mv["exact"]:
                assert set(mv) == MOVE_KEYS and mv["phase"] == 2
                assert all(isinstance(v, int) for v in mv["values"].values())
                assert mv["lost"] == max(mv["values"].values()) - mv["values"][mv["card"]]
            else:
                assert set(mv) == ESTIMATE_KEYS and mv["phase"] == 1 and mv["samples"] == samples
                assert set(mv["spread"]) == set(mv["values"]) and mv["lost"] >= 0
        phase2 = [mv for mv in d["moves"] if mv["exact"]]
        assert d["lost"] == [sum(mv["lost"] for mv in phase2 if mv["seat"] == s) for s in (0, 1)]


def test_schema_and_exact_values_across_variants() -> None:
    for i, rules in enumerate(VARIANTS[:4]):
        deals = played_match(rules, seed=i, deals=1)
        result = annotate_match(rules, deals, samples=3, seed=1)
        check_schema(result, 3)
        dealer, deck, plays = deals[0]
        deal = Deal(rules, dealer, deck)
        for mv, card in zip(result["deals"][0]["moves"], plays, strict=True):
            if mv["exact"]:
                assert mv["values"] == {card_code(c): v for c, v in solve(deal, core="python").items()}
            deal.play(card)


def test_best_play_loses_nothing_and_a_blunder_is_marked() -> None:
    from arena.analysis import analyse

    rules = Rules()
    rng = random.Random(5)
    for _attempt in range(20):
        deck = list(range(32))
        rng.shuffle(deck)
        deal = Deal(rules, 0, deck)
        while deal.phase == 1:
            deal.play(rng.choice(deal.legal_cards()))
        start = len(deal.plays)
        blunder = None
        while not deal.done:  # best play, but for one worst card where a card can lose
            sol = analyse(deal)
            worst = min(sol.values, key=sol.values.__getitem__)
            if blunder is None and sol.lost(worst) > 0:
                blunder = (len(deal.plays), deal.to_move, sol.lost(worst))
                deal.play(worst)
            else:
                deal.play(sol.best[0])
        if blunder is not None:
            break
    assert blunder is not None
    result = annotate_match(rules, [(0, deck, deal.plays)], samples=2)["deals"][0]
    at, seat, loss = blunder
    for mv in result["moves"][start:]:
        assert mv["exact"]
        assert (mv["lost"], mark(mv) != "") == ((loss, True) if mv["play"] == at else (0, False))
    assert result["lost"][seat] == loss and result["lost"][1 - seat] == 0


def test_deterministic_and_unfinished_deals() -> None:
    rules = Rules(trumps=True)
    (dealer, deck, plays), *_ = played_match(rules, seed=9, deals=1)
    a = annotate_match(rules, [(dealer, deck, plays[:27])], samples=4, seed=3)
    assert a == annotate_match(rules, [(dealer, deck, plays[:27])], samples=4, seed=3)
    assert len(a["deals"][0]["moves"]) == 27 and a["deals"][0]["complete"] is False


def test_phase1_knowledge_is_only_what_the_seat_sees() -> None:
    """knowledge_of(deal, seat) equals what the engine's hidden view gives the seat."""
    rng = random.Random(1)
    for i, rules in enumerate(VARIANTS):
        m = Match(rules, 30 + i)
        d = m.start_deal()
        for _ in range(rng.randrange(1, 20)):
            for seat in (0, 1):
                assert knowledge_of(d, seat) == Knowledge.from_view(m.view(seat), rules)
            m.play(rng.choice(d.legal_cards()))


def test_marks() -> None:
    assert [mark({"exact": True, "lost": x}) for x in (0, 1, 3)] == ["", "?", "??"]
    est = {"exact": False, "lost_stderr": 0.2}
    assert [mark({**est, "lost": x}) for x in (0.3, 1.0, 2.0)] == ["", "~?", "~??"]
    assert mark({"exact": False, "lost": 1.0, "lost_stderr": 0.6}) == ""  # within the noise


def test_last_phase1_trick_is_valued_exactly_in_each_world() -> None:
    """In the last trick of phase 1 a world's value is the perfect-information value: the engine,
    replaying every pair of cards of that trick and solving phase 2, gives the same."""
    from arena.analysis.estimate import exact_value
    from arena.analysis.worlds import World

    rng = random.Random(21)
    for rules in VARIANTS[:4]:
        deck = list(range(32))
        rng.shuffle(deck)
        deal = Deal(rules, 1, deck)
        while deal.stock_count > 2:
            deal.play(rng.choice(deal.legal_cards()))
        prefix, mover = list(deal.plays), deal.to_move

        assert exact_value(World.from_deal(deal), mover) == _brute(rules, deck, prefix, mover)


def _brute(rules: Rules, deck: list[int], plays: list[int], mover: int) -> int:
    """The mover's perfect-information value by the engine: every card of phase 1 replayed, then solved."""
    from arena.analysis import best_value

    d = Deal(rules, 1, deck)
    for c in plays:
        d.play(c)
    if d.stock_count == 0:
        v = best_value(d, core="python")
        return v if d.to_move == mover else 20 - v
    vals = [_brute(rules, deck, [*plays, c], mover) for c in d.legal_cards()]
    return max(vals) if d.to_move == mover else min(vals)
