"""Helpers of the service tests: a real `Arena` gRPC service on a loopback port, tokens, bundles."""

from __future__ import annotations

import asyncio
import io
import json
import tarfile
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import grpc

from arena.proto import arena_pb2_grpc
from arena.service.core import Service
from arena.service.grpc_servicer import ArenaService, add_arena_service

ADMIN = "admin-token-for-tests-0123456789"


@dataclass
class Running:
    service: Service
    address: str
    tokens: dict[str, str]  # owner name -> API token

    def stub(self) -> arena_pb2_grpc.ArenaStub:
        return arena_pb2_grpc.ArenaStub(grpc.insecure_channel(self.address))

    @staticmethod
    def auth(token: str | None) -> list[tuple[str, str]]:
        return [("authorization", f"Bearer {token}")] if token else []


def serve_in_thread(
    service: Service,
    add: Callable[[ArenaService, grpc.aio.Server], None] = add_arena_service,
    credentials: grpc.ServerCredentials | None = None,
) -> tuple[str, threading.Event, threading.Thread]:
    """The service on a loopback port in a thread of its own; `add` registers its methods, and
    `credentials` make the port TLS."""
    ready, stop = threading.Event(), threading.Event()
    box: dict[str, str] = {}

    async def main() -> None:
        server = grpc.aio.server()
        add(ArenaService(service), server)
        if credentials is None:
            port = server.add_insecure_port("127.0.0.1:0")
        else:
            port = server.add_secure_port("127.0.0.1:0", credentials)
        await server.start()
        box["address"] = f"127.0.0.1:{port}"
        ready.set()
        while not stop.is_set():
            await asyncio.sleep(0.05)
        await server.stop(0.5)

    thread = threading.Thread(target=asyncio.run, args=(main(),), daemon=True)
    thread.start()
    assert ready.wait(20), "the service did not start"
    return box["address"], stop, thread


def bundle_archive(source: Path, name: str = "bot") -> bytes:
    """A .tar.gz of a bundle folder, as an author's machine would send it."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        tar.add(source, arcname=name, filter=lambda t: None if "__pycache__" in t.name else t)
    return buf.getvalue()


def gated_build(gate: Path) -> str:
    """A build script that prints a line, waits until the test creates `gate` (at most 60 s), and
    prints another: while the test holds the gate, the build cannot have ended."""
    return (
        f"echo first line; i=0; while [ ! -e '{gate}' ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done;"
        " echo second line"
    )


def build_bundle(folder: Path, script: str) -> Path:
    """A Python bundle in `folder` whose build step is `sh -c script` (build the bundle with the
    local launcher: the script may read the test's files)."""
    folder.mkdir(parents=True)
    (folder / "bot.toml").write_text(
        f'name = "built"\nlanguage = "python"\nrun = ["python3", "bot.py"]\nbuild = ["sh", "-c", {json.dumps(script)}]\n'
    )
    (folder / "bot.py").write_text("print('never run')\n")
    return folder
