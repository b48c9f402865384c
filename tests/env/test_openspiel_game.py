"""python_elfern passes OpenSpiel's own checks: pyspiel.random_sim_test (with serialization) in every
rules variant, the committed playthrough replays line for line (OpenSpiel's generate_playthrough, as
its integration test does), and resample_from_infostate keeps the seat's information state."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pyspiel
import pytest
from absl import flags
from env_helpers import VARIANTS
from open_spiel.python.algorithms import generate_playthrough

import arena.env.openspiel_game  # noqa: F401  (registers python_elfern)
from arena.engine import Rules, RulesError

PLAYTHROUGH = Path(__file__).parent / "playthroughs" / "python_elfern.txt"


def _params(rules: Rules) -> dict:
    return {k: v for k, v in rules.to_dict().items() if k not in ("flags", "deck")}


@pytest.mark.parametrize(
    "rules", VARIANTS, ids=lambda r: ",".join(f"{k}={v}" for k, v in r.changed().items())
)
def test_random_sim_test_passes(rules: Rules) -> None:
    game = pyspiel.load_game("python_elfern", _params(rules))
    pyspiel.random_sim_test(game, num_sims=3, serialize=True, verbose=False)


def test_the_game_type_and_parameters() -> None:
    game = pyspiel.load_game("python_elfern(trumps=True,hand_size=5,max_deals=2)")
    kind = game.get_type()
    assert kind.chance_mode == pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC
    assert kind.information == pyspiel.GameType.Information.IMPERFECT_INFORMATION
    assert game.num_distinct_actions() == 32 and game.max_game_length() == 64
    assert game.rules == Rules(trumps=True, hand_size=5, max_deals=2)
    state = game.new_initial_state()
    assert state.is_chance_node() and state.chance_outcomes() == [(0, 0.5), (1, 0.5)]
    state.apply_action(1)  # seat 1 deals
    assert len(state.chance_outcomes()) == 32
    for card in range(32):
        state.apply_action(card)
    assert state.current_player() == 0  # the non-dealer leads
    assert state.match.deal.deck == tuple(range(32))
    clone = state.clone()  # a deep copy: playing on in the clone leaves the state as it was
    clone.apply_action(clone.legal_actions()[0])
    assert clone.history() == [*state.history(), state.legal_actions()[0]]
    assert len(state.match.deal.plays) == 0 and state.current_player() == 0


def test_bad_parameters_are_refused_with_the_rule() -> None:
    with pytest.raises(RulesError, match="hand_size=7 is invalid; allowed: 6, 5, 4"):
        pyspiel.load_game("python_elfern(hand_size=7)")
    with pytest.raises(ValueError, match="max_deals >= 1"):
        pyspiel.load_game("python_elfern(max_deals=0)")


def test_the_playthrough_replays() -> None:
    if not flags.FLAGS.is_parsed():
        flags.FLAGS.mark_as_parsed()  # generate_playthrough reads an absl flag (its default)
    expected, actual = generate_playthrough.replay(str(PLAYTHROUGH))
    assert expected == actual


@pytest.mark.parametrize(
    "rules", VARIANTS, ids=lambda r: ",".join(f"{k}={v}" for k, v in r.changed().items())
)
def test_resample_from_infostate_keeps_what_the_seat_knows(rules: Rules) -> None:
    game = pyspiel.load_game("python_elfern", _params(rules))
    rng = random.Random(5)
    differed = 0
    for _ in range(3):
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                state.apply_action(rng.choice([a for a, _ in state.chance_outcomes()]))
                continue
            seat = state.current_player()
            other = state.resample_from_infostate(seat, rng.random)
            assert other.information_state_string(seat) == state.information_state_string(seat)
            assert np.array_equal(other.information_state_tensor(seat), state.information_state_tensor(seat))
            assert other.legal_actions() == state.legal_actions()
            differed += other.match.deal.hands[1 - seat] != state.match.deal.hands[1 - seat]
            state.apply_action(rng.choice(state.legal_actions()))
    assert differed > 0  # the opponent's hidden cards really are resampled


def test_openspiels_own_ismcts_plays_a_deal_through_resampling() -> None:
    """OpenSpiel's IS-MCTS bot samples its worlds with resample_from_infostate: a whole deal, legal cards."""
    from open_spiel.python.algorithms import ismcts, mcts

    game = pyspiel.load_game("python_elfern")
    evaluator = mcts.RandomRolloutEvaluator(1, np.random.RandomState(0))
    bot = ismcts.ISMCTSBot(game, evaluator, 2.0, 20, random_state=np.random.RandomState(0))
    state, rng, moves = game.new_initial_state(), random.Random(0), 0
    while not state.is_terminal():
        if state.is_chance_node():
            state.apply_action(rng.choice([a for a, _ in state.chance_outcomes()]))
        elif state.current_player() == 0:
            action = bot.step(state)
            assert action in state.legal_actions()
            state.apply_action(action)
            moves += 1
        else:
            state.apply_action(rng.choice(state.legal_actions()))
    assert moves == 16 and sum(state.returns()) == 0
