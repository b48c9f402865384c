"""Pick a launcher by name: `bwrap` (the default on Linux), `docker`, or `local` (no isolation)."""

from __future__ import annotations

import sys
from typing import Any

NAMES = ("bwrap", "docker", "local")
DEFAULT = "bwrap" if sys.platform.startswith("linux") else "local"


class LauncherUnavailable(RuntimeError):
    """The chosen launcher cannot run here; the message says why and what to do."""


def get_launcher(name: str = DEFAULT, *, warn: bool = True, warm: bool | None = None) -> Any:
    """A ready launcher; raises LauncherUnavailable with a one-line reason. `warm` (bwrap only; None:
    ARENA_WARM_START=1) turns on the warm start of Python bots (docs/sandbox.md "Warm start")."""
    if name == "bwrap":
        from arena.sandbox.bwrap import BwrapLauncher, SandboxUnavailable

        try:
            return BwrapLauncher(warm=warm)
        except SandboxUnavailable as exc:
            raise LauncherUnavailable(
                f"--sandbox bwrap: {exc}; or pass --sandbox local for trusted bots"
            ) from None
    if name == "docker":
        from arena.sandbox.docker import DockerLauncher, DockerUnavailable

        try:
            return DockerLauncher()
        except DockerUnavailable as exc:
            raise LauncherUnavailable(f"--sandbox docker: {exc}; use --sandbox bwrap instead") from None
    if name == "local":
        from arena.sandbox.local import LocalLauncher

        return LocalLauncher(warn=warn)
    raise LauncherUnavailable(f"--sandbox {name!r} is not one of {', '.join(NAMES)}")
