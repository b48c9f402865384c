"""The one walk of a record (arena.replay.walk): its steps in order, and where it stops on an error."""

from __future__ import annotations

import pytest
from elfern1_helpers import seeded_record

from arena.engine import IllegalMove, Match, Rules, parse_card
from arena.replay.walk import DealEnd, DealStart, MatchEnd, Played, Walk


def _sources(record):
    for d in record["deals"]:
        yield [parse_card(c) for c in d["deck"]], d["dealer"], (parse_card(c) for c in d["plays"])


def test_the_steps_of_a_whole_match_in_order():
    record = seeded_record(seed=9)
    m = Match(Rules(), 9)
    steps = list(Walk(m, _sources(record)))
    assert isinstance(steps[-1], MatchEnd) and steps[-1].match.over
    n = len(record["deals"])
    assert [type(s) for s in steps] == ([DealStart] + [Played] * 32 + [DealEnd]) * n + [MatchEnd]
    plays = [s for s in steps if isinstance(s, Played)]
    assert [(s.number, s.k) for s in plays[:3]] == [(1, 1), (1, 2), (1, 3)]
    assert all((s.trick is not None) == (s.k % 2 == 0) for s in plays)  # every second card ends a trick
    assert [s.deal.outcome.lines for s in steps if isinstance(s, DealEnd)] == [
        tuple(d["lines"]) for d in record["deals"]
    ]
    assert list(m.lines) == record["lines"]


def test_an_illegal_card_stops_the_walk_where_it_is():
    record = seeded_record(seed=9)
    plays = record["deals"][1]["plays"]
    plays[4], plays[5] = plays[5], plays[4]  # the follower's card, played as a lead: not its hand
    walk = Walk(Match(Rules(), 9), _sources(record))
    seen = []
    with pytest.raises(IllegalMove):
        for step in walk:
            seen.append(step)
    assert (walk.deal, walk.play) == (2, 5)
    assert isinstance(seen[-1], Played) and (seen[-1].number, seen[-1].k) == (2, 4)
