"""`arena serve`, end to end over real gRPC: the management service (CreateMatch, GetMatch) answers
UNAUTHENTICATED to a caller without the admin token or with a wrong one, so nobody who merely reaches
the port learns seat tokens or makes the server write a replay; with the token, a match id that is
a path is INVALID_ARGUMENT and nothing is written outside --replays."""

from __future__ import annotations

import os
import re
import secrets
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from leak_world import REPO, stop

from arena.proto import arena_pb2 as apb
from arena.proto import arena_pb2_grpc as apbg


@pytest.fixture
def serve(tmp_path) -> Iterator[tuple[str, str, Path]]:
    """`arena serve` on a free loopback port with an admin token; yields (address, token, replays dir)."""
    token = secrets.token_urlsafe(24)
    replays = tmp_path / "replays"
    env = {**os.environ, "PYTHONPATH": str(REPO), "ARENA_ADMIN_TOKEN": token}
    proc = subprocess.Popen(
        [sys.executable, "-m", "arena.cli", "serve", "--unix", str(tmp_path / "r.sock"),
         "--tcp", "127.0.0.1:0", "--replays", str(replays)],
        cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        line = proc.stdout.readline()
        found = re.search(r"127\.0\.0\.1:(\d+)", line)
        assert found, f"no TCP address in {line!r}; stderr: {proc.stderr.read() if proc.poll() else ''}"
        yield f"127.0.0.1:{found.group(1)}", token, replays
    finally:
        stop(proc)


def _code(call, *args, **kw) -> grpc.StatusCode:
    try:
        call(*args, timeout=10, **kw)
    except grpc.RpcError as exc:
        return exc.code()
    return grpc.StatusCode.OK


def test_management_calls_need_the_admin_token(serve, tmp_path) -> None:
    address, token, replays = serve
    with grpc.insecure_channel(address) as channel:
        stub = apbg.ArenaStub(channel)
        create = apb.CreateMatchRequest(match_id="spectators-may-not")
        get = apb.GetMatchRequest(match_id="spectators-may-not", wait=False)
        wrong = (("authorization", "Bearer " + secrets.token_urlsafe(24)),)
        for metadata in ((), wrong):
            assert _code(stub.CreateMatch, create, metadata=metadata) == grpc.StatusCode.UNAUTHENTICATED
            assert _code(stub.GetMatch, get, metadata=metadata) == grpc.StatusCode.UNAUTHENTICATED
        admin = (("authorization", f"Bearer {token}"),)
        escape = tmp_path / "escaped"
        for bad in ("../escaped", str(escape), "a\x00b", "x" * 65):
            request = apb.CreateMatchRequest(match_id=bad)
            assert _code(stub.CreateMatch, request, metadata=admin) == grpc.StatusCode.INVALID_ARGUMENT, bad
        made = stub.CreateMatch(apb.CreateMatchRequest(match_id="m-ok_1"), metadata=admin, timeout=10)
        assert made.match_id == "m-ok_1" and len(made.tokens) == 2  # the positive control
    assert not list(tmp_path.glob("escaped*"))
    assert not replays.exists() or all(
        p.resolve().is_relative_to(replays.resolve()) for p in replays.rglob("*")
    )
