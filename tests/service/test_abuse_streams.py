"""Spectators cannot make `arena serve` spend memory by a match's length, nor keep it from stopping
(issue #31).

The attack this answers: on a 10,000-deal challenge, 48 live streams (gRPC `WatchMatch` and the web's
event stream, within the caps) took the server from 156 to 585 MiB in 10 s, since each stream kept its
own copy of every event; and a server with open streams did not stop on SIGTERM. Here a real
`arena serve` process is watched by 128 real clients over real sockets (64 gRPC, 64 HTTP, from eight
loopback addresses each, as the caps allow) on a live file written as the worker writes it, and the
server's RSS is read from /proc (bytes, never durations). At the old copy per stream (about 1 KB an
event) these 128 streams of 1,440 events cost the server 185 MiB; the bound asserted is 50 MiB.
The stop is asserted by the exit status within the test's 30 s guard, never by a duration.
"""

from __future__ import annotations

from stream_support import event_id, ids_of_deals, write_deal

from arena.engine.rules import MAX_COUNT
from arena.service.live_feed import MAX_DEALS, Cursor, Feeds
from arena.workers.live import LiveWriter


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
