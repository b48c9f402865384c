"""The ratings matchmaking pairs on, and when it fits a season again to get them (issue #18).

A season's fit (arena/ladder/standings.py) is the honest rating; it reads the season's tally (results
per pair, kept up to date by reading only new results: arena/ladder/tally.py) and starts from the last
fit, but it is still a fit of every pair, so matchmaking keeps the last one per season and refits only
when enough has changed. seasons.py's
`schedule` is its one caller.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from sqlalchemy.orm import Session

from arena.store.models import Entry, Season

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class _PairingFit:
    """One season's fit as the matchmaking last took it."""

    recorded: int  # season.recorded when fitted
    ratings: dict[int, float]  # entry id -> fitted Elo (rated entries only)
    established: frozenset[int]  # the entries then past their provisional matches


_FIT_CACHE: dict[tuple, _PairingFit] = {}  # (database, season) -> its last pairing fit
REFIT_SHARE = 20  # refit once the new results are a twentieth of those fitted (or a tenth of the entries)


def refit_due(cached: _PairingFit | None, recorded: int, entries: int, established: frozenset[int]) -> bool:
    """Whether the matchmaking fits the season again before this pairing.

    Only bots past their provisional matches are paired on the fit, so there is no fit while there
    are none, and one as soon as a bot joins them (it would wait on live Elo otherwise). Else the fit
    is refreshed once the results recorded since it are a tenth of the entries' worth or a twentieth
    of those it holds, whichever is more: k new results move a rating by about sqrt(k/games) of its
    standard error, a fifth of it at a twentieth, well inside the pairing's random offset (σ = 100
    Elo). Refitting on every result, as a small field did, cost the season's parent process a fit
    per match (issue #18); the simulation pairs on a fit ten games per bot old and keeps the spread."""
    if not established:
        return False
    if cached is None or recorded < cached.recorded or not established <= cached.established:
        return True
    return recorded - cached.recorded >= max(1, entries // 10, cached.recorded // REFIT_SHARE)


def fit_key(s: Session, season: Season) -> tuple:
    """The season's key in `_FIT_CACHE`: its database and identity (ids restart in a new database)."""
    return (str(s.get_bind().engine.url), season.id, season.name, season.created_at)


def pairing_ratings(s: Session, season: Season, entries: list[Entry]) -> dict[int, float]:
    """The ratings matchmaking pairs on: the season fit for entries past their provisional matches
    (live Elo, paired on itself, stretches to ~1.5x the true spread), the live rating for the rest
    (a few games' fit scatters widely, and would pull every pairing to whoever sits in the middle).
    When it refits: `refit_due`."""
    from arena.ladder.ratings import PROVISIONAL_GAMES, FitError
    from arena.ladder.standings import season_fit

    key = fit_key(s, season)
    established = frozenset(e.id for e in entries if e.rated >= PROVISIONAL_GAMES)
    cached = _FIT_CACHE.get(key)
    if refit_due(cached, season.recorded, len(entries), established):
        fitted: dict[int, float] = {}
        try:
            all_entries, fit = season_fit(s, season)
            fitted = {e.id: float(fit.ratings[i]) for i, e in enumerate(all_entries) if fit.rated[i]}
        except FitError as exc:
            log.warning("season %s: matchmaking on live ratings (%s)", season.name, exc)
        cached = _FIT_CACHE[key] = _PairingFit(season.recorded, fitted, established)
    fitted = cached.ratings if cached is not None else {}
    return {e.id: fitted.get(e.id, e.rating) if e.id in established else e.rating for e in entries}
