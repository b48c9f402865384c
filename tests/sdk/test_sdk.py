"""The Python SDK: card helpers, the View, and whole matches over a real referee (Unix socket),
checking that every hook fires once per event, whichever way the referee delivers it."""

from __future__ import annotations

import random
import threading

import pytest

from arena.engine import Rules
from arena.proto import referee_pb2 as pb
from arena.referee import MatchSpec, TimeControl
from arena.referee.loop import run_sync
from arena.referee.server import RefereeServer
from arena.sdk import Bot, View, cards, run


def test_card_helpers():
    assert cards.suit("TS") == "S" and cards.rank("TS") == "T"
    assert cards.rank_value("7H") == 0 and cards.rank_value("AH") == 7
    assert cards.is_honour("TD") and not cards.is_honour("9D")
    assert cards.honours(["AS", "9S", "JC"]) == 2
    assert cards.beats("AS", "KS") and not cards.beats("KS", "AS")
    assert not cards.beats("AH", "7S")  # another suit never wins without trumps
    assert cards.beats("7H", "AS", trump_suit="H")
    assert cards.by_rank(["AS", "7C", "TD"]) == ["7C", "TD", "AS"]
    assert cards.of_suit(["AS", "7C", "TS"], "S") == ["AS", "TS"]


def _request(**view) -> pb.TurnRequest:
    return pb.TurnRequest(
        turn_id=7, view=pb.View(**view), legal_cards=view.get("hand", []), move_ms=1000, bank_ms=2500
    )


def test_view_from_request_and_helpers():
    req = _request(
        seat=1,
        hand=["7S", "KS", "AH"],
        lead_card="QS",
        honours=[3, 5],
        lines=[1, 2],
        tricks=[pb.Trick(number=1, leader=0, lead_card="9C", follow_card="TC", winner=1, honours=1)],
    )
    v = View.from_request(req)
    assert v.turn_id == 7 and v.seat == 1 and not v.leading
    assert v.my_honours == 5 and v.opponent_honours == 3 and v.lines == (1, 2)
    assert v.winning() == ["KS"] and v.losing() == ["7S", "AH"]
    assert v.played == ("9C", "TC", "QS")
    assert v.move_seconds == 1.0 and v.bank_seconds == 2.5
    leading = View.from_request(_request(hand=["7S"]))
    assert leading.leading and leading.winning() == [] and leading.losing() == ["7S"]


class Counting(Bot):
    """Plays its lowest legal card and counts what it is told."""

    name = "counting"

    def __init__(self) -> None:
        self.deals = self.tricks = self.deal_ends = self.turns = 0
        self.result = None
        self.last_trick_seen = 0

    def on_deal_start(self, deal):
        self.deals += 1
        assert deal.deal_number == self.deals and len(deal.hand) == 6
        self.last_trick_seen = 0

    def on_trick(self, result):
        self.tricks += 1
        assert result.trick.number == self.last_trick_seen + 1  # every trick once, in order
        self.last_trick_seen = result.trick.number

    def on_deal_end(self, result):
        self.deal_ends += 1
        assert result.deal_number == self.deals and self.last_trick_seen == 16  # the last trick came first

    def on_match_end(self, result):
        self.result = result

    def play(self, view):
        self.turns += 1
        assert view.deal_number == self.deals, "on_deal_start comes before the deal's first play"
        assert view.trick_number == self.last_trick_seen + 1  # the previous trick came before the turn
        self.log(f"turn {view.turn_id}")
        return cards.by_rank(view.legal)[0]


@pytest.fixture
def server(tmp_path):
    srv = RefereeServer(unix_path=tmp_path / "r.sock")
    run_sync(srv.start())
    yield srv
    run_sync(srv.stop(0.2))


def test_hooks_fire_once_per_event_over_a_real_match(server):
    async def create():
        runner = server.create_match(
            MatchSpec(rules=Rules(max_deals=3), seed=5, time_control=TimeControl(20, 1, 5))
        )
        server.start_match(runner)
        return runner

    runner = run_sync(create())
    bots = [Counting(), Counting()]
    threads = [
        threading.Thread(target=run, args=(b, server.addresses[0], tok))
        for b, tok in zip(bots, runner.tokens, strict=True)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    result = runner.result
    assert list(result.verdicts) == ["OK", "OK"] and result.deals_played == 3
    for seat, b in enumerate(bots):
        assert b.deals == b.deal_ends == 3
        assert b.tricks == 3 * 16
        assert b.turns == sum(1 for d in runner.record.deals for p in d.plays if p.seat == seat)
        assert b.result.winner == result.winner
    logged = [x.text for x in runner.record.logs if x.seat == 0]
    assert len(logged) == bots[0].turns and logged[0].startswith("turn ")


def test_run_without_environment_exits_with_a_clear_message(monkeypatch):
    monkeypatch.delenv("ARENA_ADDRESS", raising=False)
    monkeypatch.delenv("ARENA_TOKEN", raising=False)
    with pytest.raises(SystemExit) as info:
        run(Counting())
    assert "ARENA_ADDRESS and ARENA_TOKEN" in str(info.value)


def test_wrong_token_exits_with_the_referee_status(server):
    with pytest.raises(SystemExit) as info:
        run(Counting(), address=server.addresses[0], token="nope")
    assert "PERMISSION_DENIED" in str(info.value) and "unknown seat token" in str(info.value)


class Seeded(Bot):
    """Plays a card drawn from self.rng and remembers the seed it was given."""

    name = "seeded"

    def __init__(self) -> None:
        self.cards: list[str] = []
        self.legal: list[list[str]] = []

    def play(self, view):
        self.legal.append(list(view.legal))
        self.cards.append(self.rng.choice(view.legal))
        return self.cards[-1]


def test_rng_is_seeded_with_the_seats_bot_seed(server):
    from arena.engine import bot_seed

    def match(seed: int) -> list[Seeded]:
        async def create():
            spec = MatchSpec(rules=Rules(max_deals=1), seed=seed, time_control=TimeControl(20, 2, 10))
            runner = server.create_match(spec)
            server.start_match(runner)
            return runner

        runner = run_sync(create())
        bots = [Seeded(), Seeded()]
        threads = [
            threading.Thread(target=run, args=(b, server.addresses[0], tok))
            for b, tok in zip(bots, runner.tokens, strict=True)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert list(runner.result.verdicts) == ["OK", "OK"]
        return bots

    first, again = match(11), match(11)
    for seat in (0, 1):
        assert first[seat].bot_seed == bot_seed(11, seat)
        mine = random.Random(bot_seed(11, seat))
        assert first[seat].cards == [mine.choice(legal) for legal in first[seat].legal]
        assert first[seat].cards == again[seat].cards, "the same seed gives the same random cards"
    assert first[0].bot_seed != first[1].bot_seed
