"""A standalone `Arena` service for the fuzz test: its own process, so that its RSS is its own.

Usage: python fuzz_server.py DATABASE_URL HOME ADMIN_TOKEN. Prints `port N` then serves until killed.
"""

from __future__ import annotations

import asyncio
import sys

import grpc

from arena.access.admin import AdminToken
from arena.access.ratelimit import Budget, RateLimiter
from arena.service.core import Service
from arena.service.grpc_servicer import ArenaService, add_arena_service
from arena.store import Store


async def main(url: str, home: str, admin: str) -> None:
    store = Store.open(url, home=home)
    big = Budget(10**9, 1.0)  # the fuzz is about malformed input, not the limits (tested apart)
    limiter = RateLimiter({name: big for name in ("call", "anonymous", "upload", "challenge", "login")})
    service = Service(store=store, admin=AdminToken.of(admin), limiter=limiter, upload_cap=1 << 20)
    server = grpc.aio.server()
    add_arena_service(ArenaService(service), server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    print(f"port {port}", flush=True)
    await server.wait_for_termination()


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:4]))
