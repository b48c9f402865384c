"""The output capture: what a bot wrote just before it exited is in the tail that judges it."""

from __future__ import annotations

import io
import threading

from arena.sandbox.capture import SETTLE, OutputCapture


class LateStream(io.RawIOBase):
    """A pipe whose reader gets the bot's last words only after a delay (a loaded machine's reader
    thread, scheduled late), then EOF."""

    def __init__(self, data: bytes, delay: float) -> None:
        self._data, self._delay, self._gate = data, delay, threading.Event()

    def readable(self) -> bool:
        return True

    def read1(self, size: int = -1) -> bytes:
        self._gate.wait(self._delay)  # nothing sets it: the wait always lasts `delay`
        data, self._data = self._data, b""
        return data


def test_the_tail_of_an_exited_bot_waits_for_its_last_words() -> None:
    capture = OutputCapture(LateStream(b"crash: api_key=LAST\n", SETTLE / 5), 4096)
    assert "api_key=LAST" in capture.tail(exited=True)


def test_the_whole_output_of_an_exited_bot_waits_for_its_last_words() -> None:
    # `arena sandbox check` and the build watcher read the whole output once the process is gone:
    # a probe's one line of findings came late on a loaded machine, and the check read nothing.
    capture = OutputCapture(LateStream(b'{"findings": 1}\n', SETTLE / 5), 4096)
    assert capture.text(exited=True) == '{"findings": 1}\n'


def test_a_running_bots_tail_does_not_wait() -> None:
    capture = OutputCapture(LateStream(b"later\n", SETTLE * 4), 4096)
    assert capture.tail() == ""  # still running: what has arrived so far, at once
    assert capture.text() == ""
    capture.join(SETTLE * 8)
    assert capture.tail() == "later"
