"""Issue #32 §2: two `arena serve --shared-state` replicas behind HAProxy (deploy/haproxy/arena.cfg),
real processes on loopback, PostgreSQL and Redis (replicas_support.py).

- A caller has one budget across the replicas through the proxy, keyed on its own address (which
  the proxy names in X-Forwarded-For), over gRPC and the web; a forged X-Forwarded-For moves no call
  to another bucket, through the proxy or straight to a replica. The proxy holds at most 100
  connections at once from one address.
- Both replicas' players play one season at once: every match recorded once, ratings verified.
- A replica SIGKILLed with calls in it: the proxy retries the reads on the other replica and they
  succeed, sends no write twice, then stops sending to the dead one. A replica SIGKILLed mid-upload:
  the upload fails, nothing of it is in the store or under any ARENA_HOME, and the same upload then
  succeeds once.

The tests run in this order so that one replica restart (about 15 s) is enough; each still starts
from both replicas up (`both_up`).
"""

from __future__ import annotations

import http.client
import os
import shutil
import signal
import socket
import threading
import time
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import grpc
import pytest
from replicas_support import ADMIN, REDIS, Cluster, Replica, auth, free_port, pg_schema, until
from sqlalchemy import func, select

from arena.access.owners import add_owner
from arena.access.shared_state import PREFIX, digest
from arena.ladder.standings import verify_ratings
from arena.proto import arena_pb2 as pb
from arena.store import Store
from arena.store.models import Bot, BotVersion, BundleBlob, Match, Replay, Season
from tests.service.service_support import bundle_archive

pytestmark = [pytest.mark.slow, pytest.mark.postgres, pytest.mark.redis]

SAMPLES = Path(__file__).resolve().parents[2] / "sample_bots" / "python"
ARRIVING = "arena-serve-*/arena-upload-*/upload.tar.gz"  # an upload a replica receives (upload_dirs.py)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    if shutil.which("haproxy") is None or shutil.which("bwrap") is None:
        pytest.fail("the replicas test needs haproxy and bwrap: run scripts/setup.sh (DEB_PACKAGES)")
    import redis

    root = tmp_path_factory.mktemp("replicas")
    client = redis.Redis.from_url(REDIS, socket_connect_timeout=2)
    client.ping()  # an unreachable Redis fails the test (scripts/services.sh starts it)
    _clear(client)
    token_file = root / "admin-token"
    token_file.write_text(ADMIN + "\n")
    token_file.chmod(0o600)
    with pg_schema() as db_url:
        store = Store.open(db_url, home=root / "organiser")  # migrated once, before the replicas start
        env = {
            k: v for k, v in os.environ.items() if not k.startswith("ARENA_") and k != "FORWARDED_ALLOW_IPS"
        }
        env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2])
        replicas = [
            Replica(name, root / name / "home", root / name / "tmp", free_port(), free_port())
            for name in ("r1", "r2")
        ]
        made = Cluster(db_url, root, replicas, free_port(), root / "haproxy.sock", token_file, env=env)
        made.store, made.tokens = store, {name: add_owner(store, name) for name in ("ann", "bob")}
        try:
            for replica in replicas:
                made.start_replica(replica)
            made.start_proxy()
            yield made
        finally:
            errors = made.stop()
            store.close()
            _clear(client)
            client.close()
    assert not any("Traceback" in err for err in errors), "\n".join(e[-3000:] for e in errors)


def _clear(client) -> None:
    keys = list(client.scan_iter("arena:*", count=1000))
    if keys:
        client.delete(*keys)


@pytest.fixture
def both_up(cluster: Cluster) -> Cluster:
    """The cluster with both replicas running and up behind the proxy (a test may have killed one)."""
    for replica in cluster.replicas:
        if not replica.alive():
            cluster.start_replica(replica)
    until("both replicas up behind the proxy", lambda: all(cluster.up(r.name) for r in cluster.replicas))
    return cluster


def _sent(cluster: Cluster, backend: str) -> dict[str, int]:
    stats = cluster.stats()
    return {r.name: int(stats[(backend, r.name)]["stot"]) for r in cluster.replicas}


def _anonymous_calls(stub, n: int, metadata=()) -> list[grpc.StatusCode]:
    codes = []
    for _ in range(n):
        try:
            stub.ListSeasons(pb.ListSeasonsRequest(), metadata=metadata, timeout=30)
            codes.append(grpc.StatusCode.OK)
        except grpc.RpcError as exc:
            codes.append(exc.code())
    return codes


def _until_refused(call, most: int) -> tuple[int, float]:
    """Call until the first refusal: (calls that passed, seconds taken)."""
    started, passed = time.monotonic(), 0
    while call():
        passed += 1
        assert passed < most, f"{most} calls and no refusal"
    return passed, time.monotonic() - started


def _bucket(client, budget: str, address: str) -> bool:
    """Whether the replicas' shared Redis has `budget`'s bucket for `address` (shared_state.take's key)."""
    return bool(client.exists(f"{PREFIX}rl:{digest(f'{budget}:addr:{address}')}"))


def test_one_budget_per_caller_across_replicas_keyed_on_the_callers_own_address(both_up: Cluster) -> None:
    import redis

    cluster, client = both_up, redis.Redis.from_url(REDIS)
    before = _sent(cluster, "grpc")
    spender = cluster.stub(cluster.via("127.0.0.5"))
    passed, took = _until_refused(lambda: _anonymous_calls(spender, 1) == [grpc.StatusCode.OK], 1000)
    # The anonymous budget: 120 at once, then 2 a second, per address, whichever replica answers (in
    # each replica's memory it would have been 120 from each before the first refusal).
    assert 120 <= passed <= 120 + 2 * took + 1, (passed, took)
    after = _sent(cluster, "grpc")
    assert all(after[r] - before[r] >= passed // 4 for r in after), (before, after)  # both served it
    assert _bucket(client, "anonymous", "127.0.0.5")  # keyed on the caller the proxy saw ...
    assert _anonymous_calls(cluster.stub(cluster.via("127.0.0.6")), 3) == [grpc.StatusCode.OK] * 3
    assert _bucket(client, "anonymous", "127.0.0.6")  # ... so another caller has a budget of its own
    # A forged X-Forwarded-For moves no call to another bucket: the proxy replaces it with the address
    # it saw, and a replica believes it only from FORWARDED_ALLOW_IPS (the proxy's 127.0.0.1).
    forged = (("x-forwarded-for", "198.51.100.7"),)
    _anonymous_calls(spender, 2, forged)
    _anonymous_calls(cluster.stub(cluster.via("127.0.0.8", cluster.replicas[0].grpc)), 2, forged)
    assert _bucket(client, "anonymous", "127.0.0.8") and not _bucket(client, "anonymous", "198.51.100.7")

    # The web: 10 log-in attempts a minute per address (one every 6 s), once across both replicas.
    before = _sent(cluster, "web")
    passed, took = _until_refused(lambda: cluster.web("POST", "/login", "127.0.0.7") != 429, 100)
    assert 10 <= passed <= 10 + took / 6 + 1, (passed, took)
    after = _sent(cluster, "web")
    assert all(after[r] - before[r] >= 3 for r in after), (before, after)
    cluster.web("POST", "/login", "127.0.0.7", {"X-Forwarded-For": "203.0.113.9"})
    # straight to a replica's web from an address that is not its trusted proxy
    conn = http.client.HTTPConnection(
        "127.0.0.1", cluster.replicas[1].web_port, source_address=("127.0.0.10", 0)
    )
    conn.request("POST", "/login", body=b"", headers={"X-Forwarded-For": "203.0.113.9"})
    assert conn.getresponse().status != 429
    conn.close()
    assert _bucket(client, "login", "127.0.0.10") and not _bucket(client, "login", "203.0.113.9")
    client.close()


def _answers(conn: socket.socket) -> bool:
    """Whether the proxy answers a request on this open connection (a refused one is closed at once)."""
    try:
        conn.sendall(b"GET /healthz HTTP/1.1\r\nHost: arena\r\n\r\n")
        return conn.recv(64).startswith(b"HTTP/1.1 200")
    except OSError:
        return False


def test_the_proxy_bounds_connections_per_address(both_up: Cluster) -> None:
    cluster, held = both_up, []
    try:
        for _ in range(101):  # the file's bound: 100 open at once from one address
            try:
                conn = socket.create_connection(("127.0.0.1", cluster.proxy_port), 10, ("127.0.0.12", 0))
            except ConnectionResetError:  # the refused one, closed by HAProxy before connect returned
                continue
            conn.settimeout(10)
            held.append(conn)
        # One of the 101 is closed unanswered (HAProxy accepts on several threads, so not always the
        # last); the other 100 work.
        assert sum(_answers(conn) for conn in held) == 100
        other = socket.create_connection(("127.0.0.1", cluster.proxy_port), 10, ("127.0.0.13", 0))
        held.append(other)
        other.settimeout(10)
        assert _answers(other)  # another address is not held back
    finally:
        for conn in held:
            conn.close()


def test_two_replicas_play_one_season_and_record_every_match_once(both_up: Cluster) -> None:
    cluster, store = both_up, both_up.store
    api = cluster.stub()
    for owner, sample in (("ann", "random"), ("bob", "greedy")):
        token = cluster.tokens[owner]
        got = api.SubmitBot(_sample_chunks(sample), metadata=auth(token), timeout=240)
        assert got.version.build_ok
    admin = auth(ADMIN)
    api.CreateSeason(pb.CreateSeasonRequest(name="twin", rules=["flags=1"]), metadata=admin, timeout=30)
    assert api.StartSeason(pb.SeasonRequest(name="twin"), metadata=admin, timeout=30).status == "running"
    players = {r.name: r.proc.pid for r in cluster.replicas if r.proc is not None}
    seen: set[str] = set()

    def played_enough() -> bool:
        with store.read() as s:
            for owner in s.scalars(select(Match.lease_owner).where(Match.status == "running")):
                seen.add(_replica_of(owner or "", players))
            return (s.scalar(select(func.count()).select_from(Match).where(Match.status == "done")) or 0) >= 8

    until("8 season matches recorded", played_enough, every=0.1)
    api.FreezeSeason(pb.SeasonRequest(name="twin"), metadata=admin, timeout=30)
    until("no match left running", lambda: _running(store) == 0)
    assert {"r1", "r2"} <= seen, seen  # both replicas' players played the season at once
    with store.read() as s:
        done = s.scalars(select(Match).where(Match.status == "done")).all()
        seqs = [m.record_seq for m in done]
        assert len(seqs) == len(set(seqs)) and None not in seqs  # each recorded once, in one order
        replays = s.scalars(select(Replay.match_id)).all()
        assert sorted(replays) == sorted(m.id for m in done)  # one replay each
        assert all(m.verdicts == ["OK", "OK"] for m in done)
    assert verify_ratings(store, "twin") == []  # the ratings replayed from the results agree


def _sample_chunks(sample: str) -> Iterator[pb.SubmitBotChunk]:
    data = bundle_archive(SAMPLES / sample, sample)
    yield pb.SubmitBotChunk(header=pb.SubmitBotHeader(name=sample, format="tar.gz", size=len(data)))
    yield pb.SubmitBotChunk(data=data)


def _running(store: Store) -> int:
    with store.read() as s:
        return int(s.scalar(select(func.count()).select_from(Match).where(Match.status == "running")) or 0)


def _replica_of(lease_owner: str, servers: dict[str, int]) -> str:
    """Which replica's players hold a lease (`host:pid:token`): the one whose server is its parent."""
    parts = lease_owner.split(":")
    if len(parts) < 2 or not parts[1].isdigit():
        return ""
    try:
        stat = Path(f"/proc/{parts[1]}/stat").read_text()
    except OSError:
        return ""
    parent = int(stat.rsplit(")", 1)[1].split()[1])
    return next((name for name, pid in servers.items() if pid in (parent, int(parts[1]))), "")


def _outcome(future) -> grpc.StatusCode:
    try:
        future.result()
    except grpc.RpcError as exc:
        return exc.code()
    return grpc.StatusCode.OK


def test_a_replica_killed_mid_request_loses_no_read_applies_no_write_twice_and_is_taken_out(
    both_up: Cluster,
) -> None:
    cluster, store = both_up, both_up.store
    victim, survivor = cluster.replicas
    assert victim.proc is not None
    stub, admin = cluster.stub(), auth(ADMIN)
    for _ in range(6):  # the proxy now holds an open connection to each replica, and reuses it
        stub.ListSeasons(pb.ListSeasonsRequest(), timeout=30)
    before = cluster.stats()[("grpc", victim.name)]
    # Round robin alternates the replicas call by call, so calls sent one at a time in the order
    # read, read, write, write, ... put two of each kind in each replica. The victim's health checks
    # are paused meanwhile (a stopped replica would soon be marked down and skipped), and resumed after.
    assert cluster.command(f"disable health web/{victim.name}").strip() == ""
    os.kill(victim.proc.pid, signal.SIGSTOP)  # what is sent to it now waits inside it, unanswered
    kinds = ["read", "read", "write", "write"] * 2 + ["page"] * 4
    calls: list[tuple[str, Future]] = []
    try:
        with ThreadPoolExecutor(len(kinds)) as pool:
            for n, kind in enumerate(kinds):
                if kind == "read":
                    call = pool.submit(stub.ListSeasons, pb.ListSeasonsRequest(), timeout=60)
                elif kind == "write":
                    request = pb.CreateSeasonRequest(name=f"ghost{n}")
                    call = pool.submit(stub.CreateSeason, request, metadata=admin, timeout=60)
                else:
                    call = pool.submit(cluster.web, "GET", "/api/seasons", "127.0.0.1")
                calls.append((f"ghost{n}" if kind == "write" else kind, call))
                until(
                    f"call {n} answered or waiting in the victim",
                    lambda: _dispatched(cluster, victim, calls),
                    30,
                    0.02,
                )
            victim.kill()  # SIGKILL with calls in it
            outcomes = [(name, _outcome(call) if name != "page" else call.result()) for name, call in calls]
    finally:
        if victim.alive():
            assert victim.proc is not None
            os.kill(victim.proc.pid, signal.SIGCONT)
        cluster.command(f"enable health web/{victim.name}")
    dead = cluster.stats()[("grpc", victim.name)]
    assert int(dead["eresp"]) > int(before["eresp"])  # the victim had taken calls and died with them
    reads = [code for name, code in outcomes if name == "read"]
    assert reads == [grpc.StatusCode.OK] * 4, outcomes  # every read tried again on the survivor
    assert int(dead["wredis"]) > int(before["wredis"])
    assert [code for name, code in outcomes if name == "page"] == [200] * 4  # the web's GETs too
    writes = {name: code for name, code in outcomes if name.startswith("ghost")}
    with store.read() as s:
        seasons = set(s.scalars(select(Season.name).where(Season.name.like("ghost%"))))
    # A write is never sent twice: the two caught in the victim fail (the caller sees UNAVAILABLE and
    # may try again) and are not in the store; the two the survivor answered are. None is half done.
    assert sorted(code.name for code in writes.values()) == ["OK", "OK", "UNAVAILABLE", "UNAVAILABLE"]
    assert {name for name, code in writes.items() if code == grpc.StatusCode.OK} == seasons
    until("the proxy to mark the dead replica down", lambda: cluster.down(victim.name), 30)
    sent, pages_sent = _sent(cluster, "grpc"), _sent(cluster, "web")
    errors = {b: cluster.stats()[(b, victim.name)]["econ"] for b in ("grpc", "web")}
    for _ in range(10):
        stub.ListSeasons(pb.ListSeasonsRequest(), timeout=30)
        assert cluster.web("GET", "/api/seasons", "127.0.0.1") == 200
    now = cluster.stats()
    assert _sent(cluster, "grpc")[victim.name] == sent[victim.name]  # nothing more sent to it
    assert _sent(cluster, "web")[victim.name] == pages_sent[victim.name]
    assert {b: now[(b, victim.name)]["econ"] for b in ("grpc", "web")} == errors  # not even tried
    assert _sent(cluster, "grpc")[survivor.name] >= sent[survivor.name] + 10
    assert _sent(cluster, "web")[survivor.name] >= pages_sent[survivor.name] + 10


def _dispatched(cluster: Cluster, victim: Replica, calls: list[tuple[str, Future]]) -> bool:
    """Every call so far answered (by the survivor) or waiting in the stopped victim."""
    stats = cluster.stats()
    waiting = sum(int(stats[(backend, victim.name)]["scur"]) for backend in ("grpc", "web"))
    return waiting + sum(call.done() for _, call in calls) == len(calls)


def _padded_bundle(tmp: Path) -> bytes:
    """The random sample bot plus 256 KiB of incompressible bytes: an upload that takes several chunks."""
    folder = tmp / "halfbot"
    shutil.copytree(SAMPLES / "random", folder, ignore=shutil.ignore_patterns("__pycache__"))
    (folder / "padding.bin").write_bytes(os.urandom(256 * 1024))
    return bundle_archive(folder, "halfbot")


def _chunks(data: bytes, gate: threading.Event | None = None) -> Iterator[pb.SubmitBotChunk]:
    yield pb.SubmitBotChunk(header=pb.SubmitBotHeader(name="halfbot", format="tar.gz", size=len(data)))
    for i in range(0, len(data), 65536):
        if gate is not None and i == 3 * 65536:
            gate.wait(60)  # the replica holds the first 192 KiB when the test kills it
        yield pb.SubmitBotChunk(data=data[i : i + 65536])


def test_a_replica_killed_mid_upload_stores_nothing_then_the_upload_succeeds_once(
    both_up: Cluster, tmp_path: Path
) -> None:
    cluster, store = both_up, both_up.store
    data, token = _padded_bundle(tmp_path), cluster.tokens["ann"]
    bundles = {r.name: sorted((r.home / "bundles").glob("*")) for r in cluster.replicas}
    with store.read() as s:
        blobs = s.scalar(select(func.count()).select_from(BundleBlob))
    gate = threading.Event()
    with ThreadPoolExecutor(1) as pool:
        upload = pool.submit(cluster.stub().SubmitBot, _chunks(data, gate), metadata=auth(token), timeout=120)

        def receiving() -> Replica | None:
            for r in cluster.replicas:
                if any(p.stat().st_size >= 65536 for p in r.tmp.glob(ARRIVING)):
                    return r
            return None

        victim = until("the upload arriving at a replica", receiving, 60, 0.05)
        victim.kill()
        gate.set()
        with pytest.raises(grpc.RpcError) as failed:
            upload.result()
    assert failed.value.code() != grpc.StatusCode.OK
    with store.read() as s:  # nothing of it in the store ...
        assert s.scalar(select(func.count()).select_from(Bot).where(Bot.name == "halfbot")) == 0
        assert s.scalar(select(func.count()).select_from(BundleBlob)) == blobs
    for r in cluster.replicas:  # ... nor under any ARENA_HOME
        assert sorted((r.home / "bundles").glob("*")) == bundles[r.name]
    # What the dead replica had received stays in its upload folder only, incomplete, read by nobody,
    # until its next start sweeps it (tests/service/test_upload_dirs.py).
    partial = list(victim.tmp.glob(ARRIVING))
    assert len(partial) == 1 and partial[0].stat().st_size < len(data)
    until("the proxy to mark the dead replica down", lambda: cluster.down(victim.name), 30)

    done = cluster.stub().SubmitBot(_chunks(data), metadata=auth(token), timeout=240)
    assert done.version.build_ok and done.version.number == 1 and done.new
    with store.read() as s:
        versions = s.scalars(select(BotVersion).join(Bot).where(Bot.name == "halfbot")).all()
        assert len(versions) == 1
        assert s.scalar(select(func.count()).select_from(BundleBlob)) == blobs + 1
