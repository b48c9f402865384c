"""Live Elo and the maximum-likelihood season fit, checked against closed forms and generated data."""

from __future__ import annotations

import math

import numpy as np
import pytest

from arena.ladder.ratings import (
    K_ESTABLISHED,
    K_PROVISIONAL,
    elo_update,
    expected,
    fit_ratings,
    k_factor,
    naive_fit,
    replay_elo,
)


def test_expected_score_formula() -> None:
    assert expected(1500, 1500) == 0.5
    assert expected(1900, 1500) == pytest.approx(1 / (1 + 10 ** (-1)))
    assert expected(1500, 1900) + expected(1900, 1500) == pytest.approx(1.0)


def test_k_is_40_while_provisional_then_20() -> None:
    assert [k_factor(n) for n in (0, 19, 20, 100)] == [
        K_PROVISIONAL,
        K_PROVISIONAL,
        K_ESTABLISHED,
        K_ESTABLISHED,
    ]
    a, b = elo_update(1500.0, 0, 1500.0, 25, 1.0)  # a provisional winner, b established loser
    assert a.after == 1520.0 and a.k == 40.0
    assert b.after == 1480.0 and b.k == 40.0  # one K per match (the larger): zero-sum
    c, d = elo_update(1500.0, 30, 1500.0, 25, 1.0)
    assert (c.k, d.k, c.after + d.after) == (20.0, 20.0, 3000.0)
    draw_a, draw_b = elo_update(1600.0, 30, 1400.0, 30, 0.5)
    assert draw_a.after < 1600.0 < 1600.0 + 1e-9 and draw_b.after > 1400.0


def test_replay_elo_skips_voids_and_counts_provisional_games() -> None:
    results = [(1, 2, 1.0)] * 19 + [(1, 2, None)] + [(1, 2, 1.0)] * 2
    ratings, changes = replay_elo(results)
    assert changes[19] is None
    # 19 rated, a void, then the 20th rated match still uses K=40; the 21st uses 20
    assert changes[20][0].k == 40.0 and changes[21][0].k == 20.0
    assert ratings[1] + ratings[2] == pytest.approx(3000.0)  # equal K on both sides: zero-sum


def test_fit_two_players_matches_closed_form() -> None:
    # 3 wins and 1 loss without a prior: the MLE difference is 400*log10(3), centred on 1500
    fit = fit_ratings(2, [0, 0, 0, 0], [1, 1, 1, 1], [1, 1, 1, 0], prior=0.0)
    assert fit.ratings[0] - fit.ratings[1] == pytest.approx(400 * math.log10(3), abs=1e-6)
    assert fit.ratings.mean() == pytest.approx(1500.0)
    # draws count as half points: 2 draws + 1 win + 1 loss is an even score
    even = fit_ratings(2, [0, 0, 0, 0], [1, 1, 1, 1], [0.5, 0.5, 1, 0], prior=0.0)
    assert even.ratings[0] == pytest.approx(1500.0)


def test_unbeaten_bot_gets_a_finite_rating() -> None:
    fit = fit_ratings(2, [0] * 10, [1] * 10, [1.0] * 10)
    # two virtual draws (the default prior): 11 of 12 points, so the difference is 400*log10(11)
    # to the fit's tolerance, 1e-6 log-odds (4e-5 Elo)
    assert fit.ratings[0] - fit.ratings[1] == pytest.approx(400 * math.log10(11), abs=1e-4)


def _generated(n: int, m: int, seed: int = 7):
    rng = np.random.default_rng(seed)
    true = rng.normal(1500, 150, n)
    a = rng.integers(0, n, m)
    b = (a + rng.integers(1, n, m)) % n
    p = 1 / (1 + 10 ** ((true[b] - true[a]) / 400))
    u = rng.random(m)
    draw = np.minimum(0.1, 2 * np.minimum(p, 1 - p))  # draws that keep the expected score at p
    score = np.where(u < p - draw / 2, 1.0, np.where(u < p + draw / 2, 0.5, 0.0))
    return true, a, b, score


def test_fit_recovers_generated_strengths_with_honest_intervals() -> None:
    true, a, b, score = _generated(20, 20_000)
    fit = fit_ratings(20, a, b, score)
    centred = true - true.mean() + 1500
    inside = np.abs(fit.ratings - centred) <= fit.ci95
    assert fit.ratings.mean() == pytest.approx(1500.0)
    assert inside.mean() >= 0.8  # ~95% expected; generous for one sample
    assert np.corrcoef(true, fit.ratings)[0, 1] > 0.97
    assert (fit.games == np.bincount(a, minlength=20) + np.bincount(b, minlength=20)).all()


def test_intervals_shrink_with_more_games() -> None:
    _, a, b, score = _generated(10, 40_000, seed=3)
    small = fit_ratings(10, a[:2000], b[:2000], score[:2000])
    large = fit_ratings(10, a, b, score)
    assert (large.ci95 < small.ci95).all()


def test_los_matrix_is_consistent() -> None:
    _, a, b, score = _generated(6, 3000, seed=5)
    fit = fit_ratings(6, a, b, score)
    los = fit.los()
    assert np.allclose(los + los.T, 1.0)
    assert np.allclose(np.diag(los), 0.5)
    best, worst = int(np.argmax(fit.ratings)), int(np.argmin(fit.ratings))
    assert los[best, worst] > 0.99


def test_naive_baseline_agrees_with_newton_fit() -> None:
    _, a, b, score = _generated(15, 5000, seed=11)
    fit = fit_ratings(15, a, b, score)
    naive, iterations = naive_fit(
        15, list(zip(a.tolist(), b.tolist(), score.tolist(), strict=True)), tol=1e-4
    )
    assert iterations > 1
    assert np.abs(np.array(naive) - fit.ratings).max() < 0.05
