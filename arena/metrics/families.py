"""Every metric of the arena, defined once (docs/deploy.md, "Metrics", lists them with their labels).

Imported only through `arena.metrics.defs()` (which returns this module), once counting is on: prometheus_client then runs in
multiprocess mode (`arena.metrics.prepare`), so these values live in files that the command's
`/metrics` listener adds up across its processes. Every label's values come from a closed set
(the hooks of `arena.metrics` and the interceptor and middleware map anything else to `other`).
The gauges read from the store at scrape time (queue, leases, disk, alerts) are not here: they
are collected when scraped (`arena.store.health.HealthCollector`).
"""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

# seconds: a build, a match, a fit, a gRPC call span milliseconds to minutes
SHORT = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
LONG = (0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0)

MATCHES_RECORDED = Counter("arena_matches_recorded", "Matches whose result was stored, by kind.", ["kind"])
VERDICTS = Counter("arena_verdicts", "Seats' verdicts of the matches recorded, by verdict.", ["verdict"])
MATCHES_PLAYED = Counter("arena_matches_played", "Matches a worker process finished playing.")
MATCH_SECONDS = Histogram("arena_match_seconds", "Time a worker took to play a match.", buckets=LONG)
BUILDS = Counter("arena_builds", "Bot builds that ended, by outcome (ok, error).", ["outcome"])
BUILD_SECONDS = Histogram("arena_build_seconds", "Time a bot's build took.", buckets=LONG)
RATE_LIMITED = Counter(
    "arena_rate_limited", "Calls and requests refused by a rate limit, by the limit's name.", ["limit"]
)
FIT_SECONDS = Histogram("arena_fit_seconds", "Time the ratings fit of a season took.", buckets=SHORT)
LIVE_STREAMS = Gauge(
    "arena_live_streams_open",
    "Live match streams open now, by transport (watch-grpc, watch-web).",
    ["transport"],
    multiprocess_mode="livesum",
)
GRPC_CALLS = Counter(
    "arena_grpc_calls", "gRPC calls answered, by method and status code.", ["method", "code"]
)
GRPC_SECONDS = Histogram(
    "arena_grpc_call_seconds", "Time a gRPC call took (a stream: its whole life).", ["method"], buckets=SHORT
)
WEB_REQUESTS = Counter(
    "arena_web_requests", "Web requests answered, by route template and status.", ["route", "status"]
)
WEB_SECONDS = Histogram(
    "arena_web_request_seconds", "Time a web request took, by route template.", ["route"], buckets=SHORT
)
