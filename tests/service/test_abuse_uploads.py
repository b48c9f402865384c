"""Uploads that one owner cannot use to fill the disk (issue #31): the upload budget is charged before
the body is read, an owner has at most PER_OWNER uploads under way, a disk quota bounds its bundles
and build outputs before and while the body is written, and an upload's temporary files are gone
after every way it can fail. Over real gRPC and the web's upload route of the same `Service`.

The attack this answers: an owner over the upload budget opened six 4 MiB SubmitBot streams at once,
and the server wrote all 24 MiB before answering RESOURCE_EXHAUSTED. Here the uploads hold after
their first bytes, so what reached the disk is there to be counted while they are held.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import grpc
import httpx
import pytest
from abuse_support import Both, Held, both_served, code_of, open_limits, tree_bytes, until
from service_support import build_bundle, bundle_archive, serve_in_thread

from arena.access.ratelimit import Budget, RateLimiter
from arena.proto import arena_pb2 as pb
from arena.proto import arena_pb2_grpc
from arena.service.quota import PER_OWNER, UploadGate

RANDOM_BOT = Path(__file__).resolve().parents[2] / "sample_bots" / "python" / "random"
MIB = 1024 * 1024
FIRST = 64 * 1024  # what a held upload sends first: past the file's write buffer, so on disk at once


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> Iterator[Both]:
    with both_served(tmp_path_factory.mktemp("abuse-uploads")) as both:
        yield both


@pytest.fixture
def both(served: Both, tmp_path, monkeypatch) -> Iterator[Both]:
    """The shared server with fresh limits, a bundle cache of the test's own, and the uploads'
    temporary folders made in `tmp_path/uploads` (Python's temporary folder, for the server)."""
    monkeypatch.setenv("ARENA_BUNDLE_CACHE", str(tmp_path / "cache"))
    (tmp_path / "uploads").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "uploads"))
    served.service.limiter = open_limits()
    served.service.uploads = UploadGate()
    served.service.upload_cap = 64 * MIB
    yield served


def _uploads(tmp_path: Path) -> list[Path]:
    return sorted((tmp_path / "uploads").glob("arena-upload-*"))


def _uploaded_bytes(tmp_path: Path) -> int:
    return sum(tree_bytes(p) for p in _uploads(tmp_path))


def _cleaned(both: Both, tmp_path: Path) -> None:
    """Wait until every upload folder is gone and every slot given back (the server tidies up just
    after it has sent its answer)."""
    until(lambda: _uploads(tmp_path) == [] and both.service.uploads.open() == 0, "an upload left its folder")


def _bot(tmp_path: Path, tag: str, padding: int = 0) -> bytes:
    """The random sample bot, made its own by `tag`, with `padding` incompressible bytes."""
    folder = tmp_path / f"bot-{tag}"
    shutil.copytree(RANDOM_BOT, folder, ignore=shutil.ignore_patterns("__pycache__"))
    (folder / "tag.txt").write_text(tag)
    if padding:
        (folder / "padding.bin").write_bytes(os.urandom(padding))
    return bundle_archive(folder)


def _submit(both: Both, held: Held, owner: str) -> grpc.Future:
    return both.stub().SubmitBot.future(iter(held), metadata=both.auth(owner), timeout=120)


def _sent(both: Both, name: str, data: bytes, owner: str):  # pb.SubmitBotResponse
    """A whole upload, not held: the server's answer."""
    return both.stub().SubmitBot(
        iter(Held(name, data, first=len(data))), metadata=both.auth(owner), timeout=120
    )


def test_an_owner_over_the_upload_budget_is_refused_before_a_byte_is_written(both: Both, tmp_path) -> None:
    """The issue's attack: six 4 MiB streams of an owner over its budget. Each is refused after its
    header, while it holds its body: nothing reached the disk."""
    both.service.limiter = RateLimiter(
        {**open_limits().budgets, "upload": Budget(1, 3600.0)}, clock=lambda: 0.0
    )
    assert _sent(both, "spent", _bot(tmp_path, "spent"), "owner0").version.number == 1  # the budget's one
    body = os.urandom(4 * MIB)
    streams = [Held(f"flood{i}", body, first=256 * 1024, size=len(body)) for i in range(6)]
    calls = [_submit(both, s, "owner0") for s in streams]
    try:
        until(lambda: all(c.done() for c in calls), "an upload over the budget was not refused while held")
        assert [code_of(c) for c in calls] == [grpc.StatusCode.RESOURCE_EXHAUSTED] * 6
        assert all("upload" in c.exception().details() for c in calls)
        assert _uploads(tmp_path) == []  # not a folder made, not a byte written
    finally:
        for s in streams:
            s.release.set()


def test_an_owner_has_at_most_two_uploads_under_way_over_grpc_and_http(both: Both, tmp_path) -> None:
    """Two uploads held half way fill owner1's slots: a third, over gRPC or over HTTP, is refused
    before its body (its bytes never reach the disk); another owner uploads meanwhile."""
    held = [Held(f"slot{i}", _bot(tmp_path, f"slot{i}", 2 * FIRST), first=FIRST) for i in range(PER_OWNER)]
    calls = [_submit(both, h, "owner1") for h in held]
    try:
        until(lambda: len(_uploads(tmp_path)) == PER_OWNER, "the two uploads did not start")
        until(lambda: _uploaded_bytes(tmp_path) == PER_OWNER * FIRST, "their first bytes were not written")
        third = Held("slot-extra", os.urandom(4 * MIB), first=256 * 1024)
        refused = _submit(both, third, "owner1")
        until(refused.done, "a third upload of the same owner was not refused while held")
        third.release.set()
        assert code_of(refused) == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert f"at most {PER_OWNER}" in refused.exception().details()
        web = httpx.post(
            f"{both.http}/api/bots",
            headers={"Authorization": f"Bearer {both.grpc.tokens['owner1']}"},
            data={"name": "slot-web"},
            files={"bundle": ("bot.tar.gz", os.urandom(MIB))},
            timeout=60,
        )
        assert web.status_code == 429 and f"at most {PER_OWNER}" in web.json()["detail"]
        assert len(_uploads(tmp_path)) == PER_OWNER and _uploaded_bytes(tmp_path) == PER_OWNER * FIRST
        assert _sent(both, "other-owner", _bot(tmp_path, "o"), "owner2").version.build_ok
    finally:
        for h in held:
            h.release.set()
    assert all(c.result().version.build_ok for c in calls)
    _cleaned(both, tmp_path)


def test_the_disk_quota_refuses_before_and_while_the_body_is_written(both: Both, tmp_path) -> None:
    """owner3's first bot fills most of a 1 MiB quota; a second that would pass it is refused before
    its body when its size is declared, after the room left when not (its folder then removed), on
    gRPC and HTTP; owner4, with the same quota, is not concerned."""
    both.service.uploads = UploadGate(disk_quota=MIB)
    first = _bot(tmp_path, "big", padding=700 * 1024)
    assert _sent(both, "big", first, "owner3").version.build_ok
    second = _bot(tmp_path, "second", padding=500 * 1024)
    declared = Held("second", second, first=FIRST, size=len(second))
    refused = _submit(both, declared, "owner3")
    until(refused.done, "a declared upload over the quota was not refused while held")
    declared.release.set()
    assert code_of(refused) == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "disk quota" in refused.exception().details()
    assert _uploads(tmp_path) == []
    undeclared = Held("second", second, first=FIRST)
    cut = _submit(both, undeclared, "owner3")
    until(lambda: _uploaded_bytes(tmp_path) == FIRST, "the undeclared upload did not start")
    undeclared.release.set()
    assert code_of(cut) == grpc.StatusCode.RESOURCE_EXHAUSTED and "disk quota" in cut.exception().details()
    web = httpx.post(
        f"{both.http}/api/bots",
        headers={"Authorization": f"Bearer {both.grpc.tokens['owner3']}"},
        data={"name": "second"},
        files={"bundle": ("bot.tar.gz", second)},
        timeout=60,
    )
    assert web.status_code == 413 and "disk quota" in web.json()["detail"]
    _cleaned(both, tmp_path)
    assert _sent(both, "fits", second, "owner4").version.build_ok


def test_every_failure_leaves_no_temporary_file(both: Both, tmp_path) -> None:
    """A stream cancelled half way, one over the cap, a bad archive, a build that fails, and a server
    stopped under an upload: no upload folder is left, nor an unpacked copy in the bundle cache."""
    cache = tmp_path / "cache"

    held = Held("cancelled", _bot(tmp_path, "c", 2 * FIRST), first=FIRST)
    cancelled = _submit(both, held, "owner5")
    until(lambda: _uploaded_bytes(tmp_path) == FIRST, "the upload did not start")
    cancelled.cancel()
    held.release.set()
    _cleaned(both, tmp_path)

    both.service.upload_cap = 256 * 1024
    over = Held("over", os.urandom(MIB), first=FIRST)
    over.release.set()  # sent whole: cut off at the cap, after its first 256 KiB were written
    assert code_of(_submit(both, over, "owner5")) == grpc.StatusCode.RESOURCE_EXHAUSTED
    both.service.upload_cap = 64 * MIB
    _cleaned(both, tmp_path)

    with pytest.raises(grpc.RpcError) as bad:
        _sent(both, "bad", b"\x1f\x8b" + os.urandom(5000), "owner5")
    assert bad.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    _cleaned(both, tmp_path)
    assert not list(cache.glob("a-*"))

    failing = bundle_archive(build_bundle(tmp_path / "failing", "echo failing-now; exit 3"))
    done = _sent(both, "failing", failing, "owner5")
    assert not done.version.build_ok and "failing-now" in done.build_log
    _cleaned(both, tmp_path)
    assert list(cache.iterdir()) == []  # neither the unpacked upload nor the failed build's copy

    both.service.limiter = open_limits()
    address, stop, thread = serve_in_thread(both.service)  # a second server over the same Service
    stopped = Held("stopped", _bot(tmp_path, "s", 2 * FIRST), first=FIRST)
    second_stub = arena_pb2_grpc.ArenaStub(grpc.insecure_channel(address))
    call = second_stub.SubmitBot.future(iter(stopped), metadata=both.auth("owner6"), timeout=120)
    until(lambda: _uploaded_bytes(tmp_path) == FIRST, "the upload to the second server did not start")
    stop.set()
    thread.join(20)
    stopped.release.set()
    assert code_of(call) != grpc.StatusCode.OK
    until(lambda: _uploads(tmp_path) == [], "the stopped server's upload left its folder")
    assert both.service.uploads.open() == 0


def test_a_builds_output_cannot_pass_the_disk_quota(both: Both, tmp_path) -> None:
    """A small upload whose build writes 2 MiB, against a 1 MiB quota: refused with RESOURCE_EXHAUSTED
    (429 over HTTP) naming the quota, no version registered, its stored bundle and build output
    removed; a build that fits is then registered."""
    from arena.sandbox.bundle import bundle_cache_dir
    from arena.service.quota import disk_use

    both.service.uploads = UploadGate(disk_quota=MIB)
    store = both.service.store
    stored_before = set(store.bundles_dir.iterdir()) if store.bundles_dir.is_dir() else set()
    bloat = bundle_archive(build_bundle(tmp_path / "bloat", "head -c 2097152 /dev/urandom > out.bin"))
    assert len(bloat) < MIB  # the upload itself fits: only its build's output does not
    with pytest.raises(grpc.RpcError) as over:
        _sent(both, "bloat", bloat, "owner6")
    assert over.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "passes its 1 MiB disk quota" in over.value.details() and "not registered" in over.value.details()
    with pytest.raises(grpc.RpcError) as missing:
        both.stub().GetBot(pb.GetBotRequest(name="bloat"), timeout=30)
    assert missing.value.code() == grpc.StatusCode.NOT_FOUND
    assert set(store.bundles_dir.iterdir()) == stored_before  # the stored copy is gone
    assert not list(bundle_cache_dir().glob("d-*"))  # and so is the build's output
    assert disk_use(store, "owner6") == 0
    _cleaned(both, tmp_path)
    web = httpx.post(
        f"{both.http}/api/bots",
        headers={"Authorization": f"Bearer {both.grpc.tokens['owner6']}"},
        data={"name": "bloat"},
        files={"bundle": ("bot.tar.gz", bloat)},
        timeout=120,
    )
    assert web.status_code == 429 and "disk quota" in web.json()["detail"]
    _cleaned(both, tmp_path)
    small = bundle_archive(build_bundle(tmp_path / "small", "head -c 102400 /dev/urandom > out.bin"))
    assert _sent(both, "small", small, "owner6").version.build_ok
    assert 100 * 1024 < disk_use(store, "owner6") < MIB


def test_a_build_that_never_stops_writing_is_stopped_at_the_quota(both: Both, tmp_path) -> None:
    """A build that writes without end (within its 300 s) is stopped once its output passes the room
    left in the quota, not when its time is up; refused as above, its files removed."""
    from arena.sandbox.bundle import bundle_cache_dir

    both.service.uploads = UploadGate(disk_quota=MIB)
    script = "i=0; while true; do head -c 262144 /dev/urandom > f$i; i=$((i+1)); sleep 0.05; done"
    endless = bundle_archive(build_bundle(tmp_path / "endless", script))
    with pytest.raises(grpc.RpcError) as over:
        _sent(both, "endless", endless, "owner7")  # the call's 120 s deadline is under the build's 300 s
    assert over.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED and "disk quota" in over.value.details()
    assert not list(bundle_cache_dir().glob("d-*"))
    _cleaned(both, tmp_path)
