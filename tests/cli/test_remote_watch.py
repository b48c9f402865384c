"""`arena watch` as a client: against a scripted WatchMatch (every line it prints), then following a real
challenge on a real server from queued to over."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent import futures

import grpc
import pytest
from forwarder import Forwarder
from remote_support import RANDOM, REPO, Server, ok, one_line_error

from arena.proto import arena_pb2 as pb
from arena.proto import arena_pb2_grpc


def _status(state: str, revealed: bool = False, **kw) -> pb.WatchEvent:
    info = pb.MatchInfo(
        kind="ladder",
        season="s1",
        status=state,
        players=["ann@1", "bea@2"],
        revealed=revealed,
        **{"id": 7, "winner": -1, **kw},
    )
    return pb.WatchEvent(status=info)


# The order the server's WatchMatch (arena/service/ops_watch.py) sends: the final status as soon as the
# match is over, then the trick it still held back and the deal's end, then the stream ends.
SCRIPT = [
    _status("queued"),
    _status("running"),
    pb.WatchEvent(deal=pb.WatchDeal(deal=1, dealer=1)),
    pb.WatchEvent(
        trick=pb.WatchTrick(deal=1, trick=1, leader=0, cards=["7H", "KH"], winner=1, tricks_won=[0, 1])
    ),
    _status("done", revealed=True, winner=1, lines=[0, 2], verdicts=["OK", "OK"]),
    pb.WatchEvent(trick=pb.WatchTrick(deal=1, trick=2, leader=1, cards=["AS", "8S"], winner=1)),
    pb.WatchEvent(deal_end=pb.WatchDealEnd(deal=1, winner=1, lines=[0, 2])),
]
PRINTED = [  # what `arena watch 7` prints of SCRIPT
    "match 7 (ladder, season s1): ann@1 vs bea@2 — queued",
    "match 7 (ladder, season s1): ann@1 vs bea@2 — running",
    "deal 1, dealer bea@2",
    "  trick 1: ann@1 ♥7, bea@2 ♥K → bea@2 takes it (tricks 0-1)",
    "    Honours 0–1: bea@2 leads; 10 more win the deal for them.",  # K: 1 honour
    "  trick 2: bea@2 ♠A, ann@1 ♠8 → bea@2 takes it",
    "    Honours 0–2: bea@2 leads; 9 more win the deal for them.",
    "deal 1: bea@2 wins it with honours 0-2; lines 0-2",
    "match 7 over: bea@2 won, lines 0-2 (ann@1 OK, bea@2 OK)",  # last, after the held-back trick
]
EMBARGOED = [_status("done", id=8)]  # over, but its duplicate twin is still to play: only its status


class ScriptedWatch(arena_pb2_grpc.ArenaServicer):
    def __init__(self) -> None:
        self.seen: list[tuple[int, str]] = []

    def WatchMatch(self, request, context):
        self.seen.append((request.match_id, dict(context.invocation_metadata()).get("authorization", "")))
        scripts = {7: SCRIPT, 8: EMBARGOED}
        if request.match_id not in scripts:
            context.abort(grpc.StatusCode.NOT_FOUND, f"no match {request.match_id}")
        yield from scripts[request.match_id]


@pytest.fixture
def scripted() -> Iterator[tuple[str, ScriptedWatch]]:
    fake = ScriptedWatch()
    grpc_server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    arena_pb2_grpc.add_ArenaServicer_to_server(fake, grpc_server)
    port = grpc_server.add_insecure_port("127.0.0.1:0")
    grpc_server.start()
    try:
        yield f"127.0.0.1:{port}", fake
    finally:
        grpc_server.stop(0)


def test_watch_prints_trick_by_trick_and_exits_when_over(scripted, tmp_path) -> None:
    address, fake = scripted
    client = Server(None, address, "", {}, tmp_path)  # type: ignore[arg-type]
    out = ok(client.run("watch", "m7", token="elf_watcher"))
    lines = out.strip().splitlines()
    assert lines == PRINTED
    assert fake.seen == [(7, "Bearer elf_watcher")]
    events = [json.loads(x) for x in ok(client.run("watch", "7", "--json")).splitlines()]
    assert len(events) == len(SCRIPT) and events[3]["trick"]["cards"] == ["7H", "KH"]
    embargoed = ok(client.run("watch", "8")).strip().splitlines()
    assert embargoed == [
        "match 8 is over; its tricks and result are published once its duplicate twin has been played "
        "(`arena watch 8` again then)"
    ]
    one_line_error(client.run("watch", "9"), "NOT_FOUND", "no match 9")
    one_line_error(client.run("watch", "seven"), "MATCH 'seven'")
    one_line_error(client.run("watch", "7", server=""), "--server HOST:PORT")


def test_watch_follows_a_challenge_live_from_queued_to_over(server: Server) -> None:
    """The journey's last step, for real: a challenge queued by the CLI, played by the server's player
    process, followed by `arena watch` from before it starts until the stream ends."""
    from arena.service.ops_watch import record_events
    from arena.workers.daemon import start_players

    alice, bob = server.tokens["alice"], server.tokens["bob"]
    ok(server.run("bots", "submit", str(RANDOM), "--name", "alicebot", token=alice))
    ok(server.run("bots", "submit", str(RANDOM), "--name", "bobbot", token=bob))
    row = json.loads(ok(server.run("challenge", "alicebot", "bobbot", "--deals", "3", "--json", token=alice)))
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    env.update(PYTHONPATH=str(REPO), ARENA_HOME=str(server.client_home), ARENA_SERVER=server.address)
    watcher = subprocess.Popen(
        [sys.executable, "-m", "arena.cli", "watch", str(row["id"])],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=server.client_home,
    )  # fmt: skip
    first = watcher.stdout.readline()  # the status, before any player exists
    assert first.startswith(f"match {row['id']} (challenge): alicebot@1 vs bobbot@1 — queued"), first
    players = start_players(server.url, server.service.store.home, 1, "local")
    try:
        rest, err = watcher.communicate(timeout=300)
    finally:
        players.terminate()
        players.join(30)
    assert watcher.returncode == 0, err
    lines = [first.rstrip("\n"), *rest.splitlines()]
    assert lines[-1].startswith(f"match {row['id']} over: ")  # the result, after the last trick
    expected = record_events(server.service, row["id"])
    assert sum(x.startswith("  trick ") for x in lines) == sum(e["kind"] == "trick" for e in expected)
    assert sum(x.startswith("deal ") and ": " in x for x in lines) == sum(
        e["kind"] == "deal_end" for e in expected
    )
    # (whether a "running" line shows depends on how fast the match plays against the server's poll)


class LiveWatch(arena_pb2_grpc.ArenaServicer):
    """SCRIPT released a few events at a time by the test; a later call starts with the current status
    (running), then the events from the start, as the real server's WatchMatch repeats a match's kept
    events to a new stream. `end` says how the first stream
    ends once the test sets `ending`: "reset" (the forwarder cuts it), "removed" (UNKNOWN "Stream
    removed", what HAProxy's dropped stream surfaces as) or "ended" (the stream ends with a status that
    is not final, as a replica's stop ends it: ops_watch.end_streams)."""

    def __init__(self, end: str) -> None:
        self.end, self.calls, self.released = end, 0, 0
        self.ending = threading.Event()
        self.changed = threading.Condition()

    def end_first(self) -> None:
        with self.changed:
            self.ending.set()
            self.changed.notify_all()

    def release(self, n: int) -> None:
        with self.changed:
            self.released = n
            self.changed.notify_all()

    def WatchMatch(self, request, context):
        with self.changed:
            self.calls += 1
            first = self.calls == 1
        sent = 0 if first else 1
        while sent < len(SCRIPT):
            with self.changed:
                self.changed.wait_for(
                    lambda n=sent: self.released > n or (first and self.ending.is_set()), 60
                )
                upto = self.released
            if first and self.ending.is_set():
                if self.end == "removed":
                    context.abort(grpc.StatusCode.UNKNOWN, "Stream removed")
                if self.end == "ended":
                    yield SCRIPT[1]  # the current status, then the end
                    return
                while context.is_active():  # "reset": the forwarder cuts the connection
                    time.sleep(0.05)
                return
            yield from SCRIPT[sent:upto]
            sent = upto


def _until(check) -> None:
    for _ in range(1200):
        if check():
            return
        time.sleep(0.05)
    raise AssertionError("timed out")


@pytest.fixture
def live(request, tmp_path) -> Iterator[tuple[LiveWatch, Forwarder, Server]]:
    fake = LiveWatch(request.param)
    grpc_server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    arena_pb2_grpc.add_ArenaServicer_to_server(fake, grpc_server)
    port = grpc_server.add_insecure_port("127.0.0.1:0")
    grpc_server.start()
    proxy = Forwarder(f"127.0.0.1:{port}")
    try:
        yield fake, proxy, Server(None, proxy.address, "", {}, tmp_path)  # type: ignore[arg-type]
    finally:
        fake.end_first()
        fake.release(len(SCRIPT))
        proxy.close()
        grpc_server.stop(0)


@pytest.mark.parametrize(
    "live,json_out",
    [("reset", False), ("removed", False), ("ended", False), ("reset", True)],
    indirect=["live"],
)
def test_watch_opens_a_cut_stream_again_and_goes_on_from_where_it_was(live, json_out: bool) -> None:
    """The connection reset through the proxy, the proxy's UNKNOWN "Stream removed", or the stream ended
    by a stopping replica, after the first trick: `arena watch` opens it again, prints no line twice and
    none is missing, and exits 0 once the match is over (`--json`: each event once)."""
    fake, proxy, client = live
    fake.release(4)  # queued, running, deal 1, trick 1
    watcher = client.start("watch", "7", *(["--json"] if json_out else []))
    try:
        # the first trick and its honours line: all that is out until the fake releases more, so
        # nothing is left in the reader's buffer that communicate() (which reads the pipe) would miss
        shown = [watcher.stdout.readline().rstrip("\n") for _ in range(4 if json_out else 5)]
        assert "trick" in shown[-1] if json_out else ("trick 1" in shown[-2] and "Honours" in shown[-1])
        fake.end_first()
        if fake.end == "reset":
            proxy.cut()
        _until(lambda: fake.calls == 2)
        fake.release(len(SCRIPT))
        rest, err = watcher.communicate(timeout=120)
    finally:
        if watcher.poll() is None:
            watcher.kill()
    assert watcher.returncode == 0, err
    if json_out:
        from google.protobuf.json_format import Parse

        events = [Parse(line, pb.WatchEvent()) for line in shown + rest.splitlines()]
        assert events == SCRIPT  # each event once, none missing
    else:
        assert shown + rest.splitlines() == PRINTED  # each line once, none missing
    assert "the stream of match 7 was cut; opening it again" in err


@pytest.mark.parametrize("live", ["reset"], indirect=True)
def test_watch_exits_3_with_one_line_when_the_server_stays_out_of_reach(live) -> None:
    fake, proxy, client = live
    fake.release(4)
    watcher = client.start("watch", "7")
    try:
        for _ in range(4):
            watcher.stdout.readline()
        proxy.close()  # the proxy gone: nothing to open the stream again through
        _out, err = watcher.communicate(timeout=120)
    finally:
        if watcher.poll() is None:
            watcher.kill()
    assert watcher.returncode == 3, err
    last = err.strip().splitlines()[-1]
    assert last == (
        f"Error: the connection to the server {proxy.address} was lost while watching match 7; "
        "run the same command again to resume"
    )
    assert "Traceback" not in err
