"""Run one match between two bundles: a fresh referee with a private Unix socket per seat, two launched bots.

`play_match` is what `arena play` and the ladder's workers call. It is safe to call from several
threads at once (all matches share the process's referee event loop, each seat with its own server
and socket) and from several processes (use the "spawn" start method: gRPC does not survive fork).
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.engine import Rules
from arena.proto import replay_pb2
from arena.proto.codec import encode_record
from arena.referee import MatchSpec, TimeControl, stdio_seat
from arena.referee.loop import run_sync
from arena.referee.match import MatchRunner
from arena.referee.seat_paths import seat_socket_path
from arena.sandbox.bundle import Bundle
from arena.sandbox.failed import DeadProcess
from arena.sandbox.launcher import LaunchSpec, Limits
from arena.sandbox.stdio_pipes import STARTED_LINE


@dataclass(frozen=True)
class MatchOutcome:
    match_id: str
    winner: int | None  # seat, or None for a draw or a void match
    void: bool
    verdicts: tuple[str, str]
    verdict_details: tuple[str, str]
    lines: tuple[int, int]
    flags: tuple[int, int]
    deals_played: int
    end_reason: str  # COMPLETED, VERDICT or SHUTDOWN
    failed_at: tuple[int, int, int]  # (deal, trick, turn id) where a verdict struck; zeros if none
    replay_bytes: bytes  # the framed, compressed MatchRecord (arena.proto.codec)
    record: replay_pb2.MatchRecord


MATCH_DIR_PREFIX = "arena-match-"
# A bot's stdout and stderr, kept in the record's private logs (source "output") after every match:
OUTPUT_KEEP_BYTES = 64 * 1024  # the last 64 KiB the launcher captured (it holds at most Limits.log_bytes)
OUTPUT_KEEP_LINES = 2000  # and of those at most the last 2000 lines
OUTPUT_LINE_BYTES = 1024  # each cut to this many bytes, as Log lines are
_MATCH_DIR = re.compile(re.escape(MATCH_DIR_PREFIX) + r"(\d+)-")


OWNER_FILE = "owner"  # in each match dir: "<pid> <pid namespace>" of the process that made it


def _match_dir_prefix() -> str:
    """Temp dirs carry their owner's pid, so that a later play_match can tell a stale one."""
    return f"{MATCH_DIR_PREFIX}{os.getpid()}-"


def _pid_namespace() -> str:
    try:
        return os.readlink("/proc/self/ns/pid")
    except OSError:
        return "?"


def _claim_match_dir(path: Path) -> None:
    (path / OWNER_FILE).write_text(f"{os.getpid()} {_pid_namespace()}\n")


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, under another uid
        return True
    return True


def sweep_stale_match_dirs(root: str | Path | None = None) -> list[Path]:
    """Remove match temp dirs whose owning process is gone (a referee that was SIGKILLed never ran
    its cleanup). Only dirs whose owner file names this pid namespace are judged (a /tmp shared with
    another container holds pids we cannot check); dirs of live processes stay, and a reused pid only
    delays the sweep. Returns what was removed."""
    root = Path(root if root is not None else tempfile.gettempdir())
    removed: list[Path] = []
    try:
        entries = list(root.iterdir())
    except OSError:
        return removed
    namespace = _pid_namespace()
    for entry in entries:
        m = _MATCH_DIR.match(entry.name)
        if m is None:
            continue
        pid = int(m.group(1))
        try:
            if entry.is_symlink() or not entry.is_dir():
                continue
            owner = (entry / OWNER_FILE).read_text().split()
        except (OSError, UnicodeDecodeError):
            continue  # no owner file: not ours to judge
        if owner != [str(pid), namespace] or _pid_alive(pid):
            continue
        shutil.rmtree(entry, ignore_errors=True)
        if not entry.exists():
            removed.append(entry)
    return removed


def keep_output(record: replay_pb2.MatchRecord, seat: int, handle: Any) -> None:
    """Append what a killed bot wrote (its capture is drained by kill()) to stdout and stderr to the record's private logs, capped:
    the last OUTPUT_KEEP_BYTES and OUTPUT_KEEP_LINES, each line cut at OUTPUT_LINE_BYTES, with one
    line first that says how much was left out."""
    output = getattr(handle, "output", None)  # the launchers' processes have it; a remote seat has none
    if output is None:
        return
    raw = output().encode("utf-8", errors="replace")
    total = max(len(raw), int(getattr(handle, "output_bytes", 0) or 0))
    kept = raw[-OUTPUT_KEEP_BYTES:]
    lines = kept.decode("utf-8", errors="replace").splitlines()
    if len(raw) > len(kept) and lines:
        lines = lines[1:]  # the first line was cut in the middle
    lines = lines[-OUTPUT_KEEP_LINES:]
    shown = sum(len(x.encode()) + 1 for x in lines)
    if total > shown and lines:
        lines.insert(0, f"[{total - shown} earlier bytes of output not kept]")
    for line in lines:
        text = line.encode()[:OUTPUT_LINE_BYTES].decode("utf-8", errors="ignore")
        record.logs.add(seat=seat, text=text, source="output")


def play_match(
    bundles: tuple[Bundle | None, Bundle | None],
    *,
    rules: Rules,
    seed: int,
    time_control: TimeControl,
    launcher: Any,
    match_id: str | None = None,
    on_event: Callable[[dict[str, Any]], None] | None = None,
    pause_idle: bool = False,
    limits: Limits | None = None,
    tcp: str | None = None,
    on_ready: Callable[[tuple[list[str], list[str]], tuple[str, str]], None] | None = None,
    salt: bytes | None = None,
    names: tuple[tuple[str, str], tuple[str, str]] | None = None,
) -> MatchOutcome:
    """Play one match to its end and return the outcome; the bots are always killed afterwards.

    Each seat has its own socket, `<match dir>/seat<N>/referee.sock` (see arena/referee/botsocket.py).
    A `None` bundle is a remote seat: nobody launches it, and `on_ready(addresses, tokens)` is
    called once the referee listens, with each seat's own addresses (`addresses[seat]`, Unix first;
    `tcp="127.0.0.1:0"` gives every remote seat a TCP listener too), so that the caller can hand the
    address and token to a bot it runs itself. `names` are the registered (name, version) pairs
    recorded for the seats (default: each bundle's); `salt` that of the deck commitment (default:
    the referee draws one).
    """
    return run_sync(
        play_match_async(
            bundles, rules=rules, seed=seed, time_control=time_control, launcher=launcher, match_id=match_id,
            on_event=on_event, pause_idle=pause_idle, limits=limits, tcp=tcp, on_ready=on_ready, salt=salt,
            names=names,
        )
    )  # fmt: skip


async def play_match_async(
    bundles: tuple[Bundle | None, Bundle | None],
    *,
    rules: Rules,
    seed: int,
    time_control: TimeControl,
    launcher: Any,
    match_id: str | None = None,
    on_event: Callable[[dict[str, Any]], None] | None = None,
    pause_idle: bool = False,
    limits: Limits | None = None,
    tcp: str | None = None,
    on_ready: Callable[[tuple[list[str], list[str]], tuple[str, str]], None] | None = None,
    salt: bytes | None = None,
    names: tuple[tuple[str, str], tuple[str, str]] | None = None,
) -> MatchOutcome:
    """The same, for callers already inside the referee loop."""
    loop = asyncio.get_running_loop()
    names = names or tuple(("", "") if b is None else (b.name, b.version) for b in bundles)  # type: ignore[assignment]
    kwargs = {"match_id": match_id} if match_id else {}
    spec = MatchSpec(rules=rules, seed=seed, time_control=time_control, names=names, salt=salt, **kwargs)  # type: ignore[arg-type]
    await loop.run_in_executor(None, sweep_stale_match_dirs)  # off the loop: /tmp may be large
    with tempfile.TemporaryDirectory(prefix=_match_dir_prefix()) as tmp:
        os.chmod(tmp, 0o755)  # sandboxed bots may run under another uid
        _claim_match_dir(Path(tmp))
        runner = MatchRunner(spec, pause_idle=pause_idle, on_event=on_event)
        # One socket per seat, each in its own private folder, serving that seat's token only; none
        # for a stdio bot whose launcher hands its pipes to this process (arena/referee/stdio_seat.py).
        direct = [b is not None and b.protocol == "stdio" and getattr(launcher, "direct_stdio", False)
                  for b in bundles]  # fmt: skip
        if not all(direct):  # a match of stdio bots never loads gRPC
            from arena.referee.botsocket import BotSocket
        sockets = [
            None if direct[seat] else
            BotSocket(runner, seat, unix_path=seat_socket_path(tmp, seat), tcp=tcp if bundle is None else None)
            for seat, bundle in enumerate(bundles)
        ]  # fmt: skip
        handles: list[Any] = [None, None]
        seats: list[asyncio.Future[None]] = []
        try:
            for sock in sockets:
                if sock is not None:
                    await sock.start()
            if on_ready is not None:
                addresses = [s.addresses if s is not None else [] for s in sockets]
                on_ready((addresses[0], addresses[1]), runner.tokens)
            for seat, bundle in enumerate(bundles):
                if bundle is None:
                    continue
                launch = LaunchSpec(
                    bundle=bundle, socket_path=seat_socket_path(tmp, seat),
                    env={"ARENA_TOKEN": runner.tokens[seat]}, limits=limits or Limits(),
                    label=f"{spec.match_id}-seat{seat}",
                )  # fmt: skip
                try:
                    handles[seat] = await loop.run_in_executor(None, launcher.launch, launch)
                except Exception as exc:  # a missing interpreter, a bad run line, a sandbox error
                    handles[seat] = DeadProcess(f"could not start {bundle.run!r}: {exc}")
                pipes = getattr(handles[seat], "protocol_pipes", None)
                if pipes is not None:  # a stdio bot (a failed build's handle has none: it never joins)
                    context = await stdio_seat.open_context(*pipes)
                    seats.append(asyncio.ensure_future(
                        stdio_seat.serve(runner, seat, context, bundle.name, bundle.version, STARTED_LINE)
                    ))  # fmt: skip
            runner.handles = handles
            result = await runner.run()
        finally:
            for h in handles:
                if h is not None:
                    await loop.run_in_executor(None, h.kill)
            for task in seats:  # over (or cancelled): each closes its bot's pipes
                task.cancel()
            await asyncio.gather(*seats, return_exceptions=True)
            await asyncio.gather(*(sock.stop(0.5) for sock in sockets if sock is not None))
    record = runner.record
    assert record is not None
    for seat, h in enumerate(handles):
        keep_output(record, seat, h)
    rr = record.result
    return MatchOutcome(
        match_id=spec.match_id,
        winner=None if result.winner < 0 else result.winner,
        void=result.void,
        verdicts=(result.verdicts[0], result.verdicts[1]),
        verdict_details=(result.details[0], result.details[1]),
        lines=(result.lines[0], result.lines[1]),
        flags=(result.flags[0], result.flags[1]),
        deals_played=result.deals_played,
        end_reason=result.end_reason,
        failed_at=(rr.failed_deal, rr.failed_trick, rr.failed_turn_id),
        replay_bytes=encode_record(record),
        record=record,
    )
