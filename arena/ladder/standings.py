"""Season standings (maximum-likelihood Elo with 95% intervals, live Elo, record) and the audit that
recomputes every live rating from the stored replays.

Only what the data supports is shown: bots without a counted game are "unrated" (no rank, no Elo);
bots in groups that never met are ranked within their group only, each group anchored on its own;
a perfect (zero) score shows its lower (upper) bound, marked; an anchor shows no interval (it is
fixed); a suspended bot is ranked by its record and marked."""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace

import numpy as np
from sqlalchemy import case, func, select
from sqlalchemy.orm import Session

from arena.ladder.fit import Pairs, fit_pairs
from arena.ladder.los import (  # noqa: F401 - re-exported: the callers ask the standings
    LOS_MAX,
    LosAsk,
    LosError,
    LosTooLarge,
    los_among,
    los_next,
)
from arena.ladder.ratings import INITIAL, Fit, is_provisional, replay_elo
from arena.ladder.refit import refit
from arena.ladder.tally import keep_fit, save, season_key, tally, unsaved
from arena.memo import Memo
from arena.proto.codec import decode_record
from arena.store import Store
from arena.store.models import Bot, BotVersion, Entry, Match, RatingChange, Replay, Season


@dataclass(frozen=True)
class Standing:
    rank: int  # within its group (1 = best); 0: unrated
    bot: str  # name@version
    owner: str
    elo: float | None  # season fit (or its bound, see `bound`); None: unrated
    ci95: float | None  # ± half-width; None: unrated, an anchor (fixed) or a bound
    live_elo: float
    games: int
    wins: int
    draws: int
    losses: int
    provisional: bool
    active: bool
    rated: bool = True  # False: no counted game yet, left out of the fit
    group: int = 1  # connected group of the comparison graph (1 = largest); 0: unrated
    bound: str | None = None  # "lower" (perfect score: elo is a 97.5% lower bound), "upper" (zero score)
    anchor: bool = False  # its rating is fixed by the season's --anchor
    suspended: bool = False
    los_next: float | None = None  # LOS over the next rated bot of its group (None: last, or not asked)

    def to_dict(self) -> dict:
        return asdict(self)

    @property
    def shown_elo(self) -> str:
        """The rating as printed: `≥1620` for a lower bound, `≤1310` for an upper one, `—` unrated."""
        if self.elo is None:
            return "unrated"
        mark = {"lower": "≥", "upper": "≤"}.get(self.bound or "", "")
        return f"{mark}{self.elo:.0f}"


def season_results(s: Session, season_id: int) -> list[tuple[int, int, float]]:
    """(entry0, entry1, score of entry0) for every counted (non-void) match, in recording order."""
    rows = s.execute(
        select(Match.entry0_id, Match.entry1_id, Match.winner)
        .where(
            Match.season_id == season_id,
            Match.status == "done",
            Match.void.is_(False),
            Match.entry0_id.is_not(None),
        )
        .order_by(Match.record_seq)
    ).all()
    # a season's matches set both entries together (the query's entry0 filter keeps those)
    return [
        (a, b, 0.5 if w is None else float(w == 0)) for a, b, w in rows if a is not None and b is not None
    ]


def anchor_indices(entries: list[Entry], anchors: dict[str, float], rated: set[int]) -> dict[int, float]:
    """Season anchors (NAME@V, or NAME = its newest rated version) -> entry index -> fixed Elo."""
    out: dict[int, float] = {}
    for key, elo in anchors.items():
        name, _, version = key.partition("@")
        hits = [
            i
            for i, e in enumerate(entries)
            if e.version.bot.name == name and (not version or str(e.version.number) == version)
        ]
        hits = [i for i in hits if i in rated] or hits
        if hits:
            out[max(hits, key=lambda i: entries[i].version.number)] = float(elo)
    return out


def season_fit(s: Session, season: Season) -> tuple[list[Entry], Fit]:
    """The season's entries (by id) and their fit, anchored by the season's anchors if any.

    From the season's tally (`arena.ladder.tally`): only the results recorded since the last call
    are read, and the fit is made again only when there are some: from this process's last fit by
    `arena.ladder.refit` (a step with the new results, checked and corrected against every pair's
    gradient: the full fit's ratings to 0.01 Elo), else warm-started from the last ratings known."""
    from arena.ladder.seasons import season_options

    entries = list(s.scalars(select(Entry).where(Entry.season_id == season.id).order_by(Entry.id)))
    ids = np.array([e.id for e in entries], dtype=np.int64)
    counts, _changed = tally(s, season)
    u, v, games, points_u = counts.pairs(ids)
    n = len(entries)
    player_games = np.bincount(u, games, n) + np.bincount(v, games, n)
    player_points = np.bincount(u, points_u, n) + np.bincount(v, games - points_u, n)
    rated = set(np.flatnonzero(player_games > 0).tolist())
    anchors = anchor_indices(entries, season_options(season)["anchors"], rated)
    anchors = {i: x for i, x in anchors.items() if i in rated}
    key = (counts.recorded, ids.tobytes(), repr(sorted(anchors.items())))
    last = counts.fit  # (key, fit) of the last fit of this season, maybe of fewer results
    if last is not None and last[0] == key:
        return entries, last[1]
    warm = None
    if counts.warm is not None:  # the last fit's ratings (this process's or the saved one's), by entry id
        before_ids, before = counts.warm
        warm = np.full(n, np.nan)
        at = np.searchsorted(before_ids, ids)
        ok = (at < len(before_ids)) & (before_ids[np.minimum(at, len(before_ids) - 1)] == ids)
        warm[ok] = before[at[ok]]
    pairs = Pairs(n, u, v, games, player_games, player_points)
    added = counts.added(ids)
    if last is not None and added is not None and last[0] == (counts.since, *key[1:]):
        # the fit of the tally this one grew from: take in only the results added since
        du, dv, dgames, dpoints = added
        new = Pairs(
            n,
            du,
            dv,
            dgames,
            np.bincount(du, dgames, n) + np.bincount(dv, dgames, n),
            np.bincount(du, dpoints, n) + np.bincount(dv, dgames - dpoints, n),
        )
        fit = refit(last[1], pairs, new, anchors=anchors)
    else:
        fit = fit_pairs(pairs, anchors=anchors, warm=warm)
    keep_fit(s, season, counts, (key, fit), (ids, np.asarray(fit.ratings, dtype=np.float64)))
    return entries, fit


def trend_points(s: Session, season: Season) -> dict[int, tuple[float, ...]]:
    """Each entry's last 11 live ratings (its rating before its first match, then after each), the
    standings' trend column, from the season's tally (no rating history read: see tally.py)."""
    return tally(s, season)[0].trends


# The last standings of the last few seasons, by what they depend on: the season's recorded count
# (every result changes ratings and records) and its registry (entries, their active flags, their
# bots' suspensions: changes that record no result), read by one aggregate over the season's entries.
# A hit reads nothing else: no entry is loaded and nothing is fitted. Values are shared: read only.
_RANKED: Memo[tuple, tuple[list[Standing], list[int], Fit]] = Memo(8)


def _registry_key(s: Session, season: Season) -> tuple:
    """(entries, newest entry id, active entries, suspended bots' entries) of the season."""
    row = s.execute(
        select(
            func.count(Entry.id),
            func.max(Entry.id),
            func.sum(case((Entry.active, 1), else_=0)),
            func.sum(case((Bot.suspended, 1), else_=0)),
        )
        .select_from(Entry)
        .join(BotVersion, BotVersion.id == Entry.version_id)
        .join(Bot, Bot.id == BotVersion.bot_id)
        .where(Entry.season_id == season.id)
    ).one()
    return tuple(int(x or 0) for x in row)


def _ranked(s: Session, season: Season) -> tuple[list[Standing], list[int], Fit]:
    """`_rank`, remembered by the season's recorded count and registry (see `_RANKED`)."""
    key = (season_key(s, season), int(season.recorded or 0), _registry_key(s, season), repr(season.options))
    return _RANKED.get(key, lambda: _rank(s, season))


def trends_by_label(s: Session, season: Season) -> dict[tuple[str, int], tuple[float, ...]]:
    """`trend_points` by (bot name, version number), from plain rows (no entry objects loaded)."""
    points = trend_points(s, season)
    rows = s.execute(
        select(Entry.id, Bot.name, BotVersion.number)
        .join(BotVersion, BotVersion.id == Entry.version_id)
        .join(Bot, Bot.id == BotVersion.bot_id)
        .where(Entry.season_id == season.id)
    ).all()
    return {(name, number): points[entry_id] for entry_id, name, number in rows if entry_id in points}


def _rank(s: Session, season: Season) -> tuple[list[Standing], list[int], Fit]:
    """Standings rows (rated by group and rating, then unrated), with each row's fit index."""
    entries, fit = season_fit(s, season)
    newest: dict[int, int] = {}
    for e in entries:
        newest[e.version.bot_id] = max(newest.get(e.version.bot_id, 0), e.id)
    picked = []
    for i, e in enumerate(entries):
        games = e.wins + e.draws + e.losses
        if not fit.rated[i] and not e.active:
            continue  # an older version that never played: nothing to show
        shown = float(fit.bound_elo[i]) if fit.bound[i] else float(fit.ratings[i])
        picked.append((i, e, games, shown))

    # ranked by the estimate, as the LOS is (for a perfect or zero score, the prior's estimate: the
    # record's order); the bound is what is shown. Ranking by the shown figure put a 0-4 bot first
    # (its upper bound) or a perfect score below bots it beat (its lower bound).
    picked.sort(
        key=lambda r: (
            (0, int(fit.group[r[0]]), -float(fit.ratings[r[0]]), r[1].id)
            if fit.rated[r[0]]
            else (1, 0, 0.0, r[1].id)
        )
    )
    rows: list[Standing] = []
    order: list[int] = []
    rank, last_group = 0, -1
    for i, e, games, shown in picked:
        rated = bool(fit.rated[i])
        if rated:
            rank = rank + 1 if fit.group[i] == last_group else 1
            last_group = int(fit.group[i])
        anchor = fit.is_anchor(i)
        bound = {1: "lower", -1: "upper"}.get(int(fit.bound[i])) if rated and not anchor else None
        rows.append(
            Standing(
                rank if rated else 0,
                e.version.label,
                e.version.bot.owner,
                round(shown, 1) if rated else None,
                round(float(fit.ci95[i]), 1) if rated and not anchor and bound is None else None,
                round(e.rating, 1),
                games,
                e.wins,
                e.draws,
                e.losses,
                is_provisional(e.rated),
                e.active,
                rated,
                int(fit.group[i]) + 1 if rated else 0,
                bound,
                anchor,
                bool(e.version.bot.suspended) and newest[e.version.bot_id] == e.id,
            )
        )
        order.append(i)
    nxt = los_next(rows, order, fit)  # once per fit, not per request
    return [replace(r, los_next=x) for r, x in zip(rows, nxt, strict=True)], order, fit


def compute_standings(s: Session, season: Season) -> list[Standing]:
    """The live standings as a frozen season keeps them (no LOS: `los_next` is None)."""
    return [replace(r, los_next=None) for r in _ranked(s, season)[0]]


def _season_or_error(s: Session, name: str) -> Season:
    season = s.scalar(select(Season).where(Season.name == name))
    if season is None:
        from arena.ladder.seasons import SeasonError

        raise SeasonError(f"no season named {name!r}; `arena season list` shows them")
    return season


def standings(store: Store, name: str) -> tuple[Season, list[Standing]]:
    """Frozen standings for a frozen season, live ones otherwise."""
    with store.read() as s:
        season = _season_or_error(s, name)
        if season.status == "frozen" and season.standings is not None:
            return season, [Standing(**row) for row in season.standings]
        return season, compute_standings(s, season)


def groups_summary(rows: list[Standing], anchor_elo: float = INITIAL) -> list[dict]:
    """Each connected group of rated bots and how it is anchored (its anchors, else its mean)."""
    out = []
    for g in sorted({r.group for r in rows if r.rated}):
        members = [r for r in rows if r.rated and r.group == g]
        anchors = [f"{r.bot}={r.elo:g}" for r in members if r.anchor]
        out.append(
            {
                "group": g,
                "bots": [r.bot for r in members],
                "anchored": "anchor " + ", ".join(anchors) if anchors else f"mean {anchor_elo:g}",
            }
        )
    return out


def los_table(store: Store, name: str, ask: LosAsk | None = None) -> tuple[list[str], np.ndarray]:
    """A LOS table of a season (default: its top LOS_MAX bots)."""
    with store.read() as s:
        rows, order, fit = _ranked(s, _season_or_error(s, name))
        return los_among(rows, order, fit, ask or LosAsk(top=LOS_MAX))


def standings_with_los(
    store: Store, name: str, ask: LosAsk | None = None
) -> tuple[Season, list[Standing], list[str], np.ndarray]:
    """The standings with each row's LOS over the next (`Standing.los_next`), and the LOS table `ask`
    names (empty when None), from one read and one fit."""
    with store.read() as s:
        season = _season_or_error(s, name)
        rows, order, fit = _ranked(s, season)
        labels, matrix = los_among(rows, order, fit, ask) if ask else ([], np.zeros((0, 0)))
        pending = unsaved(s, season)
    save(store.engine, pending)  # after the read: the next process starts from this tally
    if season.status == "frozen" and season.standings is not None:
        frozen = _frozen_los([Standing(**row) for row in season.standings], rows, order, fit)
        return season, frozen, labels, matrix
    return season, list(rows), labels, matrix


def _frozen_los(frozen: list[Standing], rows: list[Standing], order: list[int], fit: Fit) -> list[Standing]:
    """A frozen table with each rated row's LOS over the next rated row of its group, from the fit of
    the season's matches (no match is added once it is frozen, so it is the fit the table was frozen
    from). A row the fit does not rate, or a row frozen without a neighbour of its group, has none."""
    index = {r.bot: i for r, i in zip(rows, order, strict=True) if r.rated}
    rated = [k for k, r in enumerate(frozen) if r.rated]
    pairs = [
        (k, n)
        for k, n in zip(rated, rated[1:], strict=False)
        if frozen[k].group == frozen[n].group and frozen[k].bot in index and frozen[n].bot in index
    ]
    out = [replace(r, los_next=None) for r in frozen]
    if pairs:
        values = fit.los_pairs(
            [index[frozen[k].bot] for k, _ in pairs], [index[frozen[n].bot] for _, n in pairs]
        )
        for (k, _), x in zip(pairs, values, strict=True):
            out[k] = replace(out[k], los_next=None if x != x else round(float(x), 4))
    return out


def verify_ratings(store: Store, name: str) -> list[str]:
    """Recompute live Elo from the stored replays alone; return every mismatch (empty: all equal).

    The result of each match is read from its replay record, not from the match row, so this
    checks that the ratings follow from the replays; a match the organiser voided (its stated
    `void_reason`) counts as void.
    """
    problems: list[str] = []
    with store.read() as s:
        season = _season_or_error(s, name)
        matches = list(
            s.scalars(
                select(Match)
                .where(Match.season_id == season.id, Match.status == "done", Match.entry0_id.is_not(None))
                .order_by(Match.record_seq)
            )
        )
        results: list[tuple[int, int, float | None]] = []
        for m in matches:
            record = decode_record(s.get_one(Replay, m.id).data)
            res = record.result
            # a match the organiser voided counts as void whatever it played (arena.ladder.controls)
            voided = res.void or m.void_reason is not None
            score = None if voided else (0.5 if res.winner < 0 else float(res.winner == 0))
            assert m.entry0_id is not None and m.entry1_id is not None  # the query's filter: a season's match
            results.append((m.entry0_id, m.entry1_id, score))
        entries = list(s.scalars(select(Entry).where(Entry.season_id == season.id)))
        start = {e.id: e.start_rating for e in entries}
        final, changes = replay_elo(results, start)
        stored: dict[int, dict[int, RatingChange]] = {}
        for row in s.scalars(select(RatingChange).where(RatingChange.match_id.in_([m.id for m in matches]))):
            stored.setdefault(row.match_id, {})[row.entry_id] = row
        for m, change in zip(matches, changes, strict=True):
            got = stored.get(m.id, {})
            if change is None:
                if got:
                    problems.append(f"match {m.id}: replay says void but ratings changed")
                continue
            for entry_id, c in ((m.entry0_id, change[0]), (m.entry1_id, change[1])):
                assert entry_id is not None  # as above
                rc = got.get(entry_id)
                if rc is None or rc.before != c.before or rc.after != c.after:
                    problems.append(
                        f"match {m.id} entry {entry_id}: stored "
                        f"{(rc.before, rc.after) if rc else None} != recomputed {(c.before, c.after)}"
                    )
        for e in entries:
            if e.rating != final.get(e.id, e.start_rating):
                problems.append(
                    f"entry {e.id}: stored rating {e.rating} != recomputed {final.get(e.id, e.start_rating)}"
                )
    return problems
