"""The `/metrics` listener of a long-running command: its own HTTP server, apart from the web.

`start` serves, on HOST:PORT, the sum of the counting folder's files (every process of the command
that counted: `arena.metrics.prepare`), this process's own figures (RSS, CPU, open files: the
process collector), and whatever `collectors` read at scrape time (the store's queue, leases and
disk: `arena.store.health`). It is a separate listener so that what it shows goes only to whoever
may reach its address (loopback unless told otherwise; docs/security.md says what it reveals).
"""

from __future__ import annotations

import ipaddress
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

log = logging.getLogger("arena.metrics")


class BadAddress(ValueError):
    """A `--metrics` value that is not PORT or HOST:PORT; the message names it and the fix."""


def parse_address(text: str, option: str = "--metrics") -> tuple[str, int]:
    """(host, port) of `PORT` (loopback) or `HOST:PORT`; BadAddress names `option` and the value."""
    host, _, port_text = text.strip().rpartition(":")
    host = host.strip("[]") or "127.0.0.1"
    if not port_text.isdigit() or not 0 <= int(port_text) <= 65535:
        raise BadAddress(f"{option} {text!r}: expected PORT or HOST:PORT, e.g. 127.0.0.1:9464")
    return host, int(port_text)


def is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@dataclass
class Listener:
    """A running `/metrics` listener; `close` stops it."""

    server: Any  # wsgiref's WSGIServer
    thread: Any
    host: str
    port: int

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/metrics"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)


def registry(collectors: Sequence[Any] = ()) -> Any:
    """The registry a scrape reads: the counting folder's sum, this process, and `collectors`."""
    from prometheus_client import CollectorRegistry, ProcessCollector, values
    from prometheus_client.multiprocess import MultiProcessCollector

    if values.ValueClass.__name__ == "MutexValue":  # imported before `prepare`: counts would be lost
        raise RuntimeError("prometheus_client was imported before arena.metrics.prepare(); call it first")
    reg = CollectorRegistry()
    MultiProcessCollector(reg)
    ProcessCollector(registry=reg)
    for collector in collectors:
        reg.register(collector)
    return reg


def start(host: str, port: int, collectors: Sequence[Any] = ()) -> Listener:
    """Serve `/metrics` on host:port in a thread (OSError when the address is taken)."""
    from prometheus_client import start_http_server

    from arena import metrics

    metrics.defs()  # every metric defined now: the counters without labels show 0 before their first event
    server, thread = start_http_server(port, host, registry(collectors))
    bound = server.server_address[1]
    if not is_loopback(host):
        log.warning(
            "/metrics listens on %s:%d, beyond this machine: it shows queue depths, call counts and "
            "alerts (docs/security.md); keep it on a private network",
            host,
            bound,
        )
    return Listener(server, thread, host, bound)
