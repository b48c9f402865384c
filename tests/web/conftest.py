"""A real store with a small ladder in it, for the web tests.

Bots are registered through the store's API, seasons are created, started and scheduled by the
ladder, and each scheduled match is claimed, played by the engine (seeded random legal cards) and
recorded with `record_result`, the same path the workers use, binary replay record included.
One match ends in a CRASH verdict half-way through a deal.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from arena.engine import Match, Rules
from arena.engine.cards import card_code, parse_card
from arena.proto import replay_pb2 as rpb
from arena.proto.codec import encode_record

OWNER_SECRET = b"test-secret"


@dataclass
class Arena:
    url: str
    home: Path
    records: dict[int, dict] = field(default_factory=dict)  # match id -> what the test played
    crash_match: int | None = None


def play_record(rules: Rules, seed: int, names: tuple[str, str], crash_at: tuple[int, int] | None = None):
    """Play a seeded match with random legal cards; return (proto record, result fields, plays)."""
    from arena.proto import referee_pb2 as pb

    rnd = random.Random(seed)
    m = Match(rules, seed)
    d = rules.to_dict()
    rec = rpb.MatchRecord(
        format=1,
        match_id=str(seed),
        seed=seed,
        rules=pb.Rules(
            scoring=d["scoring"],
            hand_size=d["hand_size"],
            trumps=d["trumps"],
            must_head_phase2=d["must_head_phase2"],
            standoff=d["standoff"],
            next_dealer=d["next_dealer"],
            dealer_after_tie=d["dealer_after_tie"],
            flags=d["flags"],
            max_deals=d["max_deals"] or 0,
            deck=d["deck"],
        ),
    )
    for seat, name in enumerate(names):
        rec.players.add(seat=seat, name=name, version="1")
    crashed = False
    while not m.over and not crashed:
        deal = m.start_deal()
        dr = rec.deals.add(number=deal.index + 1, dealer=deal.dealer, deck=[card_code(c) for c in deal.deck])
        while not deal.done:
            if crash_at and deal.index + 1 == crash_at[0] and len(deal.plays) == crash_at[1]:
                crashed = True
                break
            seat = deal.to_move
            card = rnd.choice(deal.legal_cards())
            m.play(card)
            dr.plays.add(seat=seat, card=card_code(card), think_us=100)
        if deal.done:
            o = deal.outcome
            dr.outcome.CopyFrom(
                rpb.DealOutcomeRecord(
                    honours=list(o.honours),
                    winner=-1 if o.winner is None else o.winner,
                    value=o.value,
                    lines=list(m.lines),
                )
            )
    if crashed:
        winner, verdicts, details = 0, ("OK", "CRASH"), ("", "process exited with code 1")
    else:
        winner, verdicts, details = m.winner, ("OK", "OK"), ("", "")
    rec.result.CopyFrom(
        rpb.ResultRecord(
            winner=-1 if winner is None else winner,
            verdicts=list(verdicts),
            details=list(details),
            lines=list(m.lines),
            flags=list(m.flags),
            deals_played=len(m.deals),
            end_reason="VERDICT" if crashed else "COMPLETED",
        )
    )
    return rec, winner, verdicts, details, tuple(m.lines), len(m.deals)


def build_arena(url: str, home: Path) -> Arena:
    from sqlalchemy import select

    from arena.ladder.record import record_result
    from arena.ladder.seasons import create_season, schedule, start_season
    from arena.store import MatchResult, Store
    from arena.store.models import Season
    from arena.store.queue import claim

    store = Store.open(url, home=home)
    arena = Arena(url=url, home=home)
    for name, owner, versions in (("alice", "ann", 1), ("bob", "ben", 1), ("carol", "cat", 2)):
        for v in range(versions):
            store.add_version(
                name,
                owner,
                content_hash=f"{name}-{v}".ljust(64, "0"),
                path=str(home / name),
                language="python",
                build_log=f"build of {name} v{v + 1}: ok",
            )
    plan = (("autumn", ["flags=1"], 7), ("spring", ["flags=1", "deck=german"], 3))
    owner = "test-runner"
    n = 0
    for season_name, rules_pairs, count in plan:
        create_season(store, season_name, rules=rules_pairs, seed=11)
        start_season(store, season_name)
        rules = Rules.from_pairs(rules_pairs)
        for _ in range(count):
            with store.tx() as s:
                season = s.scalar(select(Season).where(Season.name == season_name))
                schedule(s, season, 1)
                match = claim(s, owner, season_id=season.id)
                assert match is not None
                match_id, v0, v1 = match.id, match.version0_id, match.version1_id
            names = (store.version_by_id(v0).bot.name, store.version_by_id(v1).bot.name)
            crash = (2, 5) if n == 3 else None
            rec, winner, verdicts, details, lines, deals = play_record(rules, 1000 + n, names, crash)
            data = encode_record(rec)
            result = MatchResult(
                winner=winner,
                void=False,
                verdicts=verdicts,
                verdict_details=details,
                lines=lines,
                deals_played=deals,
                replay=data,
                logs=(f"{names[0]} says hello in match {match_id}", f"{names[1]} log {match_id}"),
                duration=0.5,
            )
            assert record_result(store, owner, match_id, result).recorded
            arena.records[match_id] = {"names": names, "record": rec, "season": season_name}
            if crash:
                arena.crash_match = match_id
            n += 1
    store.close()
    return arena


@pytest.fixture(scope="session")
def arena_builder():
    """`build_arena(url, home)`, for tests that need the ladder on another database."""
    return build_arena


@pytest.fixture(scope="session")
def arena(tmp_path_factory) -> Arena:
    """A SQLite store holding two seasons of recorded matches (built once per test session)."""
    home = tmp_path_factory.mktemp("web-arena")
    return build_arena(f"sqlite:///{home / 'arena.db'}", home)


def _cards(mask: int) -> list[str]:
    return [card_code(c) for c in range(32) if mask >> c & 1]


def replay_states(rules: Rules, deal_rec) -> list[tuple[list[str], list[str], list[str], set[str]]]:
    """Per step of one recorded deal: seat 0's hand, seat 1's hand, the cards on the table and the
    mover's cards the rules forbid, re-played by the engine here, independently of the web code."""
    m = Match(rules, 0)
    deal = m.start_deal(deck=[parse_card(c) for c in deal_rec.deck], dealer=deal_rec.dealer)

    def forbidden() -> set[str]:
        if deal.done:
            return set()
        return set(_cards(deal.hands[deal.to_move])) - {card_code(c) for c in deal.legal_cards()}

    out = [(_cards(deal.hands[0]), _cards(deal.hands[1]), [], forbidden())]
    table: list[str] = []
    for p in deal_rec.plays:
        m.play(parse_card(p.card))
        table = [p.card] if len(table) != 1 else table + [p.card]
        out.append((_cards(deal.hands[0]), _cards(deal.hands[1]), list(table), forbidden()))
    return out


@pytest.fixture(scope="session")
def expected_states():
    return replay_states


@pytest.fixture(scope="session")
def owner_tokens():
    """The token issuer the test app uses (a fixed secret)."""
    from arena.web.tokens import OwnerTokens

    return OwnerTokens(OWNER_SECRET)


@pytest.fixture(scope="session")
def app(arena, owner_tokens):
    from arena.web.app import create_app

    return create_app(arena.url, arena.home, tokens=owner_tokens)


@pytest.fixture(scope="session")
def client(app):
    from fastapi.testclient import TestClient

    with TestClient(app) as c:
        yield c
