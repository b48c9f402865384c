"""The web app under a real uvicorn, in a process of its own (so that its memory and I/O are its own).

Usage: python web_server.py DATABASE_URL HOME ADMIN_TOKEN UPLOAD_CAP [limits]
`limits` "big" lifts the rate limits (the fuzz is about malformed input; the limits are tested
apart). Prints `port N` once listening, then serves until killed.
"""

from __future__ import annotations

import socket
import sys

import uvicorn

from arena.access.admin import AdminToken
from arena.access.ratelimit import Budget, RateLimiter
from arena.service.core import Service
from arena.store import Store
from arena.web.app import create_app
from arena.web.tokens import OwnerTokens


def main(url: str, home: str, admin: str, cap: str, limits: str = "") -> None:
    store = Store.open(url, home=home)
    budgets = {n: Budget(10**9, 1.0) for n in ("call", "anonymous", "upload", "challenge", "login")}
    limiter = RateLimiter(budgets if limits == "big" else None)
    token = AdminToken.of(admin)
    service = Service(store=store, admin=token, limiter=limiter, upload_cap=int(cap))
    app = create_app(url, home, service=service, tokens=OwnerTokens(b"web-server-secret"))
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    print(f"port {sock.getsockname()[1]}", flush=True)
    config = uvicorn.Config(app, log_level="warning", access_log=False, timeout_keep_alive=30)
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    main(*sys.argv[1:6])
