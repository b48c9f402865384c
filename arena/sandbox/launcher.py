"""The one launcher interface every isolation backend implements (bwrap, docker, local).

The referee never imports this package: it talks to a launched bot only through the structural
`BotHandle` protocol defined in `arena.referee`, which `BotProcess` satisfies.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from arena.sandbox.bundle import Bundle
from arena.verdicts import Verdict

#: Where the referee's socket appears inside a sandbox; launchers set ARENA_ADDRESS to it.
SANDBOX_SOCKET = "/run/arena/referee.sock"
#: What a launcher adds to a `protocol = "stdio"` bot's environment: the Python SDK's `run()` then speaks
#: the stdio lines (docs/stdio.md) instead of gRPC (arena.sdk.bot.STDIO_ENV, the same; tested).
STDIO_ENV = {"ARENA_PROTOCOL": "stdio"}
#: Where the bundle appears inside a sandbox (read-only; the working directory of `run`).
SANDBOX_BUNDLE = "/bot"

# Verdicts a launcher can name through BotProcess.failure_verdict() (see referee.proto).
MEMORY_LIMIT = (
    Verdict.MEMORY_LIMIT
)  # killed by the memory cgroup's OOM killer, or died of an allocation failure
CPU_LIMIT = Verdict.CPU_LIMIT  # RLIMIT_CPU (SIGXCPU / SIGKILL) or the cgroup CPU budget of the match
PIDS_LIMIT = Verdict.PIDS_LIMIT  # the pids cap refused a fork or thread
BUILD_FAILED = Verdict.BUILD_FAILED  # the bundle's build step failed or timed out


@dataclass(frozen=True)
class Limits:
    """Resource limits for one bot process tree. Sizes in bytes, times in seconds."""

    memory: int = 512 * 1024 * 1024  # cgroup memory cap (the real cap)
    address_space: int = 4 * 1024 * 1024 * 1024  # RLIMIT_AS, generous: Node/JVM reserve a lot
    cpu_seconds: int = 120  # RLIMIT_CPU for the whole match
    pids: int = 64  # pids cgroup (counts threads)
    file_size: int = 16 * 1024 * 1024  # RLIMIT_FSIZE
    open_files: int = 256  # RLIMIT_NOFILE
    tmp_size: int = 32 * 1024 * 1024  # tmpfs /tmp size
    log_bytes: int = 256 * 1024  # captured stdout+stderr cap
    build_seconds: int = 300  # wall time for the build step


@dataclass
class LaunchSpec:
    """What to start: a bundle, the referee socket on the host, and extra environment."""

    bundle: Bundle
    socket_path: Path  # the referee's Unix socket on the host
    env: dict[str, str] = field(default_factory=dict)  # e.g. ARENA_TOKEN
    limits: Limits = field(default_factory=Limits)
    label: str = "bot"  # for log and temp-dir names


class BotProcess(Protocol):
    """A running bot. Satisfies `arena.referee.BotHandle`."""

    def exit_status(self) -> int | None:
        """None while running, else the exit code (negative for a signal)."""

    def failure_verdict(self) -> str | None:
        """A sandbox-detected cause of death (e.g. "MEMORY_LIMIT"), if any."""

    def output_tail(self, max_lines: int = 20) -> str:
        """The last lines the bot wrote to stdout/stderr (capped)."""

    def cpu_seconds(self) -> float | None:
        """CPU time consumed so far by the bot's whole process tree, if measurable."""

    def pause(self) -> None:
        """Stop the bot's processes while it is not on move (fair clocks). A launcher may first only
        watch a bot's CPU, and stop it once it is seen computing then (bwrap, docs/sandbox.md)."""

    def resume(self) -> None:
        """Continue after pause()."""

    def kill(self) -> None:
        """Kill the whole process tree and release every resource (idempotent)."""


class Launcher(Protocol):
    name: str

    def launch(self, spec: LaunchSpec) -> BotProcess:
        """Start the bundle's `run` command with ARENA_ADDRESS and ARENA_TOKEN set."""

    def build(self, bundle: Bundle, limits: Limits) -> tuple[bool, str]:
        """Run the bundle's `build` command once; return (ok, build log)."""
