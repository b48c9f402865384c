"""Referee fixtures: bundles of the misbehaving test bots, a match runner on real processes, and an
in-process referee server on a real Unix socket and TCP port for raw-gRPC clients."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from referee_support import FAST, bundle, local_launcher, play

from arena.referee import MatchSpec, TimeControl
from arena.referee.loop import run_sync
from arena.referee.server import RefereeServer


class Referee:
    """An in-process RefereeServer (Unix socket + TCP) on the referee loop, for raw clients."""

    def __init__(self, tmp: Path) -> None:
        self.server = RefereeServer(unix_path=tmp / "referee.sock", tcp="127.0.0.1:0", management=True)
        run_sync(self.server.start())
        self.stopped = False

    def address(self, transport: str) -> str:
        unix, tcp = self.server.addresses
        return unix if transport == "unix" else tcp

    def new_match(self, **spec_kw):
        """Register and start a match; returns its runner (tokens in runner.tokens)."""

        async def create():
            runner = self.server.create_match(MatchSpec(**spec_kw))
            self.server.start_match(runner)
            return runner

        return run_sync(create())

    def wait(self, runner, timeout: float = 60.0):
        async def wait():
            await runner.done.wait()

        run_sync(wait(), timeout)
        return runner.result

    def stop(self, grace: float = 1.0) -> None:
        if not self.stopped:
            self.stopped = True
            run_sync(self.server.stop(grace), 30)


@pytest.fixture
def play_bots():
    """`play_bots(a, b, seed=..., tc=...)`: a real match between two bundles via play_match."""
    return play


@pytest.fixture
def fast_tc() -> TimeControl:
    return FAST


@pytest.fixture
def launch_bot():
    """`launch_bot(name, socket_path, token)`: a test bot's real process (local launcher), killed after."""
    from arena.sandbox.launcher import LaunchSpec

    started = []

    def launch(name: str, socket_path: Path, token: str):
        spec = LaunchSpec(
            bundle=bundle(name), socket_path=socket_path, env={"ARENA_TOKEN": token}, label=name
        )
        started.append(local_launcher().launch(spec))
        return started[-1]

    yield launch
    for handle in started:
        handle.kill()


@pytest.fixture
def referee(tmp_path):
    ref = Referee(tmp_path)
    yield ref
    ref.stop(0.2)


def in_thread(fn, *args) -> threading.Thread:
    """Run a client in a daemon thread (the referee loop has its own thread)."""
    t = threading.Thread(target=fn, args=args, daemon=True)
    t.start()
    return t
