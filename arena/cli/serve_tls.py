"""The TLS files of `arena serve --tls-cert/--tls-key`: read and checked at start-up, so a bad one is
one line naming the file, not a failed handshake later (docs/deploy.md, "TLS")."""

from __future__ import annotations

import ssl
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.cli.errors import UserError


@dataclass(frozen=True)
class Tls:
    """A certificate chain and its key, both PEM, checked to belong together."""

    cert: Path
    key: Path
    cert_pem: bytes
    key_pem: bytes

    def grpc_credentials(self) -> Any:
        import grpc

        return grpc.ssl_server_credentials([(self.key_pem, self.cert_pem)])


def load_tls(cert: str | None, key: str | None) -> Tls | None:
    """The TLS files, read and checked now, so a bad one is one line at start-up, not a failed handshake."""
    if cert is None and key is None:
        return None
    if not cert or not key:
        raise UserError("give both --tls-cert FILE and --tls-key FILE (PEM), or neither")
    pems = []
    for flag, path in (("--tls-cert", cert), ("--tls-key", key)):
        try:
            pems.append(Path(path).read_bytes())
        except OSError as exc:
            raise UserError(
                f"{flag} {path}: cannot read it ({exc.strerror or exc}); give a readable PEM file"
            ) from None
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    try:
        context.load_verify_locations(cadata=pems[0].decode("ascii", "replace"))
    except (ssl.SSLError, ValueError) as exc:
        raise UserError(f"--tls-cert {cert}: not a PEM certificate ({_reason(exc)})") from None
    try:
        context.load_cert_chain(cert, key, password=lambda: b"")
    except ssl.SSLError as exc:
        if "KEY_VALUES_MISMATCH" in str(exc):
            raise UserError(
                f"--tls-key {key} is not the key of --tls-cert {cert}; give the key the certificate was made for"
            ) from None
        raise UserError(
            f"--tls-key {key}: not an unencrypted PEM private key ({_reason(exc)}); "
            "decrypt it with `openssl pkey -in KEY -out KEY.plain`"
        ) from None
    return Tls(Path(cert), Path(key), pems[0], pems[1])


def _reason(exc: Exception) -> str:
    return str(getattr(exc, "reason", None) or exc).splitlines()[0][:120]
