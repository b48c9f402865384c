"""The one table of bot runtimes: per `language` value of bot.toml, what the sandbox gives it.

Every launcher reads this table instead of special cases: the bwrap launcher binds each entry's host
paths read-only and sets its environment, the Docker launcher picks its image and sets the same
environment, the build step gets the entry's build limits, and `arena sandbox check` runs its version
command inside the sandbox. The Python runtime (runtime.py: the arena's virtualenv and the SDK) is
always bound, whatever the language: a bundle's run line may start the Python stdio bridge (as every
stdio bot's did before the referee spoke their lines itself) or `python3`.

Inside the bwrap sandbox /etc is empty, so a toolchain reached through an /etc/alternatives link
(`java`, `javac`) is resolved here to its real folder, which goes first on PATH, and a JDK's
configuration links into /etc (conf/security/java.security -> /etc/java-17-openjdk/...) get that
/etc folder bound; a runtime that reads /etc itself names the folder (`etc`: Mono's /etc/mono). A
toolchain outside /usr (say /opt/go) gets its root bound. Build caches (GOCACHE, CARGO_HOME) live
in the bot's /tmp tmpfs, so nothing is written outside the bundle. A compiler that calls `cc` (an
/etc/alternatives link with no real folder of its own) is told to call gcc (RUSTFLAGS).
"""

from __future__ import annotations

import dataclasses
import functools
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from arena.sandbox.launcher import Limits
from arena.sandbox.runtime import Runtime, bot_runtime

MiB = 1024 * 1024


@dataclass(frozen=True)
class BuildLimits:
    """A build's own limits, where the defaults (Limits) are too tight for its compiler."""

    seconds: int
    memory: int
    pids: int
    tmp_size: int


@dataclass(frozen=True)
class Language:
    name: str  # the `language` value of bot.toml
    tools: tuple[str, ...]  # programs it needs on the sandbox's PATH (run time and build)
    packages: str  # the Debian packages that bring them (scripts/setup.sh installs them)
    version: tuple[str, ...]  # the runtime's version command, run in the sandbox by `arena sandbox check`
    image: str  # the Docker launcher's runtime image (built from docker/)
    env: tuple[tuple[str, str], ...] = ()  # set for the bot and its build, after the Python runtime's
    build: BuildLimits | None = None  # None: the defaults of Limits
    aliases: tuple[str, ...] = ()
    etc: tuple[str, ...] = ()  # /etc folders its runtime reads (bound read-only when present)


PYTHON_IMAGE = "elfern-arena/bot-python:latest"
NATIVE_IMAGE = "elfern-arena/bot-native:latest"
#: Measured on the 2-core development machine (docs/sandbox.md, "Languages"): `javac` of the Java
#: sample takes 2.1 s (1.2 s of CPU), 91 MiB and about 20 threads; `go build` of the Go sample with a
#: cold cache 0.8 s, 51 MiB and a 1.7 MiB GOCACHE. Both run a thread (JVM) or process (go) per core,
#: so pids is what the defaults (64) lack on a large host; memory and /tmp get headroom for bigger
#: bots (Go 1.20 on compiles the standard library into GOCACHE, about 150 MiB).
#: `cargo build --release` of the Rust sample: 8.2 s (2.7 s of CPU), 173 MiB, a 12 MiB target/.
RUST_BUILD = BuildLimits(seconds=300, memory=1024 * MiB, pids=256, tmp_size=64 * MiB)
JVM_BUILD = BuildLimits(seconds=300, memory=768 * MiB, pids=256, tmp_size=64 * MiB)
GO_BUILD = BuildLimits(seconds=300, memory=1024 * MiB, pids=256, tmp_size=256 * MiB)

LANGUAGES: tuple[Language, ...] = (
    Language("python", ("python3",), "python3-venv", ("python3", "--version"), PYTHON_IMAGE),
    Language(
        "node",
        ("node",),
        "nodejs npm",
        ("node", "--version"),
        "elfern-arena/bot-node:latest",
        aliases=("javascript",),
    ),
    Language(
        "typescript",
        ("node", "npm", "tsc"),
        "nodejs npm node-typescript",
        ("tsc", "--version"),
        "elfern-arena/bot-typescript:latest",
        aliases=("ts",),
    ),
    Language("cpp", ("g++", "make"), "g++ make libgrpc++-dev", ("g++", "--version"), NATIVE_IMAGE),
    Language("c", ("gcc",), "gcc", ("gcc", "--version"), NATIVE_IMAGE, aliases=("native",)),
    Language("shell", ("sh", "sed"), "dash sed", ("sed", "--version"), PYTHON_IMAGE),
    Language("ruby", ("ruby",), "ruby", ("ruby", "--version"), "elfern-arena/bot-ruby:latest"),
    Language(
        "java",
        ("java", "javac"),
        "openjdk-17-jdk-headless",
        ("javac", "-version"),  # it reads java.security, which `java -version` does not
        "elfern-arena/bot-java:latest",
        build=JVM_BUILD,
    ),
    Language(
        "go",
        ("go",),
        "golang-go",
        ("go", "version"),
        "elfern-arena/bot-go:latest",
        # no GOFLAGS=-mod=...: a bundle with a vendor/ folder builds from it (Go's default)
        env=(("GOCACHE", "/tmp/go-cache"), ("GOPATH", "/tmp/go"), ("GOPROXY", "off"), ("CGO_ENABLED", "0")),
        build=GO_BUILD,
    ),
    Language(
        "rust",
        ("cargo", "rustc", "gcc"),
        "rustc cargo gcc",
        ("rustc", "--version"),
        "elfern-arena/bot-rust:latest",
        # cargo's home in the tmpfs; rustc links with `cc` by default, an /etc/alternatives link
        env=(("CARGO_HOME", "/tmp/cargo"), ("RUSTFLAGS", "-C linker=gcc"), ("CARGO_TERM_COLOR", "never")),
        build=RUST_BUILD,
    ),
    Language(
        "csharp",
        ("mono", "mcs"),
        "mono-runtime mono-mcs",
        ("mono", "--version"),
        "elfern-arena/bot-csharp:latest",
        aliases=("c#", "cs"),
        env=(("MONO_GC_PARAMS", "max-heap-size=128m"),),
        etc=("/etc/mono",),  # its config (dllmap) and machine.config
    ),
)
_BY_NAME = {n: lang for lang in LANGUAGES for n in (lang.name, *lang.aliases)}


def language(name: str) -> Language | None:
    """The table's entry for a bot.toml `language` value (case-insensitive), or None."""
    return _BY_NAME.get(name.lower())


def _through_etc(path: Path) -> bool:
    """Whether a program's chain of links passes through /etc (/etc/alternatives), which the sandbox
    leaves empty, so that it must be called by its real folder there."""
    for _ in range(16):
        if not path.is_symlink():
            return False
        path = (path.parent / os.readlink(path)).absolute()
        if Path("/etc") in path.parents:
            return True
    return False


def _etc_links(root: Path) -> set[Path]:
    """The /etc folders that links inside a toolchain's tree point into (a JDK's conf/ and lib/)."""
    found: set[Path] = set()
    for sub in ("conf", "lib"):
        for dirpath, dirnames, filenames in os.walk(root / sub):
            for name in dirnames + filenames:
                target = os.readlink(p) if os.path.islink(p := os.path.join(dirpath, name)) else ""
                parts = Path(target).parts
                if len(parts) > 2 and parts[:2] == ("/", "etc") and parts[2] != "ssl":
                    found.add(Path("/etc", parts[2]))
    return {p for p in found if p.is_dir()}


@functools.cache
def runtime(name: str, full_venv: bool = False) -> Runtime:
    """The Python runtime (always: a run line may start python3 or the stdio bridge) plus what this
    language's tools need here; `full_venv`: the whole virtualenv, the start-up benchmark's
    baseline (`bot_runtime`)."""
    base = bot_runtime(full_venv=full_venv)
    entry = language(name)
    if entry is None:
        return base
    binds = list(base.ro_binds)
    first: list[str] = []
    for tool in entry.tools:
        found = shutil.which(tool, path=base.path)
        if found is None:
            continue
        real = Path(found).resolve()
        if _through_etc(Path(found)) and str(real.parent) not in first:
            first.append(str(real.parent))  # e.g. /usr/lib/jvm/java-17-openjdk-amd64/bin for `javac`
        home = real.parent.parent  # the toolchain's own folder, when it has one (a JDK, a Go root)
        if home in (Path("/usr"), Path("/")):
            continue
        if Path("/usr") not in home.parents and home not in binds:
            binds.append(home)  # a toolchain outside /usr: its whole root
        binds += sorted(p for p in _etc_links(home) if p not in binds)
    binds += [Path(p) for p in entry.etc if Path(p).is_dir() and Path(p) not in binds]
    path = ":".join([*first, base.path])
    return dataclasses.replace(base, ro_binds=tuple(binds), path=path, env=base.env + entry.env)


def build_limits(name: str, limits: Limits) -> Limits:
    """The limits a bundle's build runs under: the launch's, raised to the language's build needs."""
    entry = language(name)
    if entry is None or entry.build is None:
        return limits
    b = entry.build
    return dataclasses.replace(
        limits,
        build_seconds=max(limits.build_seconds, b.seconds),
        memory=max(limits.memory, b.memory),
        pids=max(limits.pids, b.pids),
        tmp_size=max(limits.tmp_size, b.tmp_size),
    )


def missing_tools(name: str) -> list[str]:
    """The language's programs not found on the sandbox's PATH (empty: it can run here)."""
    entry = language(name)
    return missing(entry) if entry else []


def missing(entry: Language) -> list[str]:
    path = bot_runtime().path
    return [t for t in entry.tools if shutil.which(t, path=path) is None]
