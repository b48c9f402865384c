"""A running bwrap-sandboxed bot: status, verdicts, CPU time, pause/resume and cleanup.

Split from `bwrap.py` (which builds the command line and starts it); see docs/sandbox.md.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
import weakref
from typing import Any

from arena.sandbox import procstat, uids
from arena.sandbox.capture import OutputCapture
from arena.sandbox.cgroups import BotCgroup
from arena.sandbox.launcher import CPU_LIMIT, MEMORY_LIMIT, PIDS_LIMIT, Limits

PIDS_MARKERS = ("Resource temporarily unavailable", "can't start new thread", "fork: retry")
OOM_MARKERS = (
    "MemoryError",
    "Cannot allocate memory",
    "std::bad_alloc",
    "heap out of memory",
    "OutOfMemoryError",
)
#: CPU seconds a SIGSTOP-paused bot may still be charged (signal delivery, accounting lag) before
#: the launcher concludes that a process escaped the pause and switches to the freezer.
ESCAPE_CPU = 0.005
#: CPU seconds a bot may be charged while not on move before it counts as pondering and is really
#: paused from then on (docs/sandbox.md, fair clocks). Not less: besides finishing its answer and
#: reading a DealResult, the cgroup reports the last part of the bot's own move only at its next
#: scheduler tick or context switch, up to a tick (4 ms at HZ 250, 10 ms at HZ 100) per thread.
PONDER_CPU = 0.010


class _CpuWatchdog:
    """Kills bots whose cgroup has used up the match's CPU budget (RLIMIT_CPU is per process, so a
    bot could otherwise spread its spinning over several processes)."""

    def __init__(self) -> None:
        self._procs: weakref.WeakSet[BwrapProcess] = weakref.WeakSet()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def watch(self, proc: BwrapProcess) -> None:
        with self._lock:
            self._procs.add(proc)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="arena-cpu-watchdog", daemon=True)
                self._thread.start()

    def _run(self) -> None:
        while True:
            time.sleep(0.2)
            with self._lock:
                procs = list(self._procs)
            for proc in procs:
                proc._check_cpu()


_watchdog = _CpuWatchdog()


class BwrapProcess:
    """A running sandboxed bot (satisfies `arena.referee.BotHandle`)."""

    def __init__(
        self,
        popen: subprocess.Popen[bytes] | Any,  # or a warm child's stand-in (warm.py)
        capture: OutputCapture,
        limits: Limits,
        cgroup: BotCgroup | None,
        lease: uids.UidLease | None,
        status_fd: int | None,
        child_pid: int | None = None,
    ) -> None:
        self._popen = popen
        self._capture = capture
        self._limits = limits
        self._cgroup = cgroup
        self._lease = lease
        self._status_fd: int | None = status_fd
        self._status_buf = b""
        self._child_pid = child_pid  # else read from bwrap's status fd
        self._lock = threading.Lock()
        self._killed = False
        self._cpu_exceeded = False
        self._final: dict[str, float] | None = None
        self._paused: str | None = None
        self._freeze_always = False
        self._cpu_at_pause: float | None = None
        self.escaped_pause = False  # a process outside the bot's group kept running while paused
        self.pondered = False  # it used CPU while not on move: paused for real from then on
        self.uid = lease.uid if lease else os.getuid()
        self.protocol_pipes: tuple[Any, Any] | None = None  # a stdio bot's (stdin, stdout), for the referee
        if cgroup is not None and cgroup.has("cpu"):
            _watchdog.watch(self)

    @property
    def pid(self) -> int:
        return self._popen.pid

    @property
    def cgroup(self) -> BotCgroup | None:
        return self._cgroup

    # --- status -------------------------------------------------------------------------------
    def exit_status(self) -> int | None:
        rc = self._popen.poll()
        if rc is not None and rc > 128:
            return -(rc - 128)  # bwrap reports a child killed by signal N as 128 + N
        return rc

    def child_pid(self) -> int | None:
        """The host pid of the bundle's process (from bwrap's status fd)."""
        if self._child_pid is None and self._status_fd is not None:
            try:
                while chunk := os.read(self._status_fd, 4096):
                    self._status_buf += chunk
            except BlockingIOError:
                pass
            except OSError:
                return None
            for doc in self._status_buf.decode(errors="replace").replace("}", "}\n").splitlines():
                try:
                    data = json.loads(doc)
                except ValueError:
                    continue
                if "child-pid" in data:
                    self._child_pid = int(data["child-pid"])
        return self._child_pid

    def _counters(self) -> dict[str, float]:
        if self._final is not None:
            return self._final
        cg = self._cgroup
        if cg is None:
            return {"oom_kills": 0, "pids_refused": 0, "failcnt": 0}
        return {
            "oom_kills": cg.oom_kills(),
            "pids_refused": cg.pids_refused(),
            "failcnt": cg.memory_failcnt(),
        }

    def failure_verdict(self) -> str | None:
        if self._cpu_exceeded:
            return CPU_LIMIT
        counters = self._counters()
        if counters["oom_kills"] > 0:
            return MEMORY_LIMIT
        status = self._status_at_death()
        if status == -signal.SIGXCPU:
            return CPU_LIMIT
        if status == -signal.SIGKILL and (self.cpu_seconds() or 0.0) >= self._limits.cpu_seconds - 0.5:
            return CPU_LIMIT  # the RLIMIT_CPU hard limit
        if counters["pids_refused"] > 0:
            return PIDS_LIMIT
        if status is not None and status != 0:
            tail = self._capture.tail(40, exited=True)
            # memory.failcnt is not used: it also counts page-cache reclaim that harmed nobody.
            if any(marker in tail for marker in OOM_MARKERS):
                return MEMORY_LIMIT
            no_pids_cgroup = self._cgroup is None or not self._cgroup.has("pids")
            if no_pids_cgroup and any(marker in tail for marker in PIDS_MARKERS):
                return PIDS_LIMIT  # RLIMIT_NPROC refused a fork or thread (hosts without cgroups)
        return None

    def _status_at_death(self) -> int | None:
        """The exit status, unless the bot was still alive when kill() ended it."""
        if self._killed and self._final is not None and self._final.get("killed_alive"):
            return None
        return self.exit_status()

    def output_tail(self, max_lines: int = 20) -> str:
        return self._capture.tail(max_lines, exited=self.exit_status() is not None)

    def output(self) -> str:
        return self._capture.text(exited=self.exit_status() is not None)

    @property
    def output_bytes(self) -> int:
        """Everything the bot wrote, including what the cap dropped."""
        return self._capture.total

    def cpu_seconds(self) -> float | None:
        if self._final is not None and "cpu" in self._final:
            return self._final["cpu"]
        if self._cgroup is not None:
            value = self._cgroup.cpu_seconds()
            if value is not None:
                return value
        pid = self.child_pid()
        return None if pid is None else procstat.cpu_seconds(pid)

    def _check_cpu(self) -> None:
        if self._killed or self._cpu_exceeded:
            return
        used = self.cpu_seconds()
        if used is not None and used > self._limits.cpu_seconds:
            self._cpu_exceeded = True
            self._signal_all(signal.SIGKILL)

    # --- control ------------------------------------------------------------------------------
    def _signal_all(self, sig: int) -> None:
        if self._cgroup is not None and self._cgroup.pids():
            self._cgroup.signal_all(sig)
            return
        for pgid in (self.child_pid(), self._popen.pid):
            if pgid:
                try:
                    os.killpg(pgid, sig)
                except (ProcessLookupError, PermissionError):
                    pass

    def pause(self) -> None:
        """Stop the bot while it is not on move, once it has shown that it computes then. Until
        then (and most bots never do: they wait for their next turn) pausing is only watching: the
        cgroup's CPU is read here and at `resume()`, which costs far less than stopping and waking
        every thread of the bot; more than PONDER_CPU in between, and it is paused from the next turn
        on. Then the fast path: SIGSTOP to the bot's process group. If CPU is still charged to the
        cgroup while so paused, something left the group (setsid) to keep thinking; from then on
        this bot is paused with the cgroup freezer, which is atomic but costs a few hundred
        microseconds per call (docs/sandbox.md)."""
        if self._killed or self._paused is not None or self._popen.poll() is not None:
            return
        if not self.pondered and self._cgroup is not None:
            watched = self._cgroup.cpu_seconds()
            if watched is not None:
                self._paused, self._cpu_at_pause = "watch", watched
                return
        group = self.child_pid()
        if not self._freeze_always and group:
            try:
                os.killpg(group, signal.SIGSTOP)
                self._paused = "signal"
                self._cpu_at_pause = self.cpu_seconds()
                return
            except (ProcessLookupError, PermissionError):
                pass
        if self._cgroup is not None and self._cgroup.freeze():
            self._paused = "freezer"
        else:
            self._signal_all(signal.SIGSTOP)
            self._paused = "all"

    def resume(self) -> None:
        how, self._paused = self._paused, None
        if how is None or self._killed:
            return
        if how == "watch":
            used = self.cpu_seconds()
            if used is not None and self._cpu_at_pause is not None and used - self._cpu_at_pause > PONDER_CPU:
                self.pondered = True
        elif how == "freezer" and self._cgroup is not None:
            self._cgroup.thaw()
        elif how == "signal":
            used = self.cpu_seconds()
            group = self.child_pid()
            if group:
                try:
                    os.killpg(group, signal.SIGCONT)
                except (ProcessLookupError, PermissionError):
                    pass
            if used is not None and self._cpu_at_pause is not None and used - self._cpu_at_pause > ESCAPE_CPU:
                self._freeze_always = True
                self.escaped_pause = True
        else:
            self._signal_all(signal.SIGCONT)

    def kill(self) -> None:
        with self._lock:
            if self._killed:
                return
            self._killed = True
        alive = self._popen.poll() is None
        cg = self._cgroup
        if cg is not None:
            cg.kill_all()
        self._signal_all(signal.SIGKILL)
        try:
            os.killpg(self._popen.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            self._popen.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        self._capture.join()
        final: dict[str, float] = dict(self._counters())
        final["killed_alive"] = 1.0 if alive else 0.0
        cpu = self.cpu_seconds()
        if cpu is not None:
            final["cpu"] = cpu
        self._final = final
        if cg is not None:
            cg.remove()
        if self._lease is not None:
            self._lease.release()
        if self._status_fd is not None:
            os.close(self._status_fd)
            self._status_fd = None
