"""A bot's record on its page comes from the tallies the recorder keeps (`arena.store.tallies`), less
its still-sealed matches: the same verdict counts and head-to-head as counting its revealed matches
one by one, on SQLite and PostgreSQL; a rebuild (`recount`) gives the rows the recorder kept; the
rating history is each entry's newest changes, never a sealed one (issue #30)."""

from __future__ import annotations

from collections import Counter, defaultdict

from sqlalchemy import select

from arena.ladder.queries import bot_record, rating_history
from arena.ladder.record import record_result
from arena.ladder.seasons import create_season, schedule, start_season
from arena.ladder.visibility import sealed_done, unrevealed_ids
from arena.store import MatchResult, Store
from arena.store.models import Bot, BotTally, BotVersion, Entry, Match, RatingChange, Season
from arena.store.queue import claim
from arena.store.tallies import recount
from tests.store.scale_support import fill

OWNER = "test-runner"
# (winner, void, verdicts) in turn: wins either way, a draw, a void match, a fault
RESULTS = [
    (0, False, ("OK", "OK")),
    (1, False, ("OK", "OK")),
    (None, False, ("OK", "OK")),
    (None, True, ("OK", "OK")),
    (0, False, ("OK", "CRASH")),
    (1, False, ("TIMEOUT", "OK")),
]


def _play(store: Store, season: str, matches: int) -> None:
    """Claim and record `matches` matches of the season through the recorder, results in turn."""
    for n in range(matches):
        with store.tx() as s:
            row = s.scalars(select(Season).where(Season.name == season)).one()
            if not s.scalar(select(Match.id).where(Match.season_id == row.id, Match.status == "queued")):
                schedule(s, row, 1)
            match = claim(s, OWNER, season_id=row.id)
            assert match is not None
            match_id = match.id
        winner, void, verdicts = RESULTS[n % len(RESULTS)]
        result = MatchResult(winner=winner, void=void, verdicts=verdicts)
        assert record_result(store, OWNER, match_id, result).recorded


def _counted_one_by_one(store: Store, bot: str) -> tuple[Counter[str], dict[str, Counter[str]]]:
    """The reference: verdicts and head-to-head over the bot's revealed finished matches, each read."""
    with store.read() as s:
        names = dict(s.execute(select(BotVersion.id, Bot.name).join(Bot)).all())
        mine = {v for v, n in names.items() if n == bot}
        done = list(s.scalars(select(Match).where(Match.status == "done")))
        hidden = unrevealed_ids(s, done)
    verdicts: Counter[str] = Counter()
    h2h: dict[str, Counter[str]] = defaultdict(Counter)
    for m in done:
        if m.id in hidden or not {m.version0_id, m.version1_id} & mine:
            continue
        seat = 0 if m.version0_id in mine else 1
        verdicts[m.verdicts[seat]] += 1
        if not m.void:
            row = h2h[names[(m.version1_id, m.version0_id)[seat]]]
            row["games"] += 1
            row["wins" if m.winner == seat else "draws" if m.winner is None else "losses"] += 1
    return verdicts, h2h


def _tallies(store: Store) -> list[tuple]:
    t = BotTally
    with store.read() as s:
        q = select(t.bot_id, t.opponent_id, t.verdict, t.matches, t.wins, t.draws, t.losses)
        return [tuple(r) for r in s.execute(q.order_by(t.bot_id, t.opponent_id, t.verdict))]


def test_the_record_from_tallies_is_the_record_counted_match_by_match(store: Store, tmp_path) -> None:
    for name, owner in (("alice", "ann"), ("bob", "ben"), ("carol", "cat")):
        store.add_version(name, owner, content_hash=name.ljust(64, "0"), path=str(tmp_path / name))
    create_season(store, "tallied", rules=["flags=1"], duplicate=True, seed=5)
    start_season(store, "tallied")
    _play(store, "tallied", 15)  # the last pair's second match still queued: its first is sealed

    with store.read() as s:
        sealed = unrevealed_ids(s, s.scalars(select(Match).where(Match.status == "done")))
    assert sealed, "the test needs a sealed result to leave out"
    kept = _tallies(store)
    assert sum(r[3] for r in kept) == 2 * 15  # every finished match, sealed ones too, once per seat
    for bot in ("alice", "bob", "carol"):
        with store.read() as s:
            bot_id = s.scalar(select(Bot.id).where(Bot.name == bot))
            versions = list(s.scalars(select(BotVersion.id).where(BotVersion.bot_id == bot_id)))
            record = bot_record(s, bot_id, versions)
        verdicts, h2h = _counted_one_by_one(store, bot)
        assert record.verdicts == +verdicts
        assert {h.name: Counter(games=h.games, wins=h.wins, draws=h.draws, losses=h.losses)
                for h in record.head_to_head} == {k: +v for k, v in h2h.items()}  # fmt: skip
        assert record.opponents == len(h2h)
    with store.tx() as s:
        recount(s)
    assert _tallies(store) == kept  # a rebuild counts what the recorder counted


def test_the_head_to_head_shows_the_opponents_played_most(store: Store) -> None:
    ladder = fill(store, matches=300, bots=12)
    with store.read() as s:
        bot_id = s.scalar(select(Bot.id).where(Bot.name == ladder.bots[0]))
        everyone = bot_record(s, bot_id, [ladder.versions[0]], shown=100)
        top = bot_record(s, bot_id, [ladder.versions[0]], shown=3)
    assert everyone.opponents == len(everyone.head_to_head) > 3
    assert top.opponents == everyone.opponents and top.head_to_head == everyone.head_to_head[:3]
    assert [h.games for h in everyone.head_to_head] == sorted(
        (h.games for h in everyone.head_to_head), reverse=True
    )


def test_the_rating_history_is_each_entrys_newest_revealed_changes(store: Store) -> None:
    ladder = fill(store, matches=300, bots=12)
    entry, points = ladder.entries[0], 5
    with store.read() as s:
        steps = rating_history(s, [entry], sealed_done(s, [ladder.versions[0]]), points=points)
        played = list(
            s.execute(
                select(Match.id, Match.record_seq)
                .join(RatingChange, RatingChange.match_id == Match.id)
                .where(RatingChange.entry_id == entry)
                .order_by(Match.record_seq)
            ).all()
        )
        hidden = unrevealed_ids(s, s.scalars(select(Match).where(Match.id.in_([m for m, _ in played]))))
        season = s.scalar(select(Entry.season_id).where(Entry.id == entry))
    assert hidden & {m for m, _ in played[-points:]}, "the entry needs a sealed match among its newest"
    assert [x.match_id for x in steps] == [m for m, _ in played[-points:] if m not in hidden]
    assert {x.season_id for x in steps} == {season} and all(x.entry_id == entry for x in steps)
