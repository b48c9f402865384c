"""Spectators cannot make `arena serve` spend memory by a match's length, nor keep it from stopping
(issue #31).

The attack this answers: on a 10,000-deal challenge, 48 live streams (gRPC `WatchMatch` and the web's
event stream, within the caps) took the server from 156 to 585 MiB in 10 s, since each stream kept its
own copy of every event; and a server with open streams did not stop on SIGTERM. Here a real
`arena serve` process is watched by 128 real clients over real sockets (64 gRPC, 64 HTTP, from eight
loopback addresses each, as the caps allow) on a live file written as the worker writes it, and the
server's RSS is read from /proc (bytes, never durations). At the old copy per stream (about 1 KB an
event) these 128 streams of 1,440 events cost the server 185 MiB; the bound asserted is 50 MiB.
The stop is asserted by the exit status within the test's 30 s guard, never by a duration. The server,
the live file and the clients are `arena bench serve --streams`'s own (arena/bench/serve_streams.py).
"""

from __future__ import annotations

import asyncio
import json
import signal
from collections.abc import AsyncIterator

import grpc
from live_play import add_bots, launcher, live_counts, queue_challenge, status_of
from service_support import build_bundle, bundle_archive

from arena.access.owners import add_owner
from arena.bench.child import rss_kib
from arena.bench.serve_streams import (
    BOUND_MIB,
    event_id,
    grpc_watch,
    ids_of_deals,
    running_match,
    served,
    sse_watch,
    wait_for,
    watch_and_stop,
    write_deal,
)
from arena.engine.rules import MAX_COUNT
from arena.proto import arena_pb2 as pb
from arena.proto.arena_pb2_grpc import ArenaStub
from arena.service.live_feed import MAX_DEALS, Cursor, Feeds
from arena.store import Store
from arena.store.models import Bot
from arena.workers.live import LiveWriter, live_path

DEALS = 80  # in the live file when the streams open: more than the feed keeps (MAX_DEALS + a quarter)


def test_128_streams_of_a_long_match_cost_the_server_little_and_end_at_its_stop(tmp_path) -> None:
    """64 gRPC and 64 HTTP streams, 8 of each from each of 8 addresses, of a match longer than the feed
    keeps (`arena bench serve --streams 128` runs the same): each gets the newest deals whole, follows
    the next one, and ends at SIGTERM; the server's peak RSS stays within the bound of idle."""
    home = tmp_path / "home"
    home.mkdir()
    match_id, writer = running_match(home)
    for deal in range(1, DEALS + 1):
        write_deal(writer, deal)
    with served(home, "--workers", "0") as serve:
        idle = rss_kib(serve.proc.pid)
        r = watch_and_stop(serve, match_id, writer, DEALS, 128)
    assert r["exit_code"] == 0, (home / "serve.err").read_text()[-2000:]
    oldest = DEALS - (MAX_DEALS + MAX_DEALS // 4) + 1  # the oldest deal the feed may still keep
    assert len(r["seen"]) == 128
    for got in r["seen"]:
        assert got[-1] == "end"
        first = int(got[0].split(".")[0])
        assert oldest <= first <= DEALS - MAX_DEALS + 1, got[:3]  # the newest deals, kept whole
        assert got[:-1] == ids_of_deals(first, DEALS + 1)[:-2], "a watcher that keeps up missed an event"
    growth = (r["peak_kib"] - idle) / 1024
    assert growth < BOUND_MIB, f"RSS grew by {growth:.1f} MiB over idle ({idle / 1024:.1f} MiB)"


def test_a_match_of_the_most_deals_is_kept_once_and_bounded_and_dropped_when_unwatched(tmp_path) -> None:
    """In process: the longest match a challenge may ask for (MAX_COUNT deals) in one live file. Its
    watchers share one feed, which keeps the newest deals only; a late joiner starts at the oldest
    deal kept, a watcher that keeps up gets every event with its tally; unwatched, the feed goes."""
    feeds = Feeds(idle_feeds=1, idle_seconds=3600.0)
    path = tmp_path / "live" / "m1.jsonl"
    writer = LiveWriter(path, 1)
    for deal in range(1, MAX_COUNT + 1):
        write_deal(writer, deal)
    with feeds.watching(path) as one, feeds.watching(path) as two:
        assert one is two  # one feed, one reader, for every watcher of the match
        one.refresh(0.0)
        log = one.log_of(1)
        assert log is not None and log.end == MAX_COUNT * 18  # every event was read, once
        assert len(log) <= (MAX_DEALS + MAX_DEALS // 4) * 18  # and only the newest deals are kept
        late = Cursor()
        shown = list(late.take(log, over=False))
        ids = [event_id(ev) for ev in shown]
        first = shown[0].deal.deal
        assert shown[0].HasField("deal") and MAX_COUNT - first + 1 >= MAX_DEALS
        assert ids == ids_of_deals(first, MAX_COUNT)[:-2]  # from a deal's start, all but the last trick
        write_deal(writer, MAX_COUNT + 1)
        two.refresh(0.0)
        more = [event_id(ev) for ev in late.take(log, over=False)]
        assert more == ids_of_deals(MAX_COUNT, MAX_COUNT + 1)[-20:-2]  # the watcher kept up: all of it
        for ev in shown:  # each trick carries its deal's running tally, counted once in the feed
            if ev.HasField("trick"):
                won = sum(1 for t in range(1, ev.trick.trick + 1) if (t + ev.trick.deal) % 2 == 1)
                assert list(ev.trick.tricks_won) == [ev.trick.trick - won, won]
    assert feeds.kept()[0] == 1  # unwatched, it stays a while for spectators coming back
    other = tmp_path / "live" / "m2.jsonl"
    LiveWriter(other, 1)
    with feeds.watching(other):
        pass
    assert feeds.kept() == (1, 0)  # past the idle feeds kept, the long match's feed was dropped


async def _upload(data: bytes) -> AsyncIterator[pb.SubmitBotChunk]:
    yield pb.SubmitBotChunk(header=pb.SubmitBotHeader(name="sleeper", format="tar.gz", size=len(data)))
    yield pb.SubmitBotChunk(data=data)


def test_sigterm_stops_the_server_with_streams_open_a_match_running_and_a_build(tmp_path) -> None:
    """SIGTERM while spectators watch a match the server's players are playing and an owner's build
    runs (for two minutes): the streams end by themselves, the match goes back to the queue, the build
    is interrupted (unregistered, its copies removed), and the process exits with 0 within the test's
    guard."""
    home = tmp_path / "home"
    home.mkdir()
    store = Store.open(f"sqlite:///{home / 'arena.db'}", home=home)
    add_bots(store, tmp_path, ms=1000)  # a second a move: the match is still being played at the stop
    match_id = queue_challenge(store)
    token = add_owner(store, "alice")
    sleeper = bundle_archive(
        build_bundle(tmp_path / "sleeper", "echo first line; sleep 120; echo second line")
    )
    try:
        with served(home, "--workers", "1", "--sandbox", launcher()) as serve:
            streams: list[list[str]] = [[] for _ in range(8)]

            async def main() -> None:
                tasks = [asyncio.ensure_future(grpc_watch(serve.tcp, match_id, got)) for got in streams[:4]]
                tasks += [
                    asyncio.ensure_future(sse_watch(serve.web, "127.0.0.1", match_id, got))
                    for got in streams[4:]
                ]
                async with grpc.aio.insecure_channel(serve.tcp) as channel:
                    auth = [("authorization", f"Bearer {token}")]
                    build = ArenaStub(channel).SubmitBotLive(_upload(sleeper), metadata=auth)
                    shown = await build.read()
                    while not shown.output:  # a heartbeat (running_seconds) may come first on a busy host
                        shown = await build.read()
                    assert shown.output == "first line\n"  # the build runs
                    await wait_for(lambda: all(streams), "a stream showed no card of the match")
                    assert (
                        status_of(store, match_id) == "running"
                        and not live_counts(live_path(home, match_id))[1]
                    )
                    serve.proc.send_signal(signal.SIGTERM)
                    await asyncio.wait_for(asyncio.gather(*tasks), 30)  # each stream ended, by itself
                    try:
                        while (await build.read()) is not grpc.aio.EOF:
                            pass
                    except grpc.aio.AioRpcError:
                        pass  # the build's call ends with the server

            asyncio.run(main())
            assert serve.proc.wait(timeout=30) == 0, (home / "serve.err").read_text()[-2000:]
            err = (home / "serve.err").read_text()
        assert all(got[-1] == "end" for got in streams)
        assert status_of(store, match_id) == "queued"  # the players released its lease: it is played again
        with store.read() as s:
            assert s.query(Bot).filter(Bot.name == "sleeper").count() == 0  # abandoned, not registered
        assert "interrupted (the build is abandoned" in err and "exiting without them" not in err
        assert not any((home / "cache").iterdir())  # the build cleaned up: no unpacked or staged copy
    finally:
        store.close()


def test_bench_serve_streams_reports_the_servers_rss_and_its_stop() -> None:
    """`arena bench serve --streams N`: a short run (16 streams); its report, not its figures."""
    from click.testing import CliRunner

    from arena.cli import cli

    result = CliRunner().invoke(cli, ["bench", "serve", "--streams", "16", "--deals", "60", "--json"])
    assert result.exit_code == 0, result.output
    r = json.loads(result.output)
    assert r["streams"] == 16 and r["exit_code"] == 0
    assert r["events_per_stream_min"] == r["events_per_stream_max"] > 0  # every stream got the same
    assert 0 < r["rss_idle_mib"] <= r["rss_peak_mib"] and r["met"] == (r["growth_mib"] <= r["bound_mib"])
