"""Which client addresses are trusted proxies: uvicorn's `FORWARDED_ALLOW_IPS` ("127.0.0.1,::1" by
default; addresses, networks, or "*"), read once by the web and the gRPC server alike.

A trusted proxy carries many clients over its connections, so the per-address bounds on connections
and calls in flight do not apply to it (they still count in all): the proxy's own limits are the
per-client bound there (docs/deploy.md, "Behind a reverse proxy").
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Callable

DEFAULT = "127.0.0.1,::1"  # uvicorn's default


def trusted_hosts(spec: list[str] | str | None = None) -> Callable[[str], bool]:
    """`spec` (default: $FORWARDED_ALLOW_IPS, else loopback) as a test of a host."""
    if spec is None:
        spec = os.environ.get("FORWARDED_ALLOW_IPS", DEFAULT)
    items = [s.strip() for s in (spec.split(",") if isinstance(spec, str) else spec) if s.strip()]
    if "*" in items:
        return lambda host: True
    networks, names = [], set()
    for item in items:
        try:
            networks.append(ipaddress.ip_network(item, strict=False))
        except ValueError:
            names.add(item)  # a Unix socket's name, as uvicorn allows

    def trusted(host: str) -> bool:
        if host in names:
            return True
        try:
            address = ipaddress.ip_address(host)
        except ValueError:
            return False
        return any(address in network for network in networks)

    return trusted
