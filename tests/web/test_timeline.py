"""The viewer's steps: re-simulated by the engine, and a seat's view hides what the seat cannot know."""

from __future__ import annotations

import json
import random

import pytest

from arena.engine import Match, Rules
from arena.engine.cards import card_code
from arena.web.timeline import TimelineError, build_timeline


def make_record(seed: int = 5, rules: dict | None = None) -> dict:
    rules_obj = Rules.from_dict(rules or {})
    m = Match(rules_obj, seed)
    rnd = random.Random(seed)
    while not m.over:
        deal = m.start_deal()
        while not deal.done:
            m.play(rnd.choice(deal.legal_cards()))
    return {
        "format": "elfern/1",
        "rules": rules or {},
        "seats": ["ann", "ben"],
        "lines": list(m.lines),
        "winner": m.winner,
        "deals": [
            {
                "dealer": d.dealer,
                "deck": [card_code(c) for c in d.deck],
                "plays": [card_code(c) for c in d.plays],
                "honours": list(d.honours),
                "winner": d.winner,
                "lines": list(d.lines),
            }
            for d in m.deals
        ],
    }


def dealt_hands(deck: list[str], dealer: int) -> list[set[str]]:
    """docs/rules.md §2 packets of 2: non-dealer c1-2, c5-6, c9-10; dealer c3-4, c7-8, c11-12."""
    nondealer = {deck[i] for i in (0, 1, 4, 5, 8, 9)}
    dealer_cards = {deck[i] for i in (2, 3, 6, 7, 10, 11)}
    return [dealer_cards, nondealer] if dealer == 0 else [nondealer, dealer_cards]


def test_omniscient_steps_follow_the_record():
    record = make_record()
    tl = build_timeline(record)
    assert tl["error"] is None and tl["lines"] == record["lines"] and tl["over"]
    for deal, raw in zip(tl["deals"], record["deals"], strict=True):
        steps = deal["steps"]
        assert len(steps) == len(raw["plays"]) + 1 == 33
        assert [set(h) for h in steps[0]["hands"]] == dealt_hands(raw["deck"], raw["dealer"])
        for k, step in enumerate(steps[1:], 1):
            assert step["table"][-1]["card"] == raw["plays"][k - 1]
            assert len(step["table"]) == (1 if k % 2 else 2)
            in_hands = set(step["hands"][0]) | set(step["hands"][1])
            assert not in_hands & set(raw["plays"][:k])  # a played card never returns to a hand
            assert len(in_hands) + step["stock"] + k == 32  # every card is in a hand, the stock or played
        assert deal["honours"] == raw["honours"] and deal["lines"] == raw["lines"]
        assert sum(deal["honours"]) == 20


@pytest.mark.parametrize("seat", [0, 1])
def test_a_seat_view_never_shows_the_opponents_unseen_cards(seat):
    record = make_record(seed=9)
    omni = build_timeline(record)
    mine = build_timeline(record, seat)
    for d_omni, d_mine in zip(omni["deals"], mine["deals"], strict=True):
        played: set[str] = set()
        for k, (a, b) in enumerate(zip(d_omni["steps"], d_mine["steps"], strict=True)):
            if k:
                played.add(b["table"][-1]["card"])
            assert b["hands"][1 - seat] is None and b["hands"][seat] == a["hands"][seat]
            assert b["counts"][1 - seat] == len(a["hands"][1 - seat])
            secret = set(a["hands"][1 - seat]) - played
            assert not secret & set(json.dumps(b).replace('"', " ").replace(",", " ").split())
            if b["legal"] is not None:
                assert b["to_move"] == seat and set(b["legal"]) < set(b["hands"][seat])
            if a["legal"] is not None:
                assert a["phase"] == 2 and set(a["legal"]) < set(a["hands"][a["to_move"]])
            for drew in b["drew"]:
                assert (drew["card"] is None) == (drew["seat"] != seat)


def test_trump_variant_shows_the_turned_card_until_drawn():
    tl = build_timeline(make_record(seed=3, rules={"trumps": True}), 0)
    steps = tl["deals"][0]["steps"]
    assert steps[0]["trump"] is not None
    assert steps[-1]["trump"] is None  # drawn by the loser of the last phase-1 trick
    last_draw = steps[20]["drew"]  # trick 10 ends at play 20: the turned card is drawn, and it is public
    assert any(d["card"] == steps[0]["trump"] for d in last_draw)


def test_an_illegal_record_stops_the_timeline_with_the_reason():
    record = make_record()
    plays = record["deals"][0]["plays"]
    plays[4] = plays[0]  # a card already played
    tl = build_timeline(record)
    assert tl["error"].startswith("deal 1, play 5:")
    assert "not in your hand" in tl["error"]
    assert len(tl["deals"][0]["steps"]) == 5
    assert tl["deals"][0]["complete"] is False


def test_not_an_elfern_record():
    with pytest.raises(TimelineError, match="elfern/1"):
        build_timeline({"format": "pgn"})
    with pytest.raises(TimelineError, match="perspective"):
        build_timeline(make_record(), 2)
    with pytest.raises(TimelineError, match="bad rules"):
        build_timeline({"format": "elfern/1", "rules": {"scoring": "fast"}})


@pytest.mark.parametrize("crash_at", [None, (2, 9)])
@pytest.mark.parametrize("perspective", [None, 0, 1])
def test_the_viewer_walks_the_binary_record_once_and_shows_what_its_elfern1_form_shows(crash_at, perspective):
    """The page's timeline comes from one walk of the stored record (no elfern/1 conversion first),
    and it is the timeline of that record's elfern/1 form, a verdict's early end included."""
    from record_support import play_record

    from arena.proto.codec import encode_record
    from arena.web.records import labelled_record, match_timeline, public_bytes

    record = play_record(Rules.from_dict({"flags": 2}), 11, ("ann", "ben"), crash_at)[0]
    seats = [("ann", 1, "o1"), ("ben", 2, "o2")]
    data = public_bytes(encode_record(record), seats)
    walked = match_timeline(data, seats, perspective)
    assert walked == build_timeline(labelled_record(data, seats), perspective)
    assert walked["seats"] == ["ann@1", "ben@2"] and walked["error"] is None
    assert walked["over"] == (crash_at is None)
    if crash_at is not None:
        assert "The match ended here by a verdict (" in walked["deals"][-1]["steps"][-1]["note"]
