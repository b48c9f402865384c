"""Who is who (issue #31): reserved and case-insensitive names, the organiser's own principal, and
suspensions that only the organiser lifts, over real gRPC and the HTTP API of the same `Service`.

The attacks these answer:
- an owner lifted the organiser's suspension of its bot by uploading it again with one byte changed;
- an owner named `admin` read the house bot's private logs and retired it (the organiser's bots were
  filed under the name `admin`, and ownership was a match of names);
- `Alice-Random` was accepted beside `alice-random`, and the owner `Alice` beside `alice`.
"""

from __future__ import annotations

import shutil
import socket
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import grpc
import httpx
import pytest

from arena.access.admin import AdminToken
from arena.access.owners import add_owner, new_token, token_hash
from arena.access.ratelimit import RateLimiter
from arena.proto import arena_pb2 as pb
from arena.service.core import Service
from arena.store import models
from arena.store.repo import suspend_bot

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "service"))
from service_support import ADMIN, Running, bundle_archive, serve_in_thread

RANDOM_BOT = Path(__file__).resolve().parents[2] / "sample_bots" / "python" / "random"
WEB_SECRET = b"identity-tests"  # of the web's older HMAC owner tokens


@dataclass
class Both:
    """One `Service` served over gRPC and over HTTP (the web app under uvicorn), on loopback ports."""

    grpc: Running
    http: str

    def stub(self):  # arena_pb2_grpc.ArenaStub
        return self.grpc.stub()

    @property
    def store(self):  # arena.store.Store
        return self.grpc.service.store


@pytest.fixture
def both(store, database_url, tmp_path) -> Iterator[Both]:
    import uvicorn

    from arena.web.app import create_app
    from arena.web.tokens import OwnerTokens

    service = Service(store=store, admin=AdminToken.of(ADMIN), limiter=RateLimiter(), launcher="local")
    tokens = {name: add_owner(store, name) for name in ("alice", "bob")}
    address, stop, thread = serve_in_thread(service)
    app = create_app(database_url, tmp_path, service=service, tokens=OwnerTokens(WEB_SECRET))
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    web = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False))
    web_thread = threading.Thread(target=web.run, kwargs={"sockets": [sock]}, daemon=True)
    web_thread.start()
    for _ in range(400):
        if web.started:
            break
        time.sleep(0.05)
    assert web.started, "uvicorn did not start"
    try:
        yield Both(Running(service, address, tokens), f"http://127.0.0.1:{sock.getsockname()[1]}")
    finally:
        web.should_exit = True
        web_thread.join(10)
        sock.close()
        stop.set()
        thread.join(10)


def _chunks(name: str, data: bytes, owner: str = "") -> Iterator[pb.SubmitBotChunk]:
    yield pb.SubmitBotChunk(
        header=pb.SubmitBotHeader(name=name, format="tar.gz", size=len(data), owner=owner)
    )
    yield pb.SubmitBotChunk(data=data)


def _variant(tmp_path: Path, n: int) -> bytes:
    """The random sample bot with one byte more per `n`: a new version each time."""
    folder = tmp_path / f"variant-{n}"
    if not folder.exists():
        shutil.copytree(RANDOM_BOT, folder, ignore=shutil.ignore_patterns("__pycache__"))
        with (folder / "bot.py").open("a") as out:
            out.write("#" * n)
    return bundle_archive(folder)


def _refusal(call, request, metadata=()) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as err:
        call(request, metadata=metadata)
    return err.value


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _http_upload(base: str, token: str, name: str, data: bytes) -> httpx.Response:
    return httpx.post(
        f"{base}/api/bots",
        headers=_bearer(token),
        data={"name": name},
        files={"bundle": ("bot.tar.gz", data)},
        timeout=60,
    )


def _state(both: Both, name: str) -> str:
    return both.stub().GetBot(pb.GetBotRequest(name=name)).state


# ---- a suspension the organiser made stays until the organiser lifts it ---------------------------
def test_a_new_version_does_not_lift_the_organisers_suspension(both: Both, tmp_path) -> None:
    stub, admin = both.stub(), Running.auth(ADMIN)
    alice = Running.auth(both.grpc.tokens["alice"])
    assert stub.SubmitBot(_chunks("alicebot", _variant(tmp_path, 1)), metadata=alice).new
    stub.SuspendBot(pb.SuspendBotRequest(name="alicebot", reason="it stalls on purpose"), metadata=admin)
    assert _state(both, "alicebot") == "suspended"

    # the owner uploads the same bot, one byte changed: over gRPC, then over HTTP
    again = stub.SubmitBot(_chunks("alicebot", _variant(tmp_path, 2)), metadata=alice)
    assert again.new and again.version.number == 2
    assert _state(both, "alicebot") == "suspended"
    over_http = _http_upload(both.http, both.grpc.tokens["alice"], "alicebot", _variant(tmp_path, 3))
    assert over_http.status_code == 201, over_http.text
    info = stub.GetBot(pb.GetBotRequest(name="alicebot"))
    assert info.state == "suspended" and "suspended by the organiser: it stalls" in info.suspension_reason
    notices = [n.message for n in both.store.notices("alicebot")]
    assert sum("the organiser's suspension stays" in n for n in notices) == 2, notices

    # only the organiser lifts it
    stub.ReinstateBot(pb.SuspendBotRequest(name="alicebot", reason="talked it over"), metadata=admin)
    assert _state(both, "alicebot") == "active"

    # the ladder's suspension for faults is still lifted by a new version...
    with both.store.tx() as s:
        bot_id = s.query(models.Bot.id).filter_by(name="alicebot").scalar()
        suspend_bot(s, bot_id, "alicebot@3 ended 3 of its last 5 matches with a fault")
    assert _state(both, "alicebot") == "suspended"
    stub.SubmitBot(_chunks("alicebot", _variant(tmp_path, 4)), metadata=alice)
    assert _state(both, "alicebot") == "active"

    # ...unless the organiser suspended it too: then it is the organiser's to lift
    with both.store.tx() as s:
        suspend_bot(s, bot_id, "alicebot@4 ended 3 of its last 5 matches with a fault")
    held = httpx.post(
        f"{both.http}/api/bots/alicebot/suspend", json={"reason": "and it cheats"}, headers=_bearer(ADMIN)
    )
    assert held.status_code == 200, held.text
    stub.SubmitBot(_chunks("alicebot", _variant(tmp_path, 5)), metadata=alice)
    assert _state(both, "alicebot") == "suspended"
    with both.store.read() as s:
        bot = s.get_one(models.Bot, bot_id)
        assert bot.suspension_kind == models.SuspensionKind.ORGANISER


# ---- the organiser's own bots belong to the organiser, not to a name ------------------------------
def _owner_row(both: Both, name: str) -> str:
    """An owner row written around `add_owner` (as one created before the rule, or restored from an
    old backup, would be); its token."""
    token = new_token()
    with both.store.tx() as s:
        s.add(models.Owner(name=name, token_hash=token_hash(token), token_prefix=token[:8]))
    return token


def test_an_owner_named_admin_cannot_act_on_the_organisers_bots(both: Both, tmp_path) -> None:
    stub, admin = both.stub(), Running.auth(ADMIN)
    made = stub.SubmitBot(_chunks("housebot", _variant(tmp_path, 1)), metadata=admin)
    assert made.new
    house = stub.GetBot(pb.GetBotRequest(name="housebot"))
    assert house.owner == "house"  # the organiser's, shown as the house's

    # no owner called `admin` (or `house`) can be made any more, over gRPC or HTTP
    for name in ("admin", "house"):
        refused = _refusal(stub.AddOwner, pb.OwnerRequest(name=name), admin)
        assert refused.code() == grpc.StatusCode.FAILED_PRECONDITION and "is reserved" in refused.details()
        over_http = httpx.post(f"{both.http}/api/owners", json={"name": name}, headers=_bearer(ADMIN))
        assert over_http.status_code == 409 and "is reserved" in over_http.json()["detail"]

    # and a row that has such a name anyway resolves to no one: its token is refused everywhere
    for name in ("admin", "house"):
        token = _owner_row(both, name)
        md = Running.auth(token)
        logs = _refusal(stub.GetBotLogs, pb.GetBotLogsRequest(name="housebot"), md)
        assert logs.code() == grpc.StatusCode.UNAUTHENTICATED
        retire = _refusal(stub.RetireBot, pb.RetireBotRequest(name="housebot"), md)
        assert retire.code() == grpc.StatusCode.UNAUTHENTICATED
        for method, path in (
            ("GET", "/api/bots/housebot/logs"),
            ("GET", "/api/bots/housebot/private-logs"),
            ("POST", "/api/bots/housebot/retire"),
        ):
            answer = httpx.request(method, f"{both.http}{path}", headers=_bearer(token))
            assert answer.status_code in (401, 403), (name, path, answer.status_code, answer.text)
    # nor does the web's older HMAC owner token, made for either name, open it
    from arena.web.tokens import OwnerTokens

    for name in ("admin", "house"):
        hmac_token = OwnerTokens(WEB_SECRET).token(name)
        answer = httpx.get(f"{both.http}/api/bots/housebot/logs", headers={"X-Owner-Token": hmac_token})
        assert answer.status_code == 403, (name, answer.text)
    # an ordinary owner is refused too; the organiser reads and retires it
    alice = Running.auth(both.grpc.tokens["alice"])
    assert (
        _refusal(stub.GetBotLogs, pb.GetBotLogsRequest(name="housebot"), alice).code()
        == grpc.StatusCode.PERMISSION_DENIED
    )
    assert stub.GetBotLogs(pb.GetBotLogsRequest(name="housebot"), metadata=admin).name == "housebot"
    assert _state(both, "housebot") == "active"
    stub.RetireBot(pb.RetireBotRequest(name="housebot"), metadata=admin)
    assert _state(both, "housebot") == "retired"


# ---- names that differ only in case are one name --------------------------------------------------
def test_names_that_differ_only_in_case_are_one_name(both: Both, tmp_path) -> None:
    stub, admin = both.stub(), Running.auth(ADMIN)
    for name in ("Alice", "ALICE"):
        refused = _refusal(stub.AddOwner, pb.OwnerRequest(name=name), admin)
        assert refused.code() == grpc.StatusCode.FAILED_PRECONDITION
        assert "is taken by 'alice'" in refused.details(), refused.details()
    over_http = httpx.post(f"{both.http}/api/owners", json={"name": "Bob"}, headers=_bearer(ADMIN))
    assert over_http.status_code == 409 and "is taken by 'bob'" in over_http.json()["detail"]

    alice = Running.auth(both.grpc.tokens["alice"])
    assert stub.SubmitBot(_chunks("alice-random", _variant(tmp_path, 1)), metadata=alice).new
    bob = Running.auth(both.grpc.tokens["bob"])
    for who in (bob, alice):  # another owner's spelling, and the owner's own other spelling
        refused = _refusal(stub.SubmitBot, _chunks("Alice-Random", _variant(tmp_path, 2)), who)
        assert refused.code() == grpc.StatusCode.FAILED_PRECONDITION
        assert "is taken by 'alice-random'" in refused.details(), refused.details()
    over_http = _http_upload(both.http, both.grpc.tokens["bob"], "ALICE-RANDOM", _variant(tmp_path, 3))
    assert over_http.status_code == 409 and "is taken by 'alice-random'" in over_http.json()["detail"]
    assert [b.name for b in stub.ListBots(pb.ListBotsRequest()).bots] == ["alice-random"]
    assert [o.name for o in stub.ListOwners(pb.ListOwnersRequest(), metadata=admin).owners] == [
        "alice",
        "bob",
    ]


def test_a_reserved_owner_name_files_the_bot_under_the_house(store) -> None:
    """A local `arena bots submit` (or `compare`) run as `root` files under the house, however it is
    spelled, and a live owner's name is filed in that owner's own spelling."""
    add_owner(store, "carol")
    hashes = iter(f"{n:064d}" for n in range(1, 10))
    for owner in ("root", "ROOT", "Sys_Tem", "admin"):
        store.add_version("local", owner, content_hash=next(hashes), path="/b")
    assert store.bot("local").owner == "house" and len(store.bot("local").versions) == 4
    store.add_version("carols", "CAROL", content_hash=next(hashes), path="/b")
    assert store.bot("carols").owner == "carol"
