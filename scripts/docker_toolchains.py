#!/usr/bin/env python3
"""The bot runtime images of every language for the private engine of scripts/docker_engine.py,
built offline like the rest.

Their Dockerfiles (docker/bot-*.Dockerfile but bot-python) `apt-get install` toolchains (a JDK, Go,
Rust, Mono, Node, g++ and Debian's gRPC) that the plain base lacks, and these builds have no
network. So they are built on a second base: the plain debootstrap root with TOOLCHAIN_PACKAGES
installed by apt-get in a chroot of it (apt resolves their dependencies; a `debootstrap --include`
of them fails on npm's), cached as its own tarball under its own key, so that the plain base and
the arena, PostgreSQL and Redis images on it stay small. Those built on bot-python get it built on
that base (PYTHON_TOOLCHAINS_IMAGE).

    python3 scripts/docker_engine.py up --languages   # the engine, its images, and these
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import docker_engine as de  # (the one already loaded, when the tests registered it)

log = de.log

#: Every further Debian package the bot runtime images install (docker/bot-*.Dockerfile but bot-python).
TOOLCHAIN_PACKAGES = (
    "nodejs",
    "npm",
    "node-typescript",
    "build-essential",
    "pkg-config",
    "make",
    "libgrpc++-dev",
    "libprotobuf-dev",
    "protobuf-compiler-grpc",
    "protobuf-compiler",
    "ruby",
    "openjdk-17-jdk-headless",
    "golang-go",
    "rustc",
    "cargo",
    "gcc",
    "libc6-dev",
    "mono-runtime",
    "mono-mcs",
)
TOOLCHAINS_IMAGE = "elfern-local/base-toolchains:latest"

#: The bot runtime images of the other languages (arena/sandbox/languages.py), built on TOOLCHAINS_IMAGE by
#: `build_language_images`, in this order; those built on bot-python get it built on that base.
PYTHON_TOOLCHAINS_IMAGE = "elfern-local/bot-python-toolchains:latest"
LANGUAGE_IMAGES = {
    PYTHON_TOOLCHAINS_IMAGE: ("docker/bot-python.Dockerfile", {}),
    # the shared grpc-js would come from the npm registry: the bundles bring theirs (.npm-cache)
    "elfern-arena/bot-node:latest": ("docker/bot-node.Dockerfile", {"NODE_MODULES": ""}),
    "elfern-arena/bot-typescript:latest": (
        "docker/bot-typescript.Dockerfile",
        {"NODE_IMAGE": "elfern-arena/bot-node:latest"},
    ),
    **{
        f"elfern-arena/bot-{name}:latest": (
            f"docker/bot-{name}.Dockerfile",
            {"PYTHON_IMAGE": PYTHON_TOOLCHAINS_IMAGE},
        )
        for name in ("native", "ruby", "java", "go", "rust", "csharp")
    },
}


def toolchains_tarball() -> Path:
    """The plain base's root plus TOOLCHAIN_PACKAGES, installed by apt-get in a chroot of it from the
    same mirror (apt resolves their dependencies; debootstrap's `--include` cannot configure npm's),
    as a tarball built once per machine and cached under its own key."""
    mirror = de.apt_mirror()
    key = de._key(de.SUITE, mirror, de.BASE_PACKAGES, TOOLCHAIN_PACKAGES)
    tarball = de.CACHE / f"toolchains-{de.SUITE}-{key}.tar"
    if tarball.exists():
        return tarball
    lock = de._Lock(f"{tarball.name}.lock")
    try:
        if tarball.exists():
            return tarball
        plain = de.base_tarball()
        root = Path(tempfile.mkdtemp(prefix="rootfs-", dir=de.CACHE))
        try:
            log.info(
                "apt-get install %d toolchains into the base (once per machine; minutes)",
                len(TOOLCHAIN_PACKAGES),
            )
            de._run(["tar", "--numeric-owner", "-C", str(root), "-xf", str(plain)], timeout=600)
            (root / "etc/apt/sources.list").write_text(f"deb {mirror} {de.SUITE} main\n")
            resolv = root / "etc/resolv.conf"
            kept = resolv.read_bytes() if resolv.is_file() else None
            shutil.copyfile("/etc/resolv.conf", resolv)
            env = {
                "PATH": "/usr/sbin:/usr/bin:/sbin:/bin",
                "LC_ALL": "C",
                "DEBIAN_FRONTEND": "noninteractive",
            }
            de._run(["mount", "-t", "proc", "proc", str(root / "proc")])  # a JDK's postinst runs java
            try:
                de._run(["chroot", str(root), "apt-get", "update", "-q"], env=env, timeout=900)
                unsafe_io = "Dpkg::Options::=--force-unsafe-io"  # no fsync per file: a throwaway root
                install = ["apt-get", "install", "-y", "-q", "--no-install-recommends", "-o", unsafe_io]
                de._run(["chroot", str(root), *install, *TOOLCHAIN_PACKAGES], env=env, timeout=1800)
            finally:
                subprocess.run(["umount", str(root / "proc")], capture_output=True)
            if kept is None:
                resolv.unlink()
            else:
                resolv.write_bytes(kept)
            de._pack_offline(root, tarball)
        finally:
            if not de._mounts_under((root,)):  # removing 2 GB takes minutes: not while others wait
                threading.Thread(target=shutil.rmtree, args=(root,), kwargs={"ignore_errors": True}).start()
        return tarball
    finally:
        lock.release()


def build_language_images(engine: de.Engine) -> dict[str, str]:
    """Every image of LANGUAGE_IMAGES, on the toolchains base (the first time: TOOLCHAIN_PACKAGES
    installed into the plain base's root, cached like it)."""
    base = engine.build_base(toolchains_tarball(), TOOLCHAINS_IMAGE)
    return engine.build_from(LANGUAGE_IMAGES, base)


def prefetch(engine: de.Engine) -> None:
    """Start making the toolchains base's tarball (on a machine's first run, minutes of apt-get) while
    the engine does other work; `build_language_images` then waits for it (the tarball's lock)."""
    engine.in_background(toolchains_tarball, "making the toolchains base")
