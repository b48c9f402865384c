"""Fuzz every HTTP route, old and new, over real HTTP against a real uvicorn in its own process.

Each `Arena` call's HTTP form (`ARENA_ROUTES`) gets random and malformed requests of its own
(10,000 each, ARENA_HTTP_FUZZ_PER_CALL), and every route of the OpenAPI document and every page
gets a mix of 10,000 more (ARENA_HTTP_FUZZ): random and wrong-typed path and query values, huge strings,
random JSON bodies, garbage and truncated multipart, random and broken Authorization headers,
session cookies real and forged, wrong methods; and raw malformed HTTP on sockets. Every answer
must be a proper status (below 500), the server must stay up, and its RSS after the fuzz must stay
within 20% of its RSS after a warm-up of the same mix. It is the long fuzz lane (`fuzz` marker):
`make test` runs it beside the rest of the suite at the lowest CPU priority (scripts/test.sh).
"""

from __future__ import annotations

import http.client
import json
import os
import random
import re
import socket
import time
from collections import Counter
from urllib.parse import quote, urlencode

import httpx
import pytest
from account_support import ADMIN, serve, tar_gz

from arena.access.owners import add_owner
from arena.sandbox.procstat import cpu_seconds
from arena.store import Store

pytestmark = [pytest.mark.fuzz, pytest.mark.timeout(3600)]

TOTAL = int(os.environ.get("ARENA_HTTP_FUZZ", "10000"))  # the mix over every route and page
# Requests to each Arena call's own route: 10,000, as for every gRPC method (about 220,000 requests in
# all; docs/security.md has the figures and what made the costliest routes cheap enough for it).
PER_METHOD = int(os.environ.get("ARENA_HTTP_FUZZ_PER_CALL", "10000"))
WARM = max(500, TOTAL // 10)
# Each `Arena` gRPC call and the route that is its HTTP form, with the path values that make it that
# call (CreateMatch and GetMatch are the referee's own calls and have none).
ARENA_ROUTES: dict[str, tuple[str, str, dict[str, str]]] = {
    "SubmitBot": ("POST", "/api/bots", {}),
    "ListBots": ("GET", "/api/bots", {}),
    "GetBot": ("GET", "/api/bots/{name}", {}),
    "RetireBot": ("POST", "/api/bots/{name}/retire", {}),
    "GetBotLogs": ("GET", "/api/bots/{name}/private-logs", {}),
    "ListSeasons": ("GET", "/api/seasons", {}),
    "GetStandings": ("GET", "/api/standings", {}),
    "ListMatches": ("GET", "/api/matches", {}),
    "GetReplay": ("GET", "/api/matches/{match_id}/private-record.bin", {}),
    "WatchMatch": ("GET", "/api/matches/{match_id}/events", {}),
    "Challenge": ("POST", "/api/challenges", {}),
    "CreateSeason": ("POST", "/api/seasons", {}),
    "StartSeason": ("POST", "/api/seasons/{name}/{step}", {"step": "start"}),
    "FreezeSeason": ("POST", "/api/seasons/{name}/{step}", {"step": "freeze"}),
    "CloseSeason": ("POST", "/api/seasons/{name}/{step}", {"step": "close"}),
    "SuspendBot": ("POST", "/api/bots/{name}/suspend", {}),
    "ReinstateBot": ("POST", "/api/bots/{name}/reinstate", {}),
    "ListOwners": ("GET", "/api/owners", {}),
    "AddOwner": ("POST", "/api/owners", {}),
    "RotateOwner": ("POST", "/api/owners/{name}/{step}", {"step": "rotate"}),
    "RevokeOwner": ("POST", "/api/owners/{name}/{step}", {"step": "revoke"}),
}
CAP = 1 << 20
PAGES = [  # the HTML routes (not in the OpenAPI document)
    ("GET", "/"),
    ("GET", "/bots/{name}"),
    ("POST", "/bots/{name}/logs"),
    ("GET", "/matches"),
    ("GET", "/matches/{match_id}"),
    ("GET", "/matches/{match_id}/replay.json"),
    ("GET", "/cards/{deck}/{code}.svg"),
    ("GET", "/login"),
    ("POST", "/login"),
    ("POST", "/logout"),
    ("GET", "/me"),
    ("POST", "/me/upload"),
    ("POST", "/me/bots/{name}/retire"),
    ("POST", "/bots/{name}/challenge"),
    ("GET", "/challenges"),
    ("GET", "/api/docs"),
    ("GET", "/healthz"),
]
NASTY = [
    "",
    "..",
    "../../etc/passwd",
    "a\0b",
    "x" * 3000,
    "é" * 200,
    "elf_",
    "DROP TABLE bots;--",
    "<script>alert(1)</script>",
    "%00",
    "-1",
    "1e999",
    "NaN",
    "null",
    " ",
]
NUMBERS = [0, 1, 2, -1, 2**31, 2**63, 2**64, 10**30, "abc", "1.5", "", "0x10"]
PARAMS = ["season", "bot", "verdict", "limit", "offset", "page", "view", "deal", "step", "recent",
          "download", "match_id", "name", "kind", "status", "x"]  # fmt: skip


def _json_value(rng: random.Random, depth: int = 0):
    kind = rng.randrange(9 if depth < 3 else 6)
    if kind == 0:
        return rng.choice(NASTY)
    if kind == 1:
        return rng.choice(NUMBERS)
    if kind == 2:
        return rng.choice([True, False, None])
    if kind == 3:
        return rng.random() * 10 ** rng.randrange(-5, 300)
    if kind == 4:
        return rng.choice(["ann", "ben", "alice", "autumn", "flags=1", "flags=4294967296", "deck=german"])
    if kind == 5:
        return rng.randrange(-(2**70), 2**70)
    if kind == 6:
        return [_json_value(rng, depth + 1) for _ in range(rng.choice([0, 1, 3, 60]))]
    keys = ["my_bot", "opponent", "rules", "deals", "time_control", "name", "duplicate", "reason",
            "move_ms", "bank_ms", "startup_ms", rng.choice(NASTY)]  # fmt: skip
    return {rng.choice(keys): _json_value(rng, depth + 1) for _ in range(rng.randrange(6))}


def _multipart(rng: random.Random) -> tuple[bytes, str]:
    boundary = rng.choice(["B0und4ry", "x", "-" * 70, "é"])
    parts = []
    for _ in range(rng.choice([0, 1, 2, 3, 20])):
        name = rng.choice(["name", "bundle", "csrf", "format", "owner", rng.choice(NASTY)])
        filename = rng.choice([None, "a.tar.gz", "a.zip", "", "../x", "a" * 500])
        disp = f'form-data; name="{name}"' + (f'; filename="{filename}"' if filename is not None else "")
        body = rng.choice([b"", b"bot", rng.randbytes(rng.choice([1, 100, 5000])), b"PK\x03\x04" + rng.randbytes(50),
                           b"\x1f\x8b" + rng.randbytes(50), TAR[: rng.randrange(len(TAR))]])  # fmt: skip
        head = f"--{boundary}\r\nContent-Disposition: {disp}\r\n"
        if rng.random() < 0.3:
            head += "Content-Type: application/octet-stream\r\n"
        parts.append(head.encode("utf-8", "replace") + b"\r\n" + body + b"\r\n")
    data = b"".join(parts) + (f"--{boundary}--\r\n".encode() if rng.random() < 0.8 else b"")
    if rng.random() < 0.2:
        data = data[: rng.randrange(len(data) + 1)]
    ctype = rng.choice(
        [f"multipart/form-data; boundary={boundary}", "multipart/form-data", "multipart/mixed; boundary=x"]
    )
    return data, ctype


TAR = b""


def _fill(path: str, rng: random.Random, names: list[str], ids: list[int], fixed: dict[str, str]) -> str:
    def value(match: re.Match) -> str:
        key = match.group(1)
        if key in fixed and rng.random() < 0.95:  # the call's own path value, now and then a wrong one
            raw = fixed[key]
        elif key == "match_id":
            raw = str(rng.choice(ids + NUMBERS))
        elif key == "step":
            raw = rng.choice(["start", "freeze", "close", "explode", ""])
        elif key == "deck":
            raw = rng.choice(["french", "german", "x"])
        elif key == "code":
            raw = rng.choice(["AS", "TH", "ZZ", "a", ""])
        else:
            raw = rng.choice(names + NASTY)
        return quote(str(raw), safe="") or "%20"

    return re.sub(r"\{(\w+)\}", value, path)


def _request(rng: random.Random, route, names, ids, auths, cookies, fixed) -> tuple[str, str, dict]:
    method, path = route
    if rng.random() < 0.05:
        method = rng.choice(["GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "HEAD"])
    url = _fill(path, rng, names, ids, fixed)
    params = {
        rng.choice(PARAMS): str(rng.choice(NASTY + [str(n) for n in NUMBERS] + names))
        for _ in range(rng.randrange(4))
    }
    headers = dict(rng.choice(auths))
    kwargs: dict = {"params": params, "headers": headers}
    if rng.random() < 0.3:
        headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in rng.choice(cookies).items())
    if method in ("POST", "PUT", "PATCH"):
        kind = rng.random()
        if kind < 0.35:
            kwargs["content"] = json.dumps(_json_value(rng)).encode()
            headers["Content-Type"] = "application/json"
        elif kind < 0.6:
            kwargs["content"], headers["Content-Type"] = _multipart(rng)
        elif kind < 0.75:
            kwargs["content"] = "&".join(
                f"{rng.choice(['token', 'csrf', 'my_bot', 'deals', 'name'])}={quote(str(rng.choice(NASTY + NUMBERS)))}"
                for _ in range(rng.randrange(5))
            ).encode()
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        elif kind < 0.85:
            kwargs["content"] = rng.randbytes(rng.choice([0, 10, 1000, 70_000]))
            headers["Content-Type"] = rng.choice(
                ["application/json", "text/plain", "application/octet-stream", "x/y"]
            )
        elif kind < 0.9:
            kwargs["content"] = b'{"my_bot": "' + b"x" * 200_000 + b'"}'  # huge: over the 64 KiB cap
            headers["Content-Type"] = "application/json"
    if rng.random() < 0.05:  # a random header with a hostile value (UTF-8 bytes; h11 refuses NUL and CR LF)
        value = rng.choice(NASTY[:9]).replace("\0", "").encode()
        headers[rng.choice(["Content-Type", "Accept", "X-Owner-Token", "Cookie", "Origin"])] = value
    kwargs["headers"] = {k: v if isinstance(v, bytes) else v.encode() for k, v in headers.items()}
    return method, url, kwargs


class PlainClient:
    """One kept-alive HTTP/1.1 connection from the standard library: the fuzz sends a quarter of a
    million requests, and httpx spent more CPU per request than most routes of the server did.
    No cookie jar: each request carries only the headers it was given."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.conn: http.client.HTTPConnection | None = None

    def request(
        self,
        method: str,
        path: str,
        params: dict[str, str],
        headers: dict[str, bytes],
        content: bytes | None = None,
    ) -> tuple[int, bytes]:
        url = path + ("?" + urlencode(params) if params else "")
        conn = self.conn or http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        self.conn = None
        try:
            conn.request(method, url, body=content, headers=headers)
            response = conn.getresponse()
            body = response.read()
        except BaseException:
            conn.close()
            raise
        if response.will_close:
            conn.close()
        else:
            self.conn = conn
        return response.status, body


RAW = [
    b"GARBAGE\r\n\r\n",
    b"GET / HTTP/9.9\r\n\r\n",
    b"GET /" + b"a" * 70_000 + b" HTTP/1.1\r\nHost: x\r\n\r\n",
    b"GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + b"b" * 70_000 + b"\r\n\r\n",
    b"POST /api/challenges HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n",
    b"POST /api/challenges HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
    b"POST /api/bots HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Type: multipart/form-data; boundary=B\r\n\r\nZZZ\r\n",
    b"GET / HTTP/1.1\r\nHost: x\r\nBad Header Name: v\r\n\r\n",
    b"GET / HTTP/1.1\r\n\xff\xfe: \x00\r\n\r\n",
    b"POST /login HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nshort",
]


def _raw(port: int, data: bytes) -> int | None:
    """Send raw bytes; the status the server answered, or None when it closed without answering."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        try:
            sock.sendall(data)
            sock.shutdown(socket.SHUT_WR)
            answer = sock.recv(200)
        except OSError:  # reset, timed out, or closed before our shutdown (ENOTCONN): no answer
            return None
    found = re.match(rb"HTTP/1\.[01] (\d{3})", answer)
    return int(found.group(1)) if found else None


def test_http_fuzz(tmp_path, arena_builder) -> None:
    global TAR
    TAR = tar_gz()
    url = f"sqlite:///{tmp_path / 'arena.db'}"
    built = arena_builder(url, tmp_path)  # two seasons of recorded matches, bots of ann, ben and cat
    store = Store.open(url, home=tmp_path)
    tokens = {name: add_owner(store, name) for name in ("ann", "ben")}
    store.close()
    server = serve(url, tmp_path, CAP, limits="big")
    rng = random.Random(12)
    codes: Counter[int] = Counter()
    failures: list[str] = []
    try:
        base = server.base
        spec = httpx.get(base + "/api/openapi.json", timeout=30).json()
        routes = [(method.upper(), path) for path, ops in spec["paths"].items() for method in ops]
        routes += PAGES
        assert len(routes) >= 35, routes
        spec_routes = {(method.upper(), path) for path, ops in spec["paths"].items() for method in ops}
        assert {(m, p) for m, p, _ in ARENA_ROUTES.values()} <= spec_routes  # the table names real routes
        names = ["alice", "bob", "carol", "nobody"]
        ids = sorted(built.records) + [999_999]
        auths = [
            {},
            {"Authorization": f"Bearer {ADMIN}"},
            {"Authorization": f"Bearer {tokens['ann']}"},
            {"Authorization": f"Bearer {tokens['ben']}"},
            {"Authorization": "Bearer elf_guessguessguess"},
            {"Authorization": "Bearer " + "x" * 5000},
            {"Authorization": "Basic YTpi"},
            {"Authorization": "Bearer"},
            {"X-Owner-Token": tokens["ann"]},
        ]
        with httpx.Client(base_url=base, timeout=60) as client:
            form = client.get("/login")
            csrf = re.search(r'name="csrf" value="([^"]+)"', form.text).group(1)
            client.post("/login", data={"token": tokens["ann"], "csrf": csrf})
            session = dict(client.cookies)
            assert "elfern_session" in session
            cookies = [
                session,
                {"elfern_session": "forged"},
                {"elfern_session": "x" * 3000},
                {"elfern_login": "y"},
            ]
            client.cookies.clear()

            def fire(
                n: int,
                route: tuple[str, str] | None = None,
                fixed: dict[str, str] | None = None,
                call: str = "",
            ) -> None:
                for _ in range(n):
                    where = route or rng.choice(routes)
                    method, path, kwargs = _request(rng, where, names, ids, auths, cookies, fixed or {})
                    try:
                        status, body = plain.request(method, path, **kwargs)
                    except (http.client.HTTPException, ConnectionError):  # the server closed a connection
                        codes[0] += 1
                        continue
                    codes[status] += 1
                    if call:
                        per_call[call] += 1
                    if status >= 500 and len(failures) < 20:
                        failures.append(
                            f"{method} {path[:200]} {kwargs.get('params')} -> {status} {body[:200]!r}"
                        )
                for data in RAW:
                    status = _raw(server.port, data)
                    codes[status or 0] += 1
                    if status is not None and status >= 500:
                        failures.append(f"raw {data[:60]!r} -> {status}")

            per_call: Counter[str] = Counter()
            plain = PlainClient(server.port)
            fire(WARM)
            rss_warm = server.proc_status("VmRSS")
            cpu0, mine0, sent0 = cpu_seconds(server.proc.pid) or 0.0, time.process_time(), sum(codes.values())
            fire(TOTAL)
            cost: dict[str, float] = {}  # server CPU ms per request, per Arena call's route
            for call, (method, path, fixed) in ARENA_ROUTES.items():  # each Arena call's own share
                before = cpu_seconds(server.proc.pid) or 0.0
                fire(PER_METHOD, (method, path), fixed, call)
                cost[call] = ((cpu_seconds(server.proc.pid) or 0.0) - before) / max(1, per_call[call]) * 1e3
            rss_after = server.proc_status("VmRSS")
            sent = sum(codes.values()) - sent0
            cpu = ((cpu_seconds(server.proc.pid) or 0.0) - cpu0) / sent * 1e3
            mine = (time.process_time() - mine0) / sent * 1e3
        assert not failures, "\n".join(failures)
        assert server.proc.poll() is None, "the server died"
        assert httpx.get(base + "/healthz", timeout=10).status_code == 200
        answered = sum(n for code, n in codes.items() if code)
        assert answered >= TOTAL + PER_METHOD * len(ARENA_ROUTES) * 0.99, codes
        for call in ARENA_ROUTES:
            assert per_call[call] >= PER_METHOD * 0.99, (call, per_call)
        assert (
            sum(n for code, n in codes.items() if 400 <= code < 500) > answered // 2
        )  # the fuzz hits refusals
        assert codes[200] > answered // 50  # ... and real answers too
        assert rss_after <= rss_warm * 1.2, (rss_warm, rss_after)
        print(f"\nHTTP fuzz: {sum(codes.values())} requests, at least {min(per_call.values())} to each of "
              f"{len(per_call)} Arena calls' routes, statuses {dict(sorted(codes.items()))}; "
              f"RSS after warm-up {rss_warm} KiB, after {rss_after} KiB; CPU per request: server {cpu:.2f} ms, "
              f"client {mine:.2f} ms; costliest: "
              + ", ".join(f"{c} {ms:.2f} ms" for c, ms in sorted(cost.items(), key=lambda x: -x[1])[:6]))  # fmt: skip
    finally:
        server.stop()
