"""The seat token reaches the bot through its environment, never through any process's argv.

/proc/PID/cmdline is readable by every local user; /proc/PID/environ only by the same uid and
root. A real sandboxed match runs while a scanner reads every process's cmdline over and over."""

from __future__ import annotations

import dataclasses
import os
import threading
import warnings
from pathlib import Path

import pytest

from arena.engine import Rules
from arena.referee import TimeControl
from arena.sandbox.bundle import load_bundle
from arena.workers.match import play_match

REPO = Path(__file__).resolve().parents[2]


class ProcScanner(threading.Thread):
    """Reads /proc/*/cmdline (and the environ of the bots' processes) until stopped."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.stop = threading.Event()
        self.cmdlines: dict[int, set[bytes]] = {}
        self.bot_environs: list[bytes] = []
        self.rounds = 0

    def run(self) -> None:
        me = os.getpid()
        while not self.stop.is_set():
            for entry in os.listdir("/proc"):
                if not entry.isdigit() or int(entry) == me:
                    continue
                try:
                    with open(f"/proc/{entry}/cmdline", "rb") as fh:
                        cmd = fh.read()
                except OSError:
                    continue
                self.cmdlines.setdefault(int(entry), set()).add(cmd)
                if cmd.split(b"\0")[-2:-1] == [b"bot.py"]:
                    try:
                        with open(f"/proc/{entry}/environ", "rb") as fh:
                            self.bot_environs.append(fh.read())
                    except OSError:
                        pass
            self.rounds += 1


@pytest.mark.parametrize("kind", ["bwrap", "local"])
def test_no_seat_token_in_any_argv_during_a_sandboxed_match(kind, bwrap):
    if kind == "bwrap":
        launcher = bwrap
    else:
        from arena.sandbox.local import LocalLauncher

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            launcher = LocalLauncher(warn=False)
    tokens: list[str] = []
    scanner = ProcScanner()
    scanner.start()
    # a gRPC bot: a stdio bot gets no token at all (tests/referee/test_stdio_seat.py)
    bot = dataclasses.replace(load_bundle(REPO / "sample_bots" / "python" / "random"), protocol="grpc")
    try:
        out = play_match(
            (bot, bot), rules=Rules(max_deals=2), seed=5, time_control=TimeControl(startup=30),
            launcher=launcher, on_ready=lambda _addresses, toks: tokens.extend(toks),
        )  # fmt: skip
    finally:
        scanner.stop.set()
        scanner.join(10)
    assert out.verdicts == ("OK", "OK"), out.verdict_details
    assert len(tokens) == 2 and all(len(t) >= 16 for t in tokens)
    seen = [c for cmds in scanner.cmdlines.values() for c in cmds]
    # the scan really saw the match: the bots' processes (and, sandboxed, the bwrap that holds them)
    bot_pids = [p for p, cmds in scanner.cmdlines.items() if any(c.endswith(b"bot.py\0") for c in cmds)]
    assert len(bot_pids) >= 2, f"the scan never saw both bots ({scanner.rounds} rounds)"
    if kind == "bwrap":
        assert any(b"bwrap" in c and b"--unshare-pid" in c for c in seen)
    for token in tokens:
        leaks = [c.replace(b"\0", b" ")[:200] for c in seen if token.encode() in c]
        assert not leaks, f"seat token on a command line: {leaks}"
        # and it did reach a bot, through the environment
        assert any(f"ARENA_TOKEN={token}".encode() in env for env in scanner.bot_environs)
