"""`arena serve --metrics`: a real server on loopback, scraped over real HTTP after real events.

The counters move where the events happen, in whichever process: the builds and the gRPC calls in
the server's own, the recorded match and its verdicts in the players' process, the match played in
one of its pool's processes; the one scrape adds them all up (prometheus_client's multiprocess
mode). The labels stay in closed sets whatever the callers ask for (no bot names, match ids or
paths). With no workers a queued match stays queued: the stuck-queue alert, the lapsed lease and
the disk threshold show on `/healthz` and `/metrics`, and a live stream open on that match shows
in the gauge until it closes.
"""

from __future__ import annotations

import threading

import grpc
import pytest
from metrics_support import ADMIN, auth, challenge, labels_of, serve, two_bots, value

from arena.metrics import Kind, Transport
from arena.proto import arena_pb2 as pb
from arena.service.metrics_grpc import METHODS
from arena.verdicts import Verdict

pytestmark = pytest.mark.slow
ARENA = "/elfern.arena.v1.Arena"


def test_counters_move_where_the_events_happen(tmp_path) -> None:
    with serve(tmp_path, "--workers", "1") as served:
        before = served.scrape()
        assert value(before, "arena_builds_total", outcome="ok") == 0
        assert value(before, "process_resident_memory_bytes") > 0  # the server's own RSS
        channel, api, ann = two_bots(served)
        match = challenge(api, ann)
        recorded = served.until(
            "the challenge recorded",
            lambda: (
                (s := served.scrape()) and value(s, "arena_matches_recorded_total", kind="challenge") and s
            ),
        )
        # the players' process recorded it; a pool process of theirs played it
        assert value(recorded, "arena_matches_recorded_total", kind="challenge") == 1
        assert value(recorded, "arena_verdicts_total", verdict="OK") == 2
        assert value(recorded, "arena_matches_played_total") == 1
        assert value(recorded, "arena_match_seconds_count") == 1
        # the server's builds and calls
        assert value(recorded, "arena_builds_total", outcome="ok") == 2
        assert value(recorded, "arena_build_seconds_count") == 2
        assert value(recorded, "arena_grpc_calls_total", method=f"{ARENA}/SubmitBot", code="OK") == 2
        assert value(recorded, "arena_grpc_calls_total", method=f"{ARENA}/Challenge", code="OK") == 1
        assert value(recorded, "arena_grpc_call_seconds_count", method=f"{ARENA}/Challenge") == 1
        # a refusal and an unknown method
        with pytest.raises(grpc.RpcError):
            api.ListOwners(pb.ListOwnersRequest(), metadata=auth(ann), timeout=30)
        unknown = channel.unary_unary(f"/no.such.Service/Method{match.id}")
        with pytest.raises(grpc.RpcError) as info:
            unknown(b"", timeout=30)
        assert info.value.code() == grpc.StatusCode.UNIMPLEMENTED
        after = served.scrape()
        assert (
            value(after, "arena_grpc_calls_total", method=f"{ARENA}/ListOwners", code="PERMISSION_DENIED")
            == 1
        )
        assert value(after, "arena_grpc_calls_total", method="other", code="UNIMPLEMENTED") == 1
        # the store's figures are read at most every 5 s: the recording shows within that
        store_read = served.until(
            "the recording in the store's figures",
            lambda: (s := served.scrape()) and value(s, "arena_last_recorded_seconds") >= 0 and s,
        )
        assert value(store_read, "arena_queue_depth") == 0 and value(store_read, "arena_store_up") == 1
        assert value(after, "arena_alert", alert="stuck_queue") == 0
        assert served.get("/healthz") == (200, "ok")
        # every label from its closed set: no bot name, match id or method the client made up
        assert labels_of(after, "arena_grpc_calls_total", "method") <= METHODS | {"other"}
        assert labels_of(after, "arena_matches_recorded_total", "kind") <= set(Kind) | {"other"}
        assert labels_of(after, "arena_verdicts_total", "verdict") <= set(Verdict) | {"other"}
        names = {"annbot", "greedy", "ann", "house", str(match.id)}
        assert not any(n in str(key) for key in after for n in names if len(n) > 2)
        channel.close()


def test_alerts_on_healthz_and_metrics(tmp_path) -> None:
    with serve(
        tmp_path, "--workers", "0", "--alert-stuck-minutes", "0", "--alert-disk-free", "100000000"
    ) as served:
        channel, api, ann = two_bots(served)
        queued = challenge(api, ann)  # nobody plays it: no workers
        # a worker that took a match and went silent: its lease ran out a while ago
        from arena.store import Store
        from arena.store.queue import claim

        store = Store.open(None, home=served.home)
        try:
            with store.tx() as s:
                second = challenge(api, ann)
                assert claim(s, "gone-host:4242:deadbeef", ids=[second.id], ttl=-120.0) is not None
        finally:
            store.close()

        def raised() -> str | None:
            status, text = served.get("/healthz")
            assert status == 200  # the web still serves: a proxy keeps it
            return text if "stuck_queue" in text and "worker_silent" in text else None

        text = served.until("the alerts on /healthz", raised)
        assert "alert disk_low:" in text and "under 97656 GiB" not in text
        assert served.get("/healthz?strict=1")[0] == 503
        scraped = served.scrape()
        assert value(scraped, "arena_alert", alert="stuck_queue") == 1
        assert value(scraped, "arena_alert", alert="worker_silent") == 1
        assert value(scraped, "arena_alert", alert="disk_low") == 1
        assert value(scraped, "arena_alert", alert="store_unreachable") == 0
        assert value(scraped, "arena_queue_depth") == 1 and value(scraped, "arena_leases_lapsed") == 1
        assert value(scraped, "arena_queue_oldest_seconds") >= 0
        assert value(scraped, "arena_disk_free_bytes") > 0

        # a live stream on the queued match stays open while nobody plays it
        stream = api.WatchMatch(pb.WatchMatchRequest(match_id=queued.id), timeout=120)
        first, ended = threading.Event(), []

        def read() -> None:
            next(stream)
            first.set()
            try:
                list(stream)
            except grpc.RpcError as exc:  # the cancel below
                ended.append(exc.code())

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        assert first.wait(60)
        grpc_streams = {"transport": Transport.GRPC.value}
        served.until(
            "the stream counted", lambda: value(served.scrape(), "arena_live_streams_open", **grpc_streams)
        )
        stream.cancel()
        reader.join(30)
        assert ended == [grpc.StatusCode.CANCELLED]
        served.until(
            "the stream closed",
            lambda: value(served.scrape(), "arena_live_streams_open", **grpc_streams) == 0,
        )
        refusals = served.scrape()
        assert labels_of(refusals, "arena_live_streams_open", "transport") <= set(Transport) | {"other"}
        assert ADMIN not in str(refusals)
        channel.close()
