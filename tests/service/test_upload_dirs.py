"""Issue #32: a server killed mid-upload leaves its partial upload behind, and its next start sweeps it,
never another live server's (arena/service/upload_dirs.py). Real `arena serve` processes sharing one
TMPDIR, uploads over real gRPC held mid-body by the test."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import grpc
import pytest
from service_support import bundle_archive

from arena.proto import arena_pb2 as pb
from arena.proto import arena_pb2_grpc
from arena.service.upload_dirs import PREFIX, STARTING, UploadRoot, sweep

ARENA = [sys.executable, "-c", "import sys; from arena.cli import main; sys.exit(main())"]
SAMPLES = Path(__file__).resolve().parents[2] / "sample_bots" / "python"
CHUNK = 65536


def _until(what: str, check, timeout: float = 120.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


class Server:
    """One `arena serve --workers 0` on its own ARENA_HOME, its TMPDIR the test's shared one."""

    def __init__(self, repo: Path, home: Path, tmp: Path) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
        self.env = {**env, "PYTHONPATH": str(repo), "ARENA_HOME": str(home), "TMPDIR": str(tmp)}
        self.home, self.proc, self.address = home, None, ""

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [*ARENA, "serve", "--unix", "", "--tcp", "127.0.0.1:0", "--workers", "0"],
            cwd=self.home, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=self.env,
        )  # fmt: skip
        line = self.proc.stdout.readline()
        assert " on " in line, line + self.proc.stderr.read()
        self.address = line.split(" on ")[1].split(" (")[0]

    def stub(self, channels: list[grpc.Channel]) -> arena_pb2_grpc.ArenaStub:
        channel = grpc.insecure_channel(self.address)
        channels.append(channel)
        return arena_pb2_grpc.ArenaStub(channel)

    def stop(self) -> str:
        if self.proc is None or self.proc.poll() is not None:
            return ""
        self.proc.send_signal(signal.SIGINT)
        _out, err = self.proc.communicate(timeout=60)
        assert self.proc.returncode == 0, err
        return err


def _owner(home: Path, name: str) -> str:
    from arena.access.owners import add_owner
    from arena.store import Store

    store = Store.open(None, home=home)
    try:
        return add_owner(store, name)
    finally:
        store.close()


def _chunks(data: bytes, gate: threading.Event) -> Iterator[pb.SubmitBotChunk]:
    yield pb.SubmitBotChunk(header=pb.SubmitBotHeader(name="halfbot", format="tar.gz", size=len(data)))
    for i in range(0, len(data), CHUNK):
        if i == 2 * CHUNK:
            gate.wait(120)  # the server holds the first 128 KiB while the test looks
        yield pb.SubmitBotChunk(data=data[i : i + CHUNK])


def _folders(tmp: Path) -> set[Path]:
    return set(tmp.glob(PREFIX + "*"))


def _partial(folder: Path) -> Path | None:
    """The upload arriving in a server's folder, once it holds the first two chunks."""
    found = [p for p in folder.glob("arena-upload-*/upload.tar.gz") if p.stat().st_size >= 2 * CHUNK]
    return found[0] if found else None


@pytest.fixture
def servers(repo_root: Path, tmp_path: Path) -> Iterator[tuple[Server, Server, Path]]:
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    made = [Server(repo_root, tmp_path / name, tmp) for name in ("a", "b")]
    for server in made:
        server.home.mkdir()
    try:
        yield made[0], made[1], tmp
    finally:
        for server in made:
            if server.proc is not None and server.proc.poll() is None:
                server.proc.kill()
                server.proc.communicate(timeout=30)


def test_a_restart_sweeps_the_killed_servers_partial_upload_and_not_a_live_ones(
    servers: tuple[Server, Server, Path], tmp_path: Path
) -> None:
    a, b, tmp = servers
    folder = tmp_path / "halfbot"
    shutil.copytree(SAMPLES / "random", folder, ignore=shutil.ignore_patterns("__pycache__"))
    (folder / "padding.bin").write_bytes(os.urandom(256 * 1024))  # incompressible: several chunks
    data = bundle_archive(folder, "halfbot")
    tokens = {s: _owner(s.home, "ann") for s in (a, b)}
    a.start()
    (a_folder,) = _folders(tmp)
    b.start()
    (b_folder,) = _folders(tmp) - {a_folder}
    gates = {a: threading.Event(), b: threading.Event()}
    channels: list[grpc.Channel] = []
    try:
        with ThreadPoolExecutor(2) as pool:
            uploads: dict[Server, Future] = {
                s: pool.submit(
                    s.stub(channels).SubmitBot,
                    _chunks(data, gates[s]),
                    metadata=(("authorization", f"Bearer {tokens[s]}"),),
                    timeout=180,
                )
                for s in (a, b)
            }
            killed = _until("the upload arriving at server a", lambda: _partial(a_folder))
            live = _until("the upload arriving at server b", lambda: _partial(b_folder))
            live_bytes = live.read_bytes()
            assert a.proc is not None
            os.kill(a.proc.pid, signal.SIGKILL)
            a.proc.communicate(timeout=30)
            gates[a].set()
            with pytest.raises(grpc.RpcError):
                uploads[a].result()
            assert killed.exists()  # the kill left it behind, incomplete ...
            a.start()  # ... and the next start sweeps it
            assert not a_folder.exists()
            assert len(_folders(tmp)) == 2 and b_folder in _folders(tmp)
            assert live.read_bytes() == live_bytes  # b's upload in flight untouched
            gates[b].set()
            done = uploads[b].result()
            assert done.new and done.version.number == 1
    finally:
        for gate in gates.values():
            gate.set()
        for channel in channels:
            channel.close()
    assert "removed 1 upload folder(s) a stopped server left" in a.stop()
    b.stop()
    assert _folders(tmp) == set()  # a clean stop removes a server's own folder


def test_a_hidden_folder_is_swept_only_once_its_server_cannot_be_starting(tmp_path: Path) -> None:
    """A folder not yet renamed into place (its server between mkdtemp and rename) is left alone while
    it is young; an old one's server died starting. A live server's folder stays whatever its age."""
    live = UploadRoot.claim(tmp_path)
    young, old = tmp_path / f".{PREFIX}young", tmp_path / f".{PREFIX}old"
    young.mkdir()
    old.mkdir()
    past = time.time() - STARTING - 60
    os.utime(old, (past, past))
    os.utime(live.folder, (past, past))
    try:
        assert sweep(tmp_path) == [old]
        assert young.exists() and live.folder.exists()
    finally:
        live.release()
    assert not live.folder.exists()
