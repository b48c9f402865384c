"""Bots' `Play` streams that have not joined yet, bounded in all and per address (`arena serve
--max-joining`, `--max-joining-per-address`), and given a shorter time to send their Join.

A `Play` stream needs no token to open: until its Join is accepted it is a stranger's. So from the
moment it opens it holds one of `total` places, and one of `per_address` places of its caller's
address (none for a trusted proxy, `FORWARDED_ALLOW_IPS`, whose clients arrive on its one address;
it still counts in all). It gives them back as soon as its Join is accepted (a joined seat belongs
to a match, and the matches open are bounded by `--max-open-matches`) or the stream ends, whatever
ends it. A stream over either bound is answered at once with RESOURCE_EXHAUSTED and trailing
metadata `retry-after`, naming the bound; it holds nothing.

A counted stream that sends nothing is dropped after `silent_timeout` (10 s, not the referee's
30 s): every SDK and sample queues its Join before it opens the stream, so a real bot's first
message follows the stream's opening at once, however slowly its runtime started (the start-up is
before the stream, and has its own budget, the match's `startup` clock).

The Unix socket is not counted at all and keeps the 30 s: its callers are this machine's own bots
(the local sandbox's), which a flood from the network must never lock out.
"""

from __future__ import annotations

from collections.abc import Callable

from arena.access.forwarded import trusted_hosts
from arena.access.slots import Full, Slots, peer_host

TOTAL = 512  # Play streams not yet joined, in all
PER_ADDRESS = 32  # from one address: a host starting many bots at once, each for the moment to its Join
SILENT_TIMEOUT = 10.0  # seconds a counted stream may take to send its first message
RETRY_AFTER = 1  # seconds a refused bot is told to wait: another stream's place is back within ms


class Joining(Slots):
    """Counts the Play streams open and not yet joined; `enter` admits one or says why not."""

    def __init__(
        self,
        total: int = TOTAL,
        per_address: int = PER_ADDRESS,
        trusted: Callable[[str], bool] | None = None,
        silent_timeout: float = SILENT_TIMEOUT,
    ) -> None:
        if total < 1 or per_address < 1:
            raise ValueError("Play streams not yet joined: at least 1 in all and per address")
        super().__init__(total, per_address, trusted or trusted_hosts())
        self.silent_timeout = silent_timeout

    @staticmethod
    def counts(peer: str) -> bool:
        """Whether a stream from this gRPC peer is counted: every one but the Unix socket's."""
        return not peer.startswith("unix")

    def enter(self, address: str) -> str | None:
        """Take a place for a stream from `address`: None, or the refusal's message."""
        full = self.take(address)
        if full is Full.ADDRESS:
            return (
                f"{self.by_address[address]} Play streams from {address} have not joined yet, at most "
                f"{self.per_address} at once per address (--max-joining-per-address); send Join at once "
                f"on each stream; retry after {RETRY_AFTER} s"
            )
        if full is Full.ALL:
            return (
                f"the server has {self.held} Play streams not joined yet, its limit (--max-joining); "
                f"retry after {RETRY_AFTER} s"
            )
        return None


class Place:
    """One stream's place in `Joining` (or none: the Unix socket, a server without the bound),
    given back once, by whichever comes first: its Join accepted, or the stream's end."""

    def __init__(self, gate: Joining | None, peer: str) -> None:
        self.gate = gate if gate is not None and gate.counts(peer) else None
        self.address = peer_host(peer)
        self.held = False

    def take(self) -> str | None:
        """Hold the place: None, or the refusal's message."""
        if self.gate is None:
            return None
        refusal = self.gate.enter(self.address)
        self.held = refusal is None
        return refusal

    def give_back(self) -> None:
        if self.held and self.gate is not None:
            self.held = False
            self.gate.give_back(self.address)
