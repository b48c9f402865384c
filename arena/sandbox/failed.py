"""A bot that never ran because its build failed: it has 'exited' at once with verdict BUILD_FAILED,
and its output is the build log, so the referee's usual flow reports both."""

from __future__ import annotations

from typing import Any

from arena.sandbox.launcher import BUILD_FAILED, LaunchSpec


class BuildFailedProcess:
    def __init__(self, log: str) -> None:
        self.build_log = log

    def exit_status(self) -> int | None:
        return 1

    def failure_verdict(self) -> str | None:
        return BUILD_FAILED

    def output_tail(self, max_lines: int = 20) -> str:
        lines = self.build_log.splitlines()
        return "\n".join(["[arena] the bundle's build failed; the end of its log:"] + lines[-max_lines:])

    def output(self) -> str:
        return self.build_log

    def cpu_seconds(self) -> float | None:
        return 0.0

    def pause(self) -> None:
        pass

    def resume(self) -> None:
        pass

    def kill(self) -> None:
        pass


def build_first(launcher: Any, spec: LaunchSpec) -> BuildFailedProcess | None:
    """Run the bundle's build (once per content) before a launch; a handle when it failed."""
    if not spec.bundle.build:
        return None
    ok, log = launcher.build(spec.bundle, spec.limits)
    return None if ok else BuildFailedProcess(log)
