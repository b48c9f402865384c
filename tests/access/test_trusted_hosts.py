"""Trusted proxies (FORWARDED_ALLOW_IPS) as the web's and the gRPC server's per-address bounds read them."""

from __future__ import annotations

from arena.access.forwarded import trusted_hosts


def test_trusted_hosts_reads_addresses_networks_and_the_wildcard(monkeypatch):
    trusted = trusted_hosts("127.0.0.1,::1,10.0.0.0/8")
    assert trusted("127.0.0.1") and trusted("10.2.3.4") and trusted("::1")
    assert not trusted("127.0.0.2") and not trusted("192.168.1.1") and not trusted("unix")
    assert trusted_hosts("*")("203.0.113.9")
    monkeypatch.setenv("FORWARDED_ALLOW_IPS", "192.0.2.7")
    assert trusted_hosts()("192.0.2.7") and not trusted_hosts()("127.0.0.1")
    monkeypatch.delenv("FORWARDED_ALLOW_IPS")
    assert trusted_hosts()("127.0.0.1")  # uvicorn's default: loopback
    assert trusted_hosts(["unix:/run/proxy.sock", "10.0.0.1"])("unix:/run/proxy.sock")  # uvicorn's names
