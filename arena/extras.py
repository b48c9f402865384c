"""The optional extras of pyproject.toml, and the one line a missing one gives.

The core install (`pip install elfern-arena`) plays matches and runs ladders on SQLite; the web
server, PostgreSQL and the Celery executor each need an extra. Code that needs one calls `require`
before its first import of that extra's packages (all of them lazy: the core CLI never imports them),
and the `arena` group turns a `MissingExtra`, or any ImportError of an extra's package that slipped
past a `require`, into one line naming the extra and the pip command (arena/cli/__init__.py). Like
arena.logs it sits at the bottom of the package and imports nothing of the arena.
"""

from __future__ import annotations

import importlib

DIST = "elfern-arena"
#: extra -> the top-level modules it brings that the arena imports (pyproject.toml's extras).
MODULES: dict[str, tuple[str, ...]] = {
    "web": ("fastapi", "starlette", "pydantic", "uvicorn", "jinja2", "python_multipart", "fastapi_offline"),
    "postgres": ("psycopg",),
    "celery": ("celery", "kombu", "redis"),
    "rl": (
        "gymnasium",
        "pettingzoo",
        "pyspiel",
        "pyarrow",
    ),  # arena.env, arena export dataset (docs/training.md)
    "metrics": ("prometheus_client",),
}


class MissingExtra(ImportError):
    """`purpose` needs `extra`, which is not installed; the message says how to install it."""

    def __init__(self, extra: str, purpose: str, module: str) -> None:
        self.extra, self.purpose, self.module = extra, purpose, module
        super().__init__(
            f"{purpose} needs the [{extra}] extra (no module {module!r}): pip install '{DIST}[{extra}]'",
            name=module,
        )


def require(extra: str, purpose: str) -> None:
    """Import every module of `extra`, or raise MissingExtra naming `purpose` and the fix."""
    for module in MODULES[extra]:
        try:
            importlib.import_module(module)
        except ImportError:
            raise MissingExtra(extra, purpose, module) from None


def extra_of(exc: BaseException) -> MissingExtra | None:
    """The MissingExtra an ImportError means (one of an extra's modules is absent), else None."""
    if isinstance(exc, MissingExtra):
        return exc
    name = getattr(exc, "name", None)
    if not isinstance(exc, ImportError) or not name:
        return None
    top = name.split(".")[0]
    for extra, modules in MODULES.items():
        if top in modules:
            return MissingExtra(extra, "this command", top)
    return None
