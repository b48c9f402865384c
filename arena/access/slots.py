"""Places held at once, in all and per address: the gRPC server's calls in flight
(`arena.service.inflight`) and the web's open connections (`arena.web.server`) count the same way.

A trusted address (a proxy carrying many clients, or a local socket) has no per-address bound but
counts in all; the per-address bound is checked first, so a flood from one address is refused as
that address's and not as the server's.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from enum import StrEnum


class Full(StrEnum):
    """Which bound refused a place."""

    ADDRESS = "address"  # the address holds its per-address places
    ALL = "all"  # the server holds all its places


class Slots:
    """`total` places in all, `per_address` for each address not `trusted`; `take` one or learn why not."""

    def __init__(
        self, total: int, per_address: int, trusted: Callable[[str], bool] = lambda address: False
    ) -> None:
        self.total, self.per_address, self.trusted = total, per_address, trusted
        self.held = 0
        self.by_address: Counter[str] = Counter()
        self.refused = 0

    def take(self, address: str) -> Full | None:
        """Hold a place for `address`: None, or the bound that refuses it (counted in `refused`)."""
        if not self.trusted(address) and self.by_address[address] >= self.per_address:
            self.refused += 1
            return Full.ADDRESS
        if self.held >= self.total:
            self.refused += 1
            return Full.ALL
        self.held += 1
        self.by_address[address] += 1
        return None

    def give_back(self, address: str) -> None:
        """Free the place `take` gave `address`."""
        self.held -= 1
        self.by_address[address] -= 1
        if self.by_address[address] <= 0:
            del self.by_address[address]


def peer_host(peer: str) -> str:
    """A gRPC peer ('ipv4:127.0.0.1:5555' / 'ipv6:[::1]:5555' / 'unix:/path') or an address
    ('127.0.0.1') -> its host part ('unix' for a Unix socket), so ports do not split buckets."""
    text = peer.split(":", 1)[1] if peer.startswith(("ipv4:", "ipv6:")) else peer
    if text.startswith("["):
        return text[1:].split("]", 1)[0]
    return text.rsplit(":", 1)[0] if text.count(":") == 1 else text
