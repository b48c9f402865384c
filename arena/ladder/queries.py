"""The reads every front end shares: the default season, the match list (filters and keyset pages),
the per-season match counts, and a bot's recent matches, verdicts and head-to-head.

One implementation per question, used by the web (`arena.web`), the management API
(`arena.service`, and so the CLI, which calls it locally or remotely). Each answer costs a fixed
number of statements whatever the history holds: lists page by id (`WHERE id < after ORDER BY id
DESC LIMIT n`, served by the primary key or a `(column, id)` index of migration 0006), counts stop at
`COUNT_CAP`, and what a spectator may see is decided in SQL by `visibility.sealed_clause`, never by a
query per match.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from functools import cache

from sqlalchemy import (
    ColumnElement,
    CompoundSelect,
    Select,
    String,
    bindparam,
    case,
    cast,
    func,
    not_,
    select,
    union_all,
)
from sqlalchemy.orm import Session

from arena.ladder.visibility import OPEN, sealed_clause, sealed_done
from arena.store.hints import likely, unlikely
from arena.store.models import Bot, BotTally, BotVersion, Match, RatingChange, Season, unusual
from arena.store.tallies import share_rows
from arena.verdicts import Verdict

MAX_LIMIT = 500  # matches per page
OPPONENTS_SHOWN = 50  # a bot's head-to-head rows, most games first
HISTORY_SHOWN = 50  # rating changes per entry on a bot's page, newest
COUNT_CAP = 1000  # a list's total is counted up to this; beyond it the total says "at least"
VOID = "VOID"  # the verdict filter's name for a void match (no seat's verdict)


class MatchKind(StrEnum):
    LADDER = "ladder"
    FINAL = "final"
    COMPARE = "compare"
    CHALLENGE = "challenge"


class MatchStatus(StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"


class BadFilter(ValueError):
    """A list filter or page token that cannot be used; the message names it and what to give."""


class NoSuchSeason(LookupError):
    """The season filter names no season."""


def verdict_names() -> list[str]:
    """The verdict filter's choices: the closed set of `Verdict`, and VOID."""
    return [v.value for v in Verdict] + [VOID]


def check_verdict(verdict: str) -> str:
    """A verdict filter in its stored spelling, or BadFilter naming the choices."""
    name = verdict.strip().upper()
    if name not in verdict_names():
        raise BadFilter(f"verdict {verdict[:40]!r}: expected one of {', '.join(verdict_names())}")
    return name


def parse_after(token: str | int | None, name: str = "after") -> int | None:
    """A page token (the id of the last match of the previous page) as an id; None for the first page."""
    if token is None or token == "":
        return None
    text = str(token).strip()
    if not text.isdigit() or not 0 < int(text) < 2**63:
        raise BadFilter(f"{name} {text[:40]!r}: give the next page token of an earlier answer (a match id)")
    return int(text)


# ---- seasons ----------------------------------------------------------------------------------
def default_season(s: Session) -> Season | None:
    """The season a visitor most likely wants: the newest running one, else the newest closing one,
    else the newest; None when there is none. The web, the API and the CLI all ask this."""
    first = case((Season.status == "running", 0), (Season.status == "closing", 1), else_=2)
    return s.scalar(select(Season).order_by(first, Season.id.desc()).limit(1))  # one statement


def open_counts(s: Session) -> dict[int | None, int]:
    """Queued and running matches per season id: the open matches only (`ix_matches_claim`, status first); the
    finished ones are the season's `recorded` counter, so no count runs over the history."""
    # grouped by status first, so that the planner walks the status index (the open rows only)
    # rather than the season index (every row), which SQLite's statistics otherwise prefer
    q = (
        select(Match.season_id, func.count())
        .where(Match.status.in_(OPEN))
        .group_by(Match.status, Match.season_id)
    )
    out: Counter[int | None] = Counter()
    for sid, n in s.execute(q):
        out[sid] += n
    return dict(out)


# ---- match lists ------------------------------------------------------------------------------
@dataclass(frozen=True)
class MatchFilter:
    """A match list's filters; empty ones do not filter. `verdict` lists only revealed results."""

    season: str | None = None
    bot: str | None = None
    verdict: str | None = None  # a Verdict name or VOID (check_verdict)
    kind: MatchKind | None = None  # None: every kind but challenges (and them too with `challenges`)
    status: MatchStatus | None = None
    challenges: bool = False  # with kind None: challenges as well (the home page's "now playing")


@dataclass
class MatchListing:
    """One page, newest first. `next_after` is the token of the next page (None: this is the last);
    `total` counts the matches that fit the filters up to COUNT_CAP (`total_capped`: at least that)."""

    matches: list[Match]
    next_after: int | None
    total: int
    total_capped: bool


def _filtered(s: Session, f: MatchFilter) -> tuple[Select[Match] | None, list[int]]:
    """The filters as one query (None: no match can fit, e.g. a bot that does not exist), and the
    bot's version ids when `bot` filters."""
    q = select(Match)
    ids: list[int] = []
    if f.status:
        q = q.where(status_is(f.status))
    if f.kind:
        q = q.where(Match.kind == f.kind)
    elif not f.challenges:
        q = q.where(Match.kind != MatchKind.CHALLENGE)
    if f.season:
        sid = s.scalar(select(Season.id).where(Season.name == f.season))
        if sid is None:
            raise NoSuchSeason(f"no season named {f.season[:64]!r}")
        q = q.where(Match.season_id == sid)
    if f.bot:  # tested by `list_matches` seat by seat (`_by_seat`), not here: beside a seat's
        # `version0_id = v` an OR over both seats made PostgreSQL expect one row, and read and sort
        # all of the bot's matches instead of walking its (version, id) index back
        ids = bot_version_ids(s, f.bot)
        if not ids:
            return None, []
    if f.verdict:  # a sealed match's verdicts are part of its withheld result
        name = check_verdict(f.verdict)
        q = q.where(status_is(MatchStatus.DONE))
        if name != Verdict.OK.value:  # rare: only `ix_matches_unusual`'s rows can fit (its condition)
            q = q.where(unusual())
        if name == VOID:
            q = q.where(Match.void.is_(True))
        else:
            q = q.where(cast(Match.verdicts, String).like(f'%"{name}"%'))
        q = q.where(not_(sealed_clause()))  # last: its probes run only for the rows that fit the rest
    return q, ids


def status_is(status: MatchStatus) -> ColumnElement[bool]:
    """`Match.status == status`, with how many rows it keeps told to SQLite's planner
    (`arena.store.hints`): finished matches are nearly all of them, so a list of them walks the id
    order (or a bot's version index) rather than the status index; the other statuses are the few
    open or failed ones, which the status index finds."""
    condition = Match.status == status
    return likely(condition) if status == MatchStatus.DONE else unlikely(condition)


def list_matches(
    s: Session, f: MatchFilter, *, after: int | None = None, limit: int = 50, count: bool = True
) -> MatchListing:
    """A page of matches, newest first, older than `after` (a match id; None: from the newest).

    Keyset paging: a page is the next `limit` ids below the last one shown, so matches recorded
    while someone pages never shift a row onto the next page twice or past it unseen. Three
    statements whatever the store holds (the season name, the page, the capped count), plus one
    for the bot's versions when `bot` filters; without `count`, no count (`total` is the page's)."""
    limit = max(1, min(limit, MAX_LIMIT))
    q, ids = _filtered(s, f)
    if q is None:
        return MatchListing([], None, 0, False)
    page_q = q.where(Match.id < after) if after is not None else q
    if f.bot:  # by seat and version, each half a walk back along its (version, id) index
        page_q = select(Match).where(Match.id.in_(_by_seat(page_q, ids, limit + 1, per_version=True)))
    rows = list(s.scalars(page_q.order_by(Match.id.desc()).limit(limit + 1)))
    more = len(rows) > limit
    rows = rows[:limit]
    if not count:
        return MatchListing(matches=rows, next_after=rows[-1].id if more else None, total=len(rows),
                            total_capped=more)  # fmt: skip
    counted = (  # the newest COUNT_CAP + 1 in id order: the walk the page takes, and it stops there
        _by_seat(q, ids, COUNT_CAP + 1).subquery()
        if f.bot
        else q.with_only_columns(Match.id).order_by(Match.id.desc()).limit(COUNT_CAP + 1).subquery()
    )
    total = s.scalar(select(func.count(func.distinct(counted.c[0]))).select_from(counted)) or 0
    return MatchListing(
        matches=rows,
        next_after=rows[-1].id if more else None,
        total=min(total, COUNT_CAP),
        total_capped=total > COUNT_CAP,
    )


def _by_seat(q: Select[Match], version_ids: list[int], n: int, per_version: bool = False) -> CompoundSelect:
    """The ids of the newest `n` matches of `q` with the bot in seat 0, and of those with it in seat 1
    (a match against itself is in both; `q` must not test the seats itself). `per_version` splits each seat
    by version: each half is then one walk back along a `(version, id)` index that stops after `n`
    rows (an IN list of versions reads and sorts all of the bot's matches), at the price of up to
    `n` rows per version, so for small `n` only."""
    halves = []
    for column in (Match.version0_id, Match.version1_id):
        tests = [column == v for v in version_ids] if per_version else [column.in_(version_ids)]
        for test in tests:
            seated = q.with_only_columns(Match.id).where(test)
            halves.append(select(seated.order_by(Match.id.desc()).limit(n).subquery().c.id))
    return union_all(*halves)


def season_names(s: Session, matches: list[Match]) -> dict[int | None, str]:
    """Season id -> name for the seasons of `matches` (one statement; a challenge has none)."""
    ids = {x.season_id for x in matches if x.season_id is not None}
    if not ids:
        return {}
    return {sid: name for sid, name in s.execute(select(Season.id, Season.name).where(Season.id.in_(ids)))}


# ---- a bot's page -----------------------------------------------------------------------------
def bot_version_ids(s: Session, name: str) -> list[int]:
    return list(s.scalars(select(BotVersion.id).join(Bot).where(Bot.name == name)))


def recent_matches(
    s: Session,
    version_ids: list[int],
    limit: int,
    status: MatchStatus | None = None,
    challenges: bool | None = None,
) -> list[Match]:
    """A bot's newest matches (any of `version_ids` in either seat), newest first: `ix_matches_version0`
    and `ix_matches_version1` give them without reading the rest of its history. `challenges` picks
    its challenges only (True) or its other matches only (False); None: all of them. The halves carry
    no test of both seats: beside `version0_id = v` it made PostgreSQL expect one row and read and sort
    all of the version's matches instead of walking its index back."""
    if not version_ids:
        return []
    limit = max(1, min(limit, MAX_LIMIT))
    q = select(Match)
    if status:
        q = q.where(status_is(status))
    if challenges is not None:  # True: its challenges only; False: everything but challenges
        is_challenge = Match.kind == MatchKind.CHALLENGE
        q = q.where(is_challenge if challenges else ~is_challenge)
    q = select(Match).where(Match.id.in_(_by_seat(q, version_ids, limit, per_version=True)))
    return list(s.scalars(q.order_by(Match.id.desc()).limit(limit)))


@dataclass(frozen=True)
class RatingStep:
    """An entry's live Elo after one of its rated matches."""

    entry_id: int
    match_id: int
    seq: int | None  # the match's place in its season's record order
    at: datetime | None  # when the match finished
    season_id: int | None
    rating: float


@dataclass(frozen=True)
class Opponent:
    """A bot's revealed results against one opponent bot (void matches are not games)."""

    name: str
    games: int
    wins: int
    draws: int
    losses: int


@dataclass
class BotRecord:
    """A bot's revealed results: its own seat's verdicts over its finished matches (OK for a record
    without verdicts) and its head-to-head, most games first, cut to the `shown` first of its
    `opponents` opponents."""

    verdicts: Counter[str]
    head_to_head: list[Opponent]
    opponents: int


def bot_record(
    s: Session,
    bot_id: int,
    version_ids: list[int],
    shown: int = OPPONENTS_SHOWN,
    sealed: list[int] | None = None,
) -> BotRecord:
    """`BotRecord` of a bot from its tallies (`arena.store.tallies`, one row per opponent and
    verdict, kept by the recorder) less its finished matches that are still sealed, which only the
    open matches' deck-mates can be (`visibility.sealed_done`, or `sealed` when the caller has them):
    at most three statements; none counts or probes the bot's matches one by one (`sealed_done`
    reads their rows once, against the open matches' seeds and pairs)."""
    tallied = s.execute(
        select(BotTally.opponent_id, Bot.name, BotTally.verdict, BotTally.matches, BotTally.wins,
               BotTally.draws, BotTally.losses)
        .join(Bot, Bot.id == BotTally.opponent_id)
        .where(BotTally.bot_id == bot_id)
    ).all()  # fmt: skip
    hidden = sealed if sealed is not None else sealed_done(s, version_ids) if tallied else []
    # asked even when nothing is sealed (an empty IN costs the database nothing), so that a bot's
    # page costs the same statements whether or not one of its results is sealed at the moment
    withheld = s.execute(_withheld(), {"hidden": hidden, "bot": bot_id}).all() if tallied else []
    verdicts: Counter[str] = Counter()
    games: dict[int, list[int]] = {}
    names: dict[int, str] = {}
    for opponent, name, verdict, n, wins, draws, losses in tallied:
        verdicts[verdict] += n
        names[opponent] = name
        row = games.setdefault(opponent, [0, 0, 0])
        row[0], row[1], row[2] = row[0] + wins, row[1] + draws, row[2] + losses
    for _, opponent, verdict, n, wins, draws, losses in withheld:  # counted, but not to be shown yet
        verdicts[verdict] -= n
        row = games[opponent]
        row[0], row[1], row[2] = row[0] - wins, row[1] - draws, row[2] - losses
    h2h = sorted(
        (Opponent(names[o], w + d + lo, w, d, lo) for o, (w, d, lo) in games.items() if w + d + lo),
        key=lambda h: (-h.games, h.name),
    )
    return BotRecord(+verdicts, h2h[: max(0, shown)], len(h2h))


@cache
def _withheld() -> Select:
    """`share_rows` of a bot's (`:bot`) matches among `:hidden`: built once (its two seats' joins
    and cases cost more Python to build than the statement costs to run), compiled once."""
    return share_rows(Match.id.in_(bindparam("hidden", expanding=True)), bot_id=bindparam("bot"))  # type: ignore[arg-type]


def rating_history(
    s: Session, entry_ids: list[int], sealed: Collection[int], points: int = HISTORY_SHOWN
) -> list[RatingStep]:
    """Each of these entries' rating changes (a bot's, one entry per season it entered) in its
    newest `points` recorded matches (a void one has none), oldest first, less those of the
    `sealed` matches (a change tells the result; `visibility.sealed_done` gives them): one
    statement, each entry's seat-0 and seat-1 halves read newest first from
    `ix_matches_entry0`/`ix_matches_entry1` up to `points` rows, so it costs the same whatever the
    history."""
    if not entry_ids:
        return []
    halves = []
    for entry_id in entry_ids:
        for column in (Match.entry0_id, Match.entry1_id):
            newest = (
                select(Match.id, Match.record_seq, Match.finished_at, Match.season_id)
                .where(column == entry_id, Match.record_seq.is_not(None))
                .order_by(Match.record_seq.desc())
                .limit(points)
                .subquery()
            )  # the index walk first: joined to the changes, PostgreSQL read all of the entry's rows
            halves.append(
                select(RatingChange.entry_id, newest.c.id, newest.c.record_seq, newest.c.finished_at,
                       newest.c.season_id, RatingChange.after)
                .join(RatingChange, (RatingChange.match_id == newest.c.id) & (RatingChange.entry_id == entry_id))
            )  # fmt: skip
    rows = s.execute(union_all(*halves)).all()
    kept: dict[int, list[RatingStep]] = defaultdict(list)
    for row in sorted(rows, key=lambda r: (r.record_seq or 0, r.id)):
        kept[row.entry_id].append(RatingStep(row.entry_id, row.id, row.record_seq, row.finished_at,
                                             row.season_id, row.after))  # fmt: skip
    hidden = set(sealed)
    shown = [x for steps in kept.values() for x in steps[-points:] if x.match_id not in hidden]
    return sorted(shown, key=lambda x: (x.seq or 0, x.match_id))
