"""The Python SDK over the stdio lines (`protocol = "stdio"`, as the Python samples ship): the same
`run()` and hooks as over gRPC, whole matches in the real bwrap sandbox (cold and from a warm
zygote) and with the local launcher. A bot's `print()` lands in its log and never in the protocol,
its `log()` becomes a log line, and the bot never loads gRPC."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from arena.engine import Rules
from arena.referee import TimeControl
from arena.sandbox.bundle import load_bundle
from arena.sandbox.bwrap import BwrapLauncher
from arena.sandbox.local import LocalLauncher
from arena.sandbox.warm import WarmChild
from arena.workers.match import MatchOutcome, play_match
from tests.sandbox.sandbox_support import warm_launcher

REPO = Path(__file__).resolve().parents[2]
GREEDY = REPO / "sample_bots" / "python" / "greedy"

#: Counts every hook (an assertion that fails crashes the bot: the verdict says so), prints to stdout
#: and to fd 1 below Python on every turn, and logs each turn.
COUNTING = """\
import os, sys
from arena.sdk import Bot, cards, run

class Counting(Bot):
    def __init__(self):
        self.deals = self.deal_ends = self.tricks = self.turns = 0
        self.last = 0

    def on_deal_start(self, deal):
        self.deals += 1
        assert deal.deal_number == self.deals and len(deal.hand) == 6
        self.last = 0

    def on_trick(self, result):
        self.tricks += 1
        assert result.trick.number == self.last + 1
        self.last = result.trick.number

    def on_deal_end(self, result):
        self.deal_ends += 1
        assert self.last == 16

    def on_match_end(self, result):
        print("END", self.deals, self.deal_ends, self.tricks, self.turns, "grpc" in sys.modules, flush=True)

    def play(self, view):
        self.turns += 1
        assert view.trick_number == self.last + 1
        print("a print, not a card")
        os.write(1, b"a raw write to fd 1\\n")
        self.log(f"turn {view.turn_id}")
        return cards.by_rank(view.legal)[0]

run(Counting())
"""


def _bundle(root: Path) -> Path:
    root.mkdir(parents=True)
    (root / "bot.py").write_text(COUNTING)
    (root / "bot.toml").write_text(
        'name = "counting"\nlanguage = "python"\nprotocol = "stdio"\nrun = ["python3", "bot.py"]\n'
    )
    os.chmod(root, 0o755)
    return root


def _play(launcher, bot: Path, seed: int) -> MatchOutcome:
    return play_match(
        (load_bundle(bot), load_bundle(GREEDY)), rules=Rules(max_deals=3), seed=seed,
        time_control=TimeControl(startup=60.0, move=10.0, bank=60.0), launcher=launcher,
    )  # fmt: skip


def _check(out: MatchOutcome) -> None:
    assert out.verdicts == ("OK", "OK"), out.verdict_details
    output = [e.text for e in out.record.logs if e.seat == 0 and e.source == "output"]
    logged = [e.text for e in out.record.logs if e.seat == 0 and e.source != "output"]
    turns = sum(1 for d in out.record.deals for p in d.plays if p.seat == 0)
    text = "\n".join(output)
    assert f"END 3 3 48 {turns} False" in text  # every hook once per event; gRPC never imported
    assert text.count("a print, not a card") == turns and text.count("a raw write to fd 1") == turns
    assert len(logged) == turns and logged[0].startswith("turn ")


def test_a_stdio_sdk_bot_plays_with_the_local_launcher(tmp_path) -> None:
    with pytest.warns(UserWarning):
        launcher = LocalLauncher()
    _check(_play(launcher, _bundle(tmp_path / "counting"), seed=3))


@pytest.mark.parametrize("warm", [False, True], ids=["cold", "warm"])
def test_a_stdio_sdk_bot_plays_in_the_bwrap_sandbox(tmp_path, warm) -> None:
    launcher = warm_launcher() if warm else BwrapLauncher(warm=False)
    handles = []

    class Keeper:
        name = launcher.name
        direct_stdio = True

        def launch(self, spec):
            handles.append(launcher.launch(spec))
            return handles[-1]

        def build(self, bundle, limits):
            return launcher.build(bundle, limits)

    bot = _bundle(tmp_path / "counting")
    try:
        outs = [_play(Keeper(), bot, seed) for seed in (3, 4)]
    finally:
        if launcher.warm is not None:
            launcher.warm.close()
    for out in outs:
        _check(out)
    if warm:  # both seats of both matches from zygotes, one zygote per bundle serving both matches
        assert all(isinstance(h, WarmChild) for h in handles)
        assert len({h.zygote for h in handles}) == 2


def test_the_launchers_set_what_the_sdk_reads() -> None:
    from arena.sandbox.launcher import STDIO_ENV as launchers
    from arena.sdk.bot import STDIO_ENV as sdk

    assert launchers == sdk == {"ARENA_PROTOCOL": "stdio"}
