"""`arena bench compare`: the SPRT of `arena compare` run on simulated duplicate pairs at the user's
own settings, to measure what the settings deliver: α (H1 accepted when A is only elo0 better),
β (H0 accepted when A is elo1 better), the power (1 − β, H1 accepted at elo1), the inconclusive
share at the pair limit, and the pairs a test takes to decide (median and 90th percentile).
Baseline, in the same run: Wald's expected length for the simulated pair-score spread, the figure
`arena compare` prints when it starts.

The pair model. A share `deck_luck` of the pairs are decided by the decks alone: whoever sits in the
favoured seat wins, so with the seats swapped each bot wins one game and the pair scores ½ whatever
the strength (what pairing cancels). The other pairs are two independent games, each drawn with
probability `draws` (0 when the format is `flags=N`: a match to flags has no draw) and otherwise
won by A with the probability that makes A's expected score over all pairs the Elo curve's at the
true difference. The real pentanomial shape depends on the bots and the format; run
`arena compare --json` and read `pentanomial` to choose `deck_luck` and `draws` that match it.
"""

from __future__ import annotations

import random
import statistics
from collections.abc import Callable

from arena.ladder.fit import score_of
from arena.ladder.sprt import Sprt


class ModelError(ValueError):
    """The pair model cannot give the asked expected score (too much deck luck or too many draws)."""


def game_odds(elo: float, draws: float, deck_luck: float) -> float:
    """P(A wins) of a game outside the deck-decided pairs, so that A's expected score is the curve's."""
    score = score_of(elo)
    free = (score - 0.5 * deck_luck) / (1.0 - deck_luck)  # expected score of an undecided game
    win = free - 0.5 * draws
    if not 0.0 <= win <= 1.0 - draws:
        raise ModelError(
            f"an expected score of {score:.3f} ({elo:+g} Elo) cannot be reached with --deck-luck "
            f"{deck_luck:g} and --draws {draws:g}; lower them"
        )
    return win


def one_test(
    sprt: Sprt, win: float, draws: float, deck_luck: float, max_pairs: int, rng: random.Random
) -> Sprt:
    """Feed `sprt` simulated pairs until its verdict freezes or `max_pairs` pairs were played."""

    def game() -> float:
        x = rng.random()
        return 1.0 if x < win else 0.5 if x < win + draws else 0.0

    while sprt.frozen is None and sprt.n < max_pairs:
        if rng.random() < deck_luck:
            first, second = (1.0, 0.0) if rng.random() < 0.5 else (0.0, 1.0)
        else:
            first, second = game(), game()
        sprt.add((first + second) / 2.0, games=(first, second))
    return sprt


def at_truth(
    true_elo: float,
    settings: dict,
    runs: int,
    rng: random.Random,
    progress: Callable[[float], None],
) -> dict:
    """`runs` tests with A truly `true_elo` better: the share of each verdict and the test's length."""
    win = game_odds(true_elo, settings["draws"], settings["deck_luck"])
    verdicts: dict[str | None, int] = {"H1": 0, "H0": 0, None: 0}
    lengths, sds = [], []
    for k in range(runs):
        test = Sprt(
            elo0=settings["elo0"], elo1=settings["elo1"], alpha=settings["alpha"], beta=settings["beta"]
        )
        one_test(test, win, settings["draws"], settings["deck_luck"], settings["max_pairs"], rng)
        state = test.state()
        verdicts[state.verdict] += 1
        lengths.append(state.decided_at if state.decided_at is not None else state.n)
        sds.append(test._moments(test.counts)[1] ** 0.5)
        progress((k + 1) / runs)
    ordered = sorted(lengths)
    return {
        "true_elo": true_elo,
        "runs": runs,
        "h1": verdicts["H1"] / runs,
        "h0": verdicts["H0"] / runs,
        "inconclusive": verdicts[None] / runs,
        "median_pairs": statistics.median(lengths),
        "p90_pairs": ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))],
        "pair_sd": round(statistics.mean(sds), 4),
    }


def run_compare_bench(settings: dict, runs: int, seed: int, progress: Callable[[float], None]) -> dict:
    """Both hypotheses' truths, `runs` tests each (see the module docstring); `settings`: elo0, elo1,
    alpha, beta, max_pairs, draws, deck_luck."""
    rng = random.Random(seed)
    rows = []
    for k, elo in enumerate((settings["elo0"], settings["elo1"])):

        def half(f: float, k: int = k) -> None:
            progress((k + f) / 2)

        rows.append(at_truth(elo, settings, runs, rng, half))
    at0, at1 = rows
    sd = (at0["pair_sd"] + at1["pair_sd"]) / 2.0
    wald = Sprt(
        elo0=settings["elo0"], elo1=settings["elo1"], alpha=settings["alpha"], beta=settings["beta"]
    ).expected_pairs(sd=sd)
    return {
        **settings,
        "runs": runs,
        "seed": seed,
        "alpha_measured": at0["h1"],
        "beta_measured": at1["h0"],
        "power_measured": at1["h1"],
        "at_elo0": at0,
        "at_elo1": at1,
        "wald_expected_pairs": {k: round(v, 1) for k, v in wald.items()},  # the same-run baseline
        "wald_pair_sd": round(sd, 4),
    }
