"""A real store with a small ladder in it, for the web tests.

Bots are registered through the store's API, seasons are created, started and scheduled by the
ladder, and each scheduled match is claimed, played by the engine (seeded random legal cards) and
recorded with `record_result`, the same path the workers use, binary replay record included.
One match ends in a CRASH verdict half-way through a deal.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest
from record_support import play_record

from arena.engine import Match, Rules
from arena.engine.cards import card_code, parse_card
from arena.proto.codec import encode_record

OWNER_SECRET = b"test-secret"


@dataclass
class Arena:
    url: str
    home: Path
    records: dict[int, dict] = field(default_factory=dict)  # match id -> what the test played
    crash_match: int | None = None


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


# ---- a duplicate season caught half-way: what a spectator must not learn ---------------------------
MARK = "MARKER-7f3a"  # planted in every private place; must never show publicly
ADMIN_SECRET = "admin-token-for-the-web-tests-0123456789"


@dataclass
class Sealed:
    """A duplicate season `winter` of impostor (owner ivy) v honest (owner hal), in three states."""

    url: str
    home: Path
    revealed: list[int]  # pair 0: both twins done (the first crashed)
    sealed_done: int  # pair 1: done, but its twin is running
    running: int  # pair 1's twin
    queued: list[int]  # pair 2: both queued
    seeds: dict[int, int]  # match id -> seed (private until revealed)
    records: dict[int, object]  # match id -> the stored proto record
    seats: dict[int, tuple[str, str]]  # match id -> registered bot names per seat
    mark: str = MARK

    @property
    def unrevealed(self) -> list[int]:
        return [self.sealed_done, self.running, *self.queued]


def _planted_record(rules: Rules, seed: int, mid: int, names: tuple[str, str], crash: bool):
    """A played record whose private parts all carry MARK, and whose players call themselves 'tactician'."""
    rec, winner, verdicts, details, lines, deals = play_record(
        rules, seed, ("tactician", "tactician"), crash_at=(1, 3) if crash else None
    )
    rec.match_id = f"m{mid}"
    if crash:
        said = f"the process exited with status 1 at deal 1, trick 2\nlast output of the bot:\n{MARK}-detail"
        details = ("", said)
        rec.result.details[:] = list(details)
    for seat in (0, 1):
        rec.logs.add(seat=seat, deal=1, trick=1, text=f"{MARK}-log-{names[seat]}-{mid} api_key=s3cr3t")
    if "private_details" in rec.result.DESCRIPTOR.fields_by_name:
        rec.result.private_details[:] = [f"{MARK}-private-{names[0]}", f"{MARK}-private-{names[1]}"]
    for player in rec.players:
        if "self_reported_name" in player.DESCRIPTOR.fields_by_name:
            player.self_reported_name = f"{MARK}-selfname-{names[player.seat]}"
    return rec, winner, verdicts, details, lines, deals


def build_sealed(url: str, home: Path) -> Sealed:
    import secrets

    from sqlalchemy import select

    from arena.engine import deck_commitment
    from arena.ladder.record import record_result
    from arena.ladder.seasons import create_season, schedule, start_season
    from arena.store import MatchResult, Store
    from arena.store.models import Bot, Match, Season
    from arena.store.queue import claim
    from arena.store.repo import suspend_bot

    store = Store.open(url, home=home)
    for name, owner in (("impostor", "ivy"), ("honest", "hal")):
        store.add_version(
            name, owner, content_hash=name.ljust(64, "0"), path=str(home / name), language="python",
            build_log=f"build of {name}: ok",
        )  # fmt: skip
    create_season(store, "winter", rules=["flags=1"], duplicate=True, seed=5)
    start_season(store, "winter")
    rules = Rules.from_pairs(["flags=1"])
    with store.tx() as s:
        season = s.scalar(select(Season).where(Season.name == "winter"))
        matches = schedule(s, season, 3)
        assert [m.pair for m in matches] == [0, 0, 1, 1, 2, 2]
        for m in matches:  # what the ladder's scheduler does once the commit-and-reveal lands there
            m.salt = secrets.token_hex(16)
            m.commitment = deck_commitment(m.seed, f"m{m.id}", bytes.fromhex(m.salt))
        by_pair = [[m.id for m in matches if m.pair == p] for p in range(3)]
        seeds = {m.id: m.seed for m in matches}
        versions = {m.id: (m.version0_id, m.version1_id) for m in matches}
    out = Sealed(url, home, by_pair[0], by_pair[1][0], by_pair[1][1], by_pair[2], seeds, {}, {})
    for mid in (*by_pair[0], by_pair[1][0], by_pair[1][1]):
        with store.tx() as s:
            match = claim(s, "test-runner", ids=[mid])
            assert match is not None
        if mid == out.running:
            continue
        names = tuple(store.version_by_id(v).bot.name for v in versions[mid])
        rec, winner, verdicts, details, lines, deals = _planted_record(
            rules, seeds[mid], mid, names, crash=mid == by_pair[0][0]
        )
        result = MatchResult(
            winner=winner, void=False, verdicts=verdicts, verdict_details=details, lines=lines,
            deals_played=deals, replay=encode_record(rec), duration=0.5,
            logs=(f"{MARK}-matchlog-{names[0]}-{mid}", f"{MARK}-matchlog-{names[1]}-{mid}"),
        )  # fmt: skip
        assert record_result(store, "test-runner", mid, result).recorded
        out.records[mid], out.seats[mid] = rec, names
    with store.tx() as s:
        assert s.get(Match, out.running).status == "running"
        bot = s.scalar(select(Bot).where(Bot.name == "impostor"))
        suspend_bot(
            s,
            bot.id,
            f"suspended: 3 of its last 4 matches ended in its own fault; last: crash\n{MARK}-suspend",
        )
    store.close()
    return out


@pytest.fixture(scope="session")
def sealed_builder():
    """`build_sealed(url, home)`, for tests that change the half-played season."""
    return build_sealed


@pytest.fixture(scope="session")
def sealed(tmp_path_factory) -> Sealed:
    home = tmp_path_factory.mktemp("web-sealed")
    return build_sealed(f"sqlite:///{home / 'arena.db'}", home)


@pytest.fixture(scope="session")
def admin_secret() -> str:
    return ADMIN_SECRET


@pytest.fixture(scope="session")
def admin_token(admin_secret):
    from arena.access.admin import AdminToken

    return AdminToken.of(admin_secret, "the tests")


@pytest.fixture(scope="session")
def sealed_client(sealed, owner_tokens, admin_token):
    from fastapi.testclient import TestClient

    from arena.web.app import create_app

    with TestClient(create_app(sealed.url, sealed.home, tokens=owner_tokens, admin_token=admin_token)) as c:
        yield c
