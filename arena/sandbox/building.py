"""The build step every launcher shares: once per bundle content, in a staged copy (never the
author's folder), with success recorded so later launches skip it. Launchers differ only in how they
run the command, which they pass in."""

from __future__ import annotations

import contextlib
import contextvars
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from arena.sandbox.bundle import Bundle, cached_build_log, record_build, restore_owner, staged_for_build
from arena.sandbox.languages import build_limits
from arena.sandbox.launcher import BotProcess, Limits

#: Who is watching a build as it runs (`arena bots submit`): called with each new piece of its
#: output, and with "" at least every HEARTBEAT seconds so a quiet build still shows it is alive.
_WATCHER: contextvars.ContextVar[Callable[[str], None] | None] = contextvars.ContextVar(
    "arena_build_watcher", default=None
)
HEARTBEAT = 5.0
#: Bytes a build's staged copy may hold while the build runs (the room left in its owner's disk
#: quota, `arena.service.quota`); None: no bound. Looked at every DISK_POLL seconds, so a build can
#: pass it by at most what it writes in that time before it is stopped.
_ROOM: contextvars.ContextVar[int | None] = contextvars.ContextVar("arena_build_room", default=None)
DISK_POLL = 1.0


class LiveLines:
    """A build's output pieces as the whole lines shown live (`arena bots submit`, locally and over
    SubmitBotLive): at most LIMIT lines, each cut to WIDTH characters; the line after the last shown
    comes back as None, once (the whole log is kept with the version). Memory stays bounded: a line
    that never ends is kept to WIDTH characters."""

    LIMIT = 200
    WIDTH = 300

    def __init__(self) -> None:
        self.lines = 0
        self.partial = ""

    def feed(self, text: str) -> list[str | None]:
        *whole, partial = (self.partial + text).split("\n")
        self.partial = partial[: self.WIDTH]
        out: list[str | None] = []
        for line in whole:
            self.lines += 1
            if self.lines <= self.LIMIT:
                out.append(line[: self.WIDTH])
            elif self.lines == self.LIMIT + 1:
                out.append(None)
        return out


@contextlib.contextmanager
def watching_builds(show: Callable[[str], None]) -> Iterator[None]:
    """Within this block, sandboxed builds report their output to `show` while they run."""
    token = _WATCHER.set(show)
    try:
        yield
    finally:
        _WATCHER.reset(token)


@contextlib.contextmanager
def building_within(room: int | None) -> Iterator[None]:
    """Within this block, a sandboxed build whose staged copy grows past `room` bytes is stopped."""
    token = _ROOM.set(room)
    try:
        yield
    finally:
        _ROOM.reset(token)


def tree_bytes(root: Path) -> int:
    """Bytes of the files under `root` (links not followed); 0 when it does not exist."""
    total = 0
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            try:
                total += os.lstat(os.path.join(dirpath, name)).st_size
            except OSError:  # removed meanwhile
                pass
    return total


def _report(proc: BotProcess, shown: int, last_beat: float) -> tuple[int, float]:
    """Pass the output written since `shown` bytes to the watcher; (bytes shown, time of last call)."""
    show = _WATCHER.get()
    if show is None:
        return shown, last_beat
    total = getattr(proc, "output_bytes", 0)
    now = time.monotonic()
    if total > shown:
        text = proc.output()  # type: ignore[attr-defined]
        show(text[-(total - shown) :] if total - shown < len(text) else text)
        return total, now
    if now - last_beat >= HEARTBEAT:
        show("")
        return shown, now
    return shown, last_beat


def build_once(
    bundle: Bundle, limits: Limits, run: Callable[[Bundle, Limits], tuple[bool, str]]
) -> tuple[bool, str]:
    """(ok, log) of the bundle's `build`, running `run(staged_bundle, limits)` only when not yet built;
    the limits are raised to the language's build needs (languages.py)."""
    if not bundle.build:
        return True, ""
    staged = staged_for_build(bundle)
    cached = cached_build_log(staged)
    if cached is not None:
        return True, cached
    ok, log = run(staged, build_limits(bundle.language, limits))
    if ok:
        record_build(staged, log)
    return ok, log


def await_build(
    proc: BotProcess, bundle: Bundle, limits: Limits, *, restore: bool, poll: float
) -> tuple[bool, str]:
    """Wait for a sandboxed build process (at most `limits.build_seconds`), kill it, give the staged
    files back to us when the build ran under another uid, and explain a failure at the log's end."""
    deadline = time.monotonic() + limits.build_seconds
    shown, beat = 0, time.monotonic()
    room, look, over = _ROOM.get(), time.monotonic() + DISK_POLL, False
    try:
        while proc.exit_status() is None and time.monotonic() < deadline:
            time.sleep(poll)
            shown, beat = _report(proc, shown, beat)
            if room is not None and time.monotonic() >= look:
                look = time.monotonic() + DISK_POLL
                if over := tree_bytes(bundle.path) > room:
                    break
    finally:  # Ctrl-C during the build: the build dies with it, and the caller cleans up
        timed_out = proc.exit_status() is None and not over
        proc.kill()  # which also reads its output to the end
        if restore:
            restore_owner(bundle.path)
    _report(proc, shown, beat)  # the last lines, once the capture has read them all
    log = proc.output()  # type: ignore[attr-defined]  # every sandboxed process keeps its whole capture
    status = proc.exit_status()
    if over:
        log += f"\n[arena] build stopped: its output passed {room} bytes, the room left in the disk quota\n"
    elif timed_out:
        log += f"\n[arena] build timed out after {limits.build_seconds}s\n"
    elif status != 0:
        verdict = proc.failure_verdict()
        log += f"\n[arena] build exited with status {status}" + (f" ({verdict})" if verdict else "") + "\n"
    return not timed_out and not over and status == 0, log
