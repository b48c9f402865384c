"""Two `arena serve` replicas behind Debian's HAProxy running deploy/haproxy/arena.cfg, on loopback, for
tests/deploy/test_replicas.py: real processes on the machine's PostgreSQL (a schema of their own) and
Redis (a db number of its own). Each replica has its own ARENA_HOME and its own TMPDIR (where uploads
arrive), so the test can see what each one wrote; they share only the store and the Redis."""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc

from arena.bench.child import Sources
from arena.proto import arena_pb2_grpc

REPO = Path(__file__).resolve().parents[2]
CONFIG = REPO / "deploy" / "haproxy" / "arena.cfg"
ARENA = [sys.executable, "-c", "import sys; from arena.cli import main; sys.exit(main())"]
ADMIN = "replicas-admin-token-0123456789abcdef"
REDIS = "redis://127.0.0.1:6379/14"  # a db number of its own: every arena:* key in it is the test's
PG = "postgresql://postgres@127.0.0.1:5432/test"
WAIT = 240.0  # seconds any one step may take on a loaded machine (a bound, not a measurement)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def until(what: str, check: Callable[[], Any], timeout: float = WAIT, every: float = 0.2) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(every)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")


def auth(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)


@dataclass
class Replica:
    """One `arena serve` process (and its players' child, in its process group)."""

    name: str  # r1, r2: its `server` line in the HAProxy file
    home: Path
    tmp: Path  # its TMPDIR: upload folders arrive here
    grpc_port: int
    web_port: int
    proc: subprocess.Popen[str] | None = None

    @property
    def grpc(self) -> str:
        return f"127.0.0.1:{self.grpc_port}"

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def kill(self) -> None:
        """SIGKILL the server by its pid (its players get SIGTERM from the kernel: PR_SET_PDEATHSIG)."""
        assert self.proc is not None
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(30)
        group = self.proc.pid
        until("the killed replica's players to exit", lambda: not _group_alive(group), 60)


async def _cancel_others() -> None:
    mine = asyncio.current_task()
    for task in asyncio.all_tasks():
        if task is not mine:
            task.cancel()


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


@dataclass
class Cluster:
    """The store, the Redis, two replicas and the proxy in front of them."""

    db_url: str
    root: Path
    replicas: list[Replica]
    proxy_port: int
    admin_socket: Path
    token_file: Path
    proxy: subprocess.Popen[str] | None = None
    env: dict[str, str] = field(default_factory=dict)
    store: Any = None  # the test's own connection to the replicas' store
    tokens: dict[str, str] = field(default_factory=dict)  # owner -> API token
    check: str = "500ms"  # the proxy's health checks: find a dead replica fast (the file's default: 2s)
    forwarders: dict[str, int] = field(default_factory=dict)  # source address -> port to the proxy
    _loop: asyncio.AbstractEventLoop | None = None

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.proxy_port}"

    # ---- processes ----
    def start_replica(self, replica: Replica) -> None:
        replica.home.mkdir(parents=True, exist_ok=True)
        replica.tmp.mkdir(parents=True, exist_ok=True)
        env = {
            **self.env,
            "ARENA_HOME": str(replica.home),
            "TMPDIR": str(replica.tmp),
            "ARENA_LIVE_URL": REDIS,  # live events through Redis: any replica serves any match's
            "FORWARDED_ALLOW_IPS": "127.0.0.1",  # the proxy's address, for gRPC and the web alike
        }
        argv = [
            *ARENA, "serve", "--unix", "", "--tcp", replica.grpc, "--web", f"127.0.0.1:{replica.web_port}",
            "--workers", "1", "--admin-token-file", str(self.token_file), "--db", self.db_url,
            "--shared-state", REDIS, "--replays", str(replica.home / "replays"),
        ]  # fmt: skip
        replica.proc = subprocess.Popen(
            argv, env=env, cwd=replica.home, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            text=True, start_new_session=True,
        )  # fmt: skip
        until(f"{replica.name} to listen", lambda: self._listening(replica))

    def _listening(self, replica: Replica) -> bool:
        assert replica.proc is not None
        if replica.proc.poll() is not None:
            raise AssertionError(f"{replica.name} exited: {replica.proc.communicate()[1][-3000:]}")
        try:
            conn = http.client.HTTPConnection("127.0.0.1", replica.web_port, timeout=5)
            conn.request("GET", "/healthz")
            ok = conn.getresponse().status == 200
            conn.close()
        except OSError:
            return False
        return ok

    def start_proxy(self) -> None:
        env = {
            **os.environ,
            "ARENA_PROXY_BIND": self.address,
            "ARENA_PROXY_ADMIN": str(self.admin_socket),
            "ARENA_PROXY_CHECK": self.check,
        }
        for replica in self.replicas:
            n = replica.name[1:]
            env[f"ARENA_REPLICA{n}_GRPC"] = replica.grpc
            env[f"ARENA_REPLICA{n}_WEB"] = f"127.0.0.1:{replica.web_port}"
        # -db: in the foreground, not as a daemon, so that this pid is the proxy's
        self.proxy = subprocess.Popen(
            ["haproxy", "-db", "-f", str(CONFIG)], env=env, stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE, text=True, start_new_session=True,
        )  # fmt: skip
        until("both replicas up behind the proxy", self._proxy_ready)

    def _proxy_ready(self) -> bool:
        assert self.proxy is not None
        if self.proxy.poll() is not None:
            raise AssertionError(f"haproxy exited: {self.proxy.communicate()[1][-3000:]}")
        try:
            return all(self.up(r.name) for r in self.replicas)
        except OSError:  # its runtime API's socket is not there yet
            return False

    def stop(self) -> list[str]:
        """Stop everything this cluster started, by pid; the replicas' stderr tails."""
        errors = []
        for replica in self.replicas:
            if replica.alive():
                assert replica.proc is not None
                replica.proc.send_signal(signal.SIGINT)
                try:
                    _, err = replica.proc.communicate(timeout=60)
                except subprocess.TimeoutExpired:
                    os.killpg(replica.proc.pid, signal.SIGKILL)
                    _, err = replica.proc.communicate()
                errors.append(err)
        if self.proxy is not None and self.proxy.poll() is None:
            self.proxy.terminate()
            self.proxy.communicate(timeout=30)
        if self._loop is not None:  # the forwarders' connections, then their loop
            asyncio.run_coroutine_threadsafe(_cancel_others(), self._loop).result(30)
            self._loop.call_soon_threadsafe(self._loop.stop)
        return errors

    # ---- the proxy's view (its runtime API) ----
    def command(self, line: str) -> str:
        """One command of HAProxy's runtime API (`show stat`, `disable health web/r1`...); its answer."""
        with socket.socket(socket.AF_UNIX) as s:
            s.settimeout(10)
            s.connect(str(self.admin_socket))
            s.sendall(line.encode() + b"\n")
            data = b""
            while chunk := s.recv(65536):
                data += chunk
        return data.decode()

    def stats(self) -> dict[tuple[str, str], dict[str, str]]:
        """`show stat` by (backend, server): status, stot (requests sent), wretr, wredis, econ..."""
        lines = self.command("show stat").splitlines()
        header = lines[0].lstrip("# ").split(",")
        rows = [dict(zip(header, line.split(","), strict=False)) for line in lines[1:] if line]
        return {(r["pxname"], r["svname"]): r for r in rows}

    def up(self, name: str) -> bool:
        stats = self.stats()
        return stats[("web", name)]["status"] == "UP" and stats[("grpc", name)]["status"] == "UP"

    def down(self, name: str) -> bool:
        stats = self.stats()
        return stats[("web", name)]["status"].startswith("DOWN") and stats[("grpc", name)][
            "status"
        ].startswith("DOWN")

    # ---- callers, each from a loopback address of its own (through a forwarder) ----
    def via(self, source: str, target: str | None = None) -> str:
        """An address that reaches `target` (default: the proxy) from the source address `source`."""
        key = f"{source}>{target or self.address}"
        if key not in self.forwarders:
            if self._loop is None:
                self._loop = asyncio.new_event_loop()
                threading.Thread(target=self._loop.run_forever, name="forwarders", daemon=True).start()
            sources = Sources(target or self.address, [source])
            asyncio.run_coroutine_threadsafe(sources.start(), self._loop).result(30)
            self.forwarders[key] = sources.ports[source]
        return f"127.0.0.1:{self.forwarders[key]}"

    def stub(self, address: str | None = None) -> arena_pb2_grpc.ArenaStub:
        return arena_pb2_grpc.ArenaStub(grpc.insecure_channel(address or self.address))

    def web(self, method: str, path: str, source: str, headers: dict[str, str] | None = None) -> int:
        """One HTTP request to the proxy's web from `source`; its status."""
        conn = http.client.HTTPConnection(
            "127.0.0.1", self.proxy_port, timeout=30, source_address=(source, 0)
        )
        try:
            conn.request(method, path, body=b"" if method == "POST" else None, headers=headers or {})
            return conn.getresponse().status
        finally:
            conn.close()


@contextlib.contextmanager
def pg_schema() -> Iterator[str]:
    """A fresh PostgreSQL schema's URL, dropped afterwards."""
    import psycopg

    schema = f"t_replicas_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(PG, autocommit=True, connect_timeout=3) as c:
        c.execute(f"CREATE SCHEMA {schema}")
    try:
        yield f"postgresql+psycopg://postgres@127.0.0.1:5432/test?options=-csearch_path%3D{schema}"
    finally:
        with psycopg.connect(PG, autocommit=True) as c:
            c.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
