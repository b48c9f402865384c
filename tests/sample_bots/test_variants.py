"""The tactician under every rules variant: it only ever plays legal cards, and in phase 2 its
picture of the cards is complete (the exact solver never has to give up)."""

from __future__ import annotations

import endgame
import pytest
import tactics
from elfcards import Position
from selfplay import play_deal, random_player

from arena.engine import Rules
from arena.engine.rng import deal_deck

VARIANTS = [
    {"trumps": True},
    {"must_head_phase2": True},
    {"hand_size": 4},
    {"hand_size": 5, "trumps": True, "must_head_phase2": True},
]


@pytest.mark.parametrize("options", VARIANTS, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()))
def test_tactician_plays_every_variant_with_full_knowledge_in_phase_2(options: dict) -> None:
    solved = []

    def tactician(pos: Position) -> int:
        if pos.phase2:
            assert endgame.solve(pos) is not None, "phase 2 position not fully known"
            solved.append(pos)
        return tactics.choose(pos)

    rules = Rules(**options)
    for i in range(3):
        play_deal((tactician, random_player(i)), deal_deck(40 + i, 0), dealer=i % 2, rules=rules)
    assert len(solved) == 3 * rules.hand_size, "one solved position per card it plays in phase 2"
