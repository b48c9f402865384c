"""What the referee may ask of a launched bot process, without importing the sandbox (layers).

`arena.sandbox.launcher.BotProcess` satisfies this structurally; remote bots have no handle.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable


@runtime_checkable
class BotHandle(Protocol):
    def exit_status(self) -> int | None:
        """None while running, else the exit code (negative for a signal)."""

    def failure_verdict(self) -> str | None:
        """A sandbox-detected cause of death such as "MEMORY_LIMIT", preferred over CRASH."""

    def output_tail(self, max_lines: int = 20) -> str:
        """The last lines the bot wrote to stdout/stderr, for verdict details."""

    def cpu_seconds(self) -> float | None:
        """CPU time used so far by the bot's process tree, if measurable."""

    def pause(self) -> None:
        """Stop the bot while it is not on move (fair clocks on a busy machine)."""

    def resume(self) -> None:
        """Continue after pause()."""

    def kill(self) -> None:
        """Kill the bot's whole process tree (idempotent)."""
