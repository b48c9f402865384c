"""The remote CLI's addresses and TLS: a self-signed server trusted with --tls-ca, an untrusted one, and
the warning for a token sent in plain text."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import grpc
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "service"))
from remote_support import Server, ok, one_line_error
from service_support import ADMIN, serve_in_thread

from arena.access.admin import AdminToken
from arena.service.core import Service
from arena.store import Store


def _self_signed(folder: Path) -> tuple[bytes, bytes]:
    key, cert = folder / "key.pem", folder / "cert.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=localhost",
         "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost", "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True,
    )  # fmt: skip
    return key.read_bytes(), cert.read_bytes()


def test_tls_with_a_trusted_ca_works_and_an_untrusted_server_is_one_line(tmp_path) -> None:
    key, cert = _self_signed(tmp_path)
    (tmp_path / "client").mkdir()
    store = Store.open(f"sqlite:///{tmp_path / 'arena.db'}", home=tmp_path)
    service = Service(store=store, admin=AdminToken.of(ADMIN), launcher="bwrap")
    address, stop, thread = serve_in_thread(service, credentials=grpc.ssl_server_credentials([(key, cert)]))
    try:
        client = Server(service, address, "", {}, tmp_path / "client")
        ca = str(tmp_path / "cert.pem")
        assert json.loads(ok(client.run("owners", "list", "--json", "--tls-ca", ca, token=ADMIN))) == []
        https = f"https://{address}"
        assert ok(client.run("bots", "list", "--json", server=https, ARENA_TLS_CA=ca)).strip() == "[]"
        one_line_error(client.run("bots", "list", server=https), f"server {https}: the TLS handshake failed")
        plain = client.run("bots", "list", token=ADMIN)  # plain text to a TLS port
        one_line_error(plain, f"cannot reach arena server {address}", "TLS server needs https://")
    finally:
        stop.set()
        thread.join(10)
        store.close()


def test_addresses_and_the_plain_text_warning(capsys) -> None:
    """No network here: a channel connects only at its first call, and these make none."""
    from arena.cli.errors import UserError
    from arena.cli.remote import Remote, parse_address

    assert parse_address("https://arena.example.org").target == "arena.example.org:443"
    assert parse_address("https://arena.example.org:8443/").tls
    assert not parse_address("http://127.0.0.1:50051").tls and parse_address("http://h:1").target == "h:1"
    assert parse_address("h:1", tls_ca="ca.pem").tls and parse_address("unix:/run/arena.sock").target
    assert parse_address("[::1]:50051").target == "[::1]:50051"
    for bad in ("", "arena.example.org", "[::1]"):
        with pytest.raises(UserError):
            parse_address(bad)
    Remote("192.0.2.1:50051", "elf_secretsecret").close()  # a token in plain text off the machine: warned
    warned = capsys.readouterr().err
    assert "sending the API token unencrypted to 192.0.2.1:50051" in warned and "elf_secret" not in warned
    for quiet in (("127.0.0.1:50051", "elf_t"), ("localhost:1", "elf_t"), ("192.0.2.1:50051", None)):
        Remote(*quiet).close()
    assert capsys.readouterr().err == ""
