"""Drain a bot's stdout/stderr without ever blocking it, keeping only a capped tail.

A bot that floods its output must neither fill the disk nor cost the referee a CPU, so a thread
reads the pipe to EOF and keeps the last `cap` bytes; `dropped` counts what was discarded. Once a
bot has written FLOOD_FACTOR times the cap, the reader slows down (one 64 KiB read per 10 ms,
about 6 MB/s): the flooding bot then blocks on its own full pipe, which costs only itself.
"""

from __future__ import annotations

import threading
import time
from typing import IO

FLOOD_FACTOR = 16
FLOOD_PAUSE = 0.01
SETTLE = 0.5  # seconds to wait, once, for the reader to reach EOF after the bot exited


class OutputCapture:
    def __init__(self, stream: IO[bytes], cap: int) -> None:
        self._stream = stream
        self._cap = max(1024, cap)
        self._buf = bytearray()
        self._lock = threading.Lock()
        self.total = 0
        self._settled = False
        self._thread = threading.Thread(target=self._drain, name="bot-output", daemon=True)
        self._thread.start()

    def _drain(self) -> None:
        read = getattr(self._stream, "read1", self._stream.read)
        try:
            while chunk := read(65536):
                with self._lock:
                    self.total += len(chunk)
                    self._buf += chunk
                    if len(self._buf) > self._cap:
                        del self._buf[: len(self._buf) - self._cap]
                if self.total > FLOOD_FACTOR * self._cap:
                    time.sleep(FLOOD_PAUSE)
        except (OSError, ValueError):
            pass
        finally:
            try:
                self._stream.close()
            except OSError:
                pass

    @property
    def dropped(self) -> int:
        with self._lock:
            return self.total - len(self._buf)

    def text(self, exited: bool = False) -> str:
        """All that is kept; `exited`: the bot is gone, so first `settle` (else its last words may
        still be in the pipe, e.g. the one line of findings a probe prints before it exits)."""
        if exited:
            self.settle()
        with self._lock:
            data = bytes(self._buf)
        return data.decode("utf-8", errors="replace")

    def settle(self) -> None:
        """Once the bot has exited, let the reader take what is left in the pipe (its last words: a
        crash's message, an OOM marker) before anyone judges by the tail; bounded, and only once, since
        a child the bot left behind may hold the pipe open."""
        if not self._settled:
            self._settled = True
            self._thread.join(SETTLE)

    def tail(self, max_lines: int = 20, exited: bool = False) -> str:
        """The last lines; `exited`: the bot is gone, so first `settle`."""
        lines = self.text(exited).splitlines()
        return "\n".join(lines[-max_lines:])

    def join(self, timeout: float = 2.0) -> None:
        self._thread.join(timeout)
