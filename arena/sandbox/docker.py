"""The `docker` launcher: one container per bot, from the runtime images built from docker/.

    docker run --init --network none --read-only --cap-drop ALL --security-opt no-new-privileges
               --pids-limit N --memory M --memory-swap M --cpus C --user UID:UID
               --tmpfs /tmp:size=S --ulimit cpu/fsize/nofile
               --mount bundle -> /bot (read-only)  --mount socket dir -> /run/arena (read-only)
               IMAGE <run...>

A `protocol = "stdio"` bot gets `--interactive` and no socket instead: the client relays the
container's stdin and stdout, which the referee speaks the stdio lines on (arena/referee/stdio_seat.py),
and its stderr is the bot's log, as under bwrap.

The image is chosen by the bundle's `language` (IMAGES); every container carries a label naming
the referee process that started it, so containers of a referee that died are removed at start-up.
Verdicts: MEMORY_LIMIT from the container's OOM state (`docker inspect` .State.OOMKilled, or an OOM kill
counted by its memory cgroup), PIDS_LIMIT from its pids cgroup's refused forks, CPU_LIMIT from SIGXCPU.
The tests run it against a private engine (scripts/docker_engine.py; tests/sandbox/test_docker*.py).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import uuid
from pathlib import Path
from typing import Any

from arena.sandbox import cgroups, procstat, sockets, spawn, uids
from arena.sandbox.building import await_build, build_once
from arena.sandbox.bundle import (
    Bundle,
    chown_tree,
)
from arena.sandbox.capture import OutputCapture
from arena.sandbox.docker_cgroup import ContainerCgroup
from arena.sandbox.failed import BuildFailedProcess, build_first
from arena.sandbox.languages import LANGUAGES, NATIVE_IMAGE, language
from arena.sandbox.launcher import (
    CPU_LIMIT,
    MEMORY_LIMIT,
    PIDS_LIMIT,
    SANDBOX_BUNDLE,
    STDIO_ENV,
    LaunchSpec,
    Limits,
)
from arena.sandbox.stdio_pipes import announced, popen_streams, split_streams

#: The runtime image of each `language` value, from the runtime table (languages.py).
IMAGES = {n: lang.image for lang in LANGUAGES for n in (lang.name, *lang.aliases)}
DEFAULT_IMAGE = NATIVE_IMAGE
OWNER_LABEL = "elfern-arena.owner"
SOCKET_DIR = "/run/arena"


class DockerUnavailable(RuntimeError):
    pass


def client_env(env: dict[str, str]) -> dict[str, str]:
    """The docker client's environment: ours plus the bot's values, which `--env NAME` forwards, so
    that no value (the seat token) is ever on the client's command line."""
    return {**os.environ, **env}


def docker_command(
    docker: str,
    spec_bundle: Bundle,
    argv: list[str],
    env: dict[str, str],
    limits: Limits,
    uid: int,
    name: str,
    owner: str,
    socket_path: Path | None,
    writable: bool = False,
    cpus: float = 1.0,
    interactive: bool = False,
) -> list[str]:
    """The `docker run` line for one bot (pure, so it can be checked without an engine).
    `interactive`: a stdio bot's, whose stdin (and its end) the client relays."""
    cmd = [
        # no --rm: kill() reads .State.OOMKilled after the bot died, then removes the container
        docker,
        "run",
        "--name",
        name,
        "--label",
        f"{OWNER_LABEL}={owner}",
        # docker-init as pid 1, the bot its child: a namespace's pid 1 ignores every signal it has no
        # handler for, RLIMIT_CPU's SIGXCPU included (the bot would run on to the hard limit's SIGKILL)
        "--init",
        "--network",
        "none",
        "--read-only",
        "--cap-drop",
        "ALL",
        "--security-opt",
        "no-new-privileges",
        "--pids-limit",
        str(limits.pids),
        "--memory",
        str(limits.memory),
        "--memory-swap",
        str(limits.memory),
        "--cpus",
        f"{cpus:g}",
        "--user",
        f"{uid}:{uid}",
        "--tmpfs",
        f"/tmp:rw,nosuid,nodev,size={limits.tmp_size},mode=1777",
        "--ulimit",
        f"cpu={limits.cpu_seconds}:{limits.cpu_seconds + 2}",
        "--ulimit",
        f"fsize={limits.file_size}:{limits.file_size}",
        "--ulimit",
        f"nofile={limits.open_files}:{limits.open_files}",
        "--ulimit",
        "core=0:0",
        "--mount",
        f"type=bind,src={spec_bundle.path},dst={SANDBOX_BUNDLE}" + ("" if writable else ",readonly"),
        "--workdir",
        SANDBOX_BUNDLE,
        "--env",
        "HOME=/tmp",
        "--env",
        "TMPDIR=/tmp",
    ]
    if interactive:
        cmd.append("--interactive")
    if socket_path is not None:
        cmd += ["--mount", f"type=bind,src={socket_path.parent},dst={SOCKET_DIR},readonly"]
    entry = language(spec_bundle.language)
    for key, value in entry.env if entry else ():  # the language's settings (GOCACHE...): not secret
        cmd += ["--env", f"{key}={value}"]
    for key in env:  # the name only: docker reads the value from its own environment (client_env)
        cmd += ["--env", key]
    cmd.append(IMAGES.get(spec_bundle.language.lower(), DEFAULT_IMAGE))
    return cmd + argv


class DockerProcess:
    """A bot running in a container (satisfies `arena.referee.BotHandle`)."""

    def __init__(
        self,
        docker: list[str],
        name: str,
        popen: subprocess.Popen[bytes],
        capture: OutputCapture,
        limits: Limits,
        lease: uids.UidLease | None,
    ) -> None:
        self._docker = docker
        self.name = name
        self._popen = popen
        self._capture = capture
        self._limits = limits
        self._lease = lease
        self._killed = False
        self._frozen = False
        self._inspect_cache: list[str] | None = None
        self._cgroup: ContainerCgroup | None = None
        self._counters: tuple[int, int] = (0, 0)  # (OOM kills, refused forks), kept from the last read
        self.protocol_pipes: tuple[Any, Any] | None = None  # a stdio bot's (stdin, stdout), for the referee

    def _docker_run(self, *args: str, timeout: float = 10.0) -> subprocess.CompletedProcess[str] | None:
        try:
            return subprocess.run([*self._docker, *args], capture_output=True, text=True, timeout=timeout)
        except (OSError, subprocess.TimeoutExpired):
            return None

    def exit_status(self) -> int | None:
        rc = self._popen.poll()
        if rc is not None and rc > 128:
            return -(rc - 128)
        return rc

    def _inspect(self) -> list[str]:
        """[OOMKilled, ExitCode, Pid]; cached once the bot has exited (the container is kept until kill)."""
        if self._inspect_cache is None:
            res = self._docker_run(
                "inspect", "--format", "{{.State.OOMKilled}} {{.State.ExitCode}} {{.State.Pid}}", self.name
            )
            fields = res.stdout.split() if res is not None and res.returncode == 0 else []
            if self.exit_status() is not None and fields:
                self._inspect_cache = fields
            return fields
        return self._inspect_cache

    def container_pid(self) -> int | None:
        """The host pid of the container's first process while it runs (the bot's `run` command)."""
        fields = self._inspect()
        return int(fields[2]) if len(fields) > 2 and fields[2].isdigit() and fields[2] != "0" else None

    def cgroup(self) -> ContainerCgroup | None:
        """The container's cgroup on this host, found once while the container runs."""
        if self._cgroup is None and self.exit_status() is None:
            pid = self.container_pid()
            if pid is not None:
                self._cgroup = ContainerCgroup.of_pid(pid)
        return self._cgroup

    def _read_counters(self) -> tuple[int, int]:
        """The cgroup's counters while it exists; the last values read once Docker has removed it."""
        cg = self.cgroup()
        if cg is not None:
            now = (cg.oom_kills(), cg.pids_refused())
            self._counters = (max(now[0], self._counters[0]), max(now[1], self._counters[1]))
        return self._counters

    def failure_verdict(self) -> str | None:
        oom_kills, refused = self._read_counters()
        fields = self._inspect()
        if (fields and fields[0] == "true") or oom_kills:
            return MEMORY_LIMIT  # the container's OOM state: its memory cgroup killed a process
        if refused:
            return PIDS_LIMIT
        if self.exit_status() == -signal.SIGXCPU:
            return CPU_LIMIT
        return None

    def output_tail(self, max_lines: int = 20) -> str:
        return self._capture.tail(max_lines, exited=self.exit_status() is not None)

    def output(self) -> str:
        return self._capture.text(exited=self.exit_status() is not None)

    def cpu_seconds(self) -> float | None:
        cg = self.cgroup()
        used = cg.cpu_seconds() if cg is not None else None
        if used is not None:
            return used
        pid = self.container_pid()
        return procstat.cpu_seconds(pid) if pid is not None else None

    def pause(self) -> None:
        """Freeze the container between turns: its freezer directly (a file write), else `docker pause`."""
        if self._killed or self._popen.poll() is not None or self._frozen:
            return
        cg = self.cgroup()
        if cg is not None and cg.set_frozen(True):
            self._frozen = True
        else:
            self._docker_run("pause", self.name)

    def resume(self) -> None:
        if self._killed:
            return
        cg = self.cgroup()
        if self._frozen and cg is not None and cg.set_frozen(False):
            self._frozen = False
        elif not self._frozen:
            self._docker_run("unpause", self.name)

    def kill(self) -> None:
        if self._killed:
            return
        self._read_counters()
        if self._frozen and self._cgroup is not None:
            self._cgroup.set_frozen(False)  # a frozen process cannot die: thaw, then remove
        self._killed = True
        self._inspect()
        self._docker_run("rm", "--force", self.name, timeout=30)
        try:
            self._popen.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._popen.kill()
        self._capture.join()
        if self._lease is not None:
            self._lease.release()


class DockerLauncher:
    """Raises DockerUnavailable when no Docker client or engine answers. `host` is the engine's address
    (`--host`; default: the client's own, i.e. DOCKER_HOST or the system socket)."""

    name = "docker"
    direct_stdio = True  # a stdio bot's lines go through `docker run -i`'s pipes to the referee, no bridge

    def __init__(
        self,
        docker: str = "docker",
        cpus: float = 1.0,
        state_dir: Path | None = None,
        host: str | None = None,
    ) -> None:
        found = shutil.which(docker)
        if found is None:
            raise DockerUnavailable("the docker client is not installed")
        self.docker = [found, *(["--host", host] if host else [])]
        try:
            res = subprocess.run(
                [*self.docker, "version", "--format", "{{.Server.Version}}"],
                capture_output=True,
                text=True,
                timeout=10,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise DockerUnavailable(f"no Docker engine answers: {exc}") from None
        if res.returncode != 0 or not res.stdout.strip():
            why = (res.stderr.strip().splitlines() or ["no answer"])[-1]
            raise DockerUnavailable(f"no Docker engine answers ({why})")
        self.cpus = cpus
        self.state_dir = state_dir or (
            Path("/run/elfern-arena") if os.geteuid() == 0 else Path(f"/tmp/elfern-arena-{os.getuid()}")
        )
        self.sweep_stale()

    def sweep_stale(self) -> None:
        """Remove containers left by referees that no longer run."""
        res = subprocess.run(
            [
                *self.docker,
                "ps",
                "-a",
                "--filter",
                f"label={OWNER_LABEL}",
                "--format",
                f'{{{{.Names}}}} {{{{.Label "{OWNER_LABEL}"}}}}',
            ],
            capture_output=True,
            text=True,
            timeout=30,
        )
        for line in res.stdout.splitlines():
            name, _, owner = line.partition(" ")
            if name and not cgroups.owner_alive(owner):
                subprocess.run([*self.docker, "rm", "--force", name], capture_output=True, timeout=30)

    def launch(self, spec: LaunchSpec) -> DockerProcess | BuildFailedProcess:
        failed = build_first(self, spec)
        if failed is not None:
            return failed
        if spec.bundle.protocol == "stdio":  # `docker run -i`: the referee speaks on the client's pipes
            argv = announced(list(spec.bundle.run))  # STARTED_LINE once the container runs
            return self._start(spec.bundle, argv, dict(STDIO_ENV), spec.limits, None, spec.label, stdio=True)
        env = {**spec.env, "ARENA_ADDRESS": f"unix://{SOCKET_DIR}/{spec.socket_path.name}"}
        return self._start(spec.bundle, list(spec.bundle.run), env, spec.limits, spec.socket_path, spec.label)

    def _start(
        self,
        bundle: Bundle,
        argv: list[str],
        env: dict[str, str],
        limits: Limits,
        socket_path: Path | None,
        label: str,
        writable: bool = False,
        stdio: bool = False,
    ) -> DockerProcess:
        """`stdio`: the container's stdin and stdout are the protocol pipes (`docker run -i` relays
        them), its stderr alone is its log."""
        lease = uids.acquire(self.state_dir / "uids")
        if writable and os.geteuid() == 0:
            chown_tree(bundle.path, lease.uid)
        name = f"arena-{''.join(c for c in label if c.isalnum() or c == '-')[:40]}-{uuid.uuid4().hex[:8]}"
        if socket_path is not None:  # the seat's socket directory (bound at /run/arena): the bot's uid only
            sockets.make_private(socket_path, lease.uid if os.geteuid() == 0 else None)
        cmd = docker_command(
            self.docker[0],
            bundle,
            argv,
            env,
            limits,
            lease.uid,
            name,
            cgroups.owner_tag(),
            socket_path,
            writable,
            self.cpus,
            interactive=stdio,
        )
        cmd[1:1] = self.docker[1:]  # --host
        popen = spawn.popen(
            args=cmd, **popen_streams(stdio), start_new_session=True, env=client_env(env)
        )  # fmt: skip
        output, protocol = split_streams(popen, stdio)
        proc = DockerProcess(self.docker, name, popen, OutputCapture(output, limits.log_bytes), limits, lease)
        proc.protocol_pipes = protocol
        return proc

    def build(self, bundle: Bundle, limits: Limits) -> tuple[bool, str]:
        """Run `build` once per bundle content, in the bot's image, with the bundle writable."""
        return build_once(bundle, limits, self._run_build)

    def _run_build(self, bundle: Bundle, limits: Limits) -> tuple[bool, str]:
        proc = self._start(bundle, list(bundle.build or ()), {}, limits, None, "build", writable=True)
        return await_build(proc, bundle, limits, restore=os.geteuid() == 0, poll=0.05)
