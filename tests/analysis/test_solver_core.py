"""The compiled core against brute force and against the pure-Python path (identical answers)."""

from __future__ import annotations

import random

import pytest
from analysis_helpers import VARIANTS, core_args, random_position

from arena.analysis import core, solve
from arena.engine import Deal, IllegalMove, Rules


@pytest.fixture(scope="module", autouse=True)
def built_core() -> None:
    """The core is built by `make setup`; build it here too when this checkout has not been set up."""
    import subprocess
    import sys

    if not core.available():
        subprocess.run(
            [sys.executable, str(core.HERE.parent.parent / "scripts" / "build_core.py")], check=True
        )
        core._tried = False
    assert core.available(), "the compiled core does not load"


def test_solver_agrees_with_brute_force_minimax_on_10000_endgames() -> None:
    """10,000 random phase-2 positions, every variant, 1 to 6 cards, leader or follower on move: the
    alpha-beta solver's value for every legal card equals the plain minimax's, and the cards it
    answers for are exactly the engine's legal cards."""
    rng = random.Random(2026)
    seen_sizes = set()
    for _ in range(10_000):
        pos = random_position(rng, max_cards=6)
        args = core_args(pos)
        values = core.root_values(*args, core="c")
        assert values == core.minimax_values(*args, core="c"), pos.describe()
        seen_sizes.add(pos.hands[1 - pos.leader].bit_count())
    assert seen_sizes == {1, 2, 3, 4, 5, 6}


def test_engine_legal_cards_are_the_answers() -> None:
    from analysis_helpers import random_endgame

    rng = random.Random(8)
    for _ in range(300):
        deal = random_endgame(rng, rng.choice(VARIANTS))
        if not deal.done:
            assert sorted(solve(deal, core="c")) == deal.legal_cards()


def test_compiled_and_pure_python_give_identical_answers() -> None:
    rng = random.Random(99)
    for _ in range(600):
        pos = random_position(rng, max_cards=6)
        args = core_args(pos)
        assert core.root_values(*args, core="c") == core.root_values(*args, core="python"), pos.describe()


def test_the_two_minimax_implementations_agree() -> None:
    """The brute force itself, checked across languages on small hands."""
    rng = random.Random(4)
    for _ in range(400):
        pos = random_position(rng, max_cards=4)
        args = core_args(pos)
        assert core.minimax_values(*args, core="c") == core.minimax_values(*args, core="python")


def test_compiled_playouts_follow_the_engine_rules() -> None:
    """A compiled random deal, replayed card by card through the engine: every card is legal there
    and the honours agree."""
    rng = random.Random(6)
    for k in range(300):
        rules = VARIANTS[k % len(VARIANTS)]
        deck = list(range(32))
        rng.shuffle(deck)
        dealer = k & 1
        h0, plays = core.playout_trace(deck, dealer, rules.hand_size, rules.trumps, rules.must_head_phase2, k)
        deal = Deal(rules, dealer, deck)
        for card in plays:
            try:
                deal.play(card)
            except IllegalMove as exc:  # pragma: no cover - the failure message
                pytest.fail(f"deal {k}: the core played an illegal card: {exc}")
        assert deal.done and deal.honours[0] == h0


def test_compiled_playouts_are_balanced() -> None:
    n = 200_000
    assert abs(core.playouts(1, n) / n - 10) < 0.05  # seat 0 deals and leads alternately
    assert core.playouts(5, 1000, 4, True, True) == core.playouts(5, 1000, 4, True, True)


def test_auto_core_falls_back_to_python_when_the_library_is_missing(monkeypatch, tmp_path) -> None:
    monkeypatch.setattr(core, "LIBRARY", tmp_path / "missing.so")
    monkeypatch.setattr(core, "_tried", False)
    monkeypatch.setattr(core, "_lib", None)
    pos = random_position(random.Random(1), max_cards=3)
    assert core.root_values(*core_args(pos), core="auto") == core.root_values(*core_args(pos), core="python")
    with pytest.raises(core.CoreUnavailable, match="build_core.py"):
        core.root_values(*core_args(pos), core="c")
    monkeypatch.undo()
    core._tried = False
    assert core.available()


def test_rules_variants_are_all_covered() -> None:
    assert {(r.trumps, r.must_head_phase2) for r in VARIANTS} == {(a, b) for a in (0, 1) for b in (0, 1)}
    assert {r.hand_size for r in VARIANTS} == {4, 5, 6}
    assert Rules() in VARIANTS
