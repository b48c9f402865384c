"""Whose X-Forwarded-For names a caller (arena.access.forwarded): only a trusted proxy's, read from the
right; a caller that is not a trusted proxy cannot pick its own rate-limit bucket. Over real gRPC, a
servicer on loopback charges the address a trusted proxy names and ignores the header from anyone
else; `arena serve` refuses a malformed FORWARDED_ALLOW_IPS in one line."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import grpc
import pytest

from arena.access.forwarded import BadTrustedProxies, TrustedProxies
from arena.access.ratelimit import Budget, RateLimiter
from arena.proto import arena_pb2 as pb
from arena.service.core import Service
from arena.store import Store

PROXY = TrustedProxies.parse("10.0.0.5, 192.168.1.0/24")


def test_a_trusted_proxy_names_the_client_and_nobody_else_does() -> None:
    assert PROXY.client("10.0.0.5", ["203.0.113.7"]) == "203.0.113.7"
    assert PROXY.client("192.168.1.77", ["203.0.113.7"]) == "203.0.113.7"  # a network's member
    assert PROXY.client("198.51.100.1", ["203.0.113.7"]) == "198.51.100.1"  # not a proxy: ignored
    assert PROXY.client("10.0.0.5", []) == "10.0.0.5"  # no header: the connection's own address


def test_hops_are_read_from_the_right_past_trusted_proxies_only() -> None:
    # The client wrote "1.1.1.1" itself; the proxy appended the address it saw: the rightmost counts.
    assert PROXY.client("10.0.0.5", ["1.1.1.1, 203.0.113.7"]) == "203.0.113.7"
    assert PROXY.client("10.0.0.5", ["1.1.1.1", "203.0.113.7"]) == "203.0.113.7"  # two header lines
    assert PROXY.client("10.0.0.5", ["203.0.113.7, 192.168.1.3"]) == "203.0.113.7"  # a proxy chain
    assert PROXY.client("10.0.0.5", ["[2001:db8::1]:4711"]) == "2001:db8::1"
    assert PROXY.client("10.0.0.5", ["203.0.113.7:4711"]) == "203.0.113.7"
    assert PROXY.client("10.0.0.5", ["10.0.0.5"]) == "10.0.0.5"  # only proxies: the connection's


def test_a_hop_that_is_not_an_address_is_not_believed() -> None:
    assert PROXY.client("10.0.0.5", ["anything-at-all"]) == "10.0.0.5"
    assert PROXY.client("10.0.0.5", ["203.0.113.7, unknown"]) == "10.0.0.5"


def test_the_default_trusts_loopback_only_and_star_trusts_everyone() -> None:
    loopback = TrustedProxies.loopback()
    assert loopback.client("127.0.0.1", ["203.0.113.7"]) == "203.0.113.7"
    assert loopback.client("127.0.0.5", ["203.0.113.7"]) == "127.0.0.5"
    assert loopback.client("::ffff:127.0.0.1", ["203.0.113.7"]) == "203.0.113.7"  # IPv4-mapped
    everyone = TrustedProxies.parse("*")
    assert everyone.client("198.51.100.1", ["203.0.113.7, 10.0.0.5"]) == "203.0.113.7"  # as uvicorn


def test_a_malformed_entry_is_named() -> None:
    with pytest.raises(BadTrustedProxies, match="'proxy.example' is neither an IP address nor a network"):
        TrustedProxies.parse("10.0.0.5,proxy.example")


def test_over_grpc_the_budget_is_the_named_callers_only_from_a_trusted_peer(tmp_path: Path) -> None:
    from tests.service.service_support import serve_in_thread

    store = Store.open(f"sqlite:///{tmp_path / 'arena.db'}", home=tmp_path)
    limiter = RateLimiter({"anonymous": Budget(3, 3600.0)})
    trusting = serve_in_thread(Service(store, limiter=limiter, proxies=TrustedProxies.parse("127.0.0.1")))
    doubting = serve_in_thread(Service(store, limiter=limiter, proxies=TrustedProxies.parse("10.0.0.5")))

    def codes(address: str, forwarded: str, n: int) -> list[grpc.StatusCode]:
        stub = pb_stub(address)
        out = []
        for _ in range(n):
            try:
                stub.ListSeasons(
                    pb.ListSeasonsRequest(), metadata=(("x-forwarded-for", forwarded),), timeout=10
                )
                out.append(grpc.StatusCode.OK)
            except grpc.RpcError as exc:
                out.append(exc.code())
        return out

    try:
        ok, spent = grpc.StatusCode.OK, grpc.StatusCode.RESOURCE_EXHAUSTED
        # From a trusted peer each named caller has a bucket of its own ...
        assert codes(trusting[0], "203.0.113.1", 4) == [ok, ok, ok, spent]
        assert codes(trusting[0], "203.0.113.2", 1) == [ok]
        # ... from any other peer the header changes nothing: 127.0.0.1 is charged, whatever it claims.
        assert codes(doubting[0], "203.0.113.3", 4) == [ok, ok, ok, spent]
        assert codes(doubting[0], "203.0.113.4", 1) == [spent]
    finally:
        for _, stop, thread in (trusting, doubting):
            stop.set()
            thread.join(10)
        store.close()


def pb_stub(address: str):
    from arena.proto import arena_pb2_grpc

    return arena_pb2_grpc.ArenaStub(grpc.insecure_channel(address))


def test_serve_refuses_a_malformed_forwarded_allow_ips_in_one_line(repo_root: Path, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    env |= {
        "PYTHONPATH": str(repo_root),
        "ARENA_HOME": str(tmp_path),
        "FORWARDED_ALLOW_IPS": "10.0.0.5,proxy",
    }
    out = subprocess.run(
        [sys.executable, "-c", "import sys; from arena.cli import main; sys.exit(main())", "serve", "--unix", str(tmp_path / "s.sock"), "--replays", str(tmp_path)],
        cwd=tmp_path, capture_output=True, text=True, timeout=60, env=env,
    )  # fmt: skip
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.splitlines() == [
        "Error: FORWARDED_ALLOW_IPS: 'proxy' is neither an IP address nor a network; give e.g. 10.0.0.5 or 10.0.0.0/24"
    ]
    assert not (tmp_path / "s.sock").exists()
