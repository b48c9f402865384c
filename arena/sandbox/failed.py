"""A bot that never ran because its build failed: it has 'exited' at once with verdict BUILD_FAILED,
and its output is the build log, so the referee's usual flow reports both."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from arena.sandbox import buildlog
from arena.sandbox.bundle import Bundle, is_staged
from arena.sandbox.launcher import BUILD_FAILED, LaunchSpec


class DeadProcess:
    """A bot that never ran: it has 'exited' at once, and its output says why, so the referee's usual
    flow (CRASH or the sandbox's verdict, with the last output lines) reports it."""

    def __init__(self, output: str, *, exit_code: int = 127, verdict: str | None = None) -> None:
        self._output = output
        self._exit_code = exit_code
        self._verdict = verdict

    def exit_status(self) -> int | None:
        return self._exit_code

    def failure_verdict(self) -> str | None:
        return self._verdict

    def output_tail(self, max_lines: int = 20) -> str:
        return "\n".join(self._output.splitlines()[-max_lines:])

    def output(self) -> str:
        return self._output

    def cpu_seconds(self) -> float | None:
        return 0.0

    def pause(self) -> None:
        pass

    def resume(self) -> None:
        pass

    def kill(self) -> None:
        pass


class BuildFailedProcess(DeadProcess):
    """The bundle's build failed: verdict BUILD_FAILED, and its output is the build log. Its tail
    (what the referee quotes to the bot's owner) is the log's first error lines and where the
    whole log was kept (`where`)."""

    def __init__(self, log: str, where: str = "") -> None:
        super().__init__(log, exit_code=1, verdict=BUILD_FAILED)
        self.build_log = log
        self.where = where or "not kept"

    def output_tail(self, max_lines: int = 20) -> str:
        return "[arena] the bundle's build failed; " + buildlog.summary(self._output, self.where, max_lines)


FAILED_LOG = "build-failed.log"


def keep_failed_log(bundle: Bundle, log: str) -> str:
    """Write a failed build's whole log next to the staged bundle (where the bot cannot write); its
    path, or "" when the bundle is not a staged copy."""
    if not is_staged(bundle):
        return ""
    path = Path(bundle.path.parent, FAILED_LOG)
    try:
        path.write_text(log, encoding="utf-8")
    except OSError:
        return ""
    return str(path)


def build_first(launcher: Any, spec: LaunchSpec) -> BuildFailedProcess | None:
    """Run the bundle's build (once per content) before a launch; a handle when it failed."""
    if not spec.bundle.build:
        return None
    ok, log = launcher.build(spec.bundle, spec.limits)
    return None if ok else BuildFailedProcess(log, keep_failed_log(spec.bundle, log))
