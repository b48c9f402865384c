"""The search bots, pimc and ismcts: clean sandboxed matches through the real referee, the same card for
the same seed and view, and exact play once the stock is empty."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from arena.analysis.solver import analyse
from arena.analysis.worlds import Knowledge
from arena.bench.strength import fill_turn, load_bot
from arena.engine import Match, Rules
from arena.engine.view import build_view
from arena.proto import referee_pb2 as pb
from arena.referee import TimeControl
from arena.referee.convert import rules_to_proto
from arena.sandbox.bundle import load_bundle
from arena.sdk import View

BOTS = Path(__file__).resolve().parents[2] / "sample_bots" / "python"
SEARCH = {"pimc": ("pimc_search", "LEAVES", 12), "ismcts": ("ismcts_search", "ITERATIONS", 40)}


@pytest.fixture
def small_budget(monkeypatch):
    """The search modules with a small budget: these tests check behaviour, not strength."""

    def search(name: str):
        load_bot(name)  # puts the bundle's folder on sys.path
        module, budget, small = SEARCH[name]
        mod = __import__(module)
        monkeypatch.setattr(mod, budget, small)
        return mod.choose

    return search


def _positions(rules: Rules, seed: int, every: int = 3):
    rng = random.Random(seed)
    match = Match(rules, seed)
    deal = match.start_deal()
    n = 0
    while not deal.done:
        if n % every == 0:
            yield match
        n += 1
        match.play(rng.choice(deal.legal_cards()))


@pytest.mark.slow
def test_pimc_and_ismcts_play_a_clean_sandboxed_match() -> None:
    from arena.sandbox.bwrap import BwrapLauncher, SandboxUnavailable
    from arena.workers.match import play_match

    try:
        launcher = BwrapLauncher()
    except SandboxUnavailable as exc:
        pytest.skip(f"bwrap sandbox unavailable: {exc}")
    out = play_match(
        (load_bundle(BOTS / "pimc"), load_bundle(BOTS / "ismcts")), rules=Rules(max_deals=1, trumps=True),
        seed=3, time_control=TimeControl(startup=20.0), launcher=launcher, match_id="search-bots",
    )  # fmt: skip
    assert out.verdicts == ("OK", "OK"), out.verdict_details
    assert out.end_reason == "COMPLETED" and out.deals_played == 1
    for seat in (0, 1):
        assert len([p for d in out.record.deals for p in d.plays if p.seat == seat]) == 16


@pytest.mark.parametrize("name", sorted(SEARCH))
def test_same_seed_same_card(name: str, small_budget) -> None:
    choose = small_budget(name)
    rules = Rules(trumps=True)
    for match in _positions(rules, 8, every=5):
        deal = match.deal
        k = Knowledge.from_view(build_view(match, deal.to_move), rules)
        card = choose(k, random.Random(11))
        assert card in deal.legal_cards()
        assert choose(k, random.Random(11)) == card


@pytest.mark.parametrize("name", sorted(SEARCH))
def test_the_bot_repeats_itself_on_the_same_view(name: str, small_budget) -> None:
    """Two copies with generators seeded alike (as the SDK seeds `self.rng` from bot_seed) agree."""
    small_budget(name)
    make = load_bot(name)
    rules = Rules()
    for match in _positions(rules, 2, every=9):
        seat = match.deal.to_move
        req = pb.TurnRequest(turn_id=1)
        fill_turn(req, match, seat)
        view = View.from_request(req)
        bots = [make() for _ in range(2)]
        for bot in bots:
            bot.seat, bot.rules, bot.rng = seat, rules_to_proto(rules), random.Random(5)
        card = bots[0].play(view)
        assert card in view.legal and bots[1].play(view) == card


@pytest.mark.parametrize("name", sorted(SEARCH))
def test_phase_two_is_played_exactly(name: str, small_budget) -> None:
    choose = small_budget(name)
    for rules in (Rules(), Rules(trumps=True, must_head_phase2=True)):
        for match in _positions(rules, 5, every=1):
            deal = match.deal
            if deal.stock_count == 0:
                best = analyse(deal).best
                k = Knowledge.from_view(build_view(match, deal.to_move), rules)
                assert choose(k, random.Random(1)) == min(best)
