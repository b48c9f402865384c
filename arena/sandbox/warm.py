"""The warm start (issue #18, docs/sandbox.md "Warm start"): a zygote per bot version, forking a fresh child per match.

A zygote is `arena.sdk.zygote` in a bwrap sandbox of the bot's bundle, started like a bot (its own
cgroup leaf, rlimits, seccomp, namespaces) but with no seat socket, no token, and uid 0 inside with
only CAP_SETUID/SETGID/SETPCAP. It imports gRPC and the SDK once. For each match the launcher asks
it to fork; the child drops to the match's own leased uid, the launcher moves it (by the host pid
the kernel reports in SCM_CREDENTIALS) into the match's own cgroup leaf, and only then sends the go
with the seat token, so that everything the bot runs is counted and capped per match. The seat's
socket is hard-linked into the zygote's private directory, bound at /run/arena, so the child finds
it where a cold bot does.

What keeps matches apart: a zygote serves one child at a time (the second seat of a self-play match
launches cold); the zygote runs none of the bot's code; before each fork it checks that the previous
child left nothing (process, /tmp entry, System V IPC object) and is replaced otherwise. Any
failure of the warm path (a broken or dirty zygote, a bundle it cannot warm) gives a cold launch.
"""

from __future__ import annotations

import array
import atexit
import collections
import json
import logging
import os
import select
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arena.sandbox import cgroups, sockets, uids
from arena.sandbox.bundle import Bundle
from arena.sandbox.bwrap_process import BwrapProcess
from arena.sandbox.capture import OutputCapture
from arena.sandbox.launcher import LaunchSpec, Limits

if TYPE_CHECKING:
    from arena.sandbox.bwrap import BwrapLauncher

log = logging.getLogger(__name__)

START_TIMEOUT = 60.0  # seconds for a zygote to import its runtime (a loaded machine)
FORK_TIMEOUT = 10.0  # seconds for a fork and the child's credentials
WARM_IDLE = 600.0  # a zygote unused this long is stopped at the next launch
PYTHONS = ("python", "python3", f"python3.{sys.version_info.minor}")
LINK_NAME = "referee.sock"
#: The warm dirs are named like match dirs, with an owner file, so that `sweep_stale_match_dirs`
#: (arena/workers/match.py, which this layer may not import) removes those of a SIGKILLed worker.
DIR_PREFIX = "arena-match-{pid}-warm-"
OWNER_FILE = "owner"


class ZygoteError(RuntimeError):
    """The zygote cannot serve this launch (broken, dirty, or slow); the launch goes cold."""


def warm_script(bundle: Bundle) -> str | None:
    """The script a zygote can run for `bundle` (`run = ["python3", "SCRIPT.py", ...]`, over gRPC or the
    stdio lines: the SDK speaks both), else None."""
    run = bundle.run
    if bundle.language != "python" or bundle.build or len(run) < 2:
        return None
    if run[0] not in PYTHONS or not run[1].endswith(".py") or run[1].startswith("-"):
        return None
    return run[1]


def _recv_json(sock: socket.socket, timeout: float) -> dict:
    ready, _, _ = select.select([sock], [], [], timeout)
    if not ready:
        raise ZygoteError(f"no answer in {timeout:.0f} s")
    msg = sock.recv(65536)
    if not msg:
        raise ZygoteError("the zygote closed its socket")
    return json.loads(msg)


class _ChildPopen:
    """What BwrapProcess needs of a Popen, for a zygote's child: the zygote reports its wait
    status on the match's channel (as 128 + N for signal N, as bwrap does); EOF without it means
    the zygote, and with it the child, died."""

    def __init__(self, pid: int, chan: socket.socket) -> None:
        self.pid = pid
        self._chan = chan
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            try:
                msg = self._chan.recv(4096, socket.MSG_DONTWAIT)
            except BlockingIOError:
                return None
            except OSError:
                msg = b""
            self.returncode = 128 + signal.SIGKILL  # EOF, or not the zygote's report
            try:
                status = int(json.loads(msg)["exit"]) if msg else None
            except (ValueError, KeyError, TypeError):
                status = None
            if status is not None:
                sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else 0
                self.returncode = 128 + sig if sig else os.WEXITSTATUS(status)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while (rc := self.poll()) is None:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                raise subprocess.TimeoutExpired("zygote child", timeout or 0)
            select.select([self._chan], [], [], left)
        return rc

    def close(self) -> None:
        self._chan.close()


class WarmChild(BwrapProcess):
    """One match's bot, forked by a zygote: a BwrapProcess whose process is the child."""

    def __init__(self, popen: _ChildPopen, capture: OutputCapture, limits: Limits, cg: Any, lease: Any,
                 zygote: Zygote) -> None:  # fmt: skip
        super().__init__(popen, capture, limits, cg, lease, None, child_pid=popen.pid)
        self.zygote = zygote
        self._warm_popen = popen

    def kill(self) -> None:
        super().kill()
        self.zygote.child_done(reported=self._warm_popen.returncode is not None)
        self._warm_popen.close()


class Zygote:
    """One warm process for one bundle and limits; serves one child at a time (so the two seats of
    a self-play match never share a sandbox: the second launches cold)."""

    def __init__(self, launcher: BwrapLauncher, bundle: Bundle, limits: Limits, script: str) -> None:
        self.launcher = launcher
        self.limits = limits
        self.stdio = bundle.protocol == "stdio"  # its children speak lines on pipes, not gRPC
        self.stdio_flag = ["--stdio"] if self.stdio else []
        self.dir = Path(tempfile.mkdtemp(prefix=DIR_PREFIX.format(pid=os.getpid())))
        os.chmod(self.dir, 0o711)  # children connect to the one link by name; nobody lists it
        owner = self.dir / OWNER_FILE
        owner.write_text(f"{os.getpid()} {os.readlink('/proc/self/ns/pid')}\n")
        os.chmod(owner, 0o600)
        ctl, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.ctl = ctl
        self.busy = False
        self.broken = False
        self.served = 0
        self.used = time.monotonic()
        try:
            self.proc = launcher.start(
                bundle, [bundle.run[0], "-P", "-m", "arena.sdk.zygote", script, *self.stdio_flag],
                {"ARENA_ZYGOTE_FD": str(theirs.fileno())}, limits, socket_path=None, label="zygote",
                pass_fds=(theirs.fileno(),), run_dir=self.dir, drop_uid=False,
            )  # fmt: skip
        except BaseException:
            ctl.close()
            shutil.rmtree(self.dir, ignore_errors=True)
            raise
        finally:
            theirs.close()
        try:
            hello = _recv_json(ctl, START_TIMEOUT)
        except (ZygoteError, ValueError) as exc:
            status = self.proc.exit_status()
            self.stop()
            # not its output: it may quote the bundle's script (a SyntaxError), and this goes to the log
            raise ZygoteError(f"the zygote did not start ({exc}; exit status {status})") from None
        self.threads = int(hello.get("threads", 0))

    def alive(self) -> bool:
        return not self.broken and self.proc.exit_status() is None

    def fork(self, spec: LaunchSpec, env: dict[str, str]) -> WarmChild:
        """A fresh child for this match, in the match's own cgroup leaf and uid, told to play."""
        lease = uids.acquire(self.launcher.state_dir / "uids")
        cg = cgroups.create(spec.limits.memory, spec.limits.pids, spec.label)
        link = self.dir / LINK_NAME
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        out_r, out_w = os.pipe2(os.O_CLOEXEC)
        # a stdio bot's protocol pipes: (its stdin, ours to write), (ours to read, its stdout)
        pipes = [*os.pipe2(os.O_CLOEXEC), *os.pipe2(os.O_CLOEXEC)] if self.stdio else []
        handed = False
        try:
            if cg is None:
                raise ZygoteError("no cgroup for the match")
            if not self.stdio:
                sockets.make_private(spec.socket_path, lease.uid)
                link.unlink(missing_ok=True)
                os.link(spec.socket_path, link)  # EXDEV when the match dir is on another file system
            mine.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
            theirs_protocol = (0, 3) if pipes else ()  # the child's ends, in `pipes`
            fds = array.array("i", [theirs.fileno(), out_w, *(pipes[i] for i in theirs_protocol)])
            self.ctl.sendmsg(
                [json.dumps({"op": "fork", "uid": lease.uid}).encode()],
                [(socket.SOL_SOCKET, socket.SCM_RIGHTS, fds.tobytes())],
            )
            theirs.close()
            os.close(out_w)
            out_w = -1
            for i in theirs_protocol:
                os.close(pipes[i])
                pipes[i] = -1
            reply = _recv_json(self.ctl, FORK_TIMEOUT)
            if "forked" not in reply:  # what was left is not logged: /tmp names are the bot's text
                raise ZygoteError(f"the sandbox was not clean: {len(reply.get('dirty') or ())} things left")
            self.threads = int(reply.get("threads", 0))
            ready, _, _ = select.select([mine], [], [], FORK_TIMEOUT)
            if not ready:
                raise ZygoteError("the child did not report")
            _msg, anc, _flags, _addr = mine.recvmsg(4096, socket.CMSG_SPACE(struct.calcsize("3i")))
            pids = [struct.unpack("3i", data[:12])[0] for lvl, kind, data in anc
                    if lvl == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS]  # fmt: skip
            if not pids:
                raise ZygoteError("the child sent no credentials")
            pid = pids[0]  # its pid on the host: the kernel translated it
            for procs in cg.procs_files():
                Path(procs).write_text(str(pid))  # before the go: the bot runs only inside its leaf
            mine.send(json.dumps({"env": env}).encode())
            handed = True
        finally:
            if not handed:
                self.broken = True
                for s in (mine, theirs):
                    s.close()
                for fd in (out_r, out_w, *pipes):
                    if fd >= 0:
                        os.close(fd)
                if cg is not None:
                    cg.remove()
                lease.release()
                link.unlink(missing_ok=True)
        self.served += 1
        capture = OutputCapture(os.fdopen(out_r, "rb", buffering=0), spec.limits.log_bytes)
        child = WarmChild(_ChildPopen(pid, mine), capture, spec.limits, cg, lease, self)
        if pipes:
            child.protocol_pipes = (
                os.fdopen(pipes[1], "wb", buffering=0),
                os.fdopen(pipes[2], "rb", buffering=0),
            )
        return child

    def child_done(self, reported: bool) -> None:
        (self.dir / LINK_NAME).unlink(missing_ok=True)
        if not reported:
            self.broken = True  # its wait status never came: do not trust it with another match
        self.used = time.monotonic()
        self.busy = False

    def stop(self) -> None:
        """End the zygote and its sandbox (and any child: the pid namespace goes with it)."""
        self.broken = True
        self.ctl.close()
        self.proc.kill()
        shutil.rmtree(self.dir, ignore_errors=True)


Key = tuple[str, tuple[str, ...], str, Limits]  # bundle path, run, protocol, limits


class WarmPool:
    """A launcher's zygotes: at most `max_zygotes`, least recently used stopped first, idle ones
    stopped after WARM_IDLE, all stopped by `close()` and at exit (and with this process: each
    zygote is launched like a bot, `spawn.guarded` and bwrap --die-with-parent)."""

    def __init__(self, launcher: BwrapLauncher, max_zygotes: int = 4) -> None:
        self.launcher = launcher
        self.max_zygotes = max_zygotes
        self._zygotes: collections.OrderedDict[Key, Zygote] = collections.OrderedDict()
        self._failed: set[Key] = set()  # could not start: not retried by every launch
        self._lock = threading.Lock()
        self.cold_fallbacks = 0
        atexit.register(_close_ref, weakref.ref(self))

    def zygotes(self) -> list[Zygote]:
        with self._lock:
            return list(self._zygotes.values())

    def zygote_for(self, bundle_path: Path | str) -> Zygote | None:
        """The live zygote of one bundle, if any (whatever its limits)."""
        with self._lock:
            return next((z for k, z in self._zygotes.items() if k[0] == str(bundle_path)), None)

    def launch(self, spec: LaunchSpec, env: dict[str, str]) -> WarmChild | None:
        """A warm child for this launch, or None: then the caller launches cold."""
        script = warm_script(spec.bundle)
        if script is None:
            return None
        key: Key = (str(spec.bundle.path), spec.bundle.run, spec.bundle.protocol, spec.limits)
        for _attempt in range(2):  # a dirty or broken zygote is replaced once, then cold
            zygote = self._take(key, spec, script)
            if zygote is None:
                break
            try:
                return zygote.fork(spec, env)
            except (ZygoteError, OSError, ValueError) as exc:
                log.warning("warm start of %s failed, replacing its zygote: %s", spec.label, exc)
                self._drop(key, zygote)
        self.cold_fallbacks += 1
        return None

    def _take(self, key: Key, spec: LaunchSpec, script: str) -> Zygote | None:
        with self._lock:
            self._expire()
            zygote = self._zygotes.get(key)
            if zygote is not None and not zygote.alive():
                self._zygotes.pop(key)
                zygote.stop()
                zygote = None
            if zygote is None:
                if key in self._failed or not self._room():
                    return None
                try:
                    zygote = Zygote(self.launcher, spec.bundle, spec.limits, script)
                except (ZygoteError, OSError) as exc:
                    log.warning("no zygote for %s: %s", spec.bundle.name, exc)
                    self._failed.add(key)
                    return None
                self._zygotes[key] = zygote
            if zygote.busy:
                return None
            zygote.busy = True
            self._zygotes.move_to_end(key)
            return zygote

    def _room(self) -> bool:
        """Make room for one more zygote by stopping the least recently used idle one."""
        if len(self._zygotes) < self.max_zygotes:
            return True
        for key, zygote in self._zygotes.items():
            if not zygote.busy:
                self._zygotes.pop(key)
                zygote.stop()
                return True
        return False

    def _expire(self) -> None:
        now = time.monotonic()
        for key in [k for k, z in self._zygotes.items() if not z.busy and now - z.used > WARM_IDLE]:
            self._zygotes.pop(key).stop()

    def _drop(self, key: Key, zygote: Zygote) -> None:
        with self._lock:
            if self._zygotes.get(key) is zygote:
                self._zygotes.pop(key)
        zygote.stop()

    def retire(self, bundle_path: Path | str) -> int:
        """Stop the idle zygotes of one bundle (a retired or suspended version); returns how many."""
        with self._lock:
            keys = [k for k, z in self._zygotes.items() if k[0] == str(bundle_path) and not z.busy]
            for key in keys:
                self._zygotes.pop(key).stop()
            return len(keys)

    def close(self) -> None:
        with self._lock:
            zygotes = list(self._zygotes.values())
            self._zygotes.clear()
        for zygote in zygotes:
            zygote.stop()


def _close_ref(ref: weakref.ref[WarmPool]) -> None:
    pool = ref()
    if pool is not None:
        pool.close()
