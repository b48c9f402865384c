"""What a sandboxed bot sees of the host: the bot runtime, bound read-only at the same paths.

Decision: inside the sandbox `python3` is the arena's own virtualenv interpreter (its `bin` comes
first on PATH; of the venv only what a bot needs is bound, see below), so the SDK, gRPC and
protobuf import exactly as on the host. The virtualenv was
built from Debian's /usr/bin/python3, whose prefix /usr is bound anyway; an interpreter outside
/usr (pyenv, docs/sandbox-notes.md pitfall 9) gets its prefix bound too. Of the arena's source only the
SDK's closure is bound (`arena/__init__.py`, `arena/sdk`, `arena/proto`, and for `arena.sdk.sim` the pure
`arena/engine` and `arena/analysis`), never the checkout, so a
bot cannot read the database, replays or other bots that live next to it.

The lean prefix (the default): of the virtualenv only `pyvenv.cfg`, its Python links and the SDK's
dependencies in site-packages are bound (`SITE_PARTS`), so the venv's `.pth` files (the editable
install's import hook, setuptools' distutils shim) are not there to run at every bot's start, and a
bot sees none of the arena's other dependencies. `full_venv=True` binds the whole venv, as before;
`arena bench sandbox` keeps it as the same-run baseline of a bot's start-up.

This is the Python entry of the runtime table (languages.py), and the base of every other entry:
a run line of any language may start `python3` or the Python stdio bridge.
"""

from __future__ import annotations

import importlib.util
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path

ARENA_PKG = Path(__file__).resolve().parent.parent
SDK_PARTS = ("__init__.py", "sdk", "proto", "engine", "analysis")  # sim.py: the engine and the solver
# grpcio, protobuf (a namespace package under google/) and typing_extensions, which grpc.aio imports
SITE_PARTS = ("grpc", "google/protobuf", "google/_upb", "typing_extensions.py")
VENV_PYTHONS = ("python", "python3", f"python3.{sys.version_info.minor}")


@dataclass(frozen=True)
class Runtime:
    ro_binds: tuple[Path, ...]  # host paths bound read-only at the same place
    path: str  # PATH inside the sandbox
    pythonpath: str  # so `import arena.sdk` works even without the editable install
    env: tuple[tuple[str, str], ...] = ()  # the rest of the environment (languages.py adds a language's)


def _inside(child: Path, parent: Path) -> bool:
    return child == parent or parent in child.parents


def _with_bytecode(paths: list[Path]) -> list[Path]:
    """The paths that exist, each single-file module with its cached bytecode when there is one
    (its `__pycache__` is not bound otherwise, and bots run with PYTHONDONTWRITEBYTECODE)."""
    found = [p for p in paths if p.exists()]
    cached = [Path(importlib.util.cache_from_source(str(p))) for p in found if p.suffix == ".py"]
    return found + [c for c in cached if c.exists()]


def _lean_venv(venv: Path) -> list[Path]:
    """The venv as a bot needs it: the interpreter links (each bound as the file it points to),
    `pyvenv.cfg` (which makes `sys.prefix` the venv) and the SDK's packages in site-packages."""
    site = Path(sysconfig.get_paths()["purelib"])
    found = [venv / "pyvenv.cfg", *(venv / "bin" / name for name in VENV_PYTHONS)]
    return _with_bytecode(found + [site / part for part in SITE_PARTS])


def bot_runtime(full_venv: bool = False) -> Runtime:
    binds: list[Path] = []
    base = Path(sys.base_prefix).resolve()
    if not _inside(base, Path("/usr")):
        binds.append(base)
    venv = Path(sys.prefix)
    if venv.resolve() != base and not _inside(venv.resolve(), Path("/usr")):
        binds += [venv.resolve()] if full_venv else _lean_venv(venv)
    if not any(_inside(ARENA_PKG, b) for b in binds):
        binds += _with_bytecode([ARENA_PKG / part for part in SDK_PARTS])
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
