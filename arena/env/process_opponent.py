"""A bundle in any language as the single-agent environment's opponent: its `run` command started in
its folder, speaking the stdio lines (docs/stdio.md) on its pipes, as the `local` launcher starts it:
NOT sandboxed, so only for bundles you trust (your own). Bundles with a build step, or that speak gRPC,
are refused: build them with `arena play` first, or give a stdio bundle. Python bundles with a `bot.py`
play in-process instead (arena/env/opponents.py), which is faster.
"""

from __future__ import annotations

import os
import select
import subprocess
from collections.abc import Callable
from pathlib import Path

from arena.engine import Match
from arena.env.opponents import BotOpponent, Opponent, OpponentError, bot_class
from arena.proto import referee_pb2 as pb
from arena.proto.lines import bot_message, referee_line
from arena.sandbox.bundle import BundleError, load_bundle

#: what the launchers add to a stdio bot's environment (arena.sandbox.launcher.STDIO_ENV)
STDIO_ENV = {"ARENA_PROTOCOL": "stdio"}
MOVE_SECONDS = 10.0  # the longest wait for a card (the arena's default move time plus its bank)

OpponentMaker = Callable[[Match, int], Opponent]


class ProcessOpponent(Opponent):
    """A stdio bundle's process in one seat of one match; `close()` ends it."""

    def __init__(self, run: tuple[str, ...], folder: Path, match: Match, seat: int, label: str) -> None:
        self.label = label
        self.proc = subprocess.Popen(
            list(run), cwd=folder, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            env={**os.environ, **STDIO_ENV},
        )  # fmt: skip
        super().__init__(match, seat)

    def __str__(self) -> str:
        return self.label

    def _send(self, msg: pb.RefereeMessage) -> None:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(referee_line(msg).encode())
            self.proc.stdin.flush()
        except BrokenPipeError:
            raise OpponentError(f"opponent {self.label} exited (status {self.proc.poll()})") from None

    def _ask(self, msg: pb.RefereeMessage) -> str | None:
        self._send(msg)
        out = self.proc.stdout
        assert out is not None
        while True:  # log lines may come first
            ready, _, _ = select.select([out], [], [], MOVE_SECONDS)
            if not ready:
                raise OpponentError(f"opponent {self.label} gave no card within {MOVE_SECONDS:g} s")
            line = out.readline()
            if not line:
                raise OpponentError(f"opponent {self.label} exited (status {self.proc.wait()})")
            answer = bot_message(line.decode(errors="replace"), self.turn_id)
            if answer.HasField("action"):
                return answer.action.card

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        for pipe in (self.proc.stdin, self.proc.stdout):
            if pipe is not None:
                pipe.close()


def opponent_maker(source: str | Path) -> OpponentMaker:
    """How to seat `source` for each episode: a Python sample bot by name or a folder with a `bot.py`
    in-process; any other bundle (folder or archive) that speaks the stdio lines, as a process."""
    where = Path(source)
    if (where / "bot.py").is_file() or not where.exists():
        make_bot = bot_class(source)
        return lambda match, seat: BotOpponent(make_bot, match, seat)
    try:
        bundle = load_bundle(where)
    except BundleError as exc:
        raise OpponentError(f"opponent {source}: {exc}") from None
    if bundle.protocol != "stdio":
        raise OpponentError(
            f"opponent {source} speaks {bundle.protocol}; a bundle plays Elfern-v0 over the stdio lines "
            '(protocol = "stdio" in bot.toml, docs/stdio.md)'
        )
    if bundle.build:
        raise OpponentError(
            f"opponent {source} has a build step; Elfern-v0 runs a bundle as it is: build it and give "
            "the folder with the result, or a bundle without `build`"
        )
    return lambda match, seat: ProcessOpponent(bundle.run, bundle.path, match, seat, bundle.name)
