"""What a sandboxed bot sees of the host: the bot runtime, bound read-only at the same paths.

Decision: inside the sandbox `python3` is the arena's own virtualenv interpreter (its `bin` comes
first on PATH), so the SDK, gRPC and protobuf import exactly as on the host. The virtualenv was
built from Debian's /usr/bin/python3, whose prefix /usr is bound anyway; an interpreter outside
/usr (pyenv, docs/sandbox-notes.md pitfall 9) gets its prefix bound too. Of the arena's source only the
SDK's closure is bound (`arena/__init__.py`, `arena/sdk`, `arena/proto`, and for `arena.sdk.sim` the pure
`arena/engine` and `arena/analysis`), never the checkout, so a
bot cannot read the database, replays or other bots that live next to it.

This is the Python entry of the runtime table (languages.py), and the base of every other entry:
a stdio bot of any language runs behind the Python stdio bridge.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

ARENA_PKG = Path(__file__).resolve().parent.parent
SDK_PARTS = ("__init__.py", "sdk", "proto", "engine", "analysis")  # sim.py: the engine and the solver


@dataclass(frozen=True)
class Runtime:
    ro_binds: tuple[Path, ...]  # host paths bound read-only at the same place
    path: str  # PATH inside the sandbox
    pythonpath: str  # so `import arena.sdk` works even without the editable install
    env: tuple[tuple[str, str], ...] = ()  # the rest of the environment (languages.py adds a language's)


def _inside(child: Path, parent: Path) -> bool:
    return child == parent or parent in child.parents


def bot_runtime() -> Runtime:
    binds: list[Path] = []
    prefixes = [Path(sys.base_prefix).resolve(), Path(sys.prefix).resolve()]
    for prefix in prefixes:
        if not _inside(prefix, Path("/usr")) and prefix not in binds:
            binds.append(prefix)
    venv = Path(sys.prefix)
    if not any(_inside(ARENA_PKG, b) for b in binds):
        binds += [ARENA_PKG / part for part in SDK_PARTS if (ARENA_PKG / part).exists()]
    path = ":".join([str(venv / "bin"), "/usr/local/bin", "/usr/bin", "/bin"])
    env = (
        ("HOME", "/tmp"),
        ("TMPDIR", "/tmp"),
        ("LANG", "C.UTF-8"),
        ("PYTHONPATH", str(ARENA_PKG.parent)),
        ("PYTHONDONTWRITEBYTECODE", "1"),
        ("PYTHONUNBUFFERED", "1"),
    )
    return Runtime(ro_binds=tuple(binds), path=path, pythonpath=str(ARENA_PKG.parent), env=env)
