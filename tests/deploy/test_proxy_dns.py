"""deploy/haproxy/arena.cfg resolves the replicas' names at run time (issue #32): a compose replica
recreated with a new address is found without restarting the proxy, and the same file still runs with
plain addresses (tests/deploy/test_replicas.py, test_hosts.py).

HAProxy runs in a mount namespace of its own whose /etc/resolv.conf names a loopback address: the
system's resolver (`init-addr libc`) and the file's `resolvers` section both ask the test's own DNS
server there, and no query leaves the machine.
"""

from __future__ import annotations

import http.client
import http.server
import shutil
import socket
import struct
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from deploy_support import REPO

CONFIG = REPO / "deploy" / "haproxy" / "arena.cfg"
DNS = "127.0.53.1"  # the test's DNS server (port 53 on an address of its own)
NXDOMAIN, NOERROR = 3, 0


class Names:
    """A DNS server on `DNS`:53 answering A queries from `table` (name -> address); other names are
    NXDOMAIN, other query types have no answer."""

    def __init__(self, table: dict[str, str]) -> None:
        self.table = table
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind((DNS, 53))
        self.sock.settimeout(0.1)
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self.stop.is_set():
            try:
                query, peer = self.sock.recvfrom(4096)
            except TimeoutError:
                continue
            answer = self.answer(query)
            if answer:
                self.sock.sendto(answer, peer)

    def answer(self, query: bytes) -> bytes | None:
        if len(query) < 12:
            return None
        labels, at = [], 12
        while at < len(query) and query[at]:
            labels.append(query[at + 1 : at + 1 + query[at]].decode("ascii", "replace"))
            at += 1 + query[at]
        question = query[12 : at + 5]  # the name, its end, type and class
        qtype = struct.unpack("!H", query[at + 1 : at + 3])[0]
        address = self.table.get(".".join(labels).lower())
        code = NXDOMAIN if address is None else NOERROR
        answers = b""
        if address is not None and qtype == 1:
            answers = b"\xc0\x0c" + struct.pack("!HHIH", 1, 1, 1, 4) + socket.inet_aton(address)
        header = query[:2] + struct.pack("!HHHHH", 0x8180 | code, 1, 1 if answers else 0, 0, 0)
        return header + question + answers

    def close(self) -> None:
        self.stop.set()
        self.thread.join(10)
        self.sock.close()


def _replica(address: str, port: int, name: str) -> http.server.HTTPServer:
    """A stand-in replica's web: `GET /healthz` and any GET answer 200 with its name."""

    class Answer(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = name.encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.HTTPServer((address, port), Answer)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def _free_port(address: str) -> int:
    with socket.socket() as s:
        s.bind((address, 0))
        return int(s.getsockname()[1])


def _haproxy(tmp: Path, env: dict[str, str], *args: str, **run: object) -> subprocess.Popen[str]:
    """haproxy ARGS on CONFIG in a mount namespace whose resolv.conf names the test's DNS server."""
    resolv = tmp / "resolv.conf"
    resolv.write_text(f"nameserver {DNS}\noptions timeout:1 attempts:1\n")
    script = f'mount --bind "{resolv}" /etc/resolv.conf && exec haproxy "$@"'
    return subprocess.Popen(
        ["unshare", "--mount", "sh", "-c", script, "haproxy", *args, "-f", str(CONFIG)],
        env={"PATH": "/usr/sbin:/usr/bin:/bin", "ARENA_PROXY_ADMIN": str(tmp / "haproxy.sock"), **env},
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **run,  # type: ignore[arg-type]
    )  # fmt: skip


@pytest.fixture
def names() -> Iterator[Names]:
    if shutil.which("haproxy") is None or shutil.which("unshare") is None:
        pytest.fail("the proxy's tests need haproxy and unshare: run scripts/setup.sh (DEB_PACKAGES)")
    server = Names({})
    try:
        yield server
    finally:
        server.close()


def _env(one: str, two: str) -> dict[str, str]:
    return {
        "ARENA_REPLICA1_GRPC": f"{one}:50051", "ARENA_REPLICA1_WEB": f"{one}:8000",
        "ARENA_REPLICA2_GRPC": f"{two}:50051", "ARENA_REPLICA2_WEB": f"{two}:8000",
        "ARENA_PROXY_DNS": f"{DNS}:53",
    }  # fmt: skip


@pytest.mark.parametrize(
    "one,two",
    [
        ("elfern-arena_server_1", "elfern-arena_server_2"),  # compose: names, not created yet
        ("10.213.1.2", "10.213.2.2"),  # the namespace hosts (test_hosts.py): addresses
        ("127.0.0.1", "127.0.0.1"),  # the loopback replicas (test_replicas.py)
    ],
)
def test_haproxy_accepts_the_file_with_names_it_cannot_resolve_yet_and_with_addresses(
    names: Names, tmp_path: Path, one: str, two: str
) -> None:
    check = _haproxy(tmp_path, _env(one, two), "-c")
    out, err = check.communicate(timeout=60)
    assert check.returncode == 0, out + err
    assert "Configuration file is valid" in out + err


def test_a_replica_recreated_with_a_new_address_is_found_without_restarting_the_proxy(
    names: Names, tmp_path: Path
) -> None:
    port = _free_port("127.0.0.2")
    old, new = _replica("127.0.0.2", port, "old"), None
    names.table["replica1.test"] = "127.0.0.2"  # replica 2 is not created yet: NXDOMAIN
    proxy_port = _free_port("127.0.0.1")
    env = _env("replica1.test", "replica2.test")
    env.update(
        ARENA_REPLICA1_WEB=f"replica1.test:{port}",
        ARENA_PROXY_BIND=f"127.0.0.1:{proxy_port}",
        ARENA_PROXY_CHECK="200ms",
    )
    proxy = _haproxy(tmp_path, env, "-db")
    try:

        def through() -> str | None:
            conn = http.client.HTTPConnection("127.0.0.1", proxy_port, timeout=5)
            try:
                conn.request("GET", "/healthz")
                answer = conn.getresponse()
                return answer.read().decode() if answer.status == 200 else None
            except OSError:
                return None
            finally:
                conn.close()

        def until(value: str) -> None:
            for _ in range(600):
                if proxy.poll() is not None:
                    raise AssertionError(f"haproxy exited: {proxy.communicate()[1][-3000:]}")
                if through() == value:
                    return
                time.sleep(0.1)
            raise AssertionError(f"the proxy never answered {value!r}")

        until("old")
        # The replica is recreated: the old container gone, the new one at another address, its name
        # now resolving there (as Docker's DNS does for a recreated container).
        old.shutdown()
        old.server_close()
        new = _replica("127.0.0.3", port, "new")
        names.table["replica1.test"] = "127.0.0.3"
        until("new")
    finally:
        proxy.terminate()
        proxy.communicate(timeout=30)
        if new is not None:
            new.shutdown()
            new.server_close()
