"""`arena bench solver`: exact phase-2 solves per second, the solver against a plain minimax.

Positions are fresh 6-card-per-hand endgames (the first trick of phase 2, leader on move) of random
deals played at random through phase 1, half of them with trumps. On the same positions, in the same
run and interleaved position by position, it times (CPU seconds, `time.process_time`):
- `solver`: `arena.analysis.solve` (alpha-beta, transposition table, move ordering, equivalent
  cards), with the compiled core and with the pure-Python one;
- `minimax`: the plain minimax (no pruning, no table) of the same core, the baseline.
Every answer of the solver is checked against the minimax's. The pure-Python minimax needs some 20 ms
a position, so it runs on every `PY_MINIMAX_EVERY`-th position only. Target: a median of at most 1 ms
per position for the solver (issue 16 §1).
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Callable

from arena.analysis import Position, core, solve
from arena.engine import Deal, Rules

TARGET_MS = 1.0
PY_MINIMAX_EVERY = 8


def fresh_endgames(n: int, seed: int) -> list[Position]:
    """`n` positions at the first trick of phase 2 with 6 cards a hand (every other one with trumps)."""
    rng = random.Random(seed)
    out = []
    for k in range(n):
        deck = list(range(32))
        rng.shuffle(deck)
        deal = Deal(Rules(trumps=bool(k & 1)), k & 1 ^ 1, deck)
        while deal.phase == 1:
            legal = deal.legal_cards()
            deal.play(legal[rng.randrange(len(legal))])
        out.append(Position.from_deal(deal))
    return out


def _minimax(pos: Position, which: str) -> dict[int, int]:
    a, b = pos.hands[pos.leader], pos.hands[1 - pos.leader]
    trump = -1 if pos.trump is None else pos.trump
    future = core.minimax_values(a, b, -1, trump, pos.must_head, which)
    return {c: pos.honours[pos.to_move] + v for c, v in future.items()}


def run(positions: int = 200, seed: int = 1, progress: Callable[[float], None] | None = None) -> dict:
    """Time every variant on the same `positions` endgames; returns the figures as a dict."""
    compiled = core.available()
    pos_list = fresh_endgames(positions, seed)
    variants: dict[str, Callable[[Position], dict[int, int]]] = {
        "solver_python": lambda p: solve(p, core="python"),
    }
    if compiled:
        variants = {
            "solver_c": lambda p: solve(p, core="c"),
            "minimax_c": lambda p: _minimax(p, "c"),
            **variants,
        }
    variants["minimax_python"] = lambda p: _minimax(p, "python")
    times: dict[str, dict[int, float]] = {name: {} for name in variants}  # position index -> CPU s
    disagreements = 0
    clock = time.process_time
    for i, pos in enumerate(pos_list):
        answers = []
        names = list(variants)
        for name in names if i % 2 == 0 else names[::-1]:
            if name == "minimax_python" and i % PY_MINIMAX_EVERY:
                continue
            start = clock()
            answers.append(variants[name](pos))
            times[name][i] = clock() - start
        disagreements += any(a != answers[0] for a in answers)
        if progress:
            progress((i + 1) / len(pos_list))
    figures: dict[str, dict[str, float]] = {}
    for name, by_pos in times.items():
        ts = list(by_pos.values())
        total = sum(ts)
        figures[name] = {
            "positions": len(ts),
            "positions_per_s": round(len(ts) / total, 1) if total else 0.0,
            "median_ms": round(statistics.median(ts) * 1000, 4),
            "p90_ms": round(sorted(ts)[int(0.9 * (len(ts) - 1))] * 1000, 4),
            "max_ms": round(max(ts) * 1000, 3),
        }
    main = "solver_c" if compiled else "solver_python"

    def speedup(solver: str, baseline: str) -> float | None:
        """How many times faster the solver is on the positions both ran (total CPU time)."""
        if solver not in times or baseline not in times:
            return None
        shared = times[baseline].keys()
        return round(sum(times[baseline][i] for i in shared) / sum(times[solver][i] for i in shared), 1)

    return {
        "benchmark": "solver",
        "positions": positions,
        "kind": "fresh 6-card endgames, leader on move, half with trumps",
        "compiled_core": compiled,
        "variants": figures,
        "solver_vs_minimax_c": speedup("solver_c", "minimax_c"),
        "solver_vs_minimax_python": speedup("solver_python", "minimax_python"),
        "disagreements": disagreements,
        "target_median_ms": TARGET_MS,
        "median_ms": figures[main]["median_ms"],
        "met": figures[main]["median_ms"] <= TARGET_MS and disagreements == 0,
    }
