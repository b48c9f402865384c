"""Uploading a bundle: from the My bots page and over the JSON API, built in the real bwrap sandbox;
every refusal (no session, CSRF, not multipart, no file, malformed bundle, someone else's name, the
upload rate limit), and the cap enforced while the body arrives, measured on a real uvicorn process
through /proc/PID/io (bytes it read from the socket and wrote to disk) and its RSS.
"""

from __future__ import annotations

import select
import socket

import pytest
from account_support import (
    ADMIN,
    RANDOM_BOT,
    STOPPED,
    Site,
    bearer,
    login,
    make_site,
    serve,
    session_csrf,
    tar_gz,
    upload,
    zipped,
)

from arena.access.owners import add_owner
from arena.access.ratelimit import Budget, RateLimiter
from arena.store import Store

GIB = 1 << 30


@pytest.fixture
def site(tmp_path) -> Site:
    return make_site(f"sqlite:///{tmp_path / 'arena.db'}", tmp_path, cap=1 << 20)


def _versions(site: Site, name: str) -> int:
    from sqlalchemy import func, select

    from arena.store import models as m

    with site.service.store.read() as s:
        return s.scalar(select(func.count()).select_from(m.BotVersion).join(m.Bot).where(m.Bot.name == name))


def test_upload_from_my_bots_builds_and_shows_the_log(site: Site) -> None:
    assert login(site.client, site.tokens["alice"]).status_code == 303
    csrf = session_csrf(site.client)
    done = upload(site.client, "randy", tar_gz(), csrf=csrf)
    assert done.status_code == 201, done.text[:500]
    assert 'id="build-state">built' in done.text and 'id="build-log"' in done.text
    again = upload(site.client, "randy", tar_gz(), csrf=csrf)
    assert again.status_code == 200 and "already registered" in again.text
    assert _versions(site, "randy") == 1
    page = site.client.get("/me")
    assert "randy" in page.text and "Build log, v1" in page.text and "Retire randy" in page.text
    # a folder zipped (files at the top), the format told by the file name ...
    assert upload(site.client, "zippy", zipped(), filename="zippy.zip", csrf=csrf).status_code == 201
    # ... or by the first bytes when the name says nothing
    assert upload(site.client, "sniffed", zipped(), filename="bundle", csrf=csrf).status_code == 201
    assert _versions(site, "zippy") == 1 and _versions(site, "sniffed") == 1


def test_a_failed_build_is_registered_and_its_log_shown(site: Site, tmp_path) -> None:
    import shutil

    broken = tmp_path / "broken"
    shutil.copytree(RANDOM_BOT, broken, ignore=shutil.ignore_patterns("__pycache__"))
    manifest = broken / "bot.toml"
    text = manifest.read_text()
    manifest.write_text(
        text.replace("run = ", 'build = ["sh", "-c", "echo building-now; exit 3"]\nrun = ', 1)
    )
    assert login(site.client, site.tokens["alice"]).status_code == 303
    done = upload(site.client, "broken", tar_gz(broken), csrf=session_csrf(site.client))
    assert done.status_code == 201 and "build failed" in done.text and "building-now" in done.text


def test_upload_refusals_on_the_page(site: Site) -> None:
    anonymous = site.new_client()
    assert upload(anonymous, "x", tar_gz(), csrf="whatever").status_code == 401
    assert login(site.client, site.tokens["alice"]).status_code == 303
    csrf = session_csrf(site.client)
    assert upload(site.client, "nocsrf", tar_gz()).status_code == 403
    assert upload(site.client, "badcsrf", tar_gz(), csrf="wrong").status_code == 403
    bad = upload(site.client, "junk", b"this is not an archive at all", filename="junk.tar.gz", csrf=csrf)
    assert bad.status_code == 422 and "bundle" in bad.text
    unknown = upload(site.client, "junk", b"plain text", filename="notes.txt", csrf=csrf)
    assert unknown.status_code == 422 and "neither a .tar.gz nor a .zip" in unknown.text
    assert upload(site.client, "../evil", tar_gz(), csrf=csrf).status_code == 422
    form = site.client.post("/me/upload", data={"name": "x", "csrf": csrf})  # urlencoded: no file
    assert form.status_code == 415
    nofile = site.client.post("/me/upload", data={"name": "x", "csrf": csrf}, files={"other": ("", b"")})
    assert nofile.status_code == 422
    for name in ("nocsrf", "badcsrf", "junk", "x"):
        assert _versions(site, name) == 0


def test_api_upload_statuses(site: Site) -> None:
    alice, bob = bearer(site.tokens["alice"]), bearer(site.tokens["bob"])
    files = {"bundle": ("bot.tar.gz", tar_gz())}
    made = site.client.post("/api/bots", data={"name": "apibot"}, files=files, headers=alice)
    assert made.status_code == 201, made.text
    body = made.json()
    assert body["new"] is True and body["version"]["number"] == 1 and body["version"]["build_ok"] is True
    same = site.client.post("/api/bots?name=apibot", files=files, headers=alice)
    assert same.status_code == 200 and same.json()["new"] is False
    theirs = site.client.post("/api/bots?name=apibot", files=files, headers=bob)
    assert theirs.status_code == 403 and "another owner" in theirs.json()["detail"]
    theirs_late = site.client.post("/api/bots", data={"name": "apibot"}, files=files, headers=bob)
    assert theirs_late.status_code == 403
    for_other = site.client.post("/api/bots", data={"name": "b2", "owner": "bob"}, files=files, headers=alice)
    assert for_other.status_code == 403
    by_admin = site.client.post(
        "/api/bots", data={"name": "b2", "owner": "bob"}, files=files, headers=bearer(ADMIN)
    )
    assert by_admin.status_code == 201 and site.client.get("/api/bots/b2").json()["owner"] == "bob"
    assert site.client.post("/api/bots", data={"name": "x"}, files=files).status_code == 401
    junk = site.client.post(
        "/api/bots", data={"name": "j"}, files={"bundle": ("j.zip", b"PK\x03\x04junk")}, headers=alice
    )
    assert junk.status_code == 422 and junk.json()["detail"].startswith("the bundle was refused")
    fmt = site.client.post("/api/bots", data={"name": "j", "format": "rar"}, files=files, headers=alice)
    assert fmt.status_code == 422 and "format" in fmt.json()["detail"]
    raw = site.client.post(
        "/api/bots?name=j", content=tar_gz(), headers={**alice, "Content-Type": "application/gzip"}
    )
    assert raw.status_code == 415
    two = site.client.post(
        "/api/bots",
        data={"name": "two"},
        files=[("bundle", ("a.tar.gz", tar_gz())), ("bundle", ("b.tar.gz", tar_gz()))],
        headers=alice,
    )
    assert two.status_code == 422 and "exactly one file" in two.json()["detail"]
    cut = (
        b'--B\r\nContent-Disposition: form-data; name="bundle"; filename="a.tar.gz"\r\n\r\n' + tar_gz()[:300]
    )
    truncated = site.client.post(
        "/api/bots?name=cut",
        content=cut,
        headers={**alice, "Content-Type": "multipart/form-data; boundary=B"},
    )
    assert truncated.status_code == 422 and "ended early" in truncated.json()["detail"]
    assert _versions(site, "j") == 0 and _versions(site, "two") == 0 and _versions(site, "cut") == 0


def test_uploads_are_rate_limited(tmp_path) -> None:
    site = make_site(
        f"sqlite:///{tmp_path / 'arena.db'}",
        tmp_path,
        limiter=RateLimiter({"upload": Budget(1, 3600.0)}, clock=STOPPED),  # no refill: exactly an hour
    )
    alice = bearer(site.tokens["alice"])
    files = {"bundle": ("bot.tar.gz", tar_gz())}
    assert site.client.post("/api/bots?name=one", files=files, headers=alice).status_code == 201
    limited = site.client.post("/api/bots?name=two", files=files, headers=alice)
    assert limited.status_code == 429 and limited.headers["Retry-After"] == "3600"
    assert _versions(site, "two") == 0


def test_over_the_cap_in_process(site: Site) -> None:
    alice = bearer(site.tokens["alice"])
    big = {"bundle": ("big.tar.gz", b"\0" * ((1 << 20) + 1))}
    r = site.client.post("/api/bots?name=big", files=big, headers=alice)
    assert r.status_code == 413 and "1 MiB cap" in r.json()["detail"]
    declared = site.client.post(
        "/api/bots?name=big",
        content=b"x",
        headers={**alice, "Content-Type": "multipart/form-data; boundary=B", "Content-Length": str(GIB)},
    )
    assert declared.status_code == 413
    assert login(site.client, site.tokens["alice"]).status_code == 303
    page = upload(site.client, "big", b"\0" * ((1 << 20) + 1), csrf=session_csrf(site.client))
    assert page.status_code == 413
    assert _versions(site, "big") == 0


# ---- the cap against a real server: 1 GiB offered, little read, less written ---------------------
def _push(port: int, head: bytes, chunked: bool, limit: int = GIB) -> tuple[int, bytes]:
    """Send `head` then up to `limit` body bytes as fast as the server takes them; stop at its answer.
    Returns (body bytes the kernel accepted, the response's bytes)."""
    sock = socket.create_connection(("127.0.0.1", port))
    sock.sendall(head)
    part = b'--XyZ\r\nContent-Disposition: form-data; name="bundle"; filename="big.tar.gz"\r\n\r\n'
    zeros = b"\0" * 65536
    sent, answer, first = 0, b"", True
    sock.setblocking(False)
    stalls = 0
    while sent < limit and b"\r\n\r\n" not in answer and stalls < 5:
        readable, writable, _ = select.select([sock], [sock], [], 2)
        if not readable and not writable:
            stalls += 1  # the server stopped reading and has not answered yet
            continue
        if readable:
            try:
                got = sock.recv(65536)
            except ConnectionError:
                break
            if not got:
                break
            answer += got
            continue
        data = part + zeros if first else zeros
        frame = b"%x\r\n" % len(data) + data + b"\r\n" if chunked else data
        try:
            n = sock.send(frame)
        except BlockingIOError:
            continue
        except ConnectionError:
            break
        if n < len(frame):  # keep the framing whole: send the rest blocking
            sock.setblocking(True)
            try:
                sock.sendall(frame[n:])
            except ConnectionError:
                break
            sock.setblocking(False)
        sent += len(data)
        first = False
    sock.setblocking(True)
    sock.settimeout(10)
    try:
        while True:  # the head and the body, until the server closes (it answers 413 with close)
            got = sock.recv(65536)
            if not got:
                break
            answer += got
    except (ConnectionError, TimeoutError):
        pass
    sock.close()
    return sent, answer


@pytest.mark.slow
def test_a_1_gib_upload_is_cut_off_while_streaming(tmp_path) -> None:
    cap = 1 << 20
    url = f"sqlite:///{tmp_path / 'arena.db'}"
    store = Store.open(url, home=tmp_path)
    token = add_owner(store, "alice")
    store.close()
    server = serve(url, tmp_path, cap)
    try:
        common = (
            b"POST /api/bots?name=big HTTP/1.1\r\nHost: arena\r\nAuthorization: Bearer "
            + token.encode()
            + b"\r\n"
            b"Content-Type: multipart/form-data; boundary=XyZ\r\n"
        )
        rss_before = server.proc_status("VmRSS")
        # 1. a declared 1 GiB: refused before a byte of the body is read
        io0 = server.io()
        sent, answer = _push(server.port, common + b"Content-Length: %d\r\n\r\n" % GIB, chunked=False)
        io1 = server.io()
        assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
        assert b"connection: close" in answer.lower()
        assert io1["rchar"] - io0["rchar"] < 1 << 20  # bytes read from the socket: the head, not the body
        assert io1["wchar"] - io0["wchar"] < 64 * 1024  # nothing spooled to disk
        # 2. 1 GiB offered chunked (no length to refuse by): cut off just past the cap
        sent, answer = _push(server.port, common + b"Transfer-Encoding: chunked\r\n\r\n", chunked=True)
        io2 = server.io()
        assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
        assert b"cap" in answer
        read, written = io2["rchar"] - io1["rchar"], io2["wchar"] - io1["wchar"]
        assert read < 4 * cap, read  # it stopped reading: the rest never left the client's buffers
        assert written <= cap + 64 * 1024, written  # at most the cap reached the disk
        assert sent < 64 * cap  # the client could push only what the sockets buffer
        rss_after = server.proc_status("VmRSS")
        assert rss_after - rss_before < 16 * 1024, (rss_before, rss_after)  # KiB: never held whole
        print(
            f"\nupload cut-off: offered 1 GiB; client sent {sent / 2**20:.1f} MiB, server read "
            f"{read / 2**20:.2f} MiB, wrote {written / 2**20:.2f} MiB; RSS {rss_before} -> {rss_after} KiB"
        )
        assert server.proc.poll() is None
        ok = __import__("httpx").get(server.base + "/api/me", headers=bearer(token), timeout=10)
        assert ok.status_code == 200  # still serving
    finally:
        server.stop()
