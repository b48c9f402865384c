"""The stdio bridge: lets a bot without gRPC play by reading and writing one JSON object per line.

    python3 -m arena.sdk.stdio_bridge -- <the bot's run command>

joins the referee over gRPC (ARENA_ADDRESS, ARENA_TOKEN) and starts the bot as its child. Every
RefereeMessage becomes one line on the bot's stdin: `{"type": "<the message's name in
referee.proto>", ...that message's fields...}`, with the field names of referee.proto. The bot
answers a `turn_request` line with `{"card": "AS"}` on stdout and may write `{"log": "text"}` lines
at any time. docs/stdio.md is the full manual; the translation itself is `arena.proto.lines`.

Who runs it: a bot author against `arena play BOT --remote`, and the Docker launcher inside a
`protocol = "stdio"` bot's container. The bwrap and local launchers do not: there the referee's
process speaks the lines to the bot's pipes itself (`arena.referee.stdio_seat`), with no Python
process per bot.

Failures stay the referee's to judge: a line that is not JSON, or a reply without a card, is sent
as an Action carrying the bad text, which the referee rejects with PROTOCOL_ERROR; a bot that exits
early ends the bridge, which the arena sees as a crash or a disconnect. Whatever the bot writes to
stderr goes to the bridge's stderr, which the sandbox keeps in the bot's log.
"""

from __future__ import annotations

import argparse
import os
import queue
import subprocess
import sys
import threading
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import grpc

from arena.proto import referee_pb2 as pb
from arena.proto import referee_pb2_grpc as pb_grpc
from arena.proto.lines import MAX_LINE, bot_message, raw_bot_message, referee_line
from arena.proto.protocol import PROTOCOL_VERSION
from arena.sdk.bot import STDIO_ENV

EXIT_GRACE = 2.0  # seconds the bot gets to exit after its stdin closes
__all__ = ["MAX_LINE", "Bridge", "bot_message", "main", "referee_line"]


def _manifest_identity(cwd: Path) -> tuple[str, str]:
    """The bot's name and version from the bundle's bot.toml, when the bridge runs in a bundle."""
    try:
        data = tomllib.loads((cwd / "bot.toml").read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
        return "stdio-bot", ""
    return str(data.get("name") or "stdio-bot"), str(data.get("version") or "")


class Bridge:
    """One match: the gRPC stream on one side, the bot's pipes on the other."""

    def __init__(self, address: str, token: str, command: list[str], name: str, version: str) -> None:
        self.address = address
        self.token = token
        self.command = command
        self.name = name
        self.version = version
        self.outbox: queue.Queue[pb.BotMessage | None] = queue.Queue()
        self.turn = 0
        self.finished = threading.Event()
        self.bot_gone = threading.Event()

    def _requests(self) -> Iterator[pb.BotMessage]:
        while (message := self.outbox.get()) is not None:
            yield message

    def _read_bot(self, stdout: IO[bytes], call: grpc.RpcContext) -> None:
        """Forward the bot's lines; when its stdout closes before the match ends, cancel."""
        while True:
            raw = stdout.readline(MAX_LINE + 1)
            if not raw:
                break
            self.outbox.put(raw_bot_message(raw, self.turn))
        self.bot_gone.set()
        if not self.finished.is_set():
            call.cancel()

    def run(self) -> int:
        env = {**os.environ, **STDIO_ENV}  # the Python SDK then speaks these lines too
        proc = subprocess.Popen(
            self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0, env=env
        )
        assert proc.stdin is not None and proc.stdout is not None
        self.outbox.put(
            pb.BotMessage(
                join=pb.Join(
                    token=self.token,
                    bot_name=self.name[:64],
                    bot_version=self.version[:64],
                    protocol_version=PROTOCOL_VERSION,
                )
            )
        )
        channel = grpc.insecure_channel(self.address)
        call = pb_grpc.RefereeStub(channel).Play(self._requests())
        reader = threading.Thread(target=self._read_bot, args=(proc.stdout, call), daemon=True)
        reader.start()
        code = 0
        try:
            for message in call:
                if message.WhichOneof("msg") == "turn_request":
                    self.turn = message.turn_request.turn_id
                if message.WhichOneof("msg") == "match_result":
                    self.finished.set()
                try:
                    proc.stdin.write(referee_line(message).encode())
                    proc.stdin.flush()
                except (BrokenPipeError, OSError):
                    pass  # the bot is gone; the reader notices and cancels
                if self.finished.is_set():
                    break
        except grpc.RpcError as exc:
            if not self.finished.is_set():
                code = 1
                if self.bot_gone.is_set():
                    print(
                        f"stdio bridge: the bot exited (code {proc.wait()}) before the match ended",
                        file=sys.stderr,
                    )
                else:
                    print(f"stdio bridge: the referee stream ended: {exc.code().name}", file=sys.stderr)
        finally:
            self._shut(proc)
            self.outbox.put(None)
            channel.close()
        return code

    @staticmethod
    def _shut(proc: subprocess.Popen[bytes]) -> None:
        try:
            assert proc.stdin is not None
            proc.stdin.close()
        except OSError:
            pass
        try:
            proc.wait(timeout=EXIT_GRACE)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def main(argv: list[str] | None = None) -> int:
    """`python3 -m arena.sdk.stdio_bridge [--name N] [--version V] -- COMMAND...`"""
    parser = argparse.ArgumentParser(
        prog="python3 -m arena.sdk.stdio_bridge",
        description="Play a stdio bot (one JSON object per line) against the arena's referee over gRPC.",
    )
    parser.add_argument("--name", help="bot name sent in Join (default: bot.toml's name)")
    parser.add_argument("--version", dest="bot_version", help="bot version sent in Join")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="the bot's command, after --")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give the bot's command after --, e.g. -- ./bot")
    address, token = os.environ.get("ARENA_ADDRESS"), os.environ.get("ARENA_TOKEN")
    if not address or not token:
        print(
            "stdio bridge: ARENA_ADDRESS and ARENA_TOKEN must be set (the arena sets them)", file=sys.stderr
        )
        return 2
    name, version = _manifest_identity(Path.cwd())
    bridge = Bridge(address, token, command, args.name or name, args.bot_version or version)
    try:
        return bridge.run()
    except OSError as exc:
        print(f"stdio bridge: cannot start the bot {command[0]!r}: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
