"""The worked example of docs/training.md: a linear softmax policy over the 32 cards, trained with
REINFORCE in self-play on the PettingZoo environment `elfern_v0`, then measured on the Gymnasium
`Elfern-v0` against a sample bot. NumPy only, so the weights are a small `.npz` that a bot evaluates
without any training framework. tests/env/test_env_example.py runs it at a small scale.

    python -m arena.env.example_reinforce --episodes 2000 --out policy.npz
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import numpy.typing as npt

from arena.env import encoding
from arena.env.gym_env import ElfernEnv
from arena.env.pettingzoo_env import env

Weights = npt.NDArray[np.float64]


def policy(weights: Weights, observation: npt.NDArray[np.float32], mask: npt.NDArray[np.int8]) -> Weights:
    """The probability of each card: a softmax of `weights @ observation` over the legal cards only."""
    logits = weights @ observation.astype(np.float64)
    logits = np.where(mask.astype(bool), logits, -np.inf)
    logits -= logits.max()
    p = np.exp(logits)
    return p / p.sum()


def train(episodes: int, seed: int = 0, rate: float = 0.01) -> Weights:
    """Self-play REINFORCE: both seats share the weights; each card's log-probability gradient is
    scaled by its seat's return for the episode (the difference in lines)."""
    rng = np.random.default_rng(seed)
    weights = np.zeros((encoding.NUM_CARDS, encoding.SIZE))
    game = env()
    for episode in range(episodes):
        game.reset(seed=seed * 1_000_003 + episode)
        trace: dict[str, list[tuple[npt.NDArray[np.float32], int, Weights]]] = {a: [] for a in game.agents}
        returns = dict.fromkeys(game.agents, 0.0)
        for agent in game.agent_iter():
            obs, reward, terminated, truncated, _ = game.last()
            returns[agent] += reward
            if terminated or truncated:
                game.step(None)
                continue
            p = policy(weights, obs["observation"], obs["action_mask"])
            card = int(rng.choice(encoding.NUM_CARDS, p=p))
            trace[agent].append((obs["observation"], card, p))
            game.step(card)
        for agent, steps in trace.items():
            for observation, card, p in steps:
                grad = -np.outer(p, observation)  # d log p(card) / d weights, for the softmax
                grad[card] += observation
                weights += rate * returns[agent] * grad
    return weights


def evaluate(weights: Weights, opponent: str = "random", episodes: int = 50, seed: int = 1) -> float:
    """The mean difference in lines per episode of the greedy policy (its likeliest card) against
    `opponent`, seats alternating."""
    game = ElfernEnv(opponent, seat=None)
    total = 0.0
    for episode in range(episodes):
        obs, _ = game.reset(seed=seed * 1_000_003 + episode)
        done = False
        while not done:
            card = int(np.argmax(policy(weights, obs["observation"], obs["action_mask"])))
            obs, reward, done, _, _ = game.step(card)
            total += reward
    return total / episodes


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--episodes", type=int, default=2000, help="self-play episodes (one deal each)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("policy.npz"), help="where to write the weights")
    parser.add_argument("--against", default="random", help="the sample bot to evaluate against")
    args = parser.parse_args(argv)
    weights = train(args.episodes, args.seed)
    np.savez_compressed(
        args.out, weights=weights.astype(np.float32), encoding_version=encoding.ENCODING_VERSION
    )
    print(f"wrote {args.out}; lines per deal against {args.against}: {evaluate(weights, args.against):+.3f}")


if __name__ == "__main__":
    main()
