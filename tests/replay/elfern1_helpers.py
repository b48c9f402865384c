"""Seeded matches exported to elfern/1, for the replay and CLI tests."""

from __future__ import annotations

import copy
import random
from typing import Any

from arena.engine import Match, Rules
from arena.replay.json_record import match_to_json


def seeded_record(seed: int = 42, rules: Rules | None = None, policy: int = 3) -> dict[str, Any]:
    m = Match(rules or Rules(), seed)
    rng = random.Random(policy)
    while not m.over:
        deal = m.start_deal()
        while not deal.done:
            m.play(rng.choice(deal.legal_cards()))
    return match_to_json(m, ["alice", "bob"])


def mutated(record: dict[str, Any], change) -> dict[str, Any]:
    other = copy.deepcopy(record)
    change(other)
    return other
