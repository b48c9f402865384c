"""The separate hosts of scripts/hosts.py are separate: a host sees only its own files under the
shared path, reaches only the hosts it has a link to (and not the machine's own services on loopback),
loses a cut link until it is restored, and a lost host leaves no process; closing the topology
leaves no namespace and no folder behind."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hosts import Topology, available

pytestmark = [pytest.mark.hosts]

PYTHON = sys.executable
LISTEN = """
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", 9999)); s.listen(8); print("listening", flush=True)
while True:
    c, _ = s.accept(); c.sendall(b"hello"); c.close()
"""
CONNECT = """
import socket, sys
try:
    with socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=2) as c:
        print(c.recv(5).decode() or "connected")
except OSError as exc:
    print(type(exc).__name__)
"""


@pytest.fixture
def topology() -> Iterator[Topology]:
    why = available()
    if why:
        pytest.skip(f"separate hosts need root namespaces: {why}")
    topo = Topology()
    try:
        yield topo
    finally:
        topo.close()


def test_hosts_share_no_files_and_only_their_links(topology: Topology) -> None:
    a, b, c = (topology.add_host(n) for n in ("a", "b", "c"))
    link = topology.link(a, b)
    assert a.run(["sh", "-c", f'echo secret > "{a.home}/data"']).returncode == 0
    assert a.run(["cat", str(a.home / "data")]).stdout == "secret\n"
    for other in (b, c):  # the same path, another tmpfs: a's folder does not exist there
        assert other.run(["test", "-e", str(a.home)]).returncode != 0
        assert other.run(["hostname"]).stdout.strip() == other.name
    assert not (topology.root / "a").exists()  # nor on the machine itself

    server = a.popen([PYTHON, "-c", LISTEN], stdout=subprocess.PIPE, text=True)
    assert server.stdout is not None and server.stdout.readline().strip() == "listening"

    def reach(host, address: str, port: int = 9999) -> str:
        return host.run([PYTHON, "-c", CONNECT, address, str(port)], timeout=30).stdout.strip()

    assert reach(b, link.a_addr) == "hello"
    assert reach(c, link.a_addr) != "hello"  # no link, no route
    assert reach(b, "127.0.0.1", 5432) == "ConnectionRefusedError"  # its own loopback, not the machine's
    link.set_up(False)
    assert reach(b, link.a_addr) != "hello"
    link.set_up(True)
    assert reach(b, link.a_addr) == "hello"


def test_a_lost_host_leaves_no_process_and_close_leaves_nothing(topology: Topology) -> None:
    a = topology.add_host("a")
    a.popen(["sh", "-c", "sleep 300 & sleep 300 & wait"])
    root, netns = topology.root, a.netns
    deadline = time.monotonic() + 30
    while len(a.processes()) < 4:  # the anchor, the shell and its two children, once it has forked them
        assert time.monotonic() < deadline, a.processes()
        time.sleep(0.05)
    killed = a.kill_all()
    assert len(killed) >= 4 and not a.processes()
    topology.close()
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=True).stdout
    assert netns not in listed and not Path(root).exists()
