"""`arena bench env`: the training environments' steps per second against the engine's own playout.

Measured in the same run, on one core, in CPU seconds (`time.process_time`), the variants taking turns
in short slices (every other round in reverse order) and each figure the median of its per-slice
rates, as `arena bench engine` does, so a burst of load from other jobs spoils a slice of each:
- `engine_playout`: `Deal.playout`, the engine's random-playout loop, in cards per second (the baseline);
- `engine_cards`: `Match.play` card by card with random legal cards, what every environment does inside;
- `pettingzoo`: `elfern_v0`, `step` then `last` (the observation and its action mask) per card;
- `gymnasium`: `Elfern-v0` against the `random` sample bot, one learner card per step (the bot's card
  rides in the same step, through the referee's messages);
- `openspiel`: `python_elfern`, `apply_action` and the mover's `observation_tensor` per card, the 32
  chance nodes of each deal's shuffle included.
Every environment uses the default rules (one deal per episode) and random legal cards.
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Callable

import numpy as np

from arena.engine import Deal, Match, Rules

ROUNDS = 9
CARDS_PER_DEAL = 32


def _runners(seed: int) -> dict[str, Callable[[int], int]]:
    """name -> function(n) that takes at least n steps and returns how many it took."""
    import pyspiel  # type: ignore[import-not-found]

    import arena.env.openspiel_game  # noqa: F401  (registers python_elfern)
    from arena.env.gym_env import ElfernEnv
    from arena.env.pettingzoo_env import env

    rules = Rules(max_deals=1)
    rng = random.Random(seed)
    decks = []
    for _ in range(256):
        deck = list(range(32))
        rng.shuffle(deck)
        decks.append(deck)
    at = [0]

    def engine_playout(n: int) -> int:
        deals = -(-n // CARDS_PER_DEAL)
        for _ in range(deals):
            at[0] += 1
            Deal(rules, at[0] & 1, decks[at[0] % len(decks)]).playout(rng)
        return deals * CARDS_PER_DEAL

    match_seed = [seed]

    def engine_cards(n: int) -> int:
        steps = 0
        while steps < n:
            match_seed[0] += 1
            m = Match(rules, match_seed[0])
            deal = m.start_deal()
            while not deal.done:
                m.play(rng.choice(deal.legal_cards()))
                steps += 1
        return steps

    aec = env(rules)
    aec.reset(seed=seed)
    pick = np.random.default_rng(seed)

    def pettingzoo(n: int) -> int:
        steps = 0
        while steps < n:
            obs, _, terminated, truncated, _ = aec.last()
            if terminated or truncated:
                aec.reset()
                continue
            aec.step(int(pick.choice(np.flatnonzero(obs["action_mask"]))))
            steps += 1
        return steps

    gym_env = ElfernEnv("random", rules=rules)
    gym_obs = [gym_env.reset(seed=seed)[0]]

    def gymnasium(n: int) -> int:
        steps = 0
        while steps < n:
            obs, _, done, _, _ = gym_env.step(int(pick.choice(np.flatnonzero(gym_obs[0]["action_mask"]))))
            gym_obs[0] = gym_env.reset()[0] if done else obs
            steps += 1
        return steps

    game = pyspiel.load_game("python_elfern")
    state = [game.new_initial_state()]

    def openspiel(n: int) -> int:
        steps = 0
        while steps < n:
            s = state[0]
            if s.is_terminal():
                state[0] = game.new_initial_state()
            elif s.is_chance_node():
                outcomes = s.chance_outcomes()
                s.apply_action(outcomes[rng.randrange(len(outcomes))][0])
            else:
                s.apply_action(rng.choice(s.legal_actions()))
                if not s.is_terminal() and not s.is_chance_node():
                    s.observation_tensor(s.current_player())
                steps += 1
        return steps

    return {
        "engine_playout": engine_playout,
        "engine_cards": engine_cards,
        "pettingzoo": pettingzoo,
        "gymnasium": gymnasium,
        "openspiel": openspiel,
    }


BATCH = {"engine_playout": 320, "engine_cards": 64}


def run(seconds: float = 5.0, seed: int = 1, progress: Callable[[float], None] | None = None) -> dict:
    """Time every variant for about `seconds` CPU seconds in total; returns the figures as a dict."""
    runners = _runners(seed)
    rates: dict[str, list[float]] = {name: [] for name in runners}
    steps = dict.fromkeys(runners, 0)
    spent = dict.fromkeys(runners, 0.0)
    slice_s = max(seconds, 0.05) / (ROUNDS * len(runners))
    done = 0
    for round_no in range(ROUNDS):
        order = list(runners.items())
        for name, fn in order if round_no % 2 == 0 else order[::-1]:
            taken = 0
            start = time.process_time()
            while True:
                taken += fn(BATCH.get(name, 16))
                elapsed = time.process_time() - start
                if elapsed >= slice_s:
                    break
            steps[name] += taken
            spent[name] += elapsed
            rates[name].append(taken / elapsed)
            done += 1
            if progress:
                progress(done / (ROUNDS * len(runners)))
    rate = {name: statistics.median(r) for name, r in rates.items()}
    base = rate["engine_playout"]
    return {
        "benchmark": "env",
        "cpu_seconds": round(sum(spent.values()), 2),
        "rounds": ROUNDS,
        "rules": "default, one deal per episode",
        "steps_per_s": {name: round(r) for name, r in rate.items()},
        "vs_engine_playout": {name: round(r / base, 4) for name, r in rate.items()},
        "steps": steps,
    }
