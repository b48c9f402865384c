"""The --until-stable criterion (arena.ladder.settle) and its defaults on simulated fields."""

from __future__ import annotations

import numpy as np
import pytest

from arena.cli.ladder_common import BAR_WIDTH, LABEL_WIDTH, LINE_WIDTH, progress_tail
from arena.cli.season_play import run
from arena.ladder.fit import fit_ratings
from arena.ladder.settle import matches_left, unsettled
from arena.ladder.simulate_settle import MAX_MATCHES, STABLE_CI, settle_run


@pytest.mark.slow
def test_a_field_of_15_with_unbeatable_and_hopeless_bots_settles_with_the_defaults() -> None:
    # an unbeatable and a hopeless bot (perfect and zero scores), a crowd of six equals, a spread
    field = [3000.0, 0.0] + [1500.0] * 6 + [900.0, 1100.0, 1300.0, 1700.0, 1900.0, 2100.0, 1000.0]
    result = settle_run(field, anchors={14: 1000.0}, seed=1)
    assert result.settled, [(u.index, u.why) for u in result.left]
    assert result.matches < MAX_MATCHES
    order = np.argsort(result.ratings)
    assert order[-1] == 0 and order[0] == 1  # the unbeatable on top, the hopeless at the bottom


def _fit(wins: list[tuple[int, int, int]], n: int):
    a, b, s = [], [], []
    for x, y, count in wins:  # x beat y `count` times
        a += [x] * count
        b += [y] * count
        s += [1.0] * count
    return fit_ratings(n, np.array(a), np.array(b), np.array(s))


def test_a_perfect_score_that_clears_its_neighbour_is_settled() -> None:
    # 0 beat 1 thirty times; 1 and 2 split sixty games: 0 has only a bound, and it clears 1
    fit = _fit([(0, 1, 30), (1, 2, 30), (2, 1, 30)], 3)
    assert fit.bound[0] == 1
    left = unsettled(fit, [0, 1, 2], [30, 90, 60], 1.0)
    assert 0 not in [u.index for u in left]
    # but not when it barely played: three wins over 1 prove little
    thin = _fit([(0, 1, 3), (1, 2, 30), (2, 1, 30)], 3)
    assert 0 in [u.index for u in unsettled(thin, [0, 1, 2], [20, 63, 60], 1.0)]


def test_equals_settle_by_the_target_and_the_estimate_counts_what_is_left() -> None:
    fit = _fit([(0, 1, 40), (1, 0, 40)], 2)
    wide = unsettled(fit, [0, 1], [80, 80], 20.0)
    assert [u.index for u in wide] == [0, 1] and "±" in wide[0].why
    assert matches_left(wide) > 0
    assert unsettled(fit, [0, 1], [80, 80], 500.0) == []
    assert [u.why for u in unsettled(fit, [0, 1], [10, 80], 500.0)] == ["provisional 10/20"]


def test_the_cli_defaults_are_the_simulated_ones() -> None:
    defaults = {p.name: p.default for p in run.params}
    assert defaults["stable_ci"] == STABLE_CI and defaults["max_matches"] == MAX_MATCHES


def test_the_progress_line_fits_80_columns_and_shows_target_and_eta() -> None:
    status = "settled 3/15 a-very-long-bot-name@12 ±115>±100 " + "x" * 80
    width = LINE_WIDTH - LABEL_WIDTH - BAR_WIDTH - 2  # the label and the bar, a space after each
    tail = progress_tail(700, 1912, 8, 12.5, status, width=width)
    assert len(tail) <= width
    assert tail.startswith("700/1912 run 8 12.5/min ETA 1:36:57 settled 3/15")
    assert "ETA -:--:--" in progress_tail(0, 2000, 0, 0.0, "", width=width)


def test_groups_that_never_met_are_not_settled() -> None:
    # 0 and 1, and 2 and 3, played only among themselves, each pair far apart
    fit = _fit([(0, 1, 30), (2, 3, 30)], 4)
    assert fit.groups == 2
    left = unsettled(fit, [0, 1, 2, 3], [30, 30, 30, 30], 100.0)
    assert len(left) == 2 and {u.why for u in left} == {"never met the others (2 groups)"}
    joined = _fit([(0, 1, 30), (2, 3, 30), (1, 2, 30), (2, 1, 30)], 4)
    assert all("never met" not in u.why for u in unsettled(joined, [0, 1, 2, 3], [30, 90, 90, 30], 100.0))
