"""`arena serve --tls-cert F --tls-key F`: gRPC and the web over TLS with a self-signed certificate made
here (openssl), a client that trusts it gets answers, a plain-text client gets nothing; unreadable,
malformed and mismatched files are refused at start-up in one line."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import grpc
import pytest

from arena.cli.errors import UserError
from arena.cli.serve_tls import load_tls
from arena.proto import arena_pb2, arena_pb2_grpc

ARENA = [sys.executable, "-c", "import sys; from arena.cli import main; sys.exit(main())"]
ADMIN = "tls-test-admin-token-0123456789abcdef"

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl command")


def self_signed(folder: Path, name: str = "server") -> tuple[Path, Path]:
    key, cert = folder / f"{name}.key", folder / f"{name}.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=localhost",
         "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost", "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True,
    )  # fmt: skip
    return cert, key


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _env(repo_root: Path, home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    return {**env, "PYTHONPATH": str(repo_root), "ARENA_HOME": str(home), "ARENA_ADMIN_TOKEN": ADMIN}


def test_grpc_and_the_web_over_tls(repo_root: Path, tmp_path: Path) -> None:
    cert, key = self_signed(tmp_path)
    web_port = _free_port()
    proc = subprocess.Popen(
        [*ARENA, "serve", "--unix", "", "--tcp", "127.0.0.1:0", "--web", f"127.0.0.1:{web_port}",
         "--tls-cert", str(cert), "--tls-key", str(key)],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=_env(repo_root, tmp_path / "home"),
    )  # fmt: skip
    try:
        assert proc.stdout.readline().startswith(f"web: https://127.0.0.1:{web_port}/")
        listening = proc.stdout.readline()
        assert f"TLS with {cert}" in listening
        address = listening.split(" on ")[1].split(" (")[0]
        trusted = grpc.ssl_channel_credentials(root_certificates=cert.read_bytes())
        admin = (("authorization", f"Bearer {ADMIN}"),)
        with grpc.secure_channel(address, trusted) as channel:
            api = arena_pb2_grpc.ArenaStub(channel)
            assert list(api.ListSeasons(arena_pb2.ListSeasonsRequest(), timeout=30).seasons) == []
            assert (
                list(api.ListOwners(arena_pb2.ListOwnersRequest(), metadata=admin, timeout=30).owners) == []
            )
        with grpc.insecure_channel(address) as channel:  # plain text to the TLS port: no answer at all
            with pytest.raises(grpc.RpcError) as info:
                arena_pb2_grpc.ArenaStub(channel).ListSeasons(arena_pb2.ListSeasonsRequest(), timeout=10)
            assert info.value.code() == grpc.StatusCode.UNAVAILABLE
        other_cert, _ = self_signed(tmp_path, "other")  # a client trusting another CA refuses the server
        untrusted = grpc.ssl_channel_credentials(root_certificates=other_cert.read_bytes())
        with grpc.secure_channel(address, untrusted) as channel:
            with pytest.raises(grpc.RpcError) as info:
                arena_pb2_grpc.ArenaStub(channel).ListSeasons(arena_pb2.ListSeasonsRequest(), timeout=10)
            assert info.value.code() == grpc.StatusCode.UNAVAILABLE

        context = ssl.create_default_context(cafile=str(cert))
        body = None
        for _ in range(150):  # uvicorn binds a moment after the referee
            try:
                with urllib.request.urlopen(
                    f"https://127.0.0.1:{web_port}/api/seasons", context=context, timeout=5
                ) as resp:
                    body = resp.read()
                break
            except urllib.error.URLError as exc:
                if isinstance(exc.reason, ssl.SSLError):
                    raise
                time.sleep(0.1)
        assert body is not None and body.lstrip().startswith((b"[", b"{"))
        with pytest.raises((urllib.error.URLError, ConnectionError)):  # plain http to the TLS web port
            urllib.request.urlopen(f"http://127.0.0.1:{web_port}/api/seasons", timeout=5).read()
    finally:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert "Traceback" not in err


def test_bad_tls_files_are_refused_in_one_line(tmp_path: Path) -> None:
    cert, key = self_signed(tmp_path)
    other_cert, other_key = self_signed(tmp_path, "other")
    garbage = tmp_path / "garbage.pem"
    garbage.write_text("-----BEGIN CERTIFICATE-----\nnot base64 at all\n-----END CERTIFICATE-----\n")
    encrypted = tmp_path / "encrypted.key"
    subprocess.run(
        ["openssl", "pkey", "-in", str(key), "-aes256", "-passout", "pass:secret", "-out", str(encrypted)],
        check=True, capture_output=True,
    )  # fmt: skip
    cases = [
        ((str(cert), None), "give both --tls-cert FILE and --tls-key FILE"),
        ((None, str(key)), "give both --tls-cert FILE and --tls-key FILE"),
        ((str(tmp_path / "missing.pem"), str(key)), f"--tls-cert {tmp_path / 'missing.pem'}: cannot read it"),
        ((str(cert), str(tmp_path / "missing.key")), f"--tls-key {tmp_path / 'missing.key'}: cannot read it"),
        ((str(garbage), str(key)), f"--tls-cert {garbage}: not a PEM certificate"),
        ((str(key), str(key)), f"--tls-cert {key}: not a PEM certificate"),
        ((str(cert), str(other_key)), f"--tls-key {other_key} is not the key of --tls-cert {cert}"),
        ((str(cert), str(encrypted)), f"--tls-key {encrypted}: not an unencrypted PEM private key"),
        ((str(cert), str(garbage)), f"--tls-key {garbage}: not an unencrypted PEM private key"),
    ]
    for (c, k), message in cases:
        with pytest.raises(UserError) as info:
            load_tls(c, k)
        text = str(info.value)
        assert text.startswith(message) and "\n" not in text, (c, k, text)
    assert load_tls(str(other_cert), str(other_key)) is not None
    assert load_tls(None, None) is None


def test_serve_refuses_mismatched_files_before_listening(repo_root: Path, tmp_path: Path) -> None:
    cert, _ = self_signed(tmp_path)
    _, other_key = self_signed(tmp_path, "other")
    for extra, message in (
        (["--tcp", "127.0.0.1:0", "--tls-cert", str(cert), "--tls-key", str(other_key)], "is not the key of"),
        (["--tls-cert", str(cert), "--tls-key", str(cert)], "secure --tcp and --web"),
    ):
        out = subprocess.run(
            [*ARENA, "serve", "--unix", str(tmp_path / "r.sock"), *extra],
            cwd=tmp_path, capture_output=True, text=True, timeout=60, env=_env(repo_root, tmp_path / "home"),
        )  # fmt: skip
        assert out.returncode == 2 and out.stdout == "", out.stderr
        lines = out.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith("Error: ") and message in lines[0], lines
        assert not (tmp_path / "home").exists()  # refused before opening the store
