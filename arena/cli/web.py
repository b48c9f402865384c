"""`arena web`: serve the standings, bot pages, match list and replay viewer."""

from __future__ import annotations

import os
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from arena.cli.errors import UserError
from arena.cli.metrics_options import Monitoring, monitoring_options

DEMO_HOME = "var"  # where `arena demo` (make demo) keeps its store
F = TypeVar("F", bound=Callable[..., Any])
# the defaults of arena.web.server, repeated here so that --help needs no web extra installed
CONNECTIONS, PER_ADDRESS, THREADS = 512, 32, 32


def web_limit_options(fn: F) -> F:
    """The web's bounds on its callers, on `arena web` and `arena serve --web` alike
    (arena.web.server.WebLimits; docs/security.md "Resources a caller can spend")."""
    options = [
        click.option(
            "--web-connections",
            "web_connections",
            type=click.IntRange(1, 65_536),
            default=CONNECTIONS,
            show_default=True,
            help="Web connections open at once; more are answered 503 with Retry-After.",
        ),
        click.option(
            "--web-connections-per-address",
            "web_per_address",
            type=click.IntRange(1, 65_536),
            default=PER_ADDRESS,
            show_default=True,
            help="Web connections open at once from one client address (not for a trusted proxy, "
            "FORWARDED_ALLOW_IPS); more are answered 503 with Retry-After.",
        ),
        click.option(
            "--web-threads",
            "web_threads",
            type=click.IntRange(1, 1024),
            default=THREADS,
            show_default=True,
            help="Threads for the web's sync routes (database reads, pages); more requests wait for one.",
        ),
    ]
    for option in reversed(options):
        fn = option(fn)
    return fn


def web_limits(connections: int, per_address: int, threads: int) -> Any:
    """The options' arena.web.server.WebLimits (imported here: it needs the web extra)."""
    from arena.web.server import WebLimits

    return WebLimits(connections=connections, per_address=per_address, threads=threads)


def _check_port(host: str, port: int) -> None:
    """Fail with one clear line, before uvicorn starts, when the address is taken."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise UserError(
            f"--host {host!r} is not an address this machine can serve on ({exc.strerror})"
        ) from None
    family, _, _, _, addr = infos[0]
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(addr)
        except OSError as exc:
            raise UserError(
                f"cannot serve on {host}:{port} ({exc.strerror}); pick another with --port"
            ) from None


def _demo_home(url: str | None) -> Path | None:
    """`make demo` keeps its store in ./var; serve it when nothing else names a store and ./arena.db is absent."""
    from arena.store.db import DB_FILE

    if url or os.environ.get("ARENA_DATABASE_URL") or os.environ.get("ARENA_HOME"):
        return None
    if not Path(DB_FILE).exists() and (Path(DEMO_HOME) / DB_FILE).exists():
        return Path(DEMO_HOME)
    return None


@click.command()
@click.option(
    "--host", default="127.0.0.1", show_default=True, help="Address to listen on (0.0.0.0 for all)."
)
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535), help="TCP port.")
@click.option(
    "--db",
    "url",
    default=None,
    metavar="URL",
    help="Database URL (default: ARENA_DATABASE_URL, else $ARENA_HOME/arena.db, else ./arena.db, "
    "else the demo's var/arena.db).",
)
@click.option(
    "--owner-token",
    "owner",
    default=None,
    metavar="OWNER",
    help="Print the token that shows OWNER's bot logs on the web, and exit.",
)
@click.option(
    "--admin-token-file",
    "admin_file",
    default=None,
    metavar="PATH",
    type=click.Path(dir_okay=False),
    help="A file holding the organiser's admin token (default: ARENA_ADMIN_TOKEN, else no admin). "
    "With it, every private record and every bot's logs are shown.",
)
@web_limit_options
@monitoring_options()
def web(
    host: str,
    port: int,
    url: str | None,
    owner: str | None,
    admin_file: str | None,
    web_connections: int,
    web_per_address: int,
    web_threads: int,
    monitoring: Monitoring,
) -> None:
    """Serve the arena's web pages and JSON API (standings, bots, matches, replay viewer).

    Open the printed URL in a browser; the API is documented at /api/docs. The pages read the
    same store as every other command, so a running season shows up live. An unfinished match
    shows no seed, result or replay until it and its duplicate twin are over (docs/security.md).
    """
    from arena.access.admin import AdminToken, AdminTokenError
    from arena.web.tokens import OwnerTokens

    home = _demo_home(url)
    if owner is not None:
        click.echo(OwnerTokens.for_home(home).token(owner))
        return
    try:
        admin = AdminToken.load(admin_file)
    except AdminTokenError as exc:
        raise UserError(str(exc)) from None
    from arena.extras import MissingExtra, require

    require("web", "the web server")  # else one line naming the extra (arena/cli/__init__.py)
    _check_port(host, port)
    from arena.access.shared_state import SharedStateError
    from arena.web.app import create_app
    from arena.web.server import web_server

    try:
        app = create_app(url, home, admin_token=admin)
    except MissingExtra as exc:  # a postgresql:// URL without the [postgres] extra
        raise UserError(str(exc)) from None
    except SharedStateError as exc:  # ARENA_STATE_URL names no Redis that answers: not the store's fault
        raise UserError(f"ARENA_STATE_URL: {exc}") from None
    except Exception as exc:  # a bad URL or an unreachable database: one line, not a traceback
        raise UserError(
            f"cannot open the store ({exc.__class__.__name__}: {exc}); check --db or ARENA_DATABASE_URL"
        ) from None
    shown = "127.0.0.1" if host in ("0.0.0.0", "::") else host
    click.echo(
        f"Elfern Arena web: http://{shown}:{port}/  (API docs: http://{shown}:{port}/api/docs; Ctrl-C stops)"
    )
    click.echo(f"store: {app.state.data.store.engine.url.render_as_string(hide_password=True)}")
    click.echo(f"admin token: from {admin.source}" if admin else "admin token: none (no admin access)")
    from arena.logs import configure

    configure(default="info")
    monitoring.begin()
    try:
        app.state.health = monitoring.health(app.state.data.store)  # the thresholds of the options
        monitoring.listen(app.state.health)
        web_server(app, host, port, web_limits(web_connections, web_per_address, web_threads)).run()
    finally:
        monitoring.end()
