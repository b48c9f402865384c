"""The caller's own address behind a trusted proxy, for the per-address rate limits and stream slots.

Behind a proxy every connection comes from the proxy, so without this all anonymous callers would
share the proxy's one bucket. The proxy names the client it saw in `X-Forwarded-For` (gRPC metadata
`x-forwarded-for`); that header is believed only when the connection itself comes from an address
in `FORWARDED_ALLOW_IPS` (comma-separated addresses or networks, default `127.0.0.1`), the variable
uvicorn already reads for the web, so one setting covers both transports. From anyone else the
header is ignored: a caller cannot pick its own bucket by sending one. Of a trusted header's hops
(each proxy appends the one it saw), the rightmost that is not itself a trusted proxy is the caller,
as uvicorn does; a hop that is not an IP address is not believed, and the connection's own address
counts instead. The default trusts loopback only, which gives a local process nothing it does not
have already: it can bind any 127.0.0.0/8 address of its own.
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass

ENV = "FORWARDED_ALLOW_IPS"
DEFAULT = "127.0.0.1"
HEADER = "x-forwarded-for"

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network


class BadTrustedProxies(ValueError):
    """An entry of FORWARDED_ALLOW_IPS is neither an address nor a network."""


@dataclass(frozen=True)
class TrustedProxies:
    """The proxies whose `X-Forwarded-For` is believed."""

    networks: tuple[Network, ...] = ()
    everyone: bool = False  # "*": believe every connection (never on a port others can reach)

    @classmethod
    def parse(cls, text: str) -> TrustedProxies:
        items = [item.strip() for item in text.split(",") if item.strip()]
        if items == ["*"]:
            return cls(everyone=True)
        networks = []
        for item in items:
            try:
                networks.append(ipaddress.ip_network(item, strict=False))
            except ValueError:
                raise BadTrustedProxies(
                    f"{ENV}: {item!r} is neither an IP address nor a network; give e.g. 10.0.0.5 or 10.0.0.0/24"
                ) from None
        return cls(tuple(networks))

    @classmethod
    def from_env(cls) -> TrustedProxies:
        """FORWARDED_ALLOW_IPS, else the default; raises BadTrustedProxies naming a bad entry."""
        return cls.parse(os.environ.get(ENV, DEFAULT))

    @classmethod
    def loopback(cls) -> TrustedProxies:
        return cls.parse(DEFAULT)

    def trusts(self, host: str) -> bool:
        address = _address(host)
        if address is None:
            return False
        return self.everyone or any(address in network for network in self.networks)

    def client(self, peer: str, forwarded: Iterable[str]) -> str:
        """The caller's host: `peer` (the connection's own host), or, when `peer` is a trusted
        proxy, the rightmost hop of its `X-Forwarded-For` values that is not a trusted proxy."""
        if not self.trusts(peer):
            return peer
        hops = [hop.strip() for value in forwarded for hop in value.split(",") if hop.strip()]
        if self.everyone:  # every hop is trusted: the first is the client, as uvicorn has it
            hops = hops[:1]
        for hop in reversed(hops):
            host = _without_port(hop)
            address = _address(host)
            if address is None:
                return peer  # not an address: whatever wrote it, it is not believed
            if self.everyone or not self.trusts(host):
                return str(address)
        return peer


def trusted_hosts(spec: list[str] | str | None = None) -> Callable[[str], bool]:
    """`spec` (default: $FORWARDED_ALLOW_IPS, else the default) as a test of a connection's host, for
    the per-address bounds on connections and calls in flight: a trusted proxy carries many clients,
    so those bounds do not apply to its own address. `spec` may be uvicorn's already-checked
    `forwarded_allow_ips`, whose entries that are not addresses (a Unix socket's name) match by name."""
    if spec is None:
        return TrustedProxies.from_env().trusts
    items = [item.strip() for item in (spec.split(",") if isinstance(spec, str) else spec) if item.strip()]
    names = {item for item in items if item != "*" and not _is_network(item)}
    proxies = TrustedProxies.parse(",".join(item for item in items if item not in names))
    return lambda host: host in names or proxies.trusts(host)


def _is_network(item: str) -> bool:
    try:
        ipaddress.ip_network(item, strict=False)
    except ValueError:
        return False
    return True


def _without_port(hop: str) -> str:
    """'203.0.113.7:5000' / '[2001:db8::1]:5000' / '2001:db8::1' -> the host."""
    if hop.startswith("["):
        return hop[1:].split("]", 1)[0]
    return hop.rsplit(":", 1)[0] if hop.count(":") == 1 else hop


def _address(host: str) -> Address | None:
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return None
    mapped = getattr(address, "ipv4_mapped", None)
    return mapped or address
