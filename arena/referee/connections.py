"""What one TCP/HTTP-2 connection to the gRPC server may hold, and for how long (`arena serve
--max-connections`, `--connection-idle`): the channel arguments `RefereeServer` starts its server with.

The calls and streams in flight are bounded elsewhere (`arena.service.inflight`, `arena.referee.joining`);
these bound the connections themselves, which cost the server a socket and about 17 KiB each even
when they carry nothing (`arena bench serve --connections 2000`: +32.7 MiB):

- **Idle connections** (no call open on them) are closed after `idle` seconds with a GOAWAY
  (`grpc.max_connection_idle_ms`); a gRPC client reconnects by itself at its next call. A connection
  carrying a stream (a bot's `Play`, `WatchMatch`, a held health `Watch`) is never idle, however
  long its stream lasts.
- **Connections in all**, per listener (the TCP port and the Unix socket each): at most
  `max_connections` (`grpc.max_allowed_incoming_connections`); one more is closed by gRPC's core as
  it is accepted, so a flood of sockets cannot use up the server's file descriptors (its database and
  replay files need them too). The default is a quarter of the process's soft `ulimit -n`, at most
  4,096. gRPC has no per-address bound on connections: a proxy's job (HAProxy's `maxconn` per source
  in deploy/haproxy/arena.cfg). The Unix socket has its own count, so a flood from the network does
  not lock this machine's bots out.
- **HTTP/2 streams per connection**: at most `streams` (`grpc.max_concurrent_streams`), above what
  one legitimate connection carries (a trusted proxy's or a bench's calls and streams together), so
  that one connection cannot hold an unbounded number of calls whose request has not arrived (those
  are not counted as in flight until it has). A gRPC client over it queues its next call.
- **Keepalive pings**: a client that pings more often than every 5 minutes while it sends no data is
  sent away (GOAWAY `too_many_pings`) at its third such ping: gRPC's defaults, set here so that they
  stay.
- **No maximum age** (`grpc.max_connection_age_ms` is left off): when a connection's age runs out,
  gRPC ends every stream still open on it once the grace is over (measured: a held stream ended
  UNAVAILABLE "max connection age"), and a match's `Play` and `WatchMatch` last the whole match, up
  to hours; a bot cannot join its seat again. A grace longer than the longest match would bound
  nothing, since a client that keeps its connection busy is bounded by its calls in flight already.
"""

from __future__ import annotations

import resource
from dataclasses import dataclass

IDLE = 60.0  # seconds without a call before a connection is closed
MAX_CONNECTIONS = 4096  # per listener, at most; see default_max_connections
STREAMS = 1024  # HTTP/2 streams at once on one connection
MIN_PING_INTERVAL = 300.0  # seconds: pings closer than this without data are strikes (gRPC's default)
PING_STRIKES = 2  # strikes allowed; the next is a GOAWAY (gRPC's default)


def default_max_connections() -> int:
    """A quarter of the soft file-descriptor limit (two listeners, the web's connections and the
    server's files share it), at most MAX_CONNECTIONS, at least 64."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return MAX_CONNECTIONS
    return max(64, min(MAX_CONNECTIONS, soft // 4))


@dataclass(frozen=True)
class ConnectionLimits:
    """The server's bounds on its connections; `options()` are the channel arguments that set them."""

    idle: float = IDLE
    max_connections: int | None = None  # None: default_max_connections()
    streams: int = STREAMS

    def options(self) -> list[tuple[str, int]]:
        if self.idle <= 0 or self.streams < 1 or (self.max_connections or 1) < 1:
            raise ValueError("connection limits: idle > 0, at least 1 stream and 1 connection")
        return [
            ("grpc.max_connection_idle_ms", max(1, round(self.idle * 1000))),
            ("grpc.max_allowed_incoming_connections", self.max_connections or default_max_connections()),
            ("grpc.max_concurrent_streams", self.streams),
            ("grpc.http2.min_ping_interval_without_data_ms", round(MIN_PING_INTERVAL * 1000)),
            ("grpc.http2.max_ping_strikes", PING_STRIKES),
        ]
