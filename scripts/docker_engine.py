#!/usr/bin/env python3
"""A private Docker engine, and images built without a registry, for the tests and for trying the stack.

No image can be pulled on the development machines, so every image here is built locally:

- the base: Debian bookworm made by `debootstrap` from this machine's own apt mirror, with the Debian
  packages the project's Dockerfiles install already in it (their `apt-get install` then finds them
  installed and needs no network), imported with `docker import`; then a wheelhouse of the arena's
  Python dependencies with `PIP_NO_INDEX`/`PIP_FIND_LINKS`, so their `pip install` needs none either;
- the project's images (docker/*.Dockerfile) `FROM` that base (`--build-arg BASE_IMAGE`), built with
  `--network none`;
- for the bot runtime images of the other languages, a second base with their toolchains too
  (scripts/docker_toolchains.py), so the plain base and the images built on it stay small.

The debootstrap tarball and the wheelhouse are cached in ARENA_DOCKER_CACHE (default
/tmp/elfern-docker-cache, outside any clone): debootstrap runs once per machine. The engine's data root
is cached there too while no other engine holds it, so a warm run finds its images built.

The engine is Debian's dockerd on its own socket, data root, exec root and pid file, with no bridge and
no iptables rules: it creates no network at all. Containers get `--network none`, or share the
loopback-only network namespace of one such container.

    python3 scripts/docker_engine.py up     # start the engine, build the images; prints DOCKER_HOST
    python3 scripts/docker_engine.py up --languages   # ...and every bot language's runtime image
    python3 scripts/docker_engine.py down   # stop the engine `up` started (by its pid)
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import logging
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

log = logging.getLogger("docker_engine")

REPO = Path(__file__).resolve().parent.parent
CACHE = Path(os.environ.get("ARENA_DOCKER_CACHE", "/tmp/elfern-docker-cache"))
DOCKERD = "/usr/sbin/dockerd"
#: Debian's client, the engine's own version (a newer client elsewhere on PATH may want buildx).
DOCKER = "/usr/bin/docker" if os.path.exists("/usr/bin/docker") else (shutil.which("docker") or "docker")
COMPOSE = shutil.which("docker-compose") or "/usr/bin/docker-compose"
SUITE = "bookworm"
#: Every Debian package a project Dockerfile installs when built for the tests (BOT_TOOLCHAINS="": the
#: Node and C++ toolchains are left out of the test images; docs/deploy.md says so).
BASE_PACKAGES = (
    "python3",
    "python3-venv",
    "bubblewrap",
    "python3-seccomp",
    "util-linux",
    "ca-certificates",
    "gcc",
    "libc6-dev",
    "postgresql",
    "redis-server",
    "haproxy",
)
BASE_IMAGE = "elfern-local/base:latest"
#: tag -> (Dockerfile, build args); built in this order, each FROM the base.
IMAGES = {
    "elfern-arena/bot-python:latest": ("docker/bot-python.Dockerfile", {}),
    "elfern-arena/arena:latest": ("docker/arena.Dockerfile", {"BOT_TOOLCHAINS": ""}),
    "elfern-local/postgres:latest": ("docker/postgres.Dockerfile", {}),
    "elfern-local/redis:latest": ("docker/redis.Dockerfile", {}),
    "elfern-arena/proxy:latest": ("docker/proxy.Dockerfile", {}),
}
STATE = CACHE / "engine-up.json"  # what `up` started, for `down`


def _run(cmd: list[str], **kw) -> subprocess.CompletedProcess[str]:
    kw.setdefault("capture_output", True)
    res = subprocess.run(cmd, text=True, **kw)
    if res.returncode != 0:
        tail = "\n".join(((res.stderr or "") + (res.stdout or "")).strip().splitlines()[-15:])
        raise RuntimeError(f"{' '.join(cmd[:4])}... failed ({res.returncode}):\n{tail}")
    return res


def apt_mirror() -> str:
    """The Debian archive this machine's apt uses for `SUITE` (deb822 .sources or one-line lists)."""
    files = sorted(Path("/etc/apt").glob("sources.list.d/*.sources")) + [Path("/etc/apt/sources.list")]
    files += sorted(Path("/etc/apt").glob("sources.list.d/*.list"))
    for path in files:
        try:
            text = path.read_text()
        except OSError:
            continue
        for stanza in text.split("\n\n"):
            uris = re.search(r"^URIs:\s*(\S+)", stanza, re.M)
            suites = re.search(r"^Suites:\s*(.+)$", stanza, re.M)
            if uris and suites and SUITE in suites.group(1).split():
                return uris.group(1)
        for m in re.finditer(rf"^deb\s+(?:\[[^\]]*\]\s+)?(\S+)\s+{SUITE}\s", text, re.M):
            return m.group(1)
    return "http://deb.debian.org/debian"


class _Lock:
    """An flock on a file in the cache: one builder of a cached artefact at a time."""

    def __init__(self, name: str, blocking: bool = True) -> None:
        CACHE.mkdir(parents=True, exist_ok=True)
        self.fd = os.open(CACHE / name, os.O_CREAT | os.O_RDWR, 0o600)
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
        except BlockingIOError:
            os.close(self.fd)
            raise

    def release(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def _key(*parts: object) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:12]


def _pack_offline(root: Path, tarball: Path) -> None:
    """Tar `root` into `tarball`, made for an image without network first: an empty source list makes
    the Dockerfiles' `apt-get update` a quiet no-op, and their `apt-get install` finds every package
    already installed."""
    (root / "etc/apt/sources.list").write_text(
        "# elfern-local base: built offline by scripts/docker_engine.py; no sources\n"
    )
    for extra in (root / "etc/apt/sources.list.d").glob("*"):
        extra.unlink()
    for junk in ("var/cache/apt/archives", "var/lib/apt/lists"):
        for p in (root / junk).glob("*"):
            if p.is_file():
                p.unlink()
    partial = tarball.with_suffix(".partial")
    _run(["tar", "--numeric-owner", "-C", str(root), "-cf", str(partial), "."], timeout=900)
    partial.rename(tarball)


def base_tarball() -> Path:
    """The debootstrap root filesystem as a tarball, built once per machine (minutes) and cached."""
    mirror = apt_mirror()
    tarball = CACHE / f"debootstrap-{SUITE}-{_key(SUITE, mirror, BASE_PACKAGES)}.tar"
    if tarball.exists():
        return tarball
    lock = _Lock("debootstrap.lock")
    try:
        if tarball.exists():  # another run built it while we waited
            return tarball
        if shutil.which("debootstrap") is None:
            raise RuntimeError("debootstrap is not installed: run scripts/setup.sh (as root)")
        root = Path(tempfile.mkdtemp(prefix="rootfs-", dir=CACHE))
        try:
            log.info("debootstrap %s from %s (once per machine; a few minutes)", SUITE, mirror)
            _run(
                [
                    "debootstrap",
                    "--variant=minbase",
                    f"--include={','.join(BASE_PACKAGES)}",
                    SUITE,
                    str(root),
                    mirror,
                ],
                timeout=1800,
            )
            _pack_offline(root, tarball)
        finally:
            shutil.rmtree(root, ignore_errors=True)
        return tarball
    finally:
        lock.release()


#: What the images' `pip install --require-hashes` read (docker/arena.Dockerfile, bot-python.Dockerfile).
LOCKS = ("requirements-server.lock", "requirements-bot.lock")


def requirements() -> list[Path]:
    """The lock files the images install: the wheelhouse holds exactly their pinned wheels."""
    return [REPO / name for name in LOCKS]


def wheelhouse() -> Path:
    """Binary wheels of the locked versions (`requirements()`, hashes checked) for bookworm's Python 3.11,
    fetched once with pip and cached by the locks' content."""
    locks = requirements()
    house = CACHE / f"wheels-{_key(*(lock.read_text() for lock in locks))}"
    if (house / ".complete").exists():
        return house
    lock = _Lock("wheels.lock")
    try:
        if (house / ".complete").exists():
            return house
        house.mkdir(parents=True, exist_ok=True)
        platforms = ["manylinux_2_28_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64"]
        cmd = [sys.executable, "-m", "pip", "download", "-q", "--only-binary", ":all:", "--no-deps"]
        cmd += ["--require-hashes", "--python-version", "3.11", "--implementation", "cp", "-d", str(house)]
        for plat in platforms:
            cmd += ["--platform", plat]
        for path in locks:
            cmd += ["-r", str(path)]
        _run(cmd, timeout=900)
        (house / ".complete").write_text("".join(f"{path.name}\n" for path in locks))
        return house
    finally:
        lock.release()


class Engine:
    """A private dockerd: its own socket, data root, exec root, pid file and (empty) config file."""

    def __init__(self, data_root: Path | None = None) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="elfern-dockerd-", dir="/tmp"))
        self.root.chmod(0o700)
        self._data_lock: _Lock | None = None
        if data_root is None:
            try:  # the cached data root keeps built images between runs; one engine at a time
                self._data_lock = _Lock("engine-data.lock", blocking=False)
                data_root = CACHE / "engine-data"
            except BlockingIOError:
                log.info("the cached data root is in use by another engine: starting from an empty one")
                data_root = self.root / "data"
        self.data_root = data_root
        self.socket = self.root / "docker.sock"
        self.host = f"unix://{self.socket}"
        self.proc: subprocess.Popen[bytes] | None = None
        self.log_path = self.root / "dockerd.log"
        self._background: list[threading.Thread] = []

    # -- the engine ----------------------------------------------------------------------------------
    def start(self, timeout: float = 90.0) -> Engine:
        if not os.path.exists(DOCKERD):
            raise RuntimeError(f"{DOCKERD} is missing: install Debian's docker.io (scripts/setup.sh)")
        config = self.root / "daemon.json"
        config.write_text("{}\n")  # not the host's /etc/docker/daemon.json
        cmd = [
            DOCKERD,
            "--host",
            self.host,
            "--data-root",
            str(self.data_root),
            "--exec-root",
            str(self.root / "exec"),
            "--pidfile",
            str(self.root / "dockerd.pid"),
            "--config-file",
            str(config),
            "--bridge=none",
            "--iptables=false",
            "--ip6tables=false",
            "--ip-forward=false",
            "--ip-masq=false",
            "--userland-proxy=false",
            "--log-level=warn",
        ]
        # dockerd inherits the cached data root's lock (an flock lives as long as any process holds
        # its file), so an engine orphaned by a killed test run keeps it: the next run then starts
        # from an empty data root instead of a second dockerd on the same one (containerd then
        # times out on its boltdb, and every Docker test fails).
        held = (self._data_lock.fd,) if self._data_lock is not None else ()
        with open(self.log_path, "ab") as out:
            self.proc = subprocess.Popen(
                cmd,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=out,
                start_new_session=True,
                pass_fds=held,
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"dockerd exited ({self.proc.returncode}):\n{self.log_tail()}")
            probe = subprocess.run(
                [DOCKER, "--host", self.host, "version", "--format", "{{.Server.Version}}"],
                capture_output=True,
                text=True,
            )
            if probe.returncode == 0 and probe.stdout.strip():
                log.info("dockerd %s answers on %s", probe.stdout.strip(), self.socket)
                self._sweep()
                return self
            time.sleep(0.3)
        self.stop()
        raise RuntimeError(f"dockerd did not answer within {timeout:.0f} s:\n{self.log_tail()}")

    def log_tail(self, lines: int = 20) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def _sweep(self) -> None:
        """A cached data root may hold what a killed run left: containers and volumes go, images stay."""
        ids = self.docker("ps", "-aq").stdout.split()
        if ids:
            self.docker("rm", "--force", *ids)
        vols = self.docker("volume", "ls", "-q").stdout.split()
        if vols:
            self.docker("volume", "rm", "--force", *vols)
        self.docker("image", "prune", "--force")

    def env(self) -> dict[str, str]:
        """The client's environment for this engine (docker, docker-compose, the arena's launcher)."""
        return {**os.environ, "DOCKER_HOST": self.host}

    def docker(
        self, *args: str, timeout: float = 600, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        cmd = [DOCKER, "--host", self.host, *args]
        if check:
            return _run(cmd, timeout=timeout)
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)

    def in_background(self, work: Callable[[], object], name: str) -> None:
        """Run `work` in a thread now (a long preparation, such as a tarball), which `stop` waits for;
        a failure is logged, for whoever needs its result to try again and raise."""

        def run() -> None:
            try:
                work()
            except Exception:
                log.exception("%s in the background failed", name)

        thread = threading.Thread(target=run, name=name, daemon=True)
        thread.start()
        self._background.append(thread)

    def stop(self) -> None:
        """SIGTERM to our dockerd (it stops its containers and its containerd), then SIGKILL to it and
        to any process of ours it left (found by our exec root on its command line), by pid; a
        background preparation is waited for (it leaves no half-made root behind)."""
        for thread in self._background:
            thread.join()
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=40)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        for pid in _pids_mentioning(str(self.root)):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        for mount in reversed(_mounts_under((self.root, self.data_root))):
            subprocess.run(["umount", "--lazy", mount], capture_output=True)
        if self._data_lock is not None:
            self._data_lock.release()
        shutil.rmtree(self.root, ignore_errors=True)

    # -- images --------------------------------------------------------------------------------------
    def has_image(self, tag: str) -> bool:
        return self.docker("image", "inspect", tag, check=False).returncode == 0

    def build_base(self, tarball: Path | None = None, tag: str = BASE_IMAGE) -> str:
        """`tag`: a root tarball (default: the debootstrap base) imported, plus the wheelhouse for pip
        (no index)."""
        tarball, house = tarball or base_tarball(), wheelhouse()
        rootfs = f"elfern-local/debootstrap:{tarball.stem.rsplit('-', 1)[-1]}"
        if not self.has_image(rootfs):
            log.info("docker import %s", tarball.name)
            self.docker("import", str(tarball), rootfs, timeout=900)
        context = Path(tempfile.mkdtemp(prefix="base-ctx-", dir=self.root))
        try:
            shutil.copytree(house, context / "wheels", ignore=shutil.ignore_patterns(".complete"))
            (context / "Dockerfile").write_text(
                f"FROM {rootfs}\n"
                "COPY wheels /opt/wheels\n"
                "ENV PIP_NO_INDEX=1 PIP_FIND_LINKS=/opt/wheels PIP_DISABLE_PIP_VERSION_CHECK=1\n"
                'CMD ["/bin/bash"]\n'
            )
            self.docker("build", "--network", "none", "-q", "-t", tag, str(context), timeout=900)
        finally:
            shutil.rmtree(context, ignore_errors=True)
        return tag

    def build_from(self, images: dict[str, tuple[str, dict[str, str]]], base: str) -> dict[str, str]:
        for tag, (dockerfile, args) in images.items():
            cmd = ["build", "--network", "none", "-q", "-f", str(REPO / dockerfile), "-t", tag]
            for name, value in {"BASE_IMAGE": base, **args}.items():
                cmd += ["--build-arg", f"{name}={value}"]
            started = time.monotonic()
            self.docker(*cmd, str(REPO), timeout=900)
            log.info("docker build %s: %.1f s", tag, time.monotonic() - started)
        return {tag: tag for tag in images}

    def build_images(self) -> dict[str, str]:
        """Every image of IMAGES from the local base; Docker's layer cache makes a repeat quick."""
        return self.build_from(IMAGES, self.build_base())


def _pids_mentioning(text: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                if text.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def _mounts_under(roots: tuple[Path, ...]) -> list[str]:
    prefixes = tuple(str(r) + "/" for r in roots)
    out = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        point = line.split()[4].encode().decode("unicode_escape")
        if point.startswith(prefixes):
            out.append(point)
    return out


def main(argv: list[str]) -> int:
    logging.basicConfig(level=logging.INFO, format="docker_engine: %(message)s")
    if argv[:1] == ["up"]:
        engine = Engine(data_root=CACHE / "engine-data-up").start()  # not the tests' data root
        engine.build_images()
        if "--languages" in argv:
            import docker_toolchains  # beside this file, which is on sys.path when run as a script

            docker_toolchains.build_language_images(engine)
        STATE.write_text(json.dumps({"pid": engine.proc.pid, "root": str(engine.root)}))
        print(f"export DOCKER_HOST={engine.host}")
        return 0
    if argv[:1] == ["down"]:
        try:
            state = json.loads(STATE.read_text())
        except (OSError, ValueError):
            print("docker_engine: no engine started by `up` is recorded", file=sys.stderr)
            return 1
        try:
            os.kill(state["pid"], signal.SIGTERM)
        except ProcessLookupError:
            pass
        STATE.unlink()
        return 0
    print(__doc__.strip().splitlines()[-2].strip(), file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
