"""Two replicas of `arena serve` on one Redis (issue #32): every budget a caller spends is shared, so
N calls across both are refused at the budget, not at twice it; sessions made on one are known to the
other; a slot held by a replica that crashed comes back after its lease. Each test has its own key
prefix on the machine's Redis, removed afterwards."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import Future

import grpc
import pytest
from fastapi.testclient import TestClient

from arena.access.admin import AdminToken
from arena.access.owners import add_owner
from arena.access.ratelimit import Budget, RateLimited, RateLimiter
from arena.access.roles import Principal
from arena.access.shared_state import SharedState
from arena.proto import arena_pb2 as pb
from arena.service.builds import BuildSlots
from arena.service.core import Service
from arena.service.errors import ResourceExhausted
from arena.service.ops_watch import Slots
from arena.service.quota import MIB, UploadGate
from arena.store import Store
from arena.web.sessions import COOKIE, SharedSessions

URL = "redis://127.0.0.1:6379/0"
ADMIN = "admin-token-for-shared-state-0123456789"


@pytest.fixture
def states(redis_client) -> Iterator[tuple[SharedState, SharedState]]:
    """Two replicas' connections to one Redis under a prefix of this test's own."""
    client = redis_client(URL)
    prefix = f"arena-test-{uuid.uuid4().hex[:10]}:"
    made = [SharedState(URL, prefix=prefix), SharedState(URL, prefix=prefix)]
    try:
        yield made[0], made[1]
    finally:
        for state in made:
            state.close()
        keys = list(client.scan_iter(prefix + "*", count=1000))
        if keys:
            client.delete(*keys)
        client.close()


def _replicas(store: Store, states: tuple[SharedState, SharedState], **budgets: Budget) -> list[Service]:
    return [
        Service(store, admin=AdminToken.of(ADMIN), limiter=RateLimiter(budgets), state=state)
        for state in states
    ]


def test_two_replicas_share_each_budget_exactly(store: Store, states) -> None:
    a, b = _replicas(store, states, anonymous=Budget(10, 3600.0), upload=Budget(4, 3600.0))
    passed, refused = 0, []
    for i in range(30):  # a spectator alternating between the replicas
        try:
            (a if i % 2 else b).caller(None, "ipv4:10.1.2.3:4000")
            passed += 1
        except RateLimited as exc:
            refused.append(exc)
    assert passed == 10 and len(refused) == 20  # in memory each replica would pass 10
    assert all(r.budget == "anonymous" and r.retry_after >= 1 for r in refused)
    a.caller(None, "ipv4:10.9.9.9:4000")  # another address has a bucket of its own
    uploads = 0
    for i in range(8):
        try:
            (a if i % 2 else b).limiter.hit("upload", "owner:alice")
            uploads += 1
        except RateLimited:
            pass
    assert uploads == 4


def test_concurrent_hits_from_both_replicas_never_overspend(store: Store, states) -> None:
    a, b = _replicas(store, states, call=Budget(100, 3600.0))
    passed = [0] * 8

    def hammer(n: int) -> None:
        limiter = (a if n % 2 else b).limiter
        for _ in range(40):
            try:
                limiter.hit("call", "owner:alice")
                passed[n] += 1
            except RateLimited:
                pass

    threads = [threading.Thread(target=hammer, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(passed) == 100  # 320 tries, 100 tokens, whoever asked first


def test_buckets_keep_no_raw_key_and_expire_when_full_again(states, redis_client) -> None:
    state = states[0]
    RateLimiter({"login": Budget(10, 60.0)}, shared=state).hit("login", "addr:203.0.113.7")
    client = redis_client(URL)
    keys = [k.decode() for k in client.scan_iter(state.prefix + "*")]
    assert len(keys) == 1 and "203.0.113.7" not in keys[0] and "login" not in keys[0]
    assert 6_000 <= client.pttl(keys[0]) <= 7_000  # 1 token at 10 a minute: full in 6 s (+1 s)


def test_while_redis_is_away_each_replica_limits_alone_then_shares_again(states, caplog) -> None:
    import redis

    state = states[0]
    limiter = RateLimiter({"login": Budget(3, 3600.0)}, shared=state)
    limiter.hit("login", "addr:192.0.2.9")  # one spent in Redis
    reachable = state.client
    state.client = redis.Redis.from_url("redis://127.0.0.1:9/0", socket_connect_timeout=1)  # Redis down
    passed = 0
    for _ in range(5):
        try:
            limiter.hit("login", "addr:192.0.2.9")
            passed += 1
        except RateLimited:
            pass
    assert passed == 3  # this process's own bucket: the same budget, never unlimited
    assert sum("does not answer" in r.getMessage() for r in caplog.records) == 1  # once per outage
    state.client = reachable
    limiter.hit("login", "addr:192.0.2.9")
    limiter.hit("login", "addr:192.0.2.9")
    with pytest.raises(RateLimited):  # back in Redis, where one was spent before
        limiter.hit("login", "addr:192.0.2.9")


def test_a_session_made_on_one_replica_is_valid_on_the_other_and_logout_ends_it_on_both(
    database_url, tmp_path, states, redis_client
) -> None:
    from arena.web.app import create_app
    from arena.web.tokens import OwnerTokens
    from tests.web.account_support import csrf_in, login, session_csrf

    store = Store.open(database_url, home=tmp_path)
    try:
        token = add_owner(store, "alice")
        apps = [
            create_app(database_url, tmp_path, service=svc, tokens=OwnerTokens(b"shared"))
            for svc in _replicas(store, states)
        ]
        one, two = TestClient(apps[0]), TestClient(apps[1])
        assert isinstance(apps[0].state.sessions, SharedSessions)
        assert login(one, token).status_code == 303
        two.cookies.set(COOKIE, one.cookies[COOKIE])
        assert two.get("/me").status_code == 200  # made on one, known to the other
        sid = one.cookies[COOKIE]
        client = redis_client(URL)
        stored = b"".join(
            k + (client.get(k) or b"") if client.type(k) == b"string" else k
            for k in client.scan_iter(states[0].prefix + "*")
        )
        assert sid.encode() not in stored and token.encode() not in stored  # digests only
        done = two.post("/logout", data={"csrf": session_csrf(two)}, follow_redirects=False)
        assert done.status_code == 303
        assert one.get("/me", follow_redirects=False).headers["location"] == "/login"
        assert csrf_in(one.get("/login").text)  # logged out on both: the log-in form again
        streams = [app.state.live_streams for app in apps]  # the live pages' stream slots, shared too
        held = sum(streams[i % 2].enter("192.0.2.5") for i in range(12))
        assert held == streams[0].per_address == 8 and streams[1].open("192.0.2.5") == 8
        for i in range(8):
            streams[i % 2].leave("192.0.2.5")
        assert streams[0].open() == 0
    finally:
        store.close()


def test_end_owner_ends_its_sessions_on_every_replica(states) -> None:
    one, two = SharedSessions(states[0]), SharedSessions(states[1])
    alice = [one.create(Principal("owner", "alice"), "elf_a", "elf_a…") for _ in range(2)]
    bob = two.create(Principal("owner", "bob"), "elf_b", "elf_b…")
    assert two.get(alice[0].id) is not None and two.get(alice[0].id).csrf == alice[0].csrf  # type: ignore[union-attr]
    assert two.end_owner("alice") == 2
    assert one.get(alice[0].id) is None and one.get(alice[1].id) is None
    assert one.get(bob.id) is not None and len(one) == 1


def test_a_crashed_replicas_slot_comes_back_after_its_lease(redis_client) -> None:
    redis_client(URL)
    prefix = f"arena-test-{uuid.uuid4().hex[:10]}:"
    crashed, alive = SharedState(URL, prefix=prefix, lease=1.0), SharedState(URL, prefix=prefix, lease=1.0)
    try:
        theirs, mine = Slots(1, 10, crashed, "watch-test"), Slots(1, 10, alive, "watch-test")
        assert theirs.enter("198.51.100.1")
        assert not mine.enter("198.51.100.1") and mine.open("198.51.100.1") == 1
        assert mine.enter("198.51.100.2")  # another address
        time.sleep(1.5)  # a live holder renews its lease: still held
        assert not mine.enter("198.51.100.1")
        crashed.close()  # the replica dies without giving its slot back: nobody renews it
        refusals = 0
        while not mine.enter("198.51.100.1"):
            refusals += 1
            assert refusals < 40, "the crashed replica's slot never came back"
            time.sleep(0.1)
        assert mine.open() == 2
        mine.leave("198.51.100.1")
        mine.leave("198.51.100.2")
        assert mine.open() == 0
    finally:
        crashed.close()
        alive.close()
        client = redis_client(URL)
        keys = list(client.scan_iter(prefix + "*"))
        if keys:
            client.delete(*keys)


def test_upload_slots_and_reservations_are_shared_and_never_leak(store: Store, states) -> None:
    a, b = UploadGate(per_owner=2, disk_quota=MIB), UploadGate(per_owner=2, disk_quota=MIB)
    a.share(states[0])
    b.share(states[1])
    first = a.admit(store, "alice", 10 * MIB, quota=False)
    second = b.admit(store, "alice", 10 * MIB, quota=False)
    with pytest.raises(ResourceExhausted, match="at most 2 may run at once"):
        a.admit(store, "alice", 10 * MIB, quota=False)
    second.close()
    with pytest.raises(ZeroDivisionError), a.admit(store, "alice", 10 * MIB, quota=False):
        1 / 0  # noqa: B018 - an upload that fails gives its slot back
    assert b.open("alice") == 1  # only the first's
    first.close()
    assert a.open("alice") == 0 == b.open()
    whole = a.admit(store, "alice", 10 * MIB)  # the whole quota is reserved for a body of unknown size
    with pytest.raises(ResourceExhausted, match="disk quota is full"):
        b.admit(store, "alice", 10 * MIB)
    whole.settle(MIB // 4)  # the body wrote a quarter: the rest is free again, on both replicas
    other = b.admit(store, "alice", 10 * MIB)
    assert other.room == MIB - MIB // 4
    whole.close()
    other.close()
    assert a.refused == 1 == b.refused and b.open() == 0


def test_one_build_per_owner_across_replicas(states) -> None:
    a, b = BuildSlots(2), BuildSlots(2)
    a.share(states[0])
    b.share(states[1])
    order: list[str] = []
    started, gate = threading.Event(), threading.Event()

    def first() -> str:
        order.append("a starts")
        started.set()
        gate.wait(20)
        order.append("a ends")
        return "a"

    def second() -> str:
        order.append("b starts")
        return "b"

    try:
        one: Future[str] = a.submit("alice", first)[0]
        assert started.wait(20)
        two: Future[str] = b.submit("alice", second)[0]
        bob: Future[str] = b.submit("bob", lambda: "bob")[0]
        assert bob.result(20) == "bob"  # another owner builds meanwhile
        assert order == ["a starts"] and b.running == 0  # alice's second build waits for her first
        gate.set()
        assert one.result(20) == "a" and two.result(20) == "b"
        assert order == ["a starts", "a ends", "b starts"]
    finally:
        gate.set()
        a.close()
        b.close()


def test_two_grpc_servers_give_a_spectator_one_anonymous_budget(tmp_path, states) -> None:
    from tests.service.service_support import serve_in_thread

    store = Store.open(f"sqlite:///{tmp_path / 'arena.db'}", home=tmp_path)
    servers = [serve_in_thread(s) for s in _replicas(store, states, anonymous=Budget(6, 3600.0))]
    try:
        stubs = [pb_stub(address) for address, _, _ in servers]
        codes = []
        for i in range(12):
            try:
                stubs[i % 2].ListSeasons(pb.ListSeasonsRequest(), timeout=10)
                codes.append(grpc.StatusCode.OK)
            except grpc.RpcError as exc:
                codes.append(exc.code())
                assert "anonymous" in (exc.details() or "")
                assert any(k == "retry-after" for k, _ in exc.trailing_metadata() or ())
        assert codes.count(grpc.StatusCode.OK) == 6  # not 12: the two servers share the address's bucket
        assert codes.count(grpc.StatusCode.RESOURCE_EXHAUSTED) == 6
    finally:
        for _, stop, thread in servers:
            stop.set()
            thread.join(10)
        store.close()


def pb_stub(address: str):
    from arena.proto import arena_pb2_grpc

    return arena_pb2_grpc.ArenaStub(grpc.insecure_channel(address))


def test_serve_refuses_to_start_on_a_shared_state_that_does_not_answer(repo_root, tmp_path) -> None:
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "ARENA_ADMIN_TOKEN"}
    env |= {
        "PYTHONPATH": str(repo_root),
        "ARENA_HOME": str(tmp_path),
        "ARENA_STATE_URL": "redis://127.0.0.1:9/0",
    }
    out = subprocess.run(
        [sys.executable, "-c", "import sys; from arena.cli import main; sys.exit(main())", "serve", "--unix", str(tmp_path / "s.sock"), "--replays", str(tmp_path)],
        cwd=tmp_path, capture_output=True, text=True, timeout=60, env=env,
    )  # fmt: skip
    assert out.returncode == 2 and out.stdout == ""
    lines = out.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        "Error: --shared-state: shared state 'redis://127.0.0.1:9/0'"
    )
    assert "--shared-state or ARENA_STATE_URL" in lines[0] and not (tmp_path / "s.sock").exists()


def test_web_names_the_shared_state_not_the_store_when_redis_does_not_answer(repo_root, tmp_path) -> None:
    """`arena web` with an ARENA_STATE_URL that does not answer: one line naming that variable and the fix."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k not in ("ARENA_ADMIN_TOKEN", "ARENA_DATABASE_URL")}
    env |= {
        "PYTHONPATH": str(repo_root),
        "ARENA_HOME": str(tmp_path),
        "ARENA_STATE_URL": "redis://127.0.0.1:9/0",
    }
    out = subprocess.run(
        [sys.executable, "-c", "import sys; from arena.cli import main; sys.exit(main())", "web", "--port", "0"],
        cwd=tmp_path, capture_output=True, text=True, timeout=60, env=env,
    )  # fmt: skip
    assert out.returncode == 2, out.stderr
    lines = out.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        "Error: ARENA_STATE_URL: shared state 'redis://127.0.0.1:9/0'"
    )
    assert "cannot open the store" not in lines[0] and "--shared-state or ARENA_STATE_URL" in lines[0]
