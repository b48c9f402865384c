"""What the separate-hosts test runs inside a host, printing JSON lines on stdout (scripts/hosts.py):

    python host_probe.py watch ADDRESS SEASON   # a spectator: watches every match of SEASON live
    python host_probe.py store SEASON           # the store's view of SEASON (ARENA_DATABASE_URL)
    python host_probe.py upload ADDRESS TOKEN ARCHIVE NAME [GATE]   # an owner uploads a bundle
    python host_probe.py uploads NAME           # the store's rows of bot NAME and its bundles

`watch` is an anonymous spectator of the server at ADDRESS (gRPC): it lists the season's matches once a
second (`{"poll": N, "running": [ids]}`, N the number of events received before the list was asked
for) and opens one `WatchMatch` stream per match it sees, printing each event as it comes
(`{"n": N, "match": ID, "event": [...]}`, N counting events across all streams). An event numbered
below a later poll's N that still listed its match as running reached the spectator while the match
was being played. It runs until SIGTERM.

`store` prints one JSON object: every match of SEASON (id, status, attempts, record_seq, lease_owner,
lease_expires, replay rows, the public events of its record) and `verify_ratings`' disagreements.

`upload` sends the tar.gz ARCHIVE as bot NAME with `SubmitBot` (owner TOKEN) in 64 KiB chunks; with
GATE (a file path) it stops after the first 192 KiB until that file exists, so the test can kill the
replica holding a part of it. It prints `{"code": "OK", "number": N, "new": bool, "build_ok": bool}`
or `{"code": CODE, "details": ...}`. `uploads` prints `{"bots": n, "versions": n, "blobs": n}`: the
rows of bot NAME, of its versions, and of every stored bundle.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "service"))  # live_play: public_events, as_tuple

_out = threading.Lock()


def _print(obj: dict) -> None:
    with _out:
        sys.stdout.write(json.dumps(obj) + "\n")
        sys.stdout.flush()


def watch(address: str, season: str) -> None:
    import grpc
    from live_play import as_tuple

    from arena.proto import arena_pb2 as pb
    from arena.proto.arena_pb2_grpc import ArenaStub

    channel = grpc.insecure_channel(address)
    api = ArenaStub(channel)
    received = [0]
    watched: set[int] = set()

    def follow(match_id: int) -> None:
        while True:  # a stream may end before the match does (the server's idle limit): watch again
            try:
                last = None
                for ev in api.WatchMatch(pb.WatchMatchRequest(match_id=match_id), timeout=600):
                    with _out:
                        received[0] += 1
                        n = received[0]
                    last = as_tuple(ev)
                    _print({"n": n, "match": match_id, "event": list(last)})
                if last is not None and last[0] == "status" and last[1] in ("done", "failed") and last[2]:
                    return
            except grpc.RpcError as exc:
                _print({"match": match_id, "error": f"{exc.code().name}: {exc.details()}"})
            time.sleep(1.0)

    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    while True:
        with _out:
            before = received[0]
        try:
            reply = api.ListMatches(pb.ListMatchesRequest(season=season, limit=100), timeout=10)
        except grpc.RpcError as exc:
            _print({"poll_error": f"{exc.code().name}: {exc.details()}"})
        else:
            running = sorted(m.id for m in reply.matches if m.status == "running")
            _print({"poll": before, "running": running})
            for m in reply.matches:
                if m.id not in watched:
                    watched.add(m.id)
                    threading.Thread(target=follow, args=(m.id,), daemon=True).start()
        time.sleep(1.0)


def store_view(season: str) -> None:
    from live_play import public_events
    from sqlalchemy import func, select

    from arena.ladder.standings import verify_ratings
    from arena.proto.codec import decode_record
    from arena.store import Store
    from arena.store.models import Match, Replay
    from arena.store.models import Season as SeasonRow

    store = Store.open(os.environ["ARENA_DATABASE_URL"], home=os.environ["ARENA_HOME"])
    try:
        with store.read() as s:
            season_id = s.scalar(select(SeasonRow.id).where(SeasonRow.name == season))
            rows = list(s.scalars(select(Match).where(Match.season_id == season_id).order_by(Match.id)))
            counts = dict(
                s.execute(select(Replay.match_id, func.count()).group_by(Replay.match_id)).tuples().all()
            )
            matches = []
            for m in rows:
                replay = s.get(Replay, m.id)
                events = public_events(decode_record(replay.data)) if replay is not None else []
                matches.append(
                    {"id": m.id, "status": m.status, "attempts": m.attempts, "record_seq": m.record_seq,
                     "lease_owner": m.lease_owner, "lease_expires": m.lease_expires, "replays": counts.get(m.id, 0), "events": events}
                )  # fmt: skip
        print(json.dumps({"matches": matches, "verify": [str(x) for x in verify_ratings(store, season)]}))
    finally:
        store.close()


CHUNK = 65536


def upload(address: str, token: str, archive: str, name: str, gate: str | None) -> None:
    import grpc

    from arena.proto import arena_pb2 as pb
    from arena.proto.arena_pb2_grpc import ArenaStub

    data = Path(archive).read_bytes()

    def chunks():
        yield pb.SubmitBotChunk(header=pb.SubmitBotHeader(name=name, format="tar.gz", size=len(data)))
        for i in range(0, len(data), CHUNK):
            if gate is not None and i == 3 * CHUNK:
                deadline = time.monotonic() + 120
                while not Path(gate).exists() and time.monotonic() < deadline:
                    time.sleep(0.05)
            yield pb.SubmitBotChunk(data=data[i : i + CHUNK])

    api = ArenaStub(grpc.insecure_channel(address))
    try:
        got = api.SubmitBot(chunks(), metadata=(("authorization", f"Bearer {token}"),), timeout=240)
    except grpc.RpcError as exc:
        _print({"code": exc.code().name, "details": exc.details()})
    else:
        _print({"code": "OK", "number": got.version.number, "new": got.new, "build_ok": got.version.build_ok})


def uploads(name: str) -> None:
    from sqlalchemy import func, select

    from arena.store import Store
    from arena.store.models import Bot, BotVersion, BundleBlob

    store = Store.open(os.environ["ARENA_DATABASE_URL"], home=os.environ["ARENA_HOME"])
    try:
        with store.read() as s:
            count = select(func.count())
            _print(
                {"bots": s.scalar(count.select_from(Bot).where(Bot.name == name)),
                 "versions": s.scalar(count.select_from(BotVersion).join(Bot).where(Bot.name == name)),
                 "blobs": s.scalar(count.select_from(BundleBlob))}
            )  # fmt: skip
    finally:
        store.close()


if __name__ == "__main__":
    if sys.argv[1] == "watch":
        watch(sys.argv[2], sys.argv[3])
    elif sys.argv[1] == "store":
        store_view(sys.argv[2])
    elif sys.argv[1] == "upload":
        upload(*sys.argv[2:6], sys.argv[6] if len(sys.argv) > 6 else None)
    elif sys.argv[1] == "uploads":
        uploads(sys.argv[2])
    else:
        sys.exit(
            f"unknown probe {sys.argv[1]!r}: watch ADDRESS SEASON | store SEASON | upload ... | uploads NAME"
        )
