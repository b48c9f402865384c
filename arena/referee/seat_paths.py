"""Where a seat's Unix socket lives in a match's directory: one directory per bot, so a sandbox binds
its own seat's socket and nothing else. Apart from `botsocket`, which serves it, so that a match of
stdio bots (which get no socket) never loads gRPC."""

from __future__ import annotations

from pathlib import Path

SOCKET_NAME = "referee.sock"


def seat_socket_path(match_dir: str | Path, seat: int) -> Path:
    """Where seat N's socket lives: `<match dir>/seat<N>/referee.sock`, one directory per bot."""
    return Path(match_dir) / f"seat{seat}" / SOCKET_NAME
