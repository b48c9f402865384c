"""A watch stream through HAProxy (deploy/haproxy/arena.cfg) whose replica is SIGKILLed mid-stream
(issue #32): the client reads gRPC UNKNOWN "Stream removed" (HAProxy resets the HTTP/2 stream; it has no
status to send), and `arena watch` opens the stream again through the proxy, which sends it to the
other replica, and prints every line once. The replicas are stand-ins (watch_standin.py, each its own
process) so that the stream is held open exactly until the kill."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest
from replicas_support import CONFIG, REPO, Cluster, free_port, until

from arena.proto import arena_pb2 as pb
from arena.proto import arena_pb2_grpc

STANDIN = Path(__file__).with_name("watch_standin.py")
PRINTED = [
    "match 7 (challenge): ann@1 vs bea@2 — queued",
    "match 7 (challenge): ann@1 vs bea@2 — running",
    "deal 1, dealer bea@2",
    "  trick 1: ann@1 ♥7, bea@2 ♥K → bea@2 takes it (tricks 0-1)",
    "    Honours 0–1: bea@2 leads; 10 more win the deal for them.",
    "  trick 2: bea@2 ♠A, ann@1 ♠8 → bea@2 takes it",
    "    Honours 0–2: bea@2 leads; 9 more win the deal for them.",
    "deal 1: bea@2 wins it with honours 0-2; lines 0-2",
    "match 7 over: bea@2 won, lines 0-2 (ann@1 OK, bea@2 OK)",
]


@dataclass
class Proxied:
    address: str
    mark: Path  # made by the stand-in that holds the first stream, its pid in it
    standins: list[subprocess.Popen[str]]
    env: dict[str, str]


@pytest.fixture
def proxied(tmp_path: Path) -> Iterator[Proxied]:
    if shutil.which("haproxy") is None:
        pytest.fail("the proxy's tests need haproxy: run scripts/setup.sh (DEB_PACKAGES)")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    env["PYTHONPATH"] = str(REPO)
    ports = [(free_port(), free_port()) for _ in range(2)]
    mark = tmp_path / "first"
    standins = [
        subprocess.Popen(
            [sys.executable, str(STANDIN), str(g), str(w), str(mark)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        for g, w in ports
    ]
    proxy_port = free_port()
    proxy_env = {
        "PATH": "/usr/sbin:/usr/bin:/bin",
        "ARENA_PROXY_BIND": f"127.0.0.1:{proxy_port}",
        "ARENA_PROXY_ADMIN": str(tmp_path / "haproxy.sock"),
        "ARENA_PROXY_CHECK": "500ms",
    }
    for n, (g, w) in enumerate(ports, 1):
        proxy_env[f"ARENA_REPLICA{n}_GRPC"] = f"127.0.0.1:{g}"
        proxy_env[f"ARENA_REPLICA{n}_WEB"] = f"127.0.0.1:{w}"
    proxy = subprocess.Popen(
        ["haproxy", "-db", "-f", str(CONFIG)], env=proxy_env,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        for s in standins:
            assert s.stdout is not None and s.stdout.readline().strip() == "ready", s.stderr
        yield Proxied(f"127.0.0.1:{proxy_port}", mark, standins, env)
    finally:
        for p in (*standins, proxy):
            if p.poll() is None:
                p.kill()
            p.communicate(timeout=30)


def _until_up(proxied: Proxied) -> None:
    """Both stand-ins up behind the proxy (its runtime API, as replicas_support.Cluster reads it)."""
    admin = Cluster("", proxied.mark.parent, [], 0, proxied.mark.parent / "haproxy.sock", Path("/unused"))

    def both() -> bool:
        try:
            return admin.up("r1") and admin.up("r2")
        except OSError:  # the socket is not there yet
            return False

    until("both stand-ins up behind the proxy", both, 60)


def test_a_replica_killed_mid_stream_surfaces_as_stream_removed_and_arena_watch_goes_on(
    proxied: Proxied,
) -> None:
    _until_up(proxied)
    # What a plain gRPC client reads when the replica of its stream dies behind HAProxy.
    with grpc.insecure_channel(proxied.address) as channel:
        stream = arena_pb2_grpc.ArenaStub(channel).WatchMatch(pb.WatchMatchRequest(match_id=7), timeout=120)
        assert [next(stream).WhichOneof("event") for _ in range(4)] == ["status", "status", "deal", "trick"]
        holder = until("the holding stand-in", lambda: _holder(proxied), 30)
        os.kill(holder.pid, signal.SIGKILL)
        with pytest.raises(grpc.RpcError) as cut:
            list(stream)
    # HAProxy 2.6 ends the stream without trailers: "Stream removed (Data frame with END_STREAM flag received)"
    assert cut.value.code() == grpc.StatusCode.UNKNOWN and cut.value.details().startswith("Stream removed")
    # `arena watch` through the proxy, with the first stand-in still serving and held open again.
    held = [s for s in proxied.standins if s.poll() is None]
    assert len(held) == 1
    proxied.mark.unlink()
    replacement = subprocess.Popen(  # the killed replica back, so that the next stream is held again
        [sys.executable, str(STANDIN), *holder.args[2:]],  # type: ignore[index]
        env=proxied.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    proxied.standins.append(replacement)
    assert replacement.stdout is not None and replacement.stdout.readline().strip() == "ready"
    _until_up(proxied)
    watcher = subprocess.Popen(
        [sys.executable, "-m", "arena.cli", "watch", "7"],
        env={**proxied.env, "ARENA_SERVER": proxied.address}, cwd=proxied.mark.parent,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert watcher.stdout is not None
        # up to the first trick's honours line: all that is out while the stream is held, so nothing
        # stays in the reader's buffer that communicate() (which reads the pipe) would miss
        shown = [watcher.stdout.readline().rstrip("\n") for _ in range(5)]
        holder = until("the holding stand-in", lambda: _holder(proxied), 30)
        os.kill(holder.pid, signal.SIGKILL)
        rest, err = watcher.communicate(timeout=120)
    finally:
        if watcher.poll() is None:
            watcher.kill()
    assert watcher.returncode == 0, err
    assert shown + rest.splitlines() == PRINTED
    assert "the stream of match 7 was cut; opening it again" in err


def _holder(proxied: Proxied) -> subprocess.Popen[str] | None:
    """The stand-in holding the first stream: the one whose pid watch_standin.py wrote to MARK."""
    if not proxied.mark.exists() or not proxied.mark.read_text().strip():
        return None
    pid = int(proxied.mark.read_text())
    return next((s for s in proxied.standins if s.pid == pid), None)
