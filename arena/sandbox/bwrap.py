"""The `bwrap` launcher: bubblewrap namespaces, a per-bot uid, cgroup caps, rlimits and seccomp.

One launch is this chain of exec's (no preexec_fn in a threaded referee, docs/sandbox-notes.md pitfall 8):

    the launch helper (dies with the referee from the fork on, joins the bot's cgroups as root, sets
    the rlimits: `launch_helper.py`) -> bwrap (namespaces, mounts, seccomp) -> the helper again
    (drops to the bot's own uid, clears capabilities) -> the bundle's `run`

Where the helper is not built, the chain before it: setpriv --pdeathsig and sh (`spawn.guarded`) ->
sh (cgroup join) -> prlimit -> bwrap -> setpriv. Run as root, bwrap works in privileged mode (no
user namespace): it can bind the referee's socket and the bundle from anywhere, and the uid switch
happens inside the sandbox. Nested user namespaces are then blocked by the seccomp filter. Run as an
ordinary user, bwrap makes a user namespace itself (`--unshare-user --disable-userns`) and every bot
runs under that user's uid.
"""

from __future__ import annotations

import os
import shutil
import threading
from pathlib import Path

from arena.sandbox import bwrap_args, cgroups, launch_helper, seccomp, sockets, spawn, uids
from arena.sandbox.building import await_build, build_once
from arena.sandbox.bundle import (
    Bundle,
    chown_tree,
)
from arena.sandbox.bwrap_process import BwrapProcess
from arena.sandbox.capture import OutputCapture
from arena.sandbox.cgroups import BotCgroup
from arena.sandbox.failed import BuildFailedProcess, build_first
from arena.sandbox.languages import runtime as language_runtime
from arena.sandbox.launcher import (
    SANDBOX_BUNDLE,
    SANDBOX_SOCKET,
    STDIO_ENV,
    LaunchSpec,
    Limits,
)
from arena.sandbox.stdio_pipes import popen_streams, split_streams, stdio_chain
from arena.sandbox.warm import WarmPool

#: Signs, in a dead bot's last output, that it died of an allocation failure (rlimit-only hosts).
JOIN_SCRIPT = (
    'for f in "$@"; do [ "$f" = -- ] && break; echo $$ > "$f" || exit 125; shift; done; shift; exec "$@"'
)


class SandboxUnavailable(RuntimeError):
    """The launcher cannot work on this machine; the message says what to install."""


_sweep_lock = threading.Lock()


def _sweep() -> None:
    """Kill and remove the groups of referees that died (a SIGKILL, a kill mid-launch), before each
    launch: a long-lived worker would otherwise leave a sibling's leftovers to the next process."""
    with _sweep_lock:
        cgroups.sweep_stale()


def warm_unavailable(use_cgroups: bool = True) -> str | None:
    """Why the warm start cannot run here, or None: each match's child needs its own memory and pids
    leaf (no weak limits) and the zygote needs root to hand each child its own uid."""
    if os.geteuid() != 0:
        return "the warm start needs root (the bwrap sandbox's per-bot uids)"
    if not use_cgroups or cgroups.detect().weak():
        return "the warm start needs memory and pids cgroups (`arena sandbox check` says which are missing)"
    return None


def _tasks_of_uid(uid: int) -> int:
    """Threads currently owned by `uid` (what RLIMIT_NPROC counts)."""
    count = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            st = os.stat(f"/proc/{entry}/task")
            if os.stat(f"/proc/{entry}").st_uid == uid:
                count += st.st_nlink - 2
        except OSError:
            pass
    return count


class BwrapLauncher:
    """Launch bundles under bubblewrap. Raises SandboxUnavailable when bwrap is missing."""

    name = "bwrap"
    direct_stdio = True  # a stdio bot's pipes go to the referee (arena.referee.stdio_seat), no bridge

    def __init__(
        self,
        *,
        use_seccomp: bool = True,
        use_cgroups: bool = True,
        state_dir: Path | None = None,
        full_venv: bool = False,
        warm: bool | None = None,
        warm_max: int = 4,
        helper: bool = True,
    ) -> None:
        found = shutil.which("bwrap")
        if found is None:
            raise SandboxUnavailable("bwrap is not installed; run `make setup` (Debian package bubblewrap)")
        self.bwrap = found
        self.prlimit = shutil.which("prlimit") or "/usr/bin/prlimit"
        # One exec for what setpriv, sh, sh and prlimit did (launch_helper.py); False: the old chain.
        self.helper = launch_helper.path() if helper else None
        self.privileged = os.geteuid() == 0
        if self.privileged and shutil.which("setpriv") is None:
            raise SandboxUnavailable("setpriv is not installed; run `make setup` (Debian package util-linux)")
        self.use_seccomp = use_seccomp and seccomp.filter_bpf() is not None
        self.use_cgroups = use_cgroups
        self.full_venv = full_venv  # the whole venv bound, not the lean prefix: a benchmark's baseline
        default_state = (
            Path("/run/elfern-arena") if self.privileged else Path(f"/tmp/elfern-arena-{os.getuid()}")
        )
        self.state_dir = state_dir or default_state
        if use_cgroups:
            _sweep()
        # The warm start (docs/sandbox.md): off unless asked for, here or by ARENA_WARM_START=1.
        if warm is None:
            warm = os.environ.get("ARENA_WARM_START", "") == "1"
        self.warm: WarmPool | None = (
            # each match's child needs its own memory and pids leaf; without them every launch is cold
            WarmPool(self, warm_max) if warm and warm_unavailable(use_cgroups) is None else None
        )

    # --- public -------------------------------------------------------------------------------
    def launch(self, spec: LaunchSpec) -> BwrapProcess | BuildFailedProcess:
        """Build first if the bundle has a build step not yet built (before the referee's start-up
        clock runs); a failed build gives a handle whose verdict is BUILD_FAILED."""
        failed = build_first(self, spec)
        if failed is not None:
            return failed
        stdio = spec.bundle.protocol == "stdio"
        if stdio:  # the referee speaks its lines on its pipes: no socket, no token
            env = dict(STDIO_ENV)
        else:
            env = {**spec.env, "ARENA_ADDRESS": f"unix://{SANDBOX_SOCKET}"}
        if self.warm is not None:
            child = self.warm.launch(spec, env)
            if child is not None:
                return child
        return self.start(
            spec.bundle,
            list(spec.bundle.run),
            env,
            spec.limits,
            socket_path=None if stdio else spec.socket_path,
            label=spec.label,
            stdio=stdio,
        )

    def build(self, bundle: Bundle, limits: Limits) -> tuple[bool, str]:
        """Run `build` once per bundle content, sandboxed, with the bundle writable; cache success."""
        return build_once(bundle, limits, self._run_build)

    def _run_build(self, bundle: Bundle, limits: Limits) -> tuple[bool, str]:
        build_limits = Limits(**{**limits.__dict__, "cpu_seconds": limits.build_seconds})
        proc = self.start(
            bundle, list(bundle.build or ()), {}, build_limits, socket_path=None, label="build", writable=True
        )
        return await_build(proc, bundle, limits, restore=self.privileged, poll=0.02)

    def start(
        self,
        bundle: Bundle,
        argv: list[str],
        env: dict[str, str],
        limits: Limits,
        *,
        socket_path: Path | None,
        label: str = "bot",
        writable: bool = False,
        extra_ro_binds: tuple[tuple[Path, str], ...] = (),
        pass_fds: tuple[int, ...] = (),
        run_dir: Path | None = None,
        drop_uid: bool = True,
        stdio: bool = False,
    ) -> BwrapProcess:
        """Start `argv` in a sandbox holding `bundle` at /bot (also used by probes, builds and the warm
        start's zygotes: `run_dir` is then bound at /run/arena instead of one socket, and with
        `drop_uid` False the process keeps uid 0 and CAP_SETUID/SETGID to give each child its own uid).
        `stdio`: its stdin and stdout are pipes for the stdio protocol, its stderr alone is its log."""
        if self.use_cgroups:
            _sweep()
        lease = uids.acquire(self.state_dir / "uids") if self.privileged and drop_uid else None
        uid = lease.uid if lease else os.getuid()
        cg = cgroups.create(limits.memory, limits.pids, label) if self.use_cgroups else None
        seccomp_fd = seccomp.filter_fd() if self.use_seccomp else None
        status_r, status_w = os.pipe2(os.O_CLOEXEC)
        try:
            if writable and lease is not None:
                chown_tree(bundle.path, uid)
            if socket_path is not None:  # the seat's socket: its directory 0700, itself 0600, the bot's uid
                sockets.make_private(socket_path, uid if self.privileged else None)
            pass_fds = tuple(fd for fd in (seccomp_fd, status_w) if fd is not None) + pass_fds
            if stdio:
                argv, prefix = stdio_chain(argv, pass_fds)
            args = self._command(
                bundle,
                argv,
                limits,
                uid,
                socket_path,
                writable,
                extra_ro_binds,
                seccomp_fd,
                status_w,
                cg,
                run_dir=run_dir,
                drop_uid=drop_uid,
            )
            if stdio:
                args = prefix + args
            popen = spawn.popen(
                args=args,  # its prelude: dies with us from the fork on, not only once bwrap runs
                **popen_streams(stdio),
                pass_fds=pass_fds,
                start_new_session=True,
                # The bot's environment (the seat token among it) passes down the exec chain through
                # the environment, never argv: /proc/PID/environ is readable by the same uid and root
                # only, /proc/PID/cmdline by everyone.
                env=self._environment(bundle.language, env),
            )
        except BaseException:
            os.close(status_r)
            if cg is not None:
                cg.remove()
            if lease is not None:
                lease.release()
            raise
        finally:
            os.close(status_w)
            if seccomp_fd is not None:
                os.close(seccomp_fd)
        os.set_blocking(status_r, False)
        output, protocol = split_streams(popen, stdio)
        proc = BwrapProcess(popen, OutputCapture(output, limits.log_bytes), limits, cg, lease, status_r)
        proc.protocol_pipes = protocol
        return proc

    # --- helpers ------------------------------------------------------------------------------
    @staticmethod
    def _environment(language: str, env: dict[str, str]) -> dict[str, str]:
        """The whole environment of the launch chain, which is exactly the bot's (no --clearenv, no
        --setenv: values on bwrap's command line would be readable by every local user): the
        language's runtime (languages.py), then the launch's own values."""
        runtime = language_runtime(language)
        return {"PATH": runtime.path, **dict(runtime.env), **env}

    def _rlimits(self, limits: Limits, cg: BotCgroup | None) -> list[tuple[str, int, int]]:
        """(name, soft, hard) of each rlimit the chain sets before bwrap."""
        out = [
            ("as", limits.address_space, limits.address_space),
            ("cpu", limits.cpu_seconds, limits.cpu_seconds + 2),
            ("fsize", limits.file_size, limits.file_size),
            ("nofile", limits.open_files, limits.open_files),
            ("core", 0, 0),
        ]
        if self.privileged:
            # Per uid, and each bot has its own uid. With a pids cgroup it is only a backstop above
            # pids.max, so that the cgroup refuses first and the verdict is PIDS_LIMIT: a task left
            # under the same uid by a dead run would otherwise make RLIMIT_NPROC refuse first, unnamed.
            has_pids = cg is not None and cg.has("pids")
            nproc = 2 * limits.pids if has_pids else limits.pids
            out.append(("nproc", nproc, nproc))
        elif cg is None or not cg.has("pids"):
            # RLIMIT_NPROC counts every task of this (shared) uid: allow what runs now plus the bot's share.
            nproc = _tasks_of_uid(os.getuid()) + limits.pids
            out.append(("nproc", nproc, nproc))
        return out

    def _prelude(self, limits: Limits, cg: BotCgroup | None) -> list[str]:
        """What runs before bwrap: die with this process, join the bot's cgroups, set rlimits. One
        exec of the helper; without it the chain before it (setpriv, sh, sh, prlimit)."""
        joins = cg.procs_files() if cg is not None else []
        if self.helper is not None:
            return launch_helper.outer(self.helper, os.getpid(), joins, self._rlimits(limits, cg))
        cmd: list[str] = []
        if joins:
            cmd += ["/bin/sh", "-c", JOIN_SCRIPT, "arena-join", *joins, "--"]
        cmd.append(self.prlimit)
        for name, soft, hard in self._rlimits(limits, cg):
            cmd.append(f"--{name}={soft}" if soft == hard else f"--{name}={soft}:{hard}")
        return spawn.guarded([*cmd, "--"], helper=False)

    def _command(
        self,
        bundle: Bundle,
        argv: list[str],
        limits: Limits,
        uid: int,
        socket_path: Path | None,
        writable: bool,
        extra_ro_binds: tuple[tuple[Path, str], ...],
        seccomp_fd: int | None,
        status_fd: int,
        cg: BotCgroup | None,
        run_dir: Path | None = None,
        drop_uid: bool = True,
    ) -> list[str]:
        """The whole chain's argv: the prelude, bwrap (bwrap_args.py makes the parts that do not
        change per launch once), the uid switch inside, the bundle's command."""
        runtime = language_runtime(bundle.language, full_venv=self.full_venv)
        become = self.privileged and drop_uid
        binds = [(p, str(p)) for p in runtime.ro_binds] + [(p, d) for p, d in extra_ro_binds]
        if become and self.helper is not None:  # the helper does the uid switch inside too
            binds.append((self.helper, str(self.helper)))
        cmd = [*self._prelude(limits, cg), self.bwrap]
        cmd += bwrap_args.head(self.privileged, tuple(binds), limits.tmp_size)
        cmd += ["--bind" if writable else "--ro-bind", str(bundle.path), SANDBOX_BUNDLE]
        if run_dir is not None:  # a zygote's: the launcher links each match's socket in as it forks
            cmd += [
                "--perms",
                "0755",
                "--dir",
                "/run",
                "--ro-bind",
                str(run_dir),
                str(Path(SANDBOX_SOCKET).parent),
            ]
        if socket_path is not None:
            cmd += [
                "--perms",
                "0755",
                "--dir",
                "/run",
                "--perms",
                "0755",
                "--dir",
                str(Path(SANDBOX_SOCKET).parent),
            ]
            cmd += ["--ro-bind", str(socket_path), SANDBOX_SOCKET]
        cmd += bwrap_args.tail(self.state_dir, limits.memory)
        if seccomp_fd is not None:
            cmd += ["--seccomp", str(seccomp_fd)]
        cmd += ["--json-status-fd", str(status_fd), "--"]
        if become and self.helper is not None:
            cmd += launch_helper.become(self.helper, uid)
        elif become:
            cmd += [
                "/usr/bin/setpriv",
                f"--reuid={uid}",
                f"--regid={uid}",
                "--clear-groups",
                "--inh-caps=-all",
                "--bounding-set=-all",
                "--",
            ]
        return cmd + argv
