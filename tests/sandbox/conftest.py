"""Fixtures for the sandbox tests: a bwrap launcher (skipped with the reason when unavailable), a
bundle cache private to the test, and a Unix socket "referee" that echoes what a bot sends."""

from __future__ import annotations

import socket
import threading

import pytest


@pytest.fixture
def bwrap():
    from arena.sandbox.bwrap import BwrapLauncher, SandboxUnavailable

    try:
        return BwrapLauncher()
    except SandboxUnavailable as exc:
        pytest.skip(f"bwrap sandbox unavailable: {exc}")


@pytest.fixture(autouse=True)
def private_bundle_cache(tmp_path, monkeypatch):
    cache = tmp_path / "bundle-cache"
    monkeypatch.setenv("ARENA_BUNDLE_CACHE", str(cache))
    return cache


@pytest.fixture
def echo_socket(tmp_path):
    """A Unix socket in a private (0700) directory that answers b"ack:" + what it received."""
    sock_dir = tmp_path / "referee"
    sock_dir.mkdir(mode=0o700)
    path = sock_dir / "referee.sock"
    srv = socket.socket(socket.AF_UNIX)
    srv.bind(str(path))
    srv.listen()
    srv.settimeout(0.1)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = srv.accept()
            except OSError:
                continue
            with conn:
                conn.sendall(b"ack:" + conn.recv(64))

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield path
    stop.set()
    thread.join(1)
    srv.close()
