"""Playing strength, measured on the engine in process (duplicate deals: each shuffle twice, seats
swapped). The same comparison through the referee is `arena play ... --deals 200` (see the report
in docs/starter-python.md)."""

from __future__ import annotations

import pytest
import selfplay


@pytest.mark.slow
def test_tactician_clearly_beats_random() -> None:
    share, value = selfplay.duplicate(selfplay.tactician, selfplay.random_player(11), deals=20, seed=5)
    assert share >= 0.75, f"tactician won only {share:.0%} of deals against random"
    assert value > 1.0


@pytest.mark.slow
def test_tactician_beats_greedy() -> None:
    share, value = selfplay.duplicate(selfplay.tactician, selfplay.greedy, deals=20, seed=6)
    assert share >= 0.6, f"tactician won only {share:.0%} of deals against greedy"
    assert value > 0


def test_greedy_beats_random() -> None:
    share, value = selfplay.duplicate(selfplay.greedy, selfplay.random_player(12), deals=40, seed=7)
    assert share > 0.55 and value > 0
