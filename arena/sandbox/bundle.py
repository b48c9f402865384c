"""Bot bundles: a directory, `.tar.gz` or `.zip` holding a `bot.toml` manifest (referee issue).

    name = "tactician"
    language = "python"
    run = ["python3", "bot.py"]     # run in the bundle directory
    build = ["make"]                # optional; runs once, sandboxed, before the bot's first match
    protocol = "grpc"               # or "stdio"

Archives are unpacked (see `archive.py`) and bundles with a `build` step are copied into a cache
keyed by their content hash, so the build writes into a private copy, runs once per content, and
the author's directory is never written to. Plain directory bundles are used in place (read-only).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import tomllib
from dataclasses import dataclass
from pathlib import Path

from arena import limits
from arena.bundlehash import TreeTooLarge, tree_hash
from arena.sandbox.archive import (
    MAX_BUNDLE_BYTES,
    MAX_MEMBERS,
    BundleError,
    extract_archive,
    is_archive,
)
from arena.sandbox.links import check_tree, read_inside

MANIFEST = "bot.toml"
STAGED_MARK = "staged"
PROTOCOLS = ("grpc", "stdio")
#: The SDK's stdio bridge (docs/stdio.md): how a stdio bot plays a remote referee from its author's
#: machine, and the benchmarks' baseline; every launcher gives a stdio bot's pipes to the referee.
STDIO_BRIDGE = ("python3", "-m", "arena.sdk.stdio_bridge", "--")
__all__ = [
    "Bundle",
    "BundleError",
    "MANIFEST",
    "bundle_cache_dir",
    "chown_tree",
    "is_staged",
    "load_bundle",
    "restore_owner",
    "cached_build_log",
    "record_build",
    "staged_for_build",
]


@dataclass(frozen=True)
class Bundle:
    path: Path
    name: str
    language: str
    run: tuple[str, ...]
    build: tuple[str, ...] | None = None
    protocol: str = "grpc"
    version: str = ""
    source: Path | None = None  # what the user named (archive or directory), for messages

    @property
    def build_record(self) -> Path:
        """Where a staged bundle's build result is kept (next to, not inside, the bundle)."""
        return self.path.parent / "build.json"


def bundle_cache_dir() -> Path:
    """Where unpacked archives and built bundles live: $ARENA_BUNDLE_CACHE or ~/.cache/elfern-arena."""
    env = os.environ.get("ARENA_BUNDLE_CACHE")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "elfern-arena" / "bundles"


def _parse_manifest(root: Path, source: Path) -> Bundle:
    manifest = root / MANIFEST
    if not manifest.is_file() and not manifest.is_symlink():
        raise BundleError(f"{source}: no {MANIFEST} found; create one with name, language and run = [...]")
    try:  # never through a link: the bytes read are the bundle's own
        data = tomllib.loads(read_inside(root, MANIFEST, source).decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise BundleError(f"{source}/{MANIFEST}: not valid TOML: {exc}") from None
    where = f"{source}/{MANIFEST}"
    for key in ("name", "language", "version", "protocol"):
        if key in data and not isinstance(data[key], str):
            raise BundleError(
                f'{where}: `{key}` must be a string, not {_toml_type(data[key])}, e.g. {key} = "{_EXAMPLES[key]}"'
            )
    name = data.get("name") or source.name.split(".")[0]
    run = data.get("run")
    if not isinstance(run, list) or not run or not all(isinstance(a, str) and a for a in run):
        got = (
            _toml_type(run)
            if not isinstance(run, list)
            else "an empty list"
            if not run
            else "a list with a non-string"
        )
        raise BundleError(
            f'{where}: `run` must be a non-empty list of strings, not {got}, e.g. run = ["python3", "bot.py"]'
        )
    build = data.get("build")
    if build is not None and (not isinstance(build, list) or not all(isinstance(a, str) for a in build)):
        raise BundleError(
            f'{where}: `build` must be a list of strings, not {_toml_type(build)}, e.g. build = ["make"]'
        )
    protocol = data.get("protocol", "grpc")
    if protocol not in PROTOCOLS:
        raise BundleError(f"{where}: protocol = {protocol[:40]!r} is not one of {', '.join(PROTOCOLS)}")
    _check_lengths(where, data, run, build)
    return Bundle(
        path=root,
        name=name,
        language=data.get("language", "unknown"),
        run=tuple(run),
        build=tuple(build) if build else None,
        protocol=protocol,
        version=data.get("version", ""),
        source=source,
    )


_TEXTS = {
    "name": limits.NAME,
    "language": limits.LANGUAGE,
    "version": limits.VERSION,
    "protocol": limits.PROTOCOL,
}


def _check_lengths(where: str, data: dict, run: list[str], build: list[str] | None) -> None:
    """Every field within its maximum (`arena.limits`, docs/security.md): a manifest's text is
    stored and served to everyone, so one huge field would make every listing of bots huge."""
    try:
        for key, limit in _TEXTS.items():
            if isinstance(data.get(key), str):
                limit.check(data[key], f"`{key}`")
        for key, args in (("run", run), ("build", build or [])):
            if len(args) > limits.COMMAND_ARGS:
                raise BundleError(
                    f"{where}: `{key}` has {len(args):,} strings; at most {limits.COMMAND_ARGS} are allowed: "
                    "put the command in a script in the bundle"
                )
            for arg in args:
                limits.COMMAND_ARG.check(arg, f"a string of `{key}`")
    except limits.FieldTooLong as exc:
        raise BundleError(f"{where}: {exc}") from None


_EXAMPLES = {"name": "mybot", "language": "python", "version": "1.0", "protocol": "grpc"}
_TOML_TYPES = {bool: "a boolean", int: "an integer", float: "a number", list: "a list", dict: "a table"}


def _toml_type(value: object) -> str:
    """What a TOML value is, in the words of the TOML spec (for 'must be X, not Y')."""
    if value is None:
        return "missing"
    for kind, words in _TOML_TYPES.items():
        if type(value) is kind:
            return words
    return "a string" if isinstance(value, str) else "a date or time"


def missing_program(bundle: Bundle, *, host_runtime: bool = True) -> str | None:
    """Why the bundle's `run` program cannot start, or None: a path (with a '/') must be a file in
    the bundle; a bare name must be on the runtime's PATH. Checked at submit time, after the build
    (which may produce the program), so a bot that could never start is refused instead of failing
    every match as STARTUP_FAILED and being suspended for it. `host_runtime` False (docker: the
    image is the runtime) checks only the bundle's own files."""
    program = bundle.run[0]
    if "/" in program:
        target = (bundle.path / program).resolve() if not program.startswith("/") else Path(program)
        inside = program.startswith("/") or target.is_relative_to(bundle.path.resolve())
        if inside and target.is_file():
            return None
        where = "on this machine" if program.startswith("/") else "in the bundle"
        return f"`run` starts {program[:80]!r}, which is not a file {where}" + (
            " after its build" if bundle.build else ""
        )
    if host_runtime and shutil.which(program) is None:
        return f"`run` starts {program[:80]!r}, which is not a program of the runtime (not on PATH)"
    return None


def is_staged(bundle: Bundle) -> bool:
    """Whether `bundle.path` is a private copy in the cache (and may be written by its build)."""
    return (bundle.path.parent / STAGED_MARK).is_file() and bundle.path.parent.parent == bundle_cache_dir()


def staged_for_build(bundle: Bundle) -> Bundle:
    """The bundle itself when it is a private staged copy, else a staged copy (never build in the
    author's folder)."""
    return bundle if is_staged(bundle) else load_bundle(bundle.source or bundle.path)


def cached_build_log(bundle: Bundle) -> str | None:
    """The log of this content's successful build, or None when it has not been built yet."""
    try:
        data = json.loads(bundle.build_record.read_text())
    except (OSError, ValueError):
        return None
    return str(data.get("log", "")) if data.get("ok") else None


def record_build(bundle: Bundle, log: str) -> None:
    """Remember a successful build (next to the bundle, where the bot cannot write)."""
    bundle.build_record.write_text(json.dumps({"ok": True, "log": log}))


def _file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()[:24]


def _stage(key: str, fill) -> Path:
    """Create `<cache>/<key>/bundle` once (atomically, safe against concurrent loaders)."""
    cache = bundle_cache_dir()
    final = cache / key
    if (final / "bundle").is_dir():
        return final / "bundle"
    cache.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{key}.", dir=cache))
    try:
        fill(tmp / "bundle")
        for dirpath, dirnames, filenames in os.walk(tmp / "bundle"):
            for name in dirnames + filenames:
                full = os.path.join(dirpath, name)
                if not os.path.islink(full):
                    mode = os.lstat(full).st_mode
                    os.chmod(full, 0o755 if (os.path.isdir(full) or mode & 0o111) else 0o644)
        (tmp / STAGED_MARK).write_text("staged by arena.sandbox.bundle; safe to delete with the folder\n")
        os.chmod(tmp, 0o755)
        os.chmod(tmp / "bundle", 0o755)
        try:
            os.rename(tmp, final)
        except OSError:  # another loader won the race
            shutil.rmtree(tmp, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return final / "bundle"


def _unpack(archive: Path, dest: Path, max_bytes: int) -> None:
    extract_archive(archive, dest, max_bytes)
    # An archive holding a single top folder (`tar czf bot.tgz mybot/`) is the common case: lift it.
    entries = list(dest.iterdir())
    if (
        not (dest / MANIFEST).exists()
        and len(entries) == 1
        and entries[0].is_dir()
        and not entries[0].is_symlink()
    ):
        lifted = dest / ".arena-lift"
        entries[0].rename(lifted)
        for child in list(lifted.iterdir()):
            child.rename(dest / child.name)
        lifted.rmdir()
        check_tree(dest, archive)  # lifting moves every link one level up: check them again


def load_bundle(path: str | Path, max_bytes: int = MAX_BUNDLE_BYTES) -> Bundle:
    """Read and validate a bundle (directory or archive); unpack or stage it when needed."""
    source = Path(path)
    if not source.exists():
        raise BundleError(
            f"{path}: no such bot bundle (give a directory with {MANIFEST}, a .tar.gz or a .zip)"
        )
    source = source.resolve()
    if source.is_file():
        if not is_archive(source):
            raise BundleError(f"{path}: not a bot bundle; expected a directory, .tar.gz, .tgz or .zip")
        if source.stat().st_size > max_bytes:
            raise BundleError(f"{path}: archive larger than {max_bytes // (1024 * 1024)} MiB")
        staged = _stage("a-" + _file_digest(source), lambda dest: _unpack(source, dest, max_bytes))
        check_tree(staged, source)  # again on every load: a build may have changed the staged copy
        try:
            return _parse_manifest(staged, source)
        except BundleError:  # this content can never load: keep no unpacked copy of it
            shutil.rmtree(staged.parent, ignore_errors=True)
            raise
    if not source.is_dir():
        raise BundleError(f"{path}: not a bot bundle directory (expected a folder with {MANIFEST})")
    check_tree(source, source)  # before any byte of the folder is read: no link may lead out of it
    bundle = _parse_manifest(source, source)
    try:  # the store's hash of the same files; every file counts here, as the copy takes them all
        digest = tree_hash(source, (), max_bytes=max_bytes, max_members=MAX_MEMBERS)
    except TreeTooLarge as exc:
        raise BundleError(str(exc)) from None
    if bundle.build:
        staged = _stage("d-" + digest, lambda dest: shutil.copytree(source, dest, symlinks=True))
        check_tree(staged, source)
        return _parse_manifest(staged, source)
    return bundle


def chown_tree(root: Path, uid: int) -> None:
    """Hand a staged bundle to a build's uid, so that the build can write into it."""
    os.lchown(root, uid, uid)
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            os.lchown(os.path.join(dirpath, name), uid, uid)


def restore_owner(root: Path) -> None:
    """After a build: root owns everything again and nothing is group/other-writable or setuid."""
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            full = os.path.join(dirpath, name)
            os.lchown(full, 0, 0)
            if not os.path.islink(full):
                os.chmod(
                    full, (os.lstat(full).st_mode & 0o755) | 0o444 | (0o111 if os.path.isdir(full) else 0)
                )
    os.lchown(root, 0, 0)
    os.chmod(root, 0o755)
