"""`arena serve`: the multi-user arena server: the referee, the whole `Arena` API, the web, the players.

One process: the referee (bots join over the Unix socket and/or TCP), the management API
(arena.proto's `Arena`, one `arena.service.core.Service` over the store, shared with the web of
`--web`), and with `--workers N` a child process that plays challenges and running seasons. The
admin calls need the admin token; without one they are off, and a server that would listen beyond
this machine refuses to start (docs/deploy.md, docs/referee.md, docs/security.md). `--tls-cert`
and `--tls-key` put TLS on the TCP listener and the web.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import signal
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from arena.cli import serve_stop
from arena.cli.errors import UserError
from arena.cli.metrics_options import Monitoring, monitoring_options
from arena.cli.serve_options import serve_options
from arena.cli.serve_tls import Tls, load_tls
from arena.logs import configure

if TYPE_CHECKING:
    from arena.access.admin import AdminToken
    from arena.engine import Rules
    from arena.referee import TimeControl
    from arena.referee.connections import ConnectionLimits
    from arena.referee.joining import Joining
    from arena.referee.management import ReplayDir
    from arena.referee.match import MatchRunner
    from arena.service.core import Service
    from arena.service.inflight import InFlight

log = logging.getLogger("arena.serve")
WATCH_PLAYERS = 5.0  # seconds between looks at whether the players' process is still alive
NO_TOKEN = (
    "set an admin token with --admin-token-file PATH or ARENA_ADMIN_TOKEN (make one with "
    "`python3 -c 'import secrets; print(secrets.token_urlsafe(32))'`)"
)


@click.command()
@serve_options
@monitoring_options()
def serve(
    unix_path: str,
    tcp: str | None,
    create: bool,
    seed: int,
    rule_pairs: tuple[str, ...],
    time_text: str,
    replay_dir: str,
    admin_token_file: str | None,
    web_addr: str | None,
    db_url: str | None,
    workers: int,
    players_nice: int,
    stable_ci: float,
    launcher: str,
    warm: bool | None,
    tls_cert: str | None,
    tls_key: str | None,
    max_open: int,
    build_slots: int,
    disk_quota: int,
    state_url: str | None,
    max_calls: int | None,
    max_calls_per_address: int,
    max_joining: int,
    max_joining_per_address: int,
    max_connections: int | None,
    connection_idle: float,
    web_connections: int,
    web_per_address: int,
    web_threads: int,
    monitoring: Monitoring,
) -> None:
    """Run the arena server until Ctrl-C (matches in flight then end as void, SHUTDOWN).

    Bots connect with the Referee service (protos/elfern/arena/v1/referee.proto), each with its seat
    token. Everything else is the Arena service (arena.proto): owners submit bots, read their logs
    and challenge with their API token, the organiser runs seasons with the admin token, both as
    metadata `authorization: Bearer <token>` (docs/deploy.md). Health checking and server
    reflection are on, so grpcurl works: `grpcurl -plaintext 127.0.0.1:50051 list`.
    """
    from arena.access.admin import AdminToken, AdminTokenError
    from arena.access.forwarded import BadTrustedProxies, TrustedProxies
    from arena.access.ratelimit import RateLimiter
    from arena.access.shared_state import SharedState, SharedStateError
    from arena.cli.ladder_common import apply_warm, check_launcher
    from arena.cli.play import parse_rules
    from arena.cli.web import web_limits
    from arena.referee import TimeControl, TimeControlError
    from arena.referee.connections import ConnectionLimits
    from arena.referee.joining import Joining
    from arena.referee.management import BadRequest, ReplayDir, check_rules, check_time_control
    from arena.service.builds import BuildSlots, call_threads
    from arena.service.core import Service
    from arena.service.inflight import InFlight
    from arena.service.quota import MIB, UploadGate
    from arena.service.upload_dirs import UploadRoot

    if not unix_path and not tcp:
        raise UserError("give --unix PATH, --tcp HOST:PORT, or both")
    monitoring.begin()  # before the players' process starts: it counts into the same folder
    try:
        token = AdminToken.load(admin_token_file)
    except AdminTokenError as exc:
        raise UserError(str(exc)) from None
    if tcp and token is None and not is_loopback(tcp):
        raise UserError(
            f"--tcp {tcp} listens beyond this machine, and the management calls hand out seat tokens: "
            + NO_TOKEN
        )
    if (tls_cert or tls_key) and not tcp and not web_addr:
        raise UserError("--tls-cert/--tls-key secure --tcp and --web; give at least one of them")
    tls = load_tls(tls_cert, tls_key)
    try:
        tc = check_time_control(TimeControl.parse(time_text))
    except TimeControlError as exc:
        raise UserError(f"--time: {exc}") from None
    except BadRequest as exc:
        raise UserError(f"--time: {exc.message}") from None
    try:
        rules = check_rules(parse_rules(rule_pairs, None, None))
    except BadRequest as exc:
        raise UserError(f"--rules: {exc.message}") from None
    replays = ReplayDir(replay_dir)
    try:
        replays.prepare()
    except OSError as exc:
        raise UserError(
            f"--replays {replay_dir}: {exc.strerror or exc}; give a directory you can write"
        ) from None
    if workers:
        check_launcher(launcher)
        apply_warm(warm, launcher)  # the players' process and its pool inherit it
    try:
        proxies = TrustedProxies.from_env()  # whose X-Forwarded-For gRPC believes, as uvicorn for the web
    except BadTrustedProxies as exc:
        raise UserError(str(exc)) from None
    configure(default="info")
    try:
        state = SharedState.open(state_url)
    except SharedStateError as exc:
        raise UserError(f"--shared-state: {exc}") from None
    try:
        arriving = UploadRoot.claim()  # and sweep what a killed server left there
    except OSError as exc:
        raise UserError(
            f"cannot make the uploads' folder in TMPDIR: {exc}; set TMPDIR to a folder you can write"
        ) from None
    try:
        store = _open_store(db_url)
    except BaseException:
        arriving.release()
        raise
    service = Service(
        store,
        admin=token,
        limiter=RateLimiter(),
        launcher=launcher,
        builds=BuildSlots(build_slots),
        uploads=UploadGate(disk_quota=disk_quota * MIB, folder=arriving.folder),
        state=state,
        proxies=proxies,
    )
    try:
        health = monitoring.health(service.store)  # one cache of the store's figures for both
        limits = web_limits(web_connections, web_per_address, web_threads) if web_addr else None
        web_server = _web_server(web_addr, db_url, service, tls, limits, health) if web_addr else None
        monitoring.listen(health)
        log.info(
            "store %s; %s",
            service.store.engine.url.render_as_string(hide_password=True),
            f"{workers} worker(s) in the {launcher} sandbox" if workers else "no workers (--workers 0)",
        )
        if tcp and tls is None and not is_loopback(tcp):
            log.warning(
                "--tcp %s has no TLS: API tokens cross the network in plain text unless a TLS proxy is in "
                "front; use --tls-cert/--tls-key or a reverse proxy (docs/deploy.md)",
                tcp,
            )
        calls = InFlight(max_calls or call_threads(), max_calls_per_address)
        plan = Plan(
            unix_path or None,
            tcp,
            create,
            seed,
            rules,
            tc,
            replays,
            token,
            service,
            workers,
            tls,
            max_open,
            calls,
            Joining(max_joining, max_joining_per_address),
            players_nice,
            ConnectionLimits(connection_idle, max_connections),
            stable_ci,
        )
        before = serve_stop.threads_now()
        serve_stop.run(_serve(plan, web_server))
    except OSError as exc:
        raise UserError(f"cannot listen: {exc}; pick another --unix path or --tcp port") from None
    finally:
        service.builds.close()  # builds still waiting for a slot are dropped
        service.store.close()
        arriving.release()
        monitoring.end()
    serve_stop.leave_stragglers(before)  # a build still running does not hold the exit


def _open_store(db_url: str | None) -> Any:
    """The store of the whole server (the same resolution as `arena web`), migrated; one line if it fails."""
    from arena.cli.web import _demo_home
    from arena.extras import MissingExtra
    from arena.store import Store, StoreUnavailable

    try:
        return Store.open(db_url, home=_demo_home(db_url))
    except (StoreUnavailable, MissingExtra) as exc:  # already one line naming the URL and the fix
        raise UserError(str(exc)) from None
    except Exception as exc:  # a bad URL or an unreachable database: one line, not a traceback
        raise UserError(
            f"cannot open the store ({exc.__class__.__name__}: {str(exc).splitlines()[0][:200]}); "
            "check --db or ARENA_DATABASE_URL"
        ) from None


def is_loopback(tcp: str) -> bool:
    """True when HOST of HOST:PORT is only reachable from this machine (127.0.0.0/8, ::1, localhost).

    Anything else counts as public: 0.0.0.0, [::], an empty host (all interfaces) and every other
    name, since a name can resolve to any address.
    """
    host = tcp.rpartition(":")[0].strip()
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if host.lower() == "localhost":
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    mapped = getattr(address, "ipv4_mapped", None)
    return (mapped or address).is_loopback


def _web_server(
    addr: str, db_url: str | None, service: Service, tls: Tls | None, limits: Any = None, health: Any = None
) -> Any:
    """Build (not start) a uvicorn server for the web app over the server's own Service (the same
    store, admin token and rate limits as gRPC), failing early on a bad address or store."""
    from arena.extras import MissingExtra, require

    require("web", "--web (the web server)")  # else one line naming the extra (arena/cli/__init__.py)
    from arena.access.admin import AdminTokenError
    from arena.cli.web import _check_port, _demo_home
    from arena.web.app import create_app
    from arena.web.server import web_server

    host, _, port_text = addr.rpartition(":")
    if not host or not port_text.isdigit():
        raise UserError(f"--web {addr!r}: expected HOST:PORT, e.g. 127.0.0.1:8000")
    _check_port(host, int(port_text))
    if limits is None:
        from arena.web.server import WebLimits

        limits = WebLimits()
    try:
        app = create_app(
            db_url, _demo_home(db_url), admin_token=service.admin, service=service, health=health
        )
    except (AdminTokenError, MissingExtra) as exc:
        raise UserError(str(exc)) from None
    except Exception as exc:  # a bad URL or an unreachable database: one line, not a traceback
        raise UserError(f"cannot open the store ({exc.__class__.__name__}: {exc}); check --db") from None
    server = web_server(
        app,
        host,
        int(port_text),
        limits,
        ssl_certfile=str(tls.cert) if tls else None,
        ssl_keyfile=str(tls.key) if tls else None,
        own_signals=False,  # the referee's loop owns SIGINT/SIGTERM
    )
    click.echo(f"web: {'https' if tls else 'http'}://{host}:{port_text}/  (API docs at /api/docs)")
    return server


@dataclass(frozen=True)
class Plan:
    """What `_serve` runs, checked by `serve` first."""

    unix_path: str | None
    tcp: str | None
    create: bool
    seed: int
    rules: Rules
    tc: TimeControl
    replays: ReplayDir
    token: AdminToken | None
    service: Service
    workers: int
    tls: Tls | None
    max_open: int = 1000
    calls: InFlight | None = None  # gRPC calls in flight (`--max-calls`, `--max-calls-per-address`)
    joining: Joining | None = (
        None  # Play streams not joined yet (`--max-joining`, `--max-joining-per-address`)
    )
    players_nice: int = 10  # `--players-nice`: the players' niceness above the server's
    connections: ConnectionLimits | None = None  # `--max-connections`, `--connection-idle`
    stable_ci: float = 100.0  # `--stable-ci`: the seasons it plays go on until settled at this target


async def _serve(plan: Plan, web_server: Any = None) -> None:
    import grpc

    from arena.proto.codec import encode_record
    from arena.referee import MatchSpec
    from arena.referee.management import ArenaServicer, UnsafeReplayPath
    from arena.referee.server import RefereeServer
    from arena.service.grpc_servicer import ArenaService, add_arena_service
    from arena.service.inflight import InFlightLimit
    from arena.service.metrics_grpc import CallMetrics
    from arena.workers.daemon import start_players

    replays, token = plan.replays, plan.token

    def write_replay(runner: MatchRunner) -> Path:
        """The record to the replays folder; raising tells the server (it logs it, GetMatch says so)."""
        match_id, r = runner.spec.match_id, runner.result
        assert r is not None and runner.record is not None  # called once the match is over, with its record
        try:
            path = replays.write(match_id, encode_record(runner.record))
        except (UnsafeReplayPath, OSError) as exc:  # the match is over either way; the server goes on
            click.echo(f"match {match_id} over: winner {r.winner}; replay NOT written ({exc})")
            raise
        click.echo(f"match {match_id} over: winner {r.winner}, verdicts {list(r.verdicts)}; replay {path}")
        return path

    stop = asyncio.Event()  # handlers first: a Ctrl-C right after the start-up line is a clean stop
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)

    def services(grpc_server: grpc.aio.Server) -> None:
        # The whole Arena API; CreateMatch/GetMatch go on to the referee's own servicer (admin token).
        add_arena_service(ArenaService(plan.service, referee=ArenaServicer(server)), grpc_server)

    server = RefereeServer(
        unix_path=plan.unix_path,
        tcp=plan.tcp,
        management=True,
        on_finished=write_replay,
        admin_token=token,
        services=services,
        tcp_credentials=plan.tls.grpc_credentials() if plan.tls else None,
        max_open=plan.max_open,
        interceptors=[CallMetrics(), *([InFlightLimit(plan.calls)] if plan.calls is not None else [])],
        joining=plan.joining,
        connections=plan.connections,
    )
    await server.start()
    management = (
        f"management calls need the admin token from {token.source}"
        if token is not None
        else "management calls refused: no admin token; " + NO_TOKEN
    )
    tls = f"TLS with {plan.tls.cert}; " if plan.tls else ""
    click.echo(
        f"referee listening on {', '.join(server.addresses)} "
        f"({tls}health checking and reflection on; {management})"
    )

    def players_start() -> Any:  # a child process (gRPC does not survive fork), its own store connection
        store = plan.service.store
        url = store.engine.url.render_as_string(hide_password=False)  # passed through a pipe, not argv
        return start_players(
            url, store.home, plan.workers, plan.service.launcher, plan.players_nice, plan.stable_ci
        )

    players = players_start() if plan.workers else None
    if plan.create:  # the operator's own terminal: the tokens are theirs to hand to two bots
        runner = server.create_match(MatchSpec(rules=plan.rules, seed=plan.seed, time_control=plan.tc))
        server.start_match(runner)
        click.echo(f"match {runner.spec.match_id}: seat 0 token {runner.tokens[0]}")
        click.echo(f"match {runner.spec.match_id}: seat 1 token {runner.tokens[1]}")
    web_task = asyncio.create_task(web_server.serve()) if web_server is not None else None
    while not stop.is_set():
        try:
            await asyncio.wait_for(stop.wait(), timeout=WATCH_PLAYERS)
        except TimeoutError:
            if players is not None and not players.is_alive():  # its leases lapse; start it again
                log.error("the players' process exited (code %s); starting it again", players.exitcode)
                players = players_start()
    click.echo("shutting down: ending matches in flight")
    serve_stop.quiet_stop_signals(loop)
    await serve_stop.stop_all(server, web_server, web_task, players)
