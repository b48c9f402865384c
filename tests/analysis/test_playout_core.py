"""Noisy greedy playouts to phase 2, then phase 2 solved: the compiled core and its pure-Python twin play
the same cards from the same seed, and with no noise they are the SDK's greedy play-forward exactly."""

from __future__ import annotations

import random

from analysis_helpers import VARIANTS

from arena.analysis.playout import SplitMix, eps32, greedy, playout_value
from arena.analysis.solver import solve
from arena.analysis.worlds import Knowledge, World, sample_world
from arena.engine import Match, Rules


def _worlds(rules: Rules, seed: int, count: int) -> list[World]:
    """Worlds from one seat's view at every stage of a random deal, phase 2 and the trick's middle too."""
    out = []
    for i in range(count):
        m = Match(rules, seed * 100 + i)
        deal = m.start_deal()
        rng = random.Random(seed * 100 + i)
        for _ in range(i % 31):
            m.play(rng.choice(deal.legal_cards()))
        out.append(sample_world(Knowledge.from_view(m.view(deal.to_move), rules), rng))
    return out


def _greedy_to_the_end(world: World, seat: int) -> int:
    line = world.copy()
    while not line.done and (line.stock or line.table is not None):
        line.play(greedy(line))
    if line.done:
        return line.honours[seat]
    best = max(solve(line.position()).values())
    return best if line.to_move == seat else 20 - best


def test_the_core_and_its_twin_play_the_same_playouts() -> None:
    for v, rules in enumerate(VARIANTS):
        for world in _worlds(rules, v, 40):
            before = (list(world.hands), list(world.stock), world.table, list(world.honours))
            for seed in (0, 7, 2**63 + 5):
                for epsilon in (0.0, 0.3, 1.0):
                    for seat in (0, 1):
                        c = playout_value(world, seat, seed, epsilon, "c")
                        assert c == playout_value(world, seat, seed, epsilon, "python"), (rules, seed)
                        assert 0 <= c <= 20
            assert (list(world.hands), list(world.stock), world.table, list(world.honours)) == before


def test_without_noise_a_playout_is_greedy_play_then_the_exact_solve() -> None:
    for v, rules in enumerate(VARIANTS):
        for world in _worlds(rules, v + 10, 40):
            for seat in (0, 1):
                assert playout_value(world, seat, 3, 0.0, "c") == _greedy_to_the_end(world, seat)


def test_the_seed_sets_the_noise() -> None:
    """Early in a deal, playouts with random cards spread over several values; the same seed repeats."""
    world = _worlds(Rules(), 1, 1)[0]
    values = [playout_value(world, 0, seed, 0.3) for seed in range(60)]
    assert len(set(values)) >= 4
    assert values == [playout_value(world, 0, seed, 0.3) for seed in range(60)]


def test_splitmix_is_the_reference_sequence() -> None:
    """SplitMix64 from seed 0 (Steele, Lea and Flood 2014; the sequence Java's SplittableRandom and
    most ports give): 0xE220A8397B1DCDAF first, as the high and then the low 32-bit word."""
    rng = SplitMix(0)
    assert (rng.next32(), rng.next32()) == (0xE220A839, 0x7B1DCDAF)
    assert eps32(0.0) == 0 and eps32(1.0) == 2**32 - 1 and eps32(0.5) == 2**31
