"""Separate "hosts" on one machine, for the deploy tests and scripts/bench_hosts.py: each host is a network namespace of its own
(`ip netns add`), a mount namespace in which one folder, the same path on every host, is a private
tmpfs (so no host sees another's files there), and a UTS namespace with its own hostname. Hosts are
joined only by veth links, each its own /24 in 10.213.0.0/16, with no route beyond them: nothing in a
host reaches the machine's own services or any outside address.

    topo = Topology()                         # root: /tmp/elfern-hosts-XXXX, a tmpfs of its own on each host
    db, server = topo.add_host("db"), topo.add_host("server")
    link = topo.link(db, server)              # link.a_addr: db's address, link.b_addr: server's
    proc = server.popen(["arena", "serve", ...], env=...)
    server.kill_all()                         # the host is lost: every process in it, by pid
    topo.close()                              # every process, namespace and link made here, also on failure

Shared by the deploy tests that need separate machines (the server replicas behind a proxy, the
Celery bench on this topology): `start_db` gives a host its own PostgreSQL and Redis, `arena_env`
and `start_worker` put the arena on hosts. Needs root, `ip`, `nsenter`, `unshare`, `runuser`.
"""

from __future__ import annotations

import glob
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

NET = "10.213"  # every link's /24 is NET.<n>.0/24; used only inside these namespaces


def available() -> str | None:
    """Why hosts cannot be built here, or None."""
    if os.geteuid() != 0:
        return "network and mount namespaces need root"
    missing = [t for t in ("ip", "nsenter", "unshare", "mount", "runuser") if shutil.which(t) is None]
    return f"missing {', '.join(missing)}" if missing else None


def _ns_inode(pid: int, kind: str) -> str | None:
    try:
        return os.readlink(f"/proc/{pid}/ns/{kind}")
    except OSError:
        return None


def _parents() -> dict[int, int]:
    """pid -> parent pid of every live process (zombies aside)."""
    out: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] not in ("Z", "X"):
            out[int(entry)] = int(fields[1])
    return out


@dataclass
class Host:
    """One host: its namespaces are held by `anchor` (a `sleep` inside them)."""

    name: str
    netns: str  # the name under /run/netns
    root: Path  # the same path on every host; a private tmpfs on each
    anchor: subprocess.Popen
    procs: list[subprocess.Popen] = field(default_factory=list)

    @property
    def home(self) -> Path:
        """This host's own folder for its data: `root/<name>`, seen by no other host."""
        return self.root / self.name

    def command(self, argv: list[str], cwd: Path | None = None) -> list[str]:
        """`argv` run inside this host's network, mount and UTS namespaces."""
        wd = [f"--wdns={cwd}"] if cwd else []
        return ["nsenter", "-t", str(self.anchor.pid), "--net", "--mount", "--uts", *wd, "--", *argv]

    def popen(self, argv: list[str], cwd: Path | None = None, **kwargs) -> subprocess.Popen:
        """Start `argv` in this host (its own session); it is killed by `kill_all`/`Topology.close`."""
        kwargs.setdefault("start_new_session", True)
        proc = subprocess.Popen(self.command(argv, cwd), **kwargs)
        self.procs.append(proc)
        return proc

    def run(self, argv: list[str], timeout: float = 300, **kwargs) -> subprocess.CompletedProcess:
        kwargs.setdefault("capture_output", True)
        kwargs.setdefault("text", True)
        return subprocess.run(self.command(argv), timeout=timeout, **kwargs)

    def processes(self) -> set[int]:
        """Every live process of this host: those in its network namespace, and their descendants
        (a sandboxed bot has a network namespace of its own, inside the host's process tree)."""
        mine = _ns_inode(self.anchor.pid, "net") if self.anchor.poll() is None else None
        parents = _parents()
        found = {pid for pid in parents if mine is not None and _ns_inode(pid, "net") == mine}
        found |= {p.pid for p in self.procs if p.pid in parents}
        grew = True
        while grew:
            more = {pid for pid, ppid in parents.items() if ppid in found and pid not in found}
            found |= more
            grew = bool(more)
        return found

    def kill_all(self, timeout: float = 30) -> set[int]:
        """The host is lost: SIGKILL every process in it, by pid, until none is left; the pids killed."""
        killed: set[int] = set()
        deadline = time.monotonic() + timeout
        while True:
            alive = self.processes() - {os.getpid()}
            if not alive:
                break
            if time.monotonic() > deadline:
                raise TimeoutError(f"host {self.name}: processes {sorted(alive)} survive SIGKILL")
            for pid in alive:
                try:
                    os.kill(pid, signal.SIGKILL)
                    killed.add(pid)
                except ProcessLookupError:
                    pass
            for proc in (self.anchor, *self.procs):
                try:
                    proc.wait(timeout=0.05)
                except subprocess.TimeoutExpired:
                    pass
        return killed


@dataclass(frozen=True)
class Link:
    """A veth pair: `a_if` in host `a` with address `a_addr`, `b_if` in `b` with `b_addr` (one /24)."""

    a: Host
    b: Host
    a_if: str
    b_if: str
    a_addr: str
    b_addr: str

    def set_up(self, up: bool) -> None:
        """Cut (False) or restore (True) the link, at `b`'s end: packets are dropped, no reset is sent."""
        state = "up" if up else "down"
        _ip("-n", self.b.netns, "link", "set", self.b_if, state)


def _ip(*args: str) -> None:
    out = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30)
    if out.returncode != 0:
        raise RuntimeError(f"ip {' '.join(args)}: {out.stderr.strip()}")


class Topology:
    """Hosts and links made by this object, all removed by `close` (idempotent)."""

    def __init__(self) -> None:
        self.tag = uuid.uuid4().hex[:6]
        self.root = Path(tempfile.mkdtemp(prefix="elfern-hosts-"))
        self.hosts: dict[str, Host] = {}
        self.links: list[Link] = []
        self._netns: list[str] = []  # every namespace added, deleted by close even if its host failed
        self._subnet = 0

    def add_host(self, name: str) -> Host:
        """A new host named `name` (its hostname too), with loopback up and its tmpfs at `root`."""
        netns = f"elfern-{self.tag}-{name}"
        _ip("netns", "add", netns)
        self._netns.append(netns)
        script = (
            'hostname "$1" && mount -t tmpfs -o mode=0755,size=1g "elfern-$1" "$2" && mkdir -m 0755 "$2/$1"'
            " && echo ready && exec sleep infinity"
        )
        anchor = subprocess.Popen(
            ["nsenter", f"--net=/run/netns/{netns}", "unshare", "--mount", "--uts", "--propagation", "private",
             "--", "sh", "-c", script, "sh", name, str(self.root)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
        )  # fmt: skip
        host = Host(name, netns, self.root, anchor)
        self.hosts[name] = host
        assert anchor.stdout is not None
        if anchor.stdout.readline().strip() != "ready":
            raise RuntimeError(f"host {name} did not start: {anchor.communicate(timeout=10)[1]}")
        _ip("-n", netns, "link", "set", "lo", "up")
        return host

    def link(self, a: Host, b: Host) -> Link:
        """A veth pair between `a` and `b`, both ends up, on the next free /24."""
        self._subnet += 1
        n = self._subnet
        a_if, b_if = f"el{self.tag}{n}a", f"el{self.tag}{n}b"  # at most 15 characters
        _ip("-n", a.netns, "link", "add", a_if, "type", "veth", "peer", "name", b_if, "netns", b.netns)
        link = Link(a, b, a_if, b_if, f"{NET}.{n}.1", f"{NET}.{n}.2")
        for host, ifname, addr in ((a, a_if, link.a_addr), (b, b_if, link.b_addr)):
            _ip("-n", host.netns, "addr", "add", f"{addr}/24", "dev", ifname)
            _ip("-n", host.netns, "link", "set", ifname, "up")
        self.links.append(link)
        return link

    def close(self) -> None:
        """Kill every process of every host (by pid), delete the namespaces (their veths go with
        them), and remove the root folder."""
        errors: list[str] = []
        for host in self.hosts.values():
            try:
                host.kill_all()
            except Exception as exc:  # clean up the rest anyway, then say so
                errors.append(str(exc))
            for proc in (host.anchor, *host.procs):
                try:
                    proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    errors.append(f"host {host.name}: pid {proc.pid} still runs")
                for stream in (proc.stdout, proc.stderr):
                    if stream is not None:
                        stream.close()
        for netns in self._netns:
            subprocess.run(["ip", "netns", "del", netns], capture_output=True, timeout=30)
        self.hosts.clear()
        self._netns.clear()
        shutil.rmtree(self.root, ignore_errors=True)
        if errors:
            raise RuntimeError("; ".join(errors))


# ---- a database host: its own PostgreSQL and Redis ----
def start_db(host: Host, port: int = 5432, redis_port: int = 6379) -> None:
    """PostgreSQL (initdb into the host's tmpfs, as the postgres user, trust auth from 10.213.0.0/16)
    and redis-server, both listening on every address of `host` only."""
    bins = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if not bins:
        raise RuntimeError("no PostgreSQL server binaries under /usr/lib/postgresql/*/bin")
    pg = Path(bins[-1]).parent
    data, sock = host.home / "pgdata", host.home / "pgsock"
    setup = (
        f'mkdir -p "{sock}" && chown postgres "{host.home}" "{sock}" && '
        f'runuser -u postgres -- "{pg}/initdb" -D "{data}" --auth=trust -U postgres -E UTF8 >/dev/null && '
        f'echo "host all all {NET}.0.0/16 trust" >> "{data}/pg_hba.conf"'
    )
    out = host.run(["sh", "-c", setup], timeout=180)
    if out.returncode != 0:
        raise RuntimeError(f"initdb on host {host.name}: {out.stderr[-2000:]}")
    host.popen(
        ["runuser", "-u", "postgres", "--", str(pg / "postgres"), "-D", str(data), "-p", str(port),
         "-k", str(sock), "-c", "listen_addresses=*", "-c", "fsync=off", "-c", "max_connections=200"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    host.popen(
        ["redis-server", "--port", str(redis_port), "--bind", "*", "--protected-mode", "no", "--save", "",
         "--appendonly", "no", "--dir", str(host.home)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    probe = (
        "import socket, psycopg\n"
        f"socket.create_connection(('127.0.0.1', {redis_port}), 1).close()\n"
        f"psycopg.connect('postgresql://postgres@127.0.0.1:{port}/postgres', connect_timeout=2).close()\n"
    )
    deadline = time.monotonic() + 90
    while host.run([sys.executable, "-c", probe], timeout=30).returncode != 0:
        if time.monotonic() > deadline:
            raise TimeoutError(f"PostgreSQL or Redis did not start on host {host.name}")
        time.sleep(0.3)


# ---- the arena on hosts: what a host's arena commands get, and a worker host ----
ARENA = str(Path(sys.executable).parent / "arena")


def arena_env(host: Host, db_address: str, **extra: str) -> dict[str, str]:
    """The environment of a host's arena commands: its own home and scratch (made here), and the two
    addresses of the db host as this host reaches it (`start_db`'s PostgreSQL and Redis db 0), nothing
    of the caller's ARENA_* settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    env.update(
        ARENA_HOME=str(host.home),
        TMPDIR=str(host.home / "tmp"),
        ARENA_DATABASE_URL=f"postgresql+psycopg://postgres@{db_address}:5432/postgres",
        ARENA_BROKER_URL=f"redis://{db_address}:6379/0",
        **extra,
    )
    if host.run(["mkdir", "-p", env["TMPDIR"]]).returncode != 0:
        raise RuntimeError(f"host {host.name}: cannot make {env['TMPDIR']}")
    return env


def start_worker(
    topo: Topology, db: Host, name: str, log: Path, concurrency: int = 1, **extra: str
) -> tuple[Host, Link]:
    """A new worker host `name` whose only link is a veth to `db`, running `arena worker` with the
    broker's and the store's addresses and its own home; its stderr goes to `log`."""
    host = topo.add_host(name)
    link = topo.link(db, host)
    env = arena_env(host, link.a_addr, **extra)
    with log.open("w") as err:
        host.popen(
            [ARENA, "worker", "--concurrency", str(concurrency), "--loglevel", "info"],
            cwd=host.home, env=env, stdout=subprocess.DEVNULL, stderr=err,
        )  # fmt: skip
    return host, link


def in_sandbox(host: Host) -> bool:
    """A bot runs in the host's bwrap sandbox (with cold starts: the host is playing a match)."""
    for pid in host.processes():
        try:
            if Path(f"/proc/{pid}/comm").read_text().strip() == "bwrap":
                return True
        except OSError:
            continue
    return False
