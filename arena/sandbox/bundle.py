"""Bot bundles: a directory holding a `bot.toml` manifest, as in the referee issue.

    name = "tactician"
    language = "python"
    run = ["python3", "bot.py"]     # run in the bundle directory
    build = ["make"]                # optional; runs once before the bot's first match
    protocol = "grpc"               # or "stdio"
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

MANIFEST = "bot.toml"
PROTOCOLS = ("grpc", "stdio")


class BundleError(ValueError):
    """A bundle that cannot be used; the message names the file and the fix."""


@dataclass(frozen=True)
class Bundle:
    path: Path
    name: str
    language: str
    run: tuple[str, ...]
    build: tuple[str, ...] | None = None
    protocol: str = "grpc"
    version: str = ""


def load_bundle(path: str | Path) -> Bundle:
    """Read and validate a bundle directory's `bot.toml`."""
    root = Path(path).resolve()
    manifest = root / MANIFEST
    if not root.is_dir():
        raise BundleError(f"{path}: not a bot bundle directory (expected a folder with {MANIFEST})")
    if not manifest.is_file():
        raise BundleError(f"{path}: no {MANIFEST} found; create one with name, language and run = [...]")
    try:
        data = tomllib.loads(manifest.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise BundleError(f"{manifest}: not valid TOML: {exc}") from None
    name = data.get("name") or root.name
    run = data.get("run")
    if not isinstance(run, list) or not run or not all(isinstance(a, str) for a in run):
        raise BundleError(f'{manifest}: `run` must be a non-empty list of strings, e.g. run = ["python3", "bot.py"]')
    build = data.get("build")
    if build is not None and (not isinstance(build, list) or not all(isinstance(a, str) for a in build)):
        raise BundleError(f'{manifest}: `build` must be a list of strings, e.g. build = ["make"]')
    protocol = data.get("protocol", "grpc")
    if protocol not in PROTOCOLS:
        raise BundleError(f"{manifest}: protocol = {protocol!r} is not one of {', '.join(PROTOCOLS)}")
    return Bundle(
        path=root,
        name=str(name),
        language=str(data.get("language", "unknown")),
        run=tuple(run),
        build=tuple(build) if build else None,
        protocol=protocol,
        version=str(data.get("version", "")),
    )
