"""`arena web`: it serves the store it is pointed at and prints the URL; owner tokens."""

from __future__ import annotations

import os
import socket
import stat
import subprocess
import sys
import time
import urllib.error
import urllib.request
import zlib
from pathlib import Path

from arena.web.tokens import OwnerTokens

ARENA = [str(Path(sys.executable).with_name("arena"))]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_arena_web_serves_the_demo_store_and_prints_the_url(arena_builder, tmp_path):
    """As after `make demo`: no ARENA_HOME, no ./arena.db, the demo's store in ./var."""
    arena_builder(f"sqlite:///{tmp_path / 'var' / 'arena.db'}", tmp_path / "var")
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("ARENA_HOME", "ARENA_DATABASE_URL")}
    proc = subprocess.Popen(
        [*ARENA, "web", "--port", str(port)],
        env=env,
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stdout.readline()
        assert line.startswith(f"Elfern Arena web: http://127.0.0.1:{port}/"), line + proc.stderr.read()
        assert proc.stdout.readline().strip() == f"store: sqlite:///{tmp_path / 'var' / 'arena.db'}"
        body = b""
        for _ in range(300):  # the URL is printed just before uvicorn binds (up to 30 s on a busy machine)
            try:
                body = urllib.request.urlopen(f"http://127.0.0.1:{port}/?season=autumn", timeout=5).read()
                break
            except OSError:
                proc.poll()
                assert proc.returncode is None, proc.stderr.read()
                time.sleep(0.1)
        assert b"Standings: autumn" in body and b'href="/bots/alice"' in body
    finally:
        proc.terminate()
        proc.wait(10)


def test_arena_web_refuses_a_bad_database_url(tmp_path):
    r = subprocess.run(
        [*ARENA, "web", "--port", str(_free_port()), "--db", "nosuchdb://x"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 2 and "cannot open the store" in r.stderr and "Traceback" not in r.stderr


def test_arena_web_refuses_a_busy_port(tmp_path):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        r = subprocess.run(
            [*ARENA, "web", "--port", str(port)],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            env={**os.environ, "ARENA_HOME": str(tmp_path)},
            timeout=60,
        )
    assert r.returncode == 2
    assert f"cannot serve on 127.0.0.1:{port}" in r.stderr and "--port" in r.stderr
    assert "Traceback" not in r.stderr


def test_owner_tokens(tmp_path, monkeypatch):
    monkeypatch.delenv("ARENA_WEB_SECRET", raising=False)
    tokens = OwnerTokens.for_home(tmp_path)
    assert not (tmp_path / "web-secret").exists()  # made on first use only
    token = tokens.token("ann")
    assert stat.S_IMODE((tmp_path / "web-secret").stat().st_mode) == 0o600
    assert OwnerTokens.for_home(tmp_path).token("ann") == token  # stable across processes
    assert tokens.check("ann", token) and not tokens.check("ben", token)
    assert not tokens.check("ann", "") and not tokens.check("ann", None) and not tokens.check("ann", "é" * 32)
    monkeypatch.setenv("ARENA_WEB_SECRET", "s3cret")
    assert OwnerTokens.for_home(tmp_path).token("ann") != token


def test_owner_token_command(tmp_path):
    env = {**os.environ, "ARENA_HOME": str(tmp_path)}
    env.pop("ARENA_WEB_SECRET", None)
    r = subprocess.run(
        [*ARENA, "web", "--owner-token", "ann"], capture_output=True, text=True, env=env, timeout=60
    )
    assert r.returncode == 0
    assert r.stdout.strip() == OwnerTokens.for_home(Path(tmp_path)).token("ann")


def test_arena_web_refuses_an_unusable_admin_token(tmp_path):
    short = tmp_path / "short"
    short.write_text("abc\n")
    env = {**os.environ, "ARENA_HOME": str(tmp_path)}
    env.pop("ARENA_ADMIN_TOKEN", None)
    for args, said in (
        (["--admin-token-file", str(tmp_path / "missing")], "cannot read the admin token file"),
        (["--admin-token-file", str(short)], "shorter than 16 characters"),
    ):
        r = subprocess.run(
            [*ARENA, "web", "--port", str(_free_port()), *args],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
        )
        assert r.returncode == 2 and said in r.stderr and "Traceback" not in r.stderr, r.stderr
    r = subprocess.run(
        [*ARENA, "web", "--port", str(_free_port())],
        capture_output=True,
        text=True,
        env={**env, "ARENA_ADMIN_TOKEN": "short"},
        timeout=60,
    )
    assert r.returncode == 2 and "ARENA_ADMIN_TOKEN is shorter than 16" in r.stderr


def test_arena_web_admin_token_file_opens_private_records(sealed_builder, tmp_path, owner_tokens):
    """`arena web --admin-token-file`: the admin's token opens a sealed match's private record over HTTP."""
    sealed = sealed_builder(f"sqlite:///{tmp_path / 'arena.db'}", tmp_path)
    secret = "an-admin-token-of-some-length-42"
    (tmp_path / "admin").write_text(secret + "\n")
    port = _free_port()
    env = {**os.environ, "ARENA_HOME": str(tmp_path)}
    env.pop("ARENA_ADMIN_TOKEN", None)
    proc = subprocess.Popen(
        [*ARENA, "web", "--port", str(port), "--admin-token-file", str(tmp_path / "admin")],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    url = f"http://127.0.0.1:{port}/api/matches/{sealed.sealed_done}/private-record.bin"
    try:
        assert proc.stdout.readline().startswith("Elfern Arena web:")
        assert proc.stdout.readline().startswith("store: ")
        assert proc.stdout.readline().strip() == f"admin token: from {tmp_path / 'admin'}"
        for _ in range(300):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5).read()
                break
            except OSError:
                assert proc.poll() is None, proc.stderr.read()
                time.sleep(0.1)
        req = urllib.request.Request(url, headers={"Authorization": f"Bearer {secret}"})
        body = urllib.request.urlopen(req, timeout=10).read()
        assert sealed.mark.encode() in zlib.decompress(body[8:])
        try:
            urllib.request.urlopen(url, timeout=10)
            raise AssertionError("a spectator got the private record")
        except urllib.error.HTTPError as exc:
            assert exc.code == 401 and exc.headers["WWW-Authenticate"].startswith("Bearer")
    finally:
        proc.terminate()
        proc.wait(10)
