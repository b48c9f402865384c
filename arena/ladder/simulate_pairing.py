"""Seasons simulated under a matchmaking rule, with known true ratings, and what they measure: how
well the fit's order matches the truth (Spearman), how often its 95% intervals hold the truth
(overall and at the extremes), and how often a bot's win rate contradicts its rank: its rank by
win rate is off its rank in the table by more than a tenth of the field (issue #33: a bot fed weak
opponents finished 5th at 243-69, behind a bot at 85-137). `arena bench matchmaking` and
tests/ladder/test_pairing_rules.py compare the ladder's rule against the rule before it with these.

The season is paired as the ladder pairs (`pick_pairing` on the fit, refitted every ten games per
bot, live Elo while provisional; every bot its own owner), one game a pairing.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from enum import StrEnum

import numpy as np

from arena.ladder.fit import fit_ratings
from arena.ladder.matchmaking import Candidate, Meetings, pick_pairing
from arena.ladder.ratings import INITIAL, PROVISIONAL_GAMES, elo_update, expected

TRUE_SD = 200.0  # the true ratings: N(1500, 200)
EXTREMES = 0.1  # the top and bottom tenth by true rating
REFIT_GAMES = 10  # games per bot between pairing fits


class Rule(StrEnum):
    """The matchmaking rules compared: the ladder's and the one before it."""

    INFORMATIVE = "informative"  # the ladder's: least certain result, a repeat cap, within reach
    NEAREST = "nearest"  # before: Halite's nearest rating plus offset, no cap


@dataclass(frozen=True)
class Season:
    true: np.ndarray  # each bot's true rating
    a: np.ndarray  # each game's first bot
    b: np.ndarray  # its opponent
    score: np.ndarray  # a's score (1 or 0)


def play(bots: int, games_per_bot: int, rule: Rule, seed: int, *, refit_games: int = REFIT_GAMES) -> Season:
    """A season of `bots` (true ratings ~ N(1500, TRUE_SD)) paired by `rule` until each has played
    `games_per_bot` games on average, the pairing fit refitted every `refit_games` games per bot.
    The true ratings depend on the seed alone, so two rules on one seed meet the same field."""
    rng, np_rng = random.Random(seed), np.random.default_rng(seed)
    true = np_rng.normal(INITIAL, TRUE_SD, bots)
    live, rated, last = [INITIAL] * bots, [0] * bots, [-1] * bots
    fitted = list(live)
    met = Meetings()
    total = bots * games_per_bot // 2
    a, b, score = np.zeros(total, dtype=np.int64), np.zeros(total, dtype=np.int64), np.zeros(total)
    for k in range(total):
        if k and k % (bots * refit_games // 2) == 0:
            fit = fit_ratings(bots, a[:k], b[:k], score[:k])
            fitted = [float(x) if x == x else live[i] for i, x in enumerate(fit.ratings)]
        basis = [f if rated[i] >= PROVISIONAL_GAMES else live[i] for i, f in enumerate(fitted)]
        cands = [Candidate(i, f"o{i}", basis[i], rated[i], last[i]) for i in range(bots)]
        pairing = pick_pairing(cands, rng, met=met, capped=rule == Rule.INFORMATIVE)
        assert pairing is not None  # every bot has its own owner: any two may meet
        i, j = pairing[0].entry_id, pairing[1].entry_id
        s = 1.0 if rng.random() < expected(true[i], true[j]) else 0.0
        ci, cj = elo_update(live[i], rated[i], live[j], rated[j], s)
        live[i], live[j] = ci.after, cj.after
        rated[i], rated[j] = rated[i] + 1, rated[j] + 1
        last[i] = last[j] = k
        met.add(i, j)
        a[k], b[k], score[k] = i, j, s
    return Season(true, a, b, score)


@dataclass(frozen=True)
class Measure:
    spearman: float  # the fit's order against the true order
    inside: int  # rated bots (no bound) whose 95% interval holds the true rating
    cases: int  # rated bots with an interval
    inside_extremes: int  # the same among the top and bottom tenth by true rating
    cases_extremes: int
    contradicted: (
        float  # share of bots whose win-rate rank is off their fit rank by more than a tenth of the field
    )
    opponents: float  # distinct opponents a bot met, on average


def ranks(x: np.ndarray) -> np.ndarray:
    """0-based ranks, ties by position (the ratings are continuous)."""
    return np.argsort(np.argsort(x, kind="stable"), kind="stable")


def measure(season: Season) -> Measure:
    n = len(season.true)
    fit = fit_ratings(n, season.a, season.b, season.score)
    ok = ~fit.bound.astype(bool) & fit.rated
    rated = fit.rated.astype(bool)
    spearman = float(np.corrcoef(ranks(fit.ratings[rated]), ranks(season.true[rated]))[0, 1])
    centred = season.true - season.true.mean() + INITIAL
    inside = np.abs(fit.ratings - centred) <= fit.ci95
    order = ranks(season.true)
    extreme = (order < n * EXTREMES) | (order >= n - n * EXTREMES)
    a, b, s = season.a, season.b, season.score
    games = np.bincount(a, minlength=n) + np.bincount(b, minlength=n)
    points = np.bincount(a, weights=s, minlength=n) + np.bincount(b, weights=1.0 - s, minlength=n)
    win_rate = points / np.maximum(games, 1)
    off = np.abs(ranks(-np.nan_to_num(fit.ratings, nan=-np.inf)) - ranks(-win_rate))
    pairs = {(min(x, y), max(x, y)) for x, y in zip(a.tolist(), b.tolist(), strict=True)}
    return Measure(
        spearman=spearman,
        inside=int(inside[ok].sum()),
        cases=int(ok.sum()),
        inside_extremes=int(inside[ok & extreme].sum()),
        cases_extremes=int((ok & extreme).sum()),
        contradicted=float(np.mean(off > max(1, n // 10))),
        opponents=2 * len(pairs) / n,
    )
