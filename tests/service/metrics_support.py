"""A real `arena serve --metrics` subprocess on loopback, and scrapes of its `/metrics` and `/healthz`."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import pytest
from prometheus_client.parser import text_string_to_metric_families
from service_support import bundle_archive

from arena.proto import arena_pb2 as pb
from arena.proto import arena_pb2_grpc

ARENA = [sys.executable, "-c", "import sys; from arena.cli import main; sys.exit(main())"]
ADMIN = "metrics-admin-token-0123456789abcdef"
REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "sample_bots" / "python"
WAIT = 300.0  # seconds any one step may take on a loaded machine (a bound, not a measurement)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def parse(text: str) -> Samples:
    """Every sample of a scrape: (name, sorted labels) -> value."""
    out: Samples = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def labels_of(samples: Samples, name: str, label: str) -> set[str]:
    return {dict(key)[label] for (n, key) in samples if n == name and label in dict(key)}


@dataclass
class Served:
    proc: subprocess.Popen
    home: Path
    address: str  # gRPC
    web: str  # http://127.0.0.1:PORT
    metrics: str  # http://127.0.0.1:PORT/metrics
    env: dict[str, str]

    def scrape(self) -> Samples:
        with urllib.request.urlopen(self.metrics, timeout=30) as r:
            assert r.status == 200
            return parse(r.read().decode())

    def get(self, path: str, **headers: str) -> tuple[int, str]:
        request = urllib.request.Request(f"{self.web}{path}", headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=30) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read().decode()
        except OSError:  # not listening yet
            return 0, ""

    def organiser(self, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [*ARENA, *args], env={**self.env, "ARENA_HOME": str(self.home)}, cwd=self.home,
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip

    def owner(self, name: str) -> str:
        out = self.organiser("owners", "add", name)
        assert out.returncode == 0, out.stderr
        return out.stdout.splitlines()[1].strip()

    def until(self, what: str, check: Callable[[], Any], timeout: float = WAIT) -> Any:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            got = check()
            if got:
                return got
            assert self.proc.poll() is None, f"the server exited waiting for {what}"
            time.sleep(0.3)
        pytest.fail(f"timed out waiting for {what}")


@contextmanager
def serve(tmp_path: Path, *extra: str) -> Iterator[Served]:
    """`arena serve --tcp --web --metrics EXTRA...` on a fresh SQLite ARENA_HOME, stopped with Ctrl-C."""
    if shutil.which("bwrap") is None:
        pytest.skip("the server builds and plays in the bwrap sandbox")
    home, tcp, web, port = tmp_path / "home", free_port(), free_port(), free_port()
    home.mkdir()
    token_file = tmp_path / "admin-token"
    token_file.write_text(ADMIN + "\n")
    token_file.chmod(0o600)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ARENA_", "PROMETHEUS_"))}
    env["PYTHONPATH"] = str(REPO)
    env["TMPDIR"] = str(tmp_path)  # the counting folder goes here: the test sees it removed
    proc = subprocess.Popen(
        [*ARENA, "serve", "--unix", "", "--tcp", f"127.0.0.1:{tcp}", "--web", f"127.0.0.1:{web}",
         "--metrics", f"127.0.0.1:{port}", "--admin-token-file", str(token_file),
         "--replays", str(home / "replays"), *extra],
        env={**env, "ARENA_HOME": str(home)}, cwd=home, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, start_new_session=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().startswith(f"web: http://127.0.0.1:{web}/")
        assert proc.stdout.readline().strip() == f"metrics: http://127.0.0.1:{port}/metrics"
        assert proc.stdout.readline().startswith(f"referee listening on 127.0.0.1:{tcp}")
        served = Served(proc, home, f"127.0.0.1:{tcp}", f"http://127.0.0.1:{web}",
                        f"http://127.0.0.1:{port}/metrics", env)  # fmt: skip
        served.until("the web answers", lambda: served.get("/api/seasons")[0] == 200)
        yield served
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            _, err = proc.communicate(timeout=90)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            _, err = proc.communicate()
    assert proc.returncode == 0, err[-3000:]
    assert "Traceback" not in err, err[-3000:]
    assert not list(tmp_path.glob("arena-metrics-*")), "the counting folder outlived the server"


def auth(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)


def submit(api: arena_pb2_grpc.ArenaStub, token: str, folder: Path, name: str, owner: str = "") -> Any:
    data = bundle_archive(folder, name)
    header = pb.SubmitBotHeader(name=name, format="tar.gz", size=len(data), owner=owner)
    chunks = [pb.SubmitBotChunk(header=header), pb.SubmitBotChunk(data=data)]
    return api.SubmitBot(iter(chunks), metadata=auth(token), timeout=WAIT)


def two_bots(served: Served) -> tuple[grpc.Channel, arena_pb2_grpc.ArenaStub, str]:
    """Owner ann's `annbot` and the house's `greedy`, built by the server: (channel, stub, ann's token)."""
    ann = served.owner("ann")
    channel = grpc.insecure_channel(served.address)
    api = arena_pb2_grpc.ArenaStub(channel)
    assert submit(api, ann, SAMPLES / "random", "annbot").version.build_ok
    assert submit(api, ADMIN, SAMPLES / "greedy", "greedy", owner="house").version.build_ok
    return channel, api, ann


def challenge(api: arena_pb2_grpc.ArenaStub, token: str) -> Any:
    request = pb.ChallengeRequest(my_bot="annbot", opponent="greedy", rules=["flags=1"])
    return api.Challenge(request, metadata=auth(token), timeout=30).match
