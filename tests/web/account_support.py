"""Helpers of the account, upload and challenge tests: a fresh store with two owners, the app over a
`Service`, logging in through the real form, bundles as an author's machine packs them, and the web
app under a real uvicorn in a subprocess."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
import tarfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from fastapi.testclient import TestClient

from arena.access.admin import AdminToken
from arena.access.owners import add_owner
from arena.access.ratelimit import RateLimiter
from arena.service.core import Service
from arena.store import Store

ADMIN = "admin-token-for-the-account-tests-0123"
REPO = Path(__file__).resolve().parents[2]
RANDOM_BOT = REPO / "sample_bots" / "python" / "random"
HERE = Path(__file__).resolve().parent


@dataclass
class Site:
    client: TestClient
    service: Service
    tokens: dict[str, str]  # owner -> elf_ token
    url: str
    home: Path

    def new_client(self, **kwargs) -> TestClient:
        return TestClient(self.client.app, **kwargs)


def make_site(url: str, home: Path, cap: int | None = None, limiter: RateLimiter | None = None) -> Site:
    from arena.web.app import create_app
    from arena.web.tokens import OwnerTokens

    store = Store.open(url, home=home)
    service = Service(store=store, admin=AdminToken.of(ADMIN), limiter=limiter or RateLimiter())
    if cap is not None:
        service.upload_cap = cap
    tokens = {name: add_owner(store, name) for name in ("alice", "bob")}
    app = create_app(url, home, service=service, tokens=OwnerTokens(b"account-tests"))
    return Site(TestClient(app), service, tokens, url, home)


CSRF = re.compile(r'name="csrf" value="([^"]+)"')


def csrf_in(html: str) -> str:
    found = CSRF.search(html)
    assert found, "no CSRF field on the page"
    return found.group(1)


def login(client: TestClient, token: str):
    """Log in through the form (GET for its CSRF token, then POST); the POST's response."""
    form = client.get("/login")
    assert form.status_code == 200
    return client.post("/login", data={"token": token, "csrf": csrf_in(form.text)}, follow_redirects=False)


def session_csrf(client: TestClient) -> str:
    page = client.get("/me")
    assert page.status_code == 200, page.text[:300]
    return csrf_in(page.text)


def STOPPED() -> float:  # a constant, as a clock
    """A rate limiter's clock that never moves: a test's waits come out exact, however slow the machine."""
    return 0.0


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def tar_gz(folder: Path = RANDOM_BOT, name: str = "bot") -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        tar.add(folder, arcname=name, filter=lambda t: None if "__pycache__" in t.name else t)
    return buf.getvalue()


def zipped(folder: Path = RANDOM_BOT) -> bytes:
    """The folder zipped as `cd folder && zip -r ../bot.zip .` makes it (files at the top)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for path in sorted(folder.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                z.write(path, path.relative_to(folder).as_posix())
    return buf.getvalue()


def upload(client: TestClient, name: str, data: bytes, filename: str = "bot.tar.gz", csrf: str | None = None):
    fields = {"name": name}
    if csrf is not None:
        fields["csrf"] = csrf
    return client.post("/me/upload", data=fields, files={"bundle": (filename, data)})


# ---- a real uvicorn in a subprocess -------------------------------------------------------------
@dataclass
class Served:
    proc: subprocess.Popen
    port: int

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def proc_status(self, key: str) -> int:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1])
        raise AssertionError(f"no {key}")

    def io(self) -> dict[str, int]:
        """/proc/PID/io: rchar (bytes read, sockets included), wchar (bytes written, files included)."""
        out = {}
        for line in Path(f"/proc/{self.proc.pid}/io").read_text().splitlines():
            key, _, value = line.partition(":")
            out[key] = int(value)
        return out

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)


def serve(url: str, home: Path, cap: int, limits: str = "big") -> Served:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen(
        [sys.executable, str(HERE / "web_server.py"), url, str(home), ADMIN, str(cap), limits],
        stdout=subprocess.PIPE,
        env=env,
        text=True,
    )
    line = proc.stdout.readline() if proc.stdout else ""
    if not line.startswith("port "):
        proc.kill()
        raise AssertionError(f"the web server did not start: {line!r}")
    served = Served(proc, int(line.split()[1]))
    import httpx

    for _ in range(400):  # the socket is bound before uvicorn serves: wait until it answers
        try:
            if httpx.get(served.base + "/healthz", timeout=2).status_code == 200:
                return served
        except httpx.HTTPError:
            pass
        import time

        time.sleep(0.05)
    served.stop()
    raise AssertionError("the web server never answered /healthz")
