"""`--metrics` and the alert thresholds of the long-running commands (`arena serve`, `arena web`,
`arena worker`), and the `/metrics` listener's life around a command (docs/deploy.md, "Metrics").

`monitoring_options` adds the options and hands the command one `Monitoring`. The command calls
`begin()` early (before anything imports prometheus_client, and before it starts a child process:
the children count into the same folder), `listen(health)` once its store is open, and `end()` on
its way out (also run at exit, so a refusal in between leaves no folder behind).
"""

from __future__ import annotations

import atexit
import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import click

from arena.cli.errors import UserError

F = TypeVar("F", bound=Callable[..., Any])
MIB = 1 << 20


@dataclass
class Monitoring:
    """What the options asked for, and the listener once started."""

    address: str | None
    stuck_minutes: float = 15.0
    disk_free_mib: int = 1024
    folder: str | None = None
    listener: Any = None
    _host_port: tuple[str, int] | None = field(default=None, repr=False)

    def thresholds(self) -> Any:
        from arena.store.health import Thresholds

        return Thresholds(stuck_minutes=self.stuck_minutes, disk_free_min=self.disk_free_mib * MIB)

    def health(self, store: Any) -> Any:
        from arena.store.health import Health

        return Health(store, self.thresholds())

    def begin(self) -> None:
        """Check the address and turn counting on (for this process and the ones it starts)."""
        if not self.address:
            return
        from arena import metrics
        from arena.extras import require
        from arena.metrics.expose import BadAddress, parse_address

        try:
            self._host_port = parse_address(self.address)
        except BadAddress as exc:
            raise UserError(str(exc)) from None
        self.folder = metrics.prepare()  # before prometheus_client's first import: it picks its mode then
        atexit.register(self.end)  # however the command ends (a refusal after this, too), the folder goes
        try:
            require("metrics", "--metrics (the /metrics listener)")
        except BaseException:
            self.end()
            raise

    def listen(self, health: Any = None) -> None:
        """Serve `/metrics` (with the store's figures when `health` is given); one line saying where."""
        if self._host_port is None:
            return
        from arena.metrics.expose import start
        from arena.store.health import HealthCollector

        host, port = self._host_port
        try:
            self.listener = start(host, port, [HealthCollector(health)] if health is not None else [])
        except OSError as exc:
            self.end()
            raise UserError(f"--metrics {self.address}: cannot listen: {exc}; pick another port") from None
        click.echo(f"metrics: {self.listener.url}")

    def end(self) -> None:
        if self.listener is not None:
            self.listener.close()
            self.listener = None
        if self.folder is not None:
            from arena import metrics

            metrics.discard(self.folder)
            self.folder = None


def monitoring_options(alerts: bool = True) -> Callable[[F], F]:
    """Add `--metrics` (and, with `alerts`, the thresholds); the command gets `monitoring: Monitoring`."""

    def decorate(fn: F) -> F:
        @functools.wraps(fn)
        def command(*args: Any, **kwargs: Any) -> Any:
            kwargs["monitoring"] = Monitoring(
                kwargs.pop("metrics_address"),
                kwargs.pop("alert_stuck_minutes", 15.0),
                kwargs.pop("alert_disk_free", 1024),
            )
            return fn(*args, **kwargs)

        options = [
            click.option(
                "--metrics",
                "metrics_address",
                metavar="[HOST:]PORT",
                default=None,
                envvar="ARENA_METRICS",
                help="Serve Prometheus /metrics on this address (a bare PORT: 127.0.0.1). Off by default; "
                "it shows counts and alerts, no names (docs/security.md). Env: ARENA_METRICS.",
            )
        ]
        if alerts:
            options += [
                click.option(
                    "--alert-stuck-minutes",
                    type=click.FloatRange(0),
                    default=15.0,
                    show_default=True,
                    help="/healthz and /metrics raise stuck_queue when matches have waited this long "
                    "and none was recorded meanwhile.",
                ),
                click.option(
                    "--alert-disk-free",
                    metavar="MIB",
                    type=click.IntRange(0),
                    default=1024,
                    show_default=True,
                    help="/healthz and /metrics raise disk_low under this many MiB free on ARENA_HOME's filesystem.",
                ),
            ]
        for option in reversed(options):
            command = option(command)
        return command  # type: ignore[return-value]

    return decorate
