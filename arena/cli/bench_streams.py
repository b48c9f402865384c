"""The options and the reports of `arena bench serve --streams N` (arena/bench/serve_streams.py) and
`--connections N` (arena/bench/serve_connections.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from arena.cli.bench_report import emit, with_progress


def stream_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """--streams and --deals: live spectators of one long match."""
    options = [
        click.option("--streams", type=click.IntRange(0, 256), default=0, show_default=True,
                     help="Instead: N live streams (half gRPC WatchMatch, half the web's event stream, 8 per "
                          "address and transport) of one long match; the server's RSS and its stop."),
        click.option("--deals", type=click.IntRange(1, 10_000), default=80, show_default=True,
                     help="With --streams: whole deals in the match's live file when the streams open."),
        click.option("--connections", type=click.IntRange(0, 100_000), default=0, show_default=True,
                     help="Instead: N idle gRPC connections (raw HTTP/2, no call); the server's RSS and how "
                          "soon it closes them."),
        click.option("--idle", type=click.FloatRange(0.1, 600), default=10.0, show_default=True,
                     help="With --connections: the server's --connection-idle (over 2 s, else they are closed before "
                          "the RSS is read)."),
    ]  # fmt: skip
    for option in reversed(options):
        command = option(command)
    return command


def run_streams(streams: int, deals: int, as_json: bool) -> None:
    from arena.bench.serve_streams import run

    r = with_progress("streams benchmark", lambda progress: run(streams, deals, progress=progress), as_json)
    rows = [
        ("RSS idle", f"{r['rss_idle_mib']} MiB", "before the first stream"),
        ("RSS at the peak", f"{r['rss_peak_mib']} MiB", f"{r['growth_mib']:+.1f} MiB over idle"),
        ("events per stream", f"{r['events_per_stream_min']:,} to {r['events_per_stream_max']:,}",
         "the newest deals the server keeps, then one more deal"),
        ("SIGTERM to exit", f"{r['stop_seconds']} s", f"exit status {r['exit_code']}"),
    ]  # fmt: skip
    emit(r, as_json,
         f"streams benchmark: {r['streams']} live streams of a {r['deals']:,}-deal match through arena serve",
         rows, f"target <= +{r['bound_mib']} MiB over idle: {'met' if r['met'] else 'NOT met'}")  # fmt: skip


def run_connections(connections: int, idle: float, as_json: bool) -> None:
    from arena.bench.serve_connections import run

    r = with_progress("connections benchmark", lambda progress: run(connections, idle, progress), as_json)
    per = r["kib_per_kept_connection"]
    rows = [
        ("RSS idle", f"{r['rss_idle_mib']} MiB", "before the first connection"),
        ("RSS with the connections open", f"{r['rss_open_mib']} MiB",
         f"{r['growth_mib']:+.1f} MiB over idle" + (f", {per} KiB each" if per else "")),
        ("connections kept", f"{r['kept']:,} of {r['connections']:,}", "the rest closed at accept (--max-connections)"),
        ("all closed after", f"{r['all_closed_after_seconds']} s", f"--connection-idle {r['idle_seconds']:g}; "
         f"{r['left_open']} left open"),
    ]  # fmt: skip
    emit(r, as_json, f"connections benchmark: {r['connections']:,} idle gRPC connections to arena serve", rows,
         f"every connection closed: {'met' if r['met'] else 'NOT met'}")  # fmt: skip
