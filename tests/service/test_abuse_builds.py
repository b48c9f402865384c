"""Builds that one owner cannot use to deny service (issue #31): builds run on the server's own build
slots (at most N at once, one per owner), never on the threads that serve calls, over gRPC and the
web's upload route alike.

The attack this answers: seven uploads whose build sleeps made every call, a spectator's GetBot among
them, fail with DEADLINE_EXCEEDED, since each build held one of the CPU count + 4 threads that serve
calls. Here the builds wait at a gate file the test holds, so they cannot have ended while the test
looks; the test counts builds and answers, never durations.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import grpc
import httpx
import pytest
from abuse_support import OWNERS, Both, both_served, code_of, until
from service_support import build_bundle, bundle_archive, gated_build

from arena.proto import arena_pb2 as pb
from arena.service.builds import WAITING, BuildSlots, call_threads

SLOTS = 2


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> Iterator[Both]:
    with both_served(tmp_path_factory.mktemp("abuse-builds")) as both:
        yield both


@pytest.fixture
def both(served: Both, tmp_path, monkeypatch) -> Both:
    """The shared server with fresh build slots (their counts start at 0) and a bundle cache of the test's own."""
    monkeypatch.setenv("ARENA_BUNDLE_CACHE", str(tmp_path / "cache"))
    served.service.builds = BuildSlots(SLOTS)
    return served


def _gated(tmp_path: Path, gate: Path, tag: str) -> bytes:
    """A bundle whose build waits for `gate`; `tag` makes its content (so its build) its own."""
    return bundle_archive(build_bundle(tmp_path / tag, gated_build(gate) + f"; echo {tag}"))


def _chunks(name: str, data: bytes) -> Iterator[pb.SubmitBotChunk]:
    yield pb.SubmitBotChunk(header=pb.SubmitBotHeader(name=name, format="tar.gz", size=len(data)))
    yield pb.SubmitBotChunk(data=data)


def _registered(both: Both, name: str) -> None:
    """A bot with one version, for the spectator to read."""
    both.service.store.add_version(name, "owner7", content_hash=f"{name:0<64}", path="/nonexistent")


def test_a_spectator_reads_while_seven_owners_builds_wait(both: Both, tmp_path) -> None:
    """Seven owners' builds held at their gate: N run, the rest wait for a slot holding no thread,
    and a spectator's reads all answer (10 s deadline each, the issue's DEADLINE_EXCEEDED came at 6 s)."""
    _registered(both, "readme")
    gate = tmp_path / "gate"
    stub = both.stub()
    builds = [
        stub.SubmitBot.future(
            _chunks(f"sleeper{i}", _gated(tmp_path, gate, f"sleeper{i}")),
            metadata=both.auth(owner),
            timeout=180,
        )
        for i, owner in enumerate(OWNERS[:7])
    ]
    try:
        until(lambda: both.service.builds.pending == 7, "the seven uploads did not all reach the build slots")
        until(lambda: both.service.builds.running == SLOTS, "no build started")
        for _ in range(20):  # a spectator, no token
            assert stub.GetBot(pb.GetBotRequest(name="readme"), timeout=10).name == "readme"
            assert "readme" in [b.name for b in stub.ListBots(pb.ListBotsRequest(), timeout=10).bots]
        assert both.service.builds.running == SLOTS and both.service.builds.pending == 7
    finally:
        gate.touch()
    answers = [f.result() for f in builds]
    assert all(a.version.build_ok for a in answers)
    assert both.service.builds.peak == SLOTS  # never more at once, however many waited
    assert both.service.builds.pending == 0


def test_one_owner_builds_one_at_a_time_and_its_next_build_says_it_waits(both: Both, tmp_path) -> None:
    """owner0's second upload waits for its first build although a slot is free ("waiting for a build
    slot" first on its live stream); owner1's build takes that free slot meanwhile."""
    gate = tmp_path / "gate"
    stub = both.stub()
    first = stub.SubmitBotLive(
        _chunks("first", _gated(tmp_path, gate, "first")), metadata=both.auth("owner0"), timeout=180
    )
    assert next(first).output == "first line\n"  # running, held at the gate
    second = stub.SubmitBotLive(
        _chunks("second", _gated(tmp_path, gate, "second")), metadata=both.auth("owner0"), timeout=180
    )
    try:
        assert next(second).output == WAITING.format(slots=SLOTS)
        assert both.service.builds.running == 1 and both.service.builds.pending == 2
        other = stub.SubmitBotLive(
            _chunks("other", _gated(tmp_path, gate, "other")), metadata=both.auth("owner1"), timeout=180
        )
        assert next(other).output == "first line\n"  # another owner is not held up by owner0's queue
        assert both.service.builds.running == SLOTS
    finally:
        gate.touch()
    rest = list(second)
    assert "".join(e.output for e in rest) == "first line\nsecond line\nsecond\n"
    assert rest[-1].done.version.build_ok
    assert list(first)[-1].done.version.build_ok and list(other)[-1].done.version.build_ok
    assert both.service.builds.peak == SLOTS


def test_a_caller_gone_while_its_build_waits_drops_it(both: Both, tmp_path) -> None:
    """A build still waiting for a slot when its caller cancels never runs (nor registers)."""
    gate = tmp_path / "gate"
    stub = both.stub()
    running = stub.SubmitBot.future(
        _chunks("holder", _gated(tmp_path, gate, "holder")), metadata=both.auth("owner2"), timeout=180
    )
    try:
        until(lambda: both.service.builds.running == 1, "the first build did not start")
        waiting = stub.SubmitBot.future(
            _chunks("dropped", _gated(tmp_path, gate, "dropped")), metadata=both.auth("owner2"), timeout=180
        )
        until(lambda: both.service.builds.pending == 2, "the second upload did not reach the build slots")
        waiting.cancel()
        until(lambda: both.service.builds.pending == 1, "the cancelled build is still queued")
    finally:
        gate.touch()
    assert running.result().version.build_ok
    assert code_of(waiting) == grpc.StatusCode.CANCELLED
    assert both.service.builds.peak == 1
    assert code_of(stub.GetBot.future(pb.GetBotRequest(name="dropped"))) == grpc.StatusCode.NOT_FOUND


def test_the_web_upload_builds_on_the_same_slots(both: Both, tmp_path) -> None:
    """An upload over HTTP (/api/bots) waits behind the same owner's gRPC build, on the same slots,
    while a spectator's HTTP and gRPC reads answer."""
    _registered(both, "webread")
    gate = tmp_path / "gate"
    stub = both.stub()
    by_grpc = stub.SubmitBot.future(
        _chunks("viagrpc", _gated(tmp_path, gate, "viagrpc")), metadata=both.auth("owner3"), timeout=180
    )
    data = _gated(tmp_path, gate, "viaweb")
    token = both.grpc.tokens["owner3"]
    with httpx.Client(timeout=180) as client:
        try:
            until(lambda: both.service.builds.running == 1, "the gRPC build did not start")
            sent = client.build_request(
                "POST",
                f"{both.http}/api/bots",
                headers={"Authorization": f"Bearer {token}"},
                data={"name": "viaweb"},
                files={"bundle": ("bot.tar.gz", data)},
            )
            box: dict[str, httpx.Response] = {}
            thread = threading.Thread(target=lambda: box.setdefault("r", client.send(sent)))
            thread.start()
            until(lambda: both.service.builds.pending == 2, "the web upload did not reach the build slots")
            assert both.service.builds.running == 1  # owner3's web build waits for its gRPC build
            with httpx.Client(timeout=10) as spectator:
                assert spectator.get(f"{both.http}/api/bots").status_code == 200
            assert stub.GetBot(pb.GetBotRequest(name="webread"), timeout=10).name == "webread"
        finally:
            gate.touch()
        thread.join(180)
    assert by_grpc.result().version.build_ok
    assert box["r"].status_code == 201 and box["r"].json()["version"]["build_ok"]
    assert both.service.builds.peak == 1


def test_calls_are_served_by_an_executor_sized_for_every_stream(both: Both) -> None:
    """The server's loop runs calls on threads named for them, as many as the stream caps allow plus
    the calls' own (not Python's CPU count + 4)."""
    from arena.service import ops_watch
    from arena.service.quota import TOTAL_UPLOADS

    assert call_threads() >= ops_watch.TOTAL + TOTAL_UPLOADS + 1
    before = {t.name for t in threading.enumerate()}
    stub = both.stub()
    for _ in range(3):
        stub.ListBots(pb.ListBotsRequest(), timeout=10)
    names = {t.name for t in threading.enumerate()} | before
    assert any(n.startswith("arena-call") for n in names)


def test_arena_serve_takes_its_build_slots_and_disk_quota_from_its_options(tmp_path) -> None:
    """A real `arena serve --build-slots 1 --disk-quota 1`: a second owner's build waits while the
    first owner's holds the one slot, and a declared 2 MiB upload is refused naming the 1 MiB quota."""
    import os
    import signal
    import socket
    import subprocess
    import sys

    from service_support import ADMIN, Running

    from arena.proto import arena_pb2_grpc

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    home = tmp_path / "home"
    home.mkdir()
    token_file = tmp_path / "admin-token"
    token_file.write_text(ADMIN + "\n")
    token_file.chmod(0o600)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    env.update(ARENA_HOME=str(home), ARENA_BUNDLE_CACHE=str(tmp_path / "cache"))
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2])
    proc = subprocess.Popen(
        [sys.executable, "-m", "arena.cli", "serve", "--unix", "", "--tcp", f"127.0.0.1:{port}",
         "--admin-token-file", str(token_file), "--sandbox", "local", "--build-slots", "1",
         "--disk-quota", "1", "--replays", str(home / "replays")],
        env=env, cwd=home, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip
    gate = tmp_path / "gate"
    try:
        assert proc.stdout.readline().startswith(f"referee listening on 127.0.0.1:{port}")
        stub = arena_pb2_grpc.ArenaStub(grpc.insecure_channel(f"127.0.0.1:{port}"))
        admin = Running.auth(ADMIN)
        tokens = {
            n: stub.AddOwner(pb.OwnerRequest(name=n), metadata=admin, timeout=30).token
            for n in ("ann", "ben")
        }
        first = stub.SubmitBotLive(
            _chunks("held", _gated(tmp_path, gate, "held")), metadata=Running.auth(tokens["ann"]), timeout=180
        )
        assert next(first).output == "first line\n"
        second = stub.SubmitBotLive(
            _chunks("next", _gated(tmp_path, gate, "next")), metadata=Running.auth(tokens["ben"]), timeout=180
        )
        assert next(second).output == WAITING.format(slots=1)  # another owner, but the one slot is taken
        big = os.urandom(2 * 1024 * 1024)
        with pytest.raises(grpc.RpcError) as over:
            list(stub.SubmitBotLive(_chunks("big", big), metadata=Running.auth(tokens["ben"]), timeout=60))
        assert (
            over.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            and "1 MiB disk quota" in over.value.details()
        )
        gate.touch()
        assert list(first)[-1].done.version.build_ok and list(second)[-1].done.version.build_ok
    finally:
        gate.touch()
        proc.send_signal(signal.SIGINT)
        try:
            _, err = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            _, err = proc.communicate()
    assert proc.returncode == 0 and "Traceback" not in err, err[-2000:]
