"""The three environments show each seat exactly the view the referee sends: their observations,
decoded, equal the referee's TurnRequest of the same turn (thousands of random states over the rules
variants), and their action masks equal its legal cards."""

from __future__ import annotations

import random

import numpy as np
import pytest
from env_helpers import VARIANTS, assert_matches_referee, referee_turns

from arena.engine import Rules
from arena.env import encoding


def _ids(rules: Rules) -> str:
    return ",".join(f"{k}={v}" for k, v in rules.changed().items())


@pytest.mark.parametrize("rules", VARIANTS, ids=_ids)
def test_pettingzoo_observations_are_the_referee_views(rules: Rules) -> None:
    from arena.env.pettingzoo_env import AGENTS, env

    checked = 0
    for seed in range(6):
        e = env(rules)
        e.reset(seed=seed)
        seen = []
        rng = random.Random(seed)
        for agent in e.agent_iter():
            obs, _, terminated, truncated, _ = e.last()
            if terminated or truncated:
                e.step(None)
                continue
            seen.append((AGENTS.index(agent), obs["observation"].copy(), obs["action_mask"].copy()))
            e.step(rng.choice(np.flatnonzero(obs["action_mask"]).tolist()))
        assert e.episode is not None
        turns = list(referee_turns(e.episode.match))
        assert len(turns) == len(seen) == 32 * len(e.episode.match.deals)
        for (seat, tensor, mask), (ref_seat, request) in zip(seen, turns, strict=True):
            assert seat == ref_seat
            assert_matches_referee(tensor, mask, None, request)
            checked += 1
    assert checked >= 6 * 64


@pytest.mark.parametrize("rules", VARIANTS, ids=_ids)
def test_openspiel_observations_are_the_referee_views(rules: Rules) -> None:
    import pyspiel

    import arena.env.openspiel_game  # noqa: F401  (registers python_elfern)

    params = {k: v for k, v in rules.to_dict().items() if k not in ("flags", "deck")}
    game = pyspiel.load_game("python_elfern", params)
    for seed in range(4):
        rng = random.Random(seed)
        state = game.new_initial_state()
        seen = []
        while not state.is_terminal():
            if state.is_chance_node():
                state.apply_action(rng.choice([a for a, _ in state.chance_outcomes()]))
                continue
            seat = state.current_player()
            tensor = np.array(state.observation_tensor(seat), np.float32)
            mask = np.zeros(32, np.int8)
            mask[state.legal_actions()] = 1
            text = state.observation_string(seat)
            info = np.array(state.information_state_tensor(seat), np.float32)
            assert (info[: encoding.SIZE] == tensor).all()  # the information state extends the view
            seen.append((seat, tensor, mask, text))
            state.apply_action(rng.choice(state.legal_actions()))
        turns = list(referee_turns(state.match))
        assert len(turns) == len(seen) == 32 * len(state.match.deals)
        for (seat, tensor, mask, text), (ref_seat, request) in zip(seen, turns, strict=True):
            assert seat == ref_seat
            assert_matches_referee(tensor, mask, text, request)


@pytest.mark.parametrize("rules", VARIANTS[:3], ids=_ids)
def test_gymnasium_observations_are_the_referee_views(rules: Rules) -> None:
    from arena.env.gym_env import ElfernEnv

    for seed, opponent in enumerate(("random", "greedy", "random", "greedy")):
        e = ElfernEnv(opponent, seat=None, rules=rules)
        obs, info = e.reset(seed=seed)
        seen = [(obs["observation"].copy(), obs["action_mask"].copy())]
        rng = random.Random(seed)
        done = False
        while not done:
            assert (info["action_mask"] == obs["action_mask"]).all()
            obs, _, done, _, info = e.step(rng.choice(np.flatnonzero(obs["action_mask"]).tolist()))
            if not done:
                seen.append((obs["observation"].copy(), obs["action_mask"].copy()))
        assert e.episode is not None
        mine = [request for seat, request in referee_turns(e.episode.match) if seat == e.seat]
        assert len(mine) == len(seen) == 16 * len(e.episode.match.deals)
        for (tensor, mask), request in zip(seen, mine, strict=True):
            assert_matches_referee(tensor, mask, None, request)
