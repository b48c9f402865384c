"""The ratings matchmaking pairs on, and when it fits a season again to get them (issues #18, #30).

A season's fit (arena/ladder/standings.py) is the honest rating; it reads the season's tally (results
per pair, kept up to date by reading only new results: arena/ladder/tally.py) and starts from the last
fit, but it is still a fit of every pair, so matchmaking refits only when enough has changed
(`refit_due`). The fitted ratings of the established entries are stored with them
(`entries.pairing_elo`), and the season's count of recorded results at that fit beside the season
(`seasons.pairing_fitted`): the pairing query (`arena.ladder.pairing_pick`) reads them in SQL, and a
process that starts pairs on them at once instead of fitting the whole season first. seasons.py's
`schedule` is the caller.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, cast

from sqlalchemy import BindParameter, Select, Table, bindparam, case, func, select, update
from sqlalchemy.orm import Session

from arena.store.models import Entry, Season

log = logging.getLogger(__name__)

REFIT_SHARE = 20  # refit once the new results are a twentieth of those fitted (or a tenth of the entries)


@dataclass(frozen=True)
class FitState:
    """What `refit_due` weighs, from one narrow query of the season's active entries."""

    fitted: int | None  # season.pairing_fitted: its recorded results at the last pairing fit (None: never)
    entries: int  # active entries
    established: int  # of them, those past their provisional matches
    unfitted: int  # established entries without a stored pairing rating (past provisional since the fit)


# (database, season) -> (fitted, unfitted) a refit left: established entries the fit could not rate
# (a FitError) do not ask for a refit again until new results come (at the cadence); one item per
# season whose last refit left some, removed by the next that leaves none
_LEFT_UNRATED: dict[tuple, tuple[int, int]] = {}


def refit_due(state: FitState, recorded: int, *, left_unrated: tuple[int, int] | None = None) -> bool:
    """Whether the matchmaking fits the season again before this pairing.

    Only bots past their provisional matches are paired on the fit, so there is no fit while there
    are none, and one as soon as a bot joins them (it would wait on live Elo otherwise). Else the fit
    is refreshed once the results recorded since it are a tenth of the entries' worth or a twentieth
    of those it holds, whichever is more: k new results move a rating by about sqrt(k/games) of its
    standard error, a fifth of it at a twentieth, well inside the pairing's random offset (σ = 100
    Elo). Refitting on every result, as a small field did, cost the season's parent process a fit
    per match (issue #18); the simulation pairs on a fit ten games per bot old and keeps the spread.
    `left_unrated`: (fitted, unfitted) after the last refit in this process, whose unrated entries
    the fit could not rate (they wait for the cadence, not a refit per pairing)."""
    if not state.established:
        return False
    if state.fitted is None or recorded < state.fitted:
        return True
    if state.unfitted and left_unrated != (state.fitted, state.unfitted):
        return True
    return recorded - state.fitted >= max(1, state.entries // 10, state.fitted // REFIT_SHARE)


def fit_key(s: Session, season: Season) -> tuple:
    """The season's key in this process's memo: its database and identity (ids restart in a new database)."""
    return (str(s.get_bind().engine.url), season.id, season.name, season.created_at)


def fit_state_query(season: Season | BindParameter[int]) -> Select[tuple[int, int, int]]:
    """(active entries, established ones, established ones without a pairing rating) of the season
    (or of the season whose id is bound at execution)."""
    from arena.ladder.ratings import PROVISIONAL_GAMES

    established = Entry.rated >= PROVISIONAL_GAMES
    return select(
        func.count(),
        func.coalesce(func.sum(case((established, 1), else_=0)), 0),
        func.coalesce(func.sum(case((established & Entry.pairing_elo.is_(None), 1), else_=0)), 0),
    ).where(Entry.season_id == (season.id if isinstance(season, Season) else season), Entry.active.is_(True))


def fit_state(season: Season, counts: Iterable[Any]) -> FitState:
    """The season's `FitState` from the row of `fit_state_query`."""
    entries, past, unfitted = counts
    return FitState(season.pairing_fitted, int(entries), int(past), int(unfitted))


def refresh_pairing_fit(s: Session, season: Season, state: FitState | None = None) -> bool:
    """Fit the season again and store its pairing ratings when `refit_due`; True if it did. `state`:
    the season's `FitState` when the caller read it already (with other figures, in one query)."""
    key = fit_key(s, season)
    recorded = int(season.recorded or 0)
    if state is None:
        state = fit_state(season, s.execute(fit_state_query(season)).one())
    if not refit_due(state, recorded, left_unrated=_LEFT_UNRATED.get(key)):
        return False
    store_pairing_fit(s, season)
    unfitted = fit_state(season, s.execute(fit_state_query(season)).one()).unfitted
    if unfitted:
        _LEFT_UNRATED[key] = (recorded, unfitted)
    else:
        _LEFT_UNRATED.pop(key, None)
    return True


def store_pairing_fit(s: Session, season: Season) -> None:
    """Fit the season now and store the ratings its established entries are paired on: the season
    fit for entries past their provisional matches (live Elo, paired on itself, stretches to ~1.5x
    the true spread), none for the rest, which pair on their live rating (a few games' fit scatters
    widely, and would pull every pairing to whoever sits in the middle)."""
    from arena.ladder.ratings import PROVISIONAL_GAMES, FitError
    from arena.ladder.standings import season_fit

    rows: list[dict] = []
    try:
        entries, fit = season_fit(s, season)
        rows = [
            {"eid": e.id, "elo": float(fit.ratings[i])}
            for i, e in enumerate(entries)
            if fit.rated[i] and e.active and e.rated >= PROVISIONAL_GAMES
        ]
    except FitError as exc:
        log.warning("season %s: matchmaking on live ratings (%s)", season.name, exc)
    table = cast(Table, Entry.__table__)
    s.execute(update(table).where(table.c.season_id == season.id).values(pairing_elo=None))
    if rows:
        s.execute(
            update(table).where(table.c.id == bindparam("eid")).values(pairing_elo=bindparam("elo")), rows
        )
    season.pairing_fitted = int(season.recorded or 0)
    s.flush()


def pairing_ratings(s: Session, season: Season) -> dict[int, float]:
    """The ratings matchmaking pairs the season's active entries on (refitted first when due): the
    stored pairing fit for entries past their provisional matches, the live rating for the rest."""
    refresh_pairing_fit(s, season)
    return {
        entry_id: float(elo)
        for entry_id, elo in s.execute(
            select(Entry.id, func.coalesce(Entry.pairing_elo, Entry.rating)).where(
                Entry.season_id == season.id, Entry.active.is_(True)
            )
        ).all()
    }
